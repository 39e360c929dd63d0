// Mixture of experts: the expected number of distinct experts a step activates, the parameter
// counts and per-GPU weights of Qwen3-30B-A3B, the roofline's MoE term, the MoE block fitted to
// the measured RTX PRO 6000 moe.csv, and its served-engine mapping under expert parallelism.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "models/fitted_model.hpp"
#include "models/moe_block.hpp"
#include "models/profile_bundle.hpp"
#include "models/roofline.hpp"
#include "models/tensor_parallel.hpp"

namespace kvsim::models {
namespace {

const std::string kMoeBundle =
    std::string(KVSIM_SOURCE_DIR) + "/models/profiles/rtxpro6000-qwen3-30b-a3b-instruct-2507-vllm0.19";

// Qwen3-30B-A3B-Instruct-2507's config.json shapes, typed in.
ModelSpec qwen3_30b_a3b() {
  ModelSpec m;
  m.name = "qwen3-30b-a3b";
  m.num_layers = 48;
  m.hidden_size = 2048;
  m.num_attention_heads = 32;
  m.num_kv_heads = 4;
  m.head_dim = 128;
  m.intermediate_size = 6144;
  m.vocab_size = 151936;
  m.max_position_embeddings = 262144;
  m.qk_norm = true;
  m.num_experts = 128;
  m.num_experts_per_tok = 8;
  m.moe_intermediate_size = 768;
  m.num_params = params_from_shape(m);
  return m;
}

// E[distinct] = E (1 - (1 - k / E)^T): one token activates exactly k; two tokens
// 128 (1 - (120/128)^2) = 15.5; many tokens approach all 128; no tokens none.
TEST(Moe, ExpectedActiveExpertsByHand) {
  EXPECT_DOUBLE_EQ(expected_active_experts(128, 8, 1), 8.0);
  EXPECT_NEAR(expected_active_experts(128, 8, 2), 15.5, 1e-9);
  EXPECT_NEAR(expected_active_experts(128, 8, 2048), 128.0, 1e-6);
  EXPECT_EQ(expected_active_experts(128, 8, 0), 0.0);
  // Never more than the experts or the token-expert pairs.
  EXPECT_LE(expected_active_experts(8, 2, 3), 6.0);
}

// Parameters by hand: embeddings 2 x 151,936 x 2,048 = 622,329,856; per layer q, k, v, o
// 2048 x 4096 + 2 x 2048 x 512 + 4096 x 2048 = 18,874,368, norms 4,096 + 256 (q/k norm),
// 128 experts x 3 x 2048 x 768 = 603,979,776, router 2048 x 128 = 262,144; x 48 layers plus the
// final norm 2,048: 30,532,122,624 (the model card's 30.5B). Each token runs through 8 experts:
// 3.35B activated with the embeddings (the card's 3.3B).
TEST(Moe, Qwen3_30bA3bParameters) {
  const ModelSpec m = qwen3_30b_a3b();
  const std::int64_t layer = 18'874'368 + 4'096 + 256 + 603'979'776 + 262'144;
  EXPECT_EQ(m.num_params, 622'329'856 + 48 * layer + 2'048);
  EXPECT_EQ(m.num_params, 30'532'122'624);
  const double activated = static_cast<double>(m.dense_params() + 2 * m.embedding_params());
  EXPECT_NEAR(activated, 3.3e9, 0.05 * 3.3e9);
  EXPECT_EQ(m.mlp_layers(), 0);
  EXPECT_EQ(m.moe_layers(), 48);
}

// Expert parallelism over 2 GPUs: each holds 64 of the 128 experts of every layer and a whole
// copy of everything else, so its weights are the total less half the experts' bytes.
TEST(Moe, ExpertParallelWeightsPerGpu) {
  const ModelSpec m = qwen3_30b_a3b();
  const std::int64_t experts = 48LL * 128 * 3 * 2048 * 768;
  EXPECT_EQ(expert_params_per_gpu(m, 1, 2), experts / 2);
  EXPECT_EQ(weight_bytes_per_gpu(m, 1, 2).value, 2 * (m.num_params - experts / 2));
  EXPECT_EQ(weight_bytes_per_gpu(m, 1, 1).value, 2 * m.num_params);
}

// The roofline's MoE term for one decode token is memory-bound: it reads the 8 experts the
// token activates in each of the 48 layers, 48 x 8 x 3 x 2048 x 768 x 2 B, at the memory rate.
TEST(Moe, RooflineReadsTheActivatedExperts) {
  const ModelSpec m = qwen3_30b_a3b();
  RooflineParams p;
  const DeviceFigures gpu{FlopsPerSec{480e12}, BytesPerSec{1597e9}, Bytes{}};
  const RooflineModel roof(m, gpu, p);
  BatchShape one;
  one.decode_contexts = {100};
  const double bytes = 48.0 * 8 * 3 * 2048 * 768 * 2;
  EXPECT_NEAR(roof.step_time(one).moe_s, bytes / (1597e9 * p.memory_efficiency), 1e-12);
  // Two data-parallel ranks with expert parallelism: each sees both ranks' tokens on half the
  // experts: 2 tokens activate 15.5 experts, 7.75 on this GPU.
  const RooflineModel ep(m, gpu, p, 1, MoeLayout{2, 2.0});
  EXPECT_NEAR(ep.step_time(one).moe_s, 48.0 * 7.75 * 3 * 2048 * 768 * 2 / (1597e9 * p.memory_efficiency), 1e-12);
}

// The MoE block fitted to the measured table: median error under 5 %, and a 16-token step with
// 128 experts (measured 817.6 us) and with 8 (57.1 us) predicted within 10 %.
TEST(Moe, BlockFitFollowsTheMeasuredTable) {
  const ProfileBundle b = load_profile_bundle(kMoeBundle, 1);
  ASSERT_TRUE(b.has_moe());
  const MoeBlockFit fit = fit_moe_block(b.moe);
  EXPECT_EQ(fit.points, b.moe.size());
  EXPECT_LT(fit.median_abs_rel_error, 0.05);
  auto at = [&](double t, double e) {
    double us = 0;
    const auto f = moe_block_features(t, e, fit.experts_per_wave);
    for (std::size_t i = 0; i < kMoeTerms; ++i) us += f[i] * fit.us[i];
    return us;
  };
  EXPECT_NEAR(at(16, 128), 817.6, 81.8);
  EXPECT_NEAR(at(16, 8), 57.1, 5.7);
}

// Served engine: a rank of 32 tokens with a second rank beside it routes 64 tokens; with
// expert parallelism over 2 GPUs it computes half their token-expert pairs (32 tokens' worth)
// on its share of the activated experts (E_a(64) / 2).
TEST(Moe, ServedMappingUnderExpertParallelism) {
  const ModelSpec m = qwen3_30b_a3b();
  const std::vector<double> us = {10, 6, 0.02, 40};
  const double e = expected_active_experts(128, 8, 64) / 2;
  const double expected = 10 + 6 * e + 0.02 * 32 + 40 * std::ceil(e / 16);
  EXPECT_NEAR(moe_layer_us(us, 16, m, MoeLayout{2, 2.0}, 32), expected, 1e-9);
  // Alone (no expert parallelism, one rank): all 32 tokens on all the experts they activate.
  const double e1 = expected_active_experts(128, 8, 32);
  EXPECT_NEAR(moe_layer_us(us, 16, m, MoeLayout{}, 32), 10 + 6 * e1 + 0.02 * 32 + 40 * std::ceil(e1 / 16), 1e-9);
}

}  // namespace
}  // namespace kvsim::models
