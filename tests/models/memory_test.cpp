#include "models/memory.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/core/error.hpp"
#include "tests/models/model_shapes.hpp"

namespace kvsim::models {
namespace {

constexpr double kGiBd = 1073741824.0;

Bytes gib(double g) { return Bytes{static_cast<std::int64_t>(std::llround(g * kGiBd))}; }

// The brief's default 4090 setup: vllm serve defaults on a < 70 GiB GPU (2,048 batched tokens,
// 256 sequences), utilization 0.9, max_model_len 32,768, 23.65 GiB (gpus.yaml).
MemoryInputs rtx4090_llama8b() {
  MemoryInputs in;
  in.model = testing::llama_31_8b();
  in.total_memory = gib(23.65);
  in.max_model_len = 32768;
  return in;
}

// num_blocks = available // (block_size x kv_bytes_per_token). With 10 GiB given directly
// (kv_cache_memory) and Llama-3.1-8B: one 16-token block = 16 x 128 KiB = 2 MiB, so 5,120
// blocks, 81,920 tokens, 5,119 usable (null block), 81,920 / 32,768 = 2.5x concurrency.
// One byte short of 5,121 blocks still gives 5,120.
TEST(KvCapacity, NumBlocksByHand) {
  MemoryInputs in = rtx4090_llama8b();
  in.kv_cache_memory = gib(10);
  auto out = kv_capacity(in);
  EXPECT_EQ(out.num_blocks, 5120);
  EXPECT_EQ(out.usable_blocks, 5119);
  EXPECT_EQ(out.kv_tokens, 81920);
  EXPECT_DOUBLE_EQ(out.max_concurrency, 2.5);
  EXPECT_TRUE(out.fits_max_model_len);

  in.kv_cache_memory = Bytes{gib(10).value + 2 * 1048576 - 1};
  EXPECT_EQ(kv_capacity(in).num_blocks, 5120);
  in.kv_cache_memory = Bytes{gib(10).value + 2 * 1048576};
  EXPECT_EQ(kv_capacity(in).num_blocks, 5121);
}

// num_gpu_blocks_override replaces the derived count: 1,000 blocks = 16,000 tokens, too few for
// one 32,768-token request (vLLM would refuse to start).
TEST(KvCapacity, OverrideIsHonoured) {
  MemoryInputs in = rtx4090_llama8b();
  in.num_gpu_blocks_override = 1000;
  const auto out = kv_capacity(in);
  EXPECT_EQ(out.num_blocks, 1000);
  EXPECT_EQ(out.usable_blocks, 999);
  EXPECT_EQ(out.kv_tokens, 16000);
  EXPECT_FALSE(out.fits_max_model_len);
  EXPECT_GT(out.available_kv.value, 1000LL * 2 * 1048576);  // the memory was there all along
}

// vLLM issue 10517 (docs/sources.md A3): Llama-3.1-8B-Instruct BF16 on a 24 GB card whose CUDA
// total was 23.58 GiB, utilization 0.90, non-torch 0.35 GiB, vLLM 0.6.x V0 with chunked prefill
// off, so the profile run pushed max_model_len tokens over 256 sequences:
//   max_model_len 20,000: peak_torch 17.06 GiB, KV 3.81 GiB, 1,952 blocks = 31,232 tokens
//   max_model_len 29,000: peak_torch 17.98 GiB, KV 2.89 GiB, 1,478 blocks = 23,648 tokens
// Weights were logged as 14.99 GiB. Our figures within 10 %.
TEST(KvCapacity, MatchesIssue10517Log) {
  MemoryInputs in;
  in.model = testing::llama_31_8b();
  in.total_memory = gib(23.58);
  in.gpu_memory_utilization = 0.90;
  in.non_torch_memory = gib(0.35);
  in.max_num_seqs = 256;
  in.profile_rule = ProfileRule::kV0NoChunkedPrefill;
  struct Case {
    std::int64_t max_model_len;
    double peak_torch_gib, kv_gib;
    std::int64_t tokens;
  };
  for (const Case c : {Case{20000, 17.06, 3.81, 31232}, Case{29000, 17.98, 2.89, 23648}}) {
    SCOPED_TRACE(c.max_model_len);
    in.max_model_len = c.max_model_len;
    const auto out = kv_capacity(in);
    EXPECT_EQ(out.profile_tokens, c.max_model_len);
    EXPECT_EQ(out.profile_sequences, 256);
    EXPECT_NEAR(out.weights.as_double() / kGiBd, 14.99, 0.01 * 14.99);
    const double activation_log = c.peak_torch_gib - 14.99;
    EXPECT_NEAR(out.activation_peak.as_double() / kGiBd, activation_log, 0.10 * activation_log);
    EXPECT_NEAR(out.available_kv.as_double() / kGiBd, c.kv_gib, 0.10 * c.kv_gib);
    EXPECT_NEAR(static_cast<double>(out.kv_tokens), static_cast<double>(c.tokens),
                0.10 * static_cast<double>(c.tokens));
  }
  in.max_model_len = 29000;
  EXPECT_FALSE(kv_capacity(in).fits_max_model_len);  // the log's "larger than ... (23648)" error
}

// vLLM PR 48322 (V1 engine, RTX 4090 24 GB, Qwen3-8B BF16, utilization 0.9): the startup log's
// "GPU KV cache size" was 40,464 tokens with max_num_batched_tokens 2,048 and 36,720 with 8,192.
// Our figures within 10 %, and the drop between the two within 20 % of the measured 3,744.
// That log leaves only ~0.4 GiB beyond the weights, less than vLLM 0.19's own top-k/top-p
// profile sampler holds for Qwen3's 151,936-entry vocabulary (14 bytes x 256 x 151,936 =
// 0.51 GiB before its Triton buffer), so it comes from a vLLM whose profile sampler skips
// top-k/top-p: SamplerProfile::kLogitsOnly.
TEST(KvCapacity, MatchesPr48322On4090) {
  MemoryInputs in;
  in.model = testing::qwen3_8b();
  in.sampler_profile = SamplerProfile::kLogitsOnly;
  in.total_memory = gib(23.65);
  in.max_model_len = 40960;
  in.max_num_batched_tokens = 2048;
  const auto small = kv_capacity(in);
  in.max_num_batched_tokens = 8192;
  const auto large = kv_capacity(in);
  EXPECT_NEAR(static_cast<double>(small.kv_tokens), 40464.0, 0.10 * 40464);
  EXPECT_NEAR(static_cast<double>(large.kv_tokens), 36720.0, 0.10 * 36720);
  EXPECT_NEAR(static_cast<double>(small.kv_tokens - large.kv_tokens), 3744.0, 0.20 * 3744);
}

// The default 4090 example. It must hold more than the issue-10517 setup at max_model_len
// 20,000 (31,232 tokens: a smaller card total and a 10x larger profile run) and less than the
// pool would be if nothing but the weights were subtracted: (0.9 x 23.65 GiB - 14.96 GiB) /
// 128 KiB = 51,834 tokens. (docs/sources.md A9 seeds ~28k from the V0-era log; see
// docs/models.md.)
TEST(KvCapacity, Default4090Example) {
  const auto out = kv_capacity(rtx4090_llama8b());
  EXPECT_EQ(out.profile_tokens, 2048);
  EXPECT_EQ(out.profile_sequences, 256);
  EXPECT_GT(out.kv_tokens, 31232);
  EXPECT_LT(out.kv_tokens, 51834);
  EXPECT_GE(out.kv_tokens, 24000);
  EXPECT_TRUE(out.fits_max_model_len);
  EXPECT_EQ(out.kv_tokens % 16, 0);
  EXPECT_FALSE(out.explanation.empty());
}

// docs/sources.md A3 [D]: each +0.05 of utilization adds 0.05 x total of KV memory; on 23.65 GiB
// that is 1.1825 GiB = 605.4 blocks of 2 MiB = 9,687 tokens (give or take one block).
TEST(KvCapacity, UtilizationStep) {
  MemoryInputs in = rtx4090_llama8b();
  const auto a = kv_capacity(in);
  in.gpu_memory_utilization = 0.95;
  const auto b = kv_capacity(in);
  EXPECT_NEAR(static_cast<double>(b.kv_tokens - a.kv_tokens), 9687.0, 16.0);
}

// An FP8 KV cache (1 byte per element) holds twice the tokens, give or take one block.
TEST(KvCapacity, Fp8KvDoublesTokens) {
  MemoryInputs in = rtx4090_llama8b();
  const auto bf16 = kv_capacity(in);
  in.model.kv_dtype = DType::kFp8;
  const auto fp8 = kv_capacity(in);
  EXPECT_NEAR(static_cast<double>(fp8.kv_tokens), 2.0 * static_cast<double>(bf16.kv_tokens), 16.0);
}

// A larger profile run leaves less for the KV cache; so does subtracting the CUDA graph
// estimate (vLLM >= 0.21), by exactly that estimate. enforce_eager drops the graph term; its
// eager forward (2,048 x 2 x (3 x 14,336 + 3 x 4,096) = 226,492,416 bytes) stays below the
// sampler's 544,210,944 (ActivationPeakByHand), so the activation peak does not move.
TEST(KvCapacity, ProfileTokensGraphsAndEager) {
  MemoryInputs in = rtx4090_llama8b();
  const auto base = kv_capacity(in);
  in.max_num_batched_tokens = 8192;
  EXPECT_LT(kv_capacity(in).available_kv, base.available_kv);

  in = rtx4090_llama8b();
  in.subtract_cuda_graphs = true;
  const auto graphs = kv_capacity(in);
  EXPECT_TRUE(graphs.cuda_graphs_subtracted);
  EXPECT_EQ((base.available_kv - graphs.available_kv).value, in.cuda_graph_memory.value);

  in = rtx4090_llama8b();
  in.enforce_eager = true;
  in.subtract_cuda_graphs = true;
  const auto eager = kv_capacity(in);
  EXPECT_EQ(eager.cuda_graphs.value, 0);
  EXPECT_FALSE(eager.cuda_graphs_subtracted);
  EXPECT_EQ(eager.forward_peak.value, 226'492'416);
  EXPECT_EQ(eager.activation_peak.value, base.activation_peak.value);
  EXPECT_EQ(eager.available_kv.value, base.available_kv.value);
}

// The profile activation peak of Llama-3.1-8B at 2,048 tokens over 256 sequences on a
// 128-SM GPU. Forward, compiled layout: 2,048 x 2 x (3 x 14,336 + 2 x 4,096) = 209,715,200.
// Sampler (Triton top-k/top-p, 256 >= 8 rows): hidden states (2,048 + 256) x 4,096 x 2 =
// 18,874,368; logits 256 x 128,256 x 14 = 459,669,504; the kernel buffer has
// min(next_pow2(min(256, 128)), 128) = 128 rows: 128 x 128,256 x 4 = 65,667,072; sum
// 544,210,944, the larger.
TEST(KvCapacity, ActivationPeakByHand) {
  const ModelSpec m = testing::llama_31_8b();
  const auto v1 = SamplerProfile::kV1TopKTopP;
  EXPECT_EQ(profile_forward_peak(m, 2048, false).value, 209'715'200);
  EXPECT_EQ(profile_sampler_peak(m, 2048, 256, v1, 128).value, 544'210'944);
  EXPECT_EQ(profile_activation_peak(m, 2048, 256, false, v1, 128).value, 544'210'944);
  // 4,096 sequences of one token: (4,096 + 4,096) x 4,096 x 2 + 4,096 x 128,256 x 14
  // + 128 x 128,256 x 4 = 7,487,488,000.
  EXPECT_EQ(profile_activation_peak(m, 4096, 4096, false, v1, 128).value, 7'487'488'000);
  // 100 rows on 132 SMs: 100 programs, buffer min(128, 132) = 128 rows.
  // (2,048 + 100) x 8,192 + 100 x 128,256 x 14 + 128 x 128,256 x 4 = 262,821,888.
  EXPECT_EQ(profile_sampler_peak(m, 2048, 100, v1, 132).value, 262'821'888);
  // 4 rows take the PyTorch sort path: (16 + 4) x 8,192 + 4 x 128,256 x 28 = 14,528,512.
  EXPECT_EQ(profile_sampler_peak(m, 16, 4, v1, 128).value, 14'528'512);
  // A profile without top-k/top-p: (2,048 + 256) x 8,192 + 256 x 128,256 x 6 = 215,875,584.
  EXPECT_EQ(profile_sampler_peak(m, 2048, 256, SamplerProfile::kLogitsOnly, 128).value,
            215'875'584);
}

// The weights vLLM measures: 8,030,261,248 x 2 = 16,060,522,496 bytes of parameters plus the
// rotary cos/sin cache, 131,072 positions x 128 x 2 bytes = 33,554,432: 16,094,076,928 bytes,
// the 14.99 GiB vLLM logs for Llama-3.1-8B.
TEST(KvCapacity, WeightsIncludeRotaryCache) {
  EXPECT_EQ(weights_memory(testing::llama_31_8b()).value, 16'094'076'928);
  const auto out = kv_capacity(rtx4090_llama8b());
  EXPECT_EQ(out.weights.value, 16'094'076'928);
  EXPECT_EQ(out.rotary_cache.value, 33'554'432);
}

// The calibration point: vLLM 0.19.0 on an RTX 4090 (torch reports 25,250,627,584 bytes),
// Llama-3.1-8B BF16, utilization 0.9, 2,048 batched tokens, 256 sequences, max_model_len
// 32,768, CUDA graphs on: the log's num_gpu_blocks was 2,588 (41,408 tokens). By hand:
//   requested = ceil(25,250,627,584 x 0.9)          = 22,725,564,826
//   weights (WeightsIncludeRotaryCache)              = 16,094,076,928
//   activation peak (ActivationPeakByHand)           =    544,210,944
//   non-torch, 0.6 GiB                               =    644,245,094
//   available = 5,443,031,860 // 2,097,152           = 2,595 blocks
// within 1 % (26 blocks) of the measured 2,588.
MemoryInputs calibration_4090() {
  MemoryInputs in;
  in.model = testing::llama_31_8b();
  in.total_memory = Bytes{25'250'627'584};
  in.gpu_memory_utilization = 0.9;
  in.max_num_batched_tokens = 2048;
  in.max_num_seqs = 256;
  in.max_model_len = 32768;
  return in;
}

TEST(KvCapacity, Calibration4090Vllm019) {
  const auto out = kv_capacity(calibration_4090());
  EXPECT_EQ(out.requested.value, 22'725'564'826);
  EXPECT_EQ(out.activation_peak.value, 544'210'944);
  EXPECT_EQ(out.available_kv.value, 5'443'031'860);
  EXPECT_EQ(out.num_blocks, 2595);
  EXPECT_NEAR(static_cast<double>(out.num_blocks), 2588.0, 26.0);
  EXPECT_NEAR(static_cast<double>(out.kv_tokens), 41408.0, 0.01 * 41408);
  EXPECT_FALSE(out.cuda_graphs_subtracted);  // 0.19 leaves the graph estimate out
}

// More batched tokens: fewer blocks by the growth of the activation peak. At 4,096 tokens the
// sampler still dominates and grows by the extra hidden states, 2,048 x 4,096 x 2 =
// 16,777,216 bytes = exactly 8 blocks. At 8,192 the forward takes over: 8,192 x 2 x
// (3 x 14,336 + 2 x 4,096) = 838,860,800, 294,649,856 bytes more = 140.5 blocks, so 140 or
// 141 fewer blocks.
TEST(KvCapacity, BatchedTokensCostTheActivationGrowth) {
  MemoryInputs in = calibration_4090();
  const auto base = kv_capacity(in);
  in.max_num_batched_tokens = 4096;
  const auto t4096 = kv_capacity(in);
  EXPECT_EQ(t4096.activation_peak.value - base.activation_peak.value, 16'777'216);
  EXPECT_EQ(base.num_blocks - t4096.num_blocks, 8);
  in.max_num_batched_tokens = 8192;
  const auto t8192 = kv_capacity(in);
  EXPECT_EQ(t8192.activation_peak.value, 838'860'800);
  EXPECT_GE(base.num_blocks - t8192.num_blocks, 140);
  EXPECT_LE(base.num_blocks - t8192.num_blocks, 141);
}

// Utilization +0.01 gives the KV cache 0.01 x 25,250,627,584 = 252,506,276 bytes more:
// 120.4 blocks of 2 MiB, so 120 or 121 more blocks; nothing else moves.
TEST(KvCapacity, UtilizationPlusOnePercent) {
  MemoryInputs in = calibration_4090();
  const auto base = kv_capacity(in);
  in.gpu_memory_utilization = 0.91;
  const auto more = kv_capacity(in);
  EXPECT_NEAR(static_cast<double>((more.available_kv - base.available_kv).value), 252'506'276.0,
              1.0);
  EXPECT_GE(more.num_blocks - base.num_blocks, 120);
  EXPECT_LE(more.num_blocks - base.num_blocks, 121);
  EXPECT_EQ(more.activation_peak.value, base.activation_peak.value);
}

// enforce_eager changes only the graph term: with 0.19's default (graph estimate not
// subtracted) the block count stays; with the estimate subtracted (vLLM >= 0.21) eager mode
// gets back exactly that estimate.
TEST(KvCapacity, EnforceEagerChangesOnlyTheGraphTerm) {
  MemoryInputs in = calibration_4090();
  const auto graphs = kv_capacity(in);
  in.enforce_eager = true;
  const auto eager = kv_capacity(in);
  EXPECT_EQ(eager.num_blocks, graphs.num_blocks);
  EXPECT_EQ(eager.weights.value, graphs.weights.value);
  EXPECT_EQ(eager.activation_peak.value, graphs.activation_peak.value);
  EXPECT_EQ(eager.non_torch.value, graphs.non_torch.value);
  EXPECT_EQ(eager.cuda_graphs.value, 0);

  in = calibration_4090();
  in.subtract_cuda_graphs = true;
  const auto subtracted = kv_capacity(in);
  in.enforce_eager = true;
  const auto eager_subtracted = kv_capacity(in);
  EXPECT_EQ((eager_subtracted.available_kv - subtracted.available_kv).value,
            in.cuda_graph_memory.value);
  EXPECT_EQ(eager_subtracted.available_kv.value, graphs.available_kv.value);
}

// Llama-3.1-70B in BF16 (141 GB of weights) cannot fit a 4090: no blocks, no throw.
TEST(KvCapacity, ModelThatDoesNotFit) {
  MemoryInputs in = rtx4090_llama8b();
  in.model = testing::llama_31_70b();
  const auto out = kv_capacity(in);
  EXPECT_LT(out.available_kv.value, 0);
  EXPECT_EQ(out.num_blocks, 0);
  EXPECT_EQ(out.kv_tokens, 0);
  EXPECT_FALSE(out.fits_max_model_len);
}

TEST(KvCapacity, RejectsBadInputs) {
  MemoryInputs in = rtx4090_llama8b();
  in.gpu_memory_utilization = 0;
  EXPECT_THROW(kv_capacity(in), InputError);
  in.gpu_memory_utilization = 1.2;
  EXPECT_THROW(kv_capacity(in), InputError);
  in = rtx4090_llama8b();
  in.block_size = 0;
  EXPECT_THROW(kv_capacity(in), InputError);
  in = rtx4090_llama8b();
  in.total_memory = Bytes{0};
  try {
    kv_capacity(in);
    FAIL() << "no error";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].path, "gpu.memory");
  }
}

// max_model_len 0 falls back to the model's max_position_embeddings (131,072 for Llama-3.1).
TEST(KvCapacity, MaxModelLenDefaultsToModel) {
  MemoryInputs in = rtx4090_llama8b();
  in.max_model_len = 0;
  const auto out = kv_capacity(in);
  EXPECT_EQ(out.max_model_len, 131072);
  EXPECT_FALSE(out.fits_max_model_len);  // docs/sources.md A3: 128k needs 16 GiB of KV
}

}  // namespace
}  // namespace kvsim::models
