#include "models/fitted_model.hpp"

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "models/fit_compare.hpp"
#include "models/profile_bundle.hpp"
#include "models/profile_model.hpp"
#include "models/step_overheads.hpp"
#include "sim/core/error.hpp"
#include "tests/models/model_shapes.hpp"

namespace kvsim::models {
namespace {

const std::string kBundle =
    std::string(KVSIM_SOURCE_DIR) + "/models/profiles/rtx4090-llama-3.1-8b-vllm0.19";

const ProfileBundle& bundle() {
  static const ProfileBundle b = load_profile_bundle(kBundle);
  return b;
}

// The fit itself is slow under the sanitizers (tens of thousands of IRLS solves); tests that only
// need coefficients read the shipped file, which ResidualsPerComponent checks the fit reproduces.
const FitReport& report() {
  static const FitReport r = fit_profile(bundle(), testing::llama_31_8b());
  return r;
}

const FittedCoefficients& shipped() {
  static const FittedCoefficients c =
      load_fitted_yaml(std::string(KVSIM_SOURCE_DIR) + "/models/profiles/rtx4090-llama-3.1-8b-vllm0.19.yaml");
  return c;
}

BatchShape decodes(int n, std::int64_t context) {
  BatchShape b;
  b.decode_contexts.assign(static_cast<std::size_t>(n), context);
  return b;
}

BatchShape chunk(std::int64_t n, std::int64_t cached) {
  BatchShape b;
  b.prefills.push_back({n, cached});
  return b;
}

// Each component's median absolute relative error over the bundle's grid is under 5 %, and
// its maximum is reported (finite, at least the median).
TEST(FittedModel, ResidualsPerComponent) {
  const auto& r = report();
  ASSERT_EQ(r.residuals.size(), 4u);
  const char* names[] = {"dense_layer", "dense_step", "attention_layer", "per_sequence"};
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& c = r.residuals[i];
    EXPECT_EQ(c.component, names[i]);
    EXPECT_GT(c.points, 10u);
    EXPECT_LT(c.median_abs_rel_error, 0.05) << c.component;
    EXPECT_GE(c.max_abs_rel_error, c.median_abs_rel_error) << c.component;
    EXPECT_TRUE(std::isfinite(c.max_abs_rel_error)) << c.component;
  }
  // The attention fit saw every row of attention.csv (8,643 data rows).
  EXPECT_EQ(r.residuals[2].points, 8643u);
  // The knee of the dense curve lies where a 4090 turns compute-bound: between 16 and 1,024
  // tokens (the BF16 ridge is 165.2e12 / 1.008e12 = 164 FLOP/byte, i.e. ~164 tokens, and the
  // tables' first big step is at 272 tokens).
  EXPECT_GE(r.coefficients.dense_knee_tokens, 16.0);
  EXPECT_LE(r.coefficients.dense_knee_tokens, 1024.0);
  // The shipped file is this fit (kvsim calibrate writes it; regenerate it when the fit changes),
  // within the refit tolerance: the fit's rounding depends on the machine (models/fit_compare.hpp).
  const auto differences = compare_fits(r.coefficients, shipped());
  EXPECT_TRUE(differences.empty()) << describe(differences);
}

// The comparison with the shipped file tolerates what a machine changes and catches what a
// change of the fit changes: the shipped coefficients moved by one unit in their 13th
// significant digit (relative 1e-12, ten times the largest spread across cache hierarchies
// below) still match the refit; moved in their 4th (relative 1e-4, the smallest change of a
// 4th digit) every fitted coefficient is reported.
TEST(FittedModel, RefitToleratesRoundingAndCatchesChange) {
  const auto perturbed = [](double relative) {
    FittedCoefficients c = shipped();
    for (auto* list : {&c.dense_layer_us, &c.dense_step_us, &c.attention_layer_us, &c.per_sequence_us}) {
      for (double& v : *list) v *= 1.0 + relative;
    }
    return c;
  };
  const auto& fit = report().coefficients;
  const auto thirteenth = compare_fits(fit, perturbed(1e-12));
  EXPECT_TRUE(thirteenth.empty()) << describe(thirteenth);
  const auto fourth = compare_fits(fit, perturbed(1e-4));
  const auto& s = shipped();
  const std::size_t coefficients =
      s.dense_layer_us.size() + s.dense_step_us.size() + s.attention_layer_us.size() + s.per_sequence_us.size();
  EXPECT_EQ(fourth.size(), coefficients) << describe(fourth);
  ASSERT_FALSE(fourth.empty());
  EXPECT_EQ(fourth.front().coefficient, "dense_layer_us[0]");
  // A discrete choice is compared exactly.
  FittedCoefficients knee = shipped();
  knee.dense_knee_tokens += 16;
  const auto moved = compare_fits(fit, knee);
  ASSERT_EQ(moved.size(), 1U);
  EXPECT_EQ(moved.front().coefficient, "dense_knee_tokens");
}

// The fit on another cache hierarchy: Eigen sizes the blocks of its matrix products from the
// CPU's caches, so a machine with other caches sums the normal equations in another order. With
// the caches of another CPU the refit agrees with this machine's within the tolerance (its
// last digits may differ: the test prints how many coefficients are not bit-identical).
TEST(FittedModel, RefitOnAnotherCacheHierarchyAgrees) {
  std::ptrdiff_t l1 = 0, l2 = 0, l3 = 0;
  Eigen::internal::manage_caching_sizes(Eigen::GetAction, &l1, &l2, &l3);
  Eigen::setCpuCacheSizes(16 * 1024, 256 * 1024, 1024 * 1024);
  const FitReport other = fit_profile(bundle(), testing::llama_31_8b());
  Eigen::setCpuCacheSizes(l1, l2, l3);
  const auto differences = compare_fits(other.coefficients, report().coefficients);
  EXPECT_TRUE(differences.empty()) << describe(differences);
  const auto bits = compare_fits(other.coefficients, report().coefficients, 0.0);
  std::printf("refit with L1 16 KiB, L2 256 KiB, L3 1 MiB: %zu coefficients not bit-identical\n", bits.size());
}

// Write then read gives the same coefficients bit for bit and keeps the provenance.
TEST(FittedModel, YamlRoundTripWithProvenance) {
  const auto& c = shipped();
  const std::string text = write_fitted_yaml(c);
  EXPECT_NE(text.find("vllm_version: \"0.19.0\""), std::string::npos) << text;
  EXPECT_NE(text.find("gpu: \"NVIDIA GeForce RTX 4090\""), std::string::npos);
  EXPECT_NE(text.find("profiled_at: \"2026-08-17T19:43:32+00:00\""), std::string::npos);
  EXPECT_NE(text.find("MIT licence"), std::string::npos);
  EXPECT_NE(text.find("LLMServingSim"), std::string::npos);
  EXPECT_NE(text.find("models/profiles/rtx4090-llama-3.1-8b-vllm0.19"), std::string::npos);

  const auto back = read_fitted_yaml(text, "fit.yaml");
  EXPECT_EQ(back.tensor_parallel_size, 1);
  EXPECT_EQ(back.model_shape, c.model_shape);
  EXPECT_EQ(back.gpu_preset, "rtx4090");
  EXPECT_EQ(back.gpu_figures, c.gpu_figures);
  EXPECT_EQ(back.dense_step_knee_tokens, c.dense_step_knee_tokens);
  EXPECT_EQ(back.attention_split_decodes, c.attention_split_decodes);
  EXPECT_EQ(back.dense_layer_kernels, 8.0);
  EXPECT_EQ(back.source_dir, c.source_dir);
  EXPECT_EQ(back.model, c.model);
  EXPECT_EQ(back.gpu, c.gpu);
  EXPECT_EQ(back.vllm_version, c.vllm_version);
  EXPECT_EQ(back.profiled_at, c.profiled_at);
  EXPECT_EQ(back.attribution, c.attribution);
  EXPECT_EQ(back.launch_floor_us, c.launch_floor_us);
  EXPECT_EQ(back.dense_knee_tokens, c.dense_knee_tokens);
  EXPECT_EQ(back.dense_layer_us, c.dense_layer_us);
  EXPECT_EQ(back.dense_step_us, c.dense_step_us);
  EXPECT_EQ(back.attention_layer_us, c.attention_layer_us);
  EXPECT_EQ(back.per_sequence_us, c.per_sequence_us);

  const std::string path = ::testing::TempDir() + "/kvsim_fit.yaml";
  save_fitted_yaml(path, c);
  EXPECT_EQ(load_fitted_yaml(path).attention_layer_us, c.attention_layer_us);
}

TEST(FittedModel, YamlErrorsNameLineAndColumn) {
  const std::string good = write_fitted_yaml(shipped());
  // The unknown key goes on the line after the last one written.
  const auto next_line = std::count(good.begin(), good.end(), '\n') + 1;
  try {
    read_fitted_yaml(good + "colour: blue\n", "fit.yaml");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("fit.yaml:" + std::to_string(next_line) +
                                         ":1: error: unknown key 'colour'"),
              std::string::npos)
        << e.what();
  }
  const std::string short_list = "per_sequence_us: [1, 2, 3]\n";
  try {
    read_fitted_yaml(short_list, "fit.yaml");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("fit.yaml:1:18: error: expected 2 numbers, got 3"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(read_fitted_yaml("launch_floor_us: 1.5\n", "fit.yaml"), InputError);  // missing keys
}

// The optional offload_tier section: absent by default (a profile without it reads back without
// it), written and read back bit for bit when present, keys in either order.
TEST(FittedModel, OffloadTierSectionIsOptionalAndRoundTrips) {
  auto c = shipped();
  ASSERT_FALSE(c.offload_tier.has_value());
  EXPECT_EQ(write_fitted_yaml(c).find("offload_tier"), std::string::npos);
  EXPECT_FALSE(read_fitted_yaml(write_fitted_yaml(c), "fit.yaml").offload_tier.has_value());

  c.offload_tier = MeasuredTier{2.35e10, 117.25};
  const std::string text = write_fitted_yaml(c);
  EXPECT_NE(text.find("offload_tier: {load_bytes_per_s: 2.35e+10, latency_us: 117.25}"),
            std::string::npos)
      << text;
  const auto back = read_fitted_yaml(text, "fit.yaml");
  ASSERT_TRUE(back.offload_tier.has_value());
  EXPECT_EQ(back.offload_tier->load_bytes_per_s, 2.35e10);
  EXPECT_EQ(back.offload_tier->latency_us, 117.25);
  EXPECT_EQ(back.attention_layer_us, c.attention_layer_us);

  const std::string base = write_fitted_yaml(shipped());
  const auto swapped =
      read_fitted_yaml(base + "offload_tier: {latency_us: 0, load_bytes_per_s: 1e9}\n", "fit.yaml");
  ASSERT_TRUE(swapped.offload_tier.has_value());
  EXPECT_EQ(swapped.offload_tier->load_bytes_per_s, 1e9);
  EXPECT_EQ(swapped.offload_tier->latency_us, 0.0);
}

// Bad offload_tier values are input errors naming the file, the line, the value's column and
// what is wrong.
TEST(FittedModel, OffloadTierErrors) {
  const std::string base = write_fitted_yaml(shipped());
  const auto line = std::to_string(std::count(base.begin(), base.end(), '\n') + 1);
  const auto message = [&](const std::string& tier) -> std::string {
    try {
      read_fitted_yaml(base + "offload_tier: " + tier + "\n", "fit.yaml");
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string where = "fit.yaml:" + line + ":15: error: offload_tier: ";
  EXPECT_NE(
      message("{load_bytes_per_s: 0, latency_us: 5}").find(where + "load_bytes_per_s must be > 0"),
      std::string::npos);
  EXPECT_NE(
      message("{load_bytes_per_s: 1e9, latency_us: -1}").find(where + "latency_us must be >= 0"),
      std::string::npos);
  EXPECT_NE(message("{load_bytes_per_s: 1e9}").find(where + "missing key 'latency_us'"),
            std::string::npos);
  EXPECT_NE(
      message("{load_bytes_per_s: 1e9, latency_us: 1, rate: 2}").find(where + "unknown key 'rate'"),
      std::string::npos);
  EXPECT_NE(message("{load_bytes_per_s: 1e9, load_bytes_per_s: 2e9, latency_us: 1}")
                .find(where + "duplicate key 'load_bytes_per_s'"),
            std::string::npos);
  EXPECT_NE(message("25GB/s").find(where + "expected {load_bytes_per_s"), std::string::npos);
  EXPECT_NE(
      message("{load_bytes_per_s: fast, latency_us: 1}").find("expected a number, got 'fast'"),
      std::string::npos);
}

// The attention features of two chunks and two decodes, by hand, with Wd = 4 and Wp = 64:
// launch 1, new 100 + 50, pairs 100 x 20 + 100 x 101 / 2 + 50 x 51 / 2 = 2000 + 5050 + 1275,
// cached 20, 2 decodes, ceil(2 / 4) x mean 400, ceil(100 / 64) x (20 + 50) + ceil(50 / 64) x
// (0 + 25) = 140 + 25, longest 500 (a decode; the chunks reach 120 and 50), 2^2 x 400,
// contexts 800.
TEST(FittedModel, AttentionFeaturesByHand) {
  BatchShape b;
  b.prefills = {{100, 20}, {50, 0}};
  b.decode_contexts = {300, 500};
  // e14: 2 decodes x 150 new tokens; e15: 2 decodes reach the split at 2, so the mean 400.
  const std::vector<double> expected = {1, 150, 8325, 20, 2, 400, 165, 500, 1600, 0, 0, 0, 0, 800, 300, 400};
  EXPECT_EQ(attention_features(b, 4, 64, 2), expected);
  // Below the split the last term is 0.
  EXPECT_EQ(attention_features(b, 4, 64, 3).back(), 0.0);
  // Decode only: three decodes at 100 and one at 700: 1, 4, 1000, 700 in e9..e12.
  BatchShape d;
  d.decode_contexts = {100, 100, 100, 700};
  const std::vector<double> expected_decode = {0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 4, 1000, 700, 0, 0, 0};
  EXPECT_EQ(attention_features(d, 4, 64, 2), expected_decode);
}

// The fitted model stays close to the profile model on batches it was fitted to, and a
// single request decodes at 55-62 tok/s like the profile.
TEST(FittedModel, AgreesWithProfileModel) {
  const FittedModel fit(shipped(), testing::llama_31_8b());
  const ProfileModel prof(bundle(), testing::llama_31_8b());
  for (const auto& b :
       {chunk(2048, 0), chunk(512, 4096), decodes(32, 2048), decodes(1, 1024), decodes(128, 512)}) {
    const double f = fit.step_time(b).total_s();
    const double p = prof.step_time(b).total_s();
    EXPECT_NEAR(f / p, 1.0, 0.05) << b.num_tokens();
  }
  GraphPolicy sync;
  sync.async_scheduling = false;
  const ServedStepModel served(std::make_unique<FittedModel>(shipped(), testing::llama_31_8b()), {}, sync);
  const auto s = served.step_time(decodes(1, 1024));
  EXPECT_GE(1.0 / s.total_s(), 55.0);
  EXPECT_LE(1.0 / s.total_s(), 62.0);
  EXPECT_GE(1.0 / (s.total_s() - s.overhead_s), 55.0);
  EXPECT_LE(1.0 / (s.total_s() - s.overhead_s), 62.0);
  EXPECT_EQ(fit.step_time(BatchShape{}).total_s(), 0.0);
}

// A decode-only step is timed in one pass over the contexts; it must give exactly what the
// features of attention_layer_us() and the batch's add_step_work() give (the general path),
// with some coefficients negative so that signs and the clamps at 0 matter.
TEST(FittedModel, DecodeOnlyStepsMatchTheGeneralFormulaExactly) {
  FittedCoefficients c = shipped();
  for (int variant = 0; variant < 2; ++variant) {
    if (variant == 1) {
      c.attention_layer_us[10] = -c.attention_layer_us[10];
      c.attention_layer_us[12] = -3.0 * c.attention_layer_us[12];
    }
    const FittedModel fit(c, testing::llama_31_8b());
    const double layers = testing::llama_31_8b().num_layers;
    std::int64_t seed = 17;
    for (int n : {1, 2, 7, 33, 256}) {
      BatchShape b;
      for (int i = 0; i < n; ++i) {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        b.decode_contexts.push_back(1 + seed % 40000);
      }
      const StepBreakdown s = fit.step_time(b);
      const double attn_us = layers * fit.attention_layer_us(b);
      EXPECT_EQ(s.attention_s, attn_us * 1e-6) << "variant " << variant << ", " << n << " decodes";
      StepBreakdown work;
      add_step_work(testing::llama_31_8b(), b, work);
      EXPECT_EQ(s.flops, work.flops) << n;
      EXPECT_EQ(s.bytes, work.bytes) << n;
    }
  }
}

TEST(FittedModel, RejectsBadInput) {
  FittedCoefficients c = shipped();
  c.attention_layer_us.pop_back();
  EXPECT_THROW(FittedModel(c, testing::llama_31_8b()), InputError);
  ModelSpec m = testing::llama_31_8b();
  m.num_layers = 0;
  EXPECT_THROW(fit_profile(bundle(), m), InputError);
}

}  // namespace
}  // namespace kvsim::models
