// The kernel profile bundles the repository ships (models/profiles/*/) and the fitted profiles
// written from them (models/profiles/*.yaml): bundles with one folder per tensor-parallel
// degree, op lists read from the tables, and every shipped fit reproducing its bundle's tables
// within 5 % median per component (the acceptance of kvsim calibrate, checked without refitting).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "models/fitted_model.hpp"
#include "models/profile_bundle.hpp"
#include "sim/core/error.hpp"

namespace kvsim::models {
namespace {

const std::string kProfiles = std::string(KVSIM_SOURCE_DIR) + "/models/profiles/";

// A bundle with tp1/ and tp2/ names its degrees; loading it needs one.
TEST(ShippedBundles, DegreesFromTheFolders) {
  const std::string dir = kProfiles + "rtxpro6000-qwen3-32b-vllm0.19";
  EXPECT_EQ(profile_bundle_degrees(dir), (std::vector<int>{1, 2}));
  EXPECT_EQ(profile_bundle_degrees(kProfiles + "rtx4090-llama-3.1-8b-vllm0.19"), (std::vector<int>{1}));
  EXPECT_THROW(load_profile_bundle(dir), InputError);  // two degrees, none chosen
  EXPECT_THROW(load_profile_bundle(dir, 4), InputError);
  const ProfileBundle b = load_profile_bundle(dir, 2);
  EXPECT_EQ(b.tensor_parallel_size, 2);
  EXPECT_EQ(b.tables_dir, dir + "/tp2");
  EXPECT_EQ(b.meta.architecture, "qwen3");
  // A tpN folder named directly reads its parent's meta.yaml.
  const ProfileBundle t = load_profile_bundle(dir + "/tp1");
  EXPECT_EQ(t.tensor_parallel_size, 1);
  EXPECT_EQ(t.meta.model, "Qwen/Qwen3-32B");
}

// The layer's ops come from dense.csv: Qwen3 adds qk_norm to Llama's; the MoE model has no
// dense MLP ops and a moe.csv at TP 1 only.
TEST(ShippedBundles, OpsFromTheTables) {
  auto names = [](const ProfileBundle& b) {
    std::vector<std::string> n;
    for (const auto& op : b.layer_ops) n.push_back(op.name);
    return n;
  };
  const auto llama = load_profile_bundle(kProfiles + "rtx4090-llama-3.1-8b-vllm0.19");
  EXPECT_EQ(names(llama), (std::vector<std::string>{"act_fn", "down_proj", "gate_up_proj", "layernorm", "o_proj",
                                                    "qkv_proj", "rotary_emb"}));
  EXPECT_EQ(llama.layer_kernels(), 8);  // layernorm twice
  const auto qwen = load_profile_bundle(kProfiles + "rtxpro6000-qwen3-32b-vllm0.19", 1);
  const auto qwen_ops = names(qwen);
  EXPECT_NE(std::find(qwen_ops.begin(), qwen_ops.end(), "qk_norm"), qwen_ops.end());
  const auto moe = load_profile_bundle(kProfiles + "rtxpro6000-qwen3-30b-a3b-instruct-2507-vllm0.19", 1);
  EXPECT_EQ(names(moe), (std::vector<std::string>{"layernorm", "o_proj", "qk_norm", "qkv_proj", "rotary_emb"}));
  EXPECT_TRUE(moe.has_moe());
  EXPECT_FALSE(load_profile_bundle(kProfiles + "rtxpro6000-qwen3-30b-a3b-instruct-2507-vllm0.19", 2).has_moe());
}

struct Case {
  const char* fitted;
  const char* bundle;
  int tp;
};

// Every shipped fit against the tables it was fitted to: median |fit - measured| / measured
// under 5 % for the dense layer, the dense step, attention, the MoE block and lm_head.
TEST(ShippedBundles, EveryShippedFitWithinFivePercentMedian) {
  const Case cases[] = {
      {"rtx4090-llama-3.1-8b-vllm0.19.yaml", "rtx4090-llama-3.1-8b-vllm0.19", 1},
      {"rtxpro6000-llama-3.1-8b-vllm0.19-tp1.yaml", "rtxpro6000-llama-3.1-8b-vllm0.19", 1},
      {"rtxpro6000-llama-3.1-8b-vllm0.19-tp2.yaml", "rtxpro6000-llama-3.1-8b-vllm0.19", 2},
      {"rtxpro6000-qwen3-32b-vllm0.19-tp1.yaml", "rtxpro6000-qwen3-32b-vllm0.19", 1},
      {"rtxpro6000-qwen3-32b-vllm0.19-tp2.yaml", "rtxpro6000-qwen3-32b-vllm0.19", 2},
      {"rtxpro6000-qwen3-30b-a3b-instruct-2507-vllm0.19-tp1.yaml", "rtxpro6000-qwen3-30b-a3b-instruct-2507-vllm0.19", 1},
      {"rtxpro6000-qwen3-30b-a3b-instruct-2507-vllm0.19-tp2.yaml", "rtxpro6000-qwen3-30b-a3b-instruct-2507-vllm0.19", 2},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.fitted);
    const FittedCoefficients f = load_fitted_yaml(kProfiles + c.fitted);
    const ProfileBundle b = load_profile_bundle(kProfiles + c.bundle, c.tp);
    EXPECT_EQ(f.tensor_parallel_size, c.tp);
    EXPECT_EQ(f.gpu, b.meta.gpu);
    EXPECT_EQ(f.moe_layer_us.empty(), !b.has_moe());
    const auto residuals = evaluate_fit(f, b);
    ASSERT_EQ(residuals.size(), b.has_moe() ? 5U : 4U);
    for (const auto& r : residuals) {
      EXPECT_LT(r.median_abs_rel_error, 0.05) << r.component;
      EXPECT_GT(r.points, 10U) << r.component;
    }
    // The attention residuals cover every row of the table.
    EXPECT_EQ(residuals[2].component, "attention_layer");
    EXPECT_EQ(residuals[2].points, b.attention.size());
  }
}

// A fitted profile written before the later terms existed (14 attention and 2 dense-step
// coefficients) reads with those terms 0.
TEST(ShippedBundles, LegacyFittedFileReads) {
  const std::string legacy =
      "source_dir: \"x\"\nmodel: \"m\"\ngpu: \"g\"\nvllm_version: \"0.19.0\"\nprofiled_at: \"t\"\n"
      "attribution: \"a\"\nlaunch_floor_us: 1.85\ndense_knee_tokens: 272\n"
      "dense_layer_us: [481, 1.06, 1.09, 0.61]\ndense_step_us: [5.4, 0.015]\n"
      "attention_decode_wave: 2\nattention_prefill_wave_tokens: 128\n"
      "attention_layer_us: [4.9, 0.03, 0, 0, 1.3, 0.01, 0.015, 0.016, 0, 12.3, 0.2, 0.004, 0.0003, 0.0005]\n"
      "per_sequence_us: [1114, 2.8]\n";
  const FittedCoefficients c = read_fitted_yaml(legacy, "legacy.yaml");
  ASSERT_EQ(c.attention_layer_us.size(), kAttentionTerms);
  EXPECT_EQ(c.attention_layer_us[14], 0.0);
  EXPECT_EQ(c.attention_layer_us[15], 0.0);
  ASSERT_EQ(c.dense_step_us.size(), kDenseStepTerms);
  EXPECT_EQ(c.dense_step_us[1], 0.015);
  EXPECT_EQ(c.dense_step_us[4], 0.0);
  EXPECT_EQ(c.tensor_parallel_size, 1);
  // A list of neither length is an error naming its line.
  std::string bad = legacy;
  bad.replace(bad.find("[5.4, 0.015]"), 12, "[5.4, 0.015, 1]");
  try {
    read_fitted_yaml(bad, "bad.yaml");
    ADD_FAILURE() << "a 3-term dense_step_us was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().front().line, 10);
  }
}

}  // namespace
}  // namespace kvsim::models
