// Tensor parallelism and quantized weights (models/tensor_parallel.hpp, models/quantization.hpp,
// models/tensor_parallel_model.hpp) from first principles: Llama-3.1-70B's shapes by hand.
#include "models/tensor_parallel.hpp"

#include <gtest/gtest.h>

#include <memory>

#include "models/memory.hpp"
#include "models/quantization.hpp"
#include "models/roofline.hpp"
#include "models/tensor_parallel_model.hpp"
#include "sim/core/error.hpp"
#include "tests/models/model_shapes.hpp"

namespace kvsim::models {
namespace {

ModelSpec llama70b(DType weights = DType::kBf16, DType kv = DType::kBf16) {
  ModelSpec m = testing::llama_31_70b();
  m.dtype = weights;
  m.kv_dtype = kv;
  return m;
}

// KV bytes per token per GPU at TP = 4: 80 layers x 8 KV heads x 128 x 2 (K, V) x 2 B / 4 =
// 81,920 B = 80 KiB in BF16; 40 KiB in FP8 (1 byte per element).
TEST(TensorParallel, KvBytesPerTokenPerGpuOfLlama70bAtTp4) {
  EXPECT_EQ(kv_bytes_per_token_per_gpu(llama70b(), 4).value, 80 * 1024);
  EXPECT_EQ(kv_bytes_per_token_per_gpu(llama70b(DType::kBf16, DType::kFp8), 4).value, 40 * 1024);
  EXPECT_EQ(kv_bytes_per_token_per_gpu(llama70b(), 1).value, 320 * 1024);
}

// Beyond 8 GPUs the 8 KV heads are replicated: each GPU keeps one head,
// 80 x 1 x 128 x 2 x 2 B = 40 KiB at TP = 8 and still 40 KiB at TP = 16.
TEST(TensorParallel, KvHeadsReplicateBeyondTheirCount) {
  EXPECT_EQ(kv_heads_per_gpu(llama70b(), 8), 1);
  EXPECT_EQ(kv_bytes_per_token_per_gpu(llama70b(), 8).value, 40 * 1024);
  EXPECT_EQ(kv_bytes_per_token_per_gpu(llama70b(), 16).value, 40 * 1024);
}

// The linear layers of Llama-3.1-70B: 80 x (8,192 x 8,192 (q) + 2 x 8,192 x 1,024 (k, v)
// + 8,192 x 8,192 (o) + 3 x 8,192 x 28,672 (gate, up, down)) = 80 x 855,638,016
// = 68,451,041,280; the rest of the 70,553,706,496 parameters: embeddings and lm_head
// 2 x 128,256 x 8,192 = 2,101,346,304 and norms 80 x 2 x 8,192 + 8,192 = 1,318,912.
TEST(Quantization, LinearAndSixteenBitParameters) {
  EXPECT_EQ(linear_params(llama70b()), 68'451'041'280);
  EXPECT_EQ(small_params(llama70b()), 1'318'912);
}

// Bytes per linear parameter: int4 with group 128 = 0.5 + (2 B scale + 0.5 B zero) / 128
// = 0.51953125; int8 = 1 + 3 / 128 = 1.0234375; fp8 1; bf16 2.
TEST(Quantization, BytesPerLinearParameter) {
  EXPECT_DOUBLE_EQ(linear_bytes_per_param(DType::kInt4, 128), 0.51953125);
  EXPECT_DOUBLE_EQ(linear_bytes_per_param(DType::kInt8, 128), 1.0234375);
  EXPECT_DOUBLE_EQ(linear_bytes_per_param(DType::kFp8, 128), 1.0);
  EXPECT_DOUBLE_EQ(linear_bytes_per_param(DType::kBf16, 128), 2.0);
}

// Whole model int4/g128: 68,451,041,280 x 0.51953125 = 35,562,455,040 B plus
// (2,101,346,304 + 1,318,912) x 2 B = 4,205,330,432 B: 39,767,785,472 B = 39.8 GB, the size of
// the AWQ-INT4 checkpoint's safetensors. BF16 stays num_params x 2.
TEST(Quantization, WholeModelWeightBytes) {
  EXPECT_EQ(llama70b(DType::kInt4).weight_bytes().value, 39'767'785'472);
  EXPECT_EQ(llama70b().weight_bytes().value, 2 * 70'553'706'496);
}

// Per GPU at TP = 4, int4 g128: linear 68,451,041,280 / 4 = 17,112,760,320 params x 0.51953125
// = 8,890,613,760 B; embedding and lm_head 2 x 32,064 x 8,192 = 525,336,576 params and the
// replicated norms 1,318,912, both x 2 B = 1,053,310,976 B; total 9,943,924,736 B (9.26 GiB).
TEST(TensorParallel, Int4WeightBytesPerGpuAtTp4) {
  EXPECT_EQ(linear_params_per_gpu(llama70b(DType::kInt4), 4), 17'112'760'320);
  EXPECT_EQ(vocab_params_per_gpu(llama70b(DType::kInt4), 4), 525'336'576);
  EXPECT_EQ(weight_bytes_per_gpu(llama70b(DType::kInt4), 4).value, 9'943'924'736);
}

// vLLM's start-up checks: heads divisible by k; KV heads divisible by k or k by them; whole
// quantization groups per GPU in the row-parallel layers.
TEST(TensorParallel, RejectsSplitsVllmRejects) {
  EXPECT_THROW(check_tensor_parallel(llama70b(), 3), InputError);
  EXPECT_THROW(check_tensor_parallel(llama70b(), 0), InputError);
  EXPECT_NO_THROW(check_tensor_parallel(llama70b(DType::kInt4), 8));
  ModelSpec coarse = llama70b(DType::kInt4);
  coarse.quant_group_size = 1024;  // 28,672 / 8 = 3,584 rows of down_proj: not whole groups
  EXPECT_THROW(check_tensor_parallel(coarse, 8), InputError);
  try {
    check_tensor_parallel(llama70b(), 3);
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("engine.tensor_parallel_size"), std::string::npos)
        << e.what();
  }
}

// KV capacity of one GPU of Llama-3.1-70B AWQ-int4 at TP = 4 on an RTX 4090 (25,250,627,584 B
// as CUDA reports it; vllm serve defaults, utilization 0.9), by hand:
//   requested   = ceil(25,250,627,584 x 0.9)                     = 22,725,564,826
//   weights     = 9,943,924,736 + rotary 131,072 x 128 x 2       =  9,977,479,168
//   activations = max(forward 2,048 x 2 x (3 x 7,168 + 2 x 8,192) = 155,189,248,
//                     sampler (2,048 + 256) x 8,192 x 2 + 256 x 128,256 x 14
//                             + 128 x 128,256 x 4               = 563,085,312)
//   non-torch   = 0.6 GiB                                        =    644,245,094
//   available   = 11,540,755,252 B; one block = 16 x 80 KiB = 1,310,720 B -> 8,804 blocks,
//   140,864 tokens for the replica (what vLLM logs as "GPU KV cache size").
TEST(TensorParallel, KvCapacityOfLlama70bInt4OnFour4090s) {
  MemoryInputs in;
  in.model = llama70b(DType::kInt4);
  in.total_memory = Bytes{25'250'627'584};
  in.max_model_len = 32768;
  in.tensor_parallel_size = 4;
  const MemoryBreakdown out = kv_capacity(in);
  EXPECT_EQ(out.requested.value, 22'725'564'826);
  EXPECT_EQ(out.weights.value, 9'977'479'168);
  EXPECT_EQ(out.forward_peak.value, 155'189'248);
  EXPECT_EQ(out.activation_peak.value, 563'085'312);
  EXPECT_EQ(out.available_kv.value, 11'540'755'252);
  EXPECT_EQ(out.num_blocks, 8804);
  EXPECT_EQ(out.kv_tokens, 140'864);
}

// The roofline of one GPU at TP = 4: a batch-1 decode reads the GPU's dense weights once,
// 17,112,760,320 linear params x 0.51953125 B + 1,318,912 norm params x 2 B = 8,893,251,584 B;
// at 1,008 GB/s x the default memory efficiency; FLOPs are 2 x (17,112,760,320 + 1,318,912) per
// token.
TEST(TensorParallel, RooflineTimesOneShard) {
  DeviceFigures d;
  d.tensor_flops = FlopsPerSec{165.2e12};
  d.memory_bandwidth = BytesPerSec{1008e9};
  const RooflineModel r(llama70b(DType::kInt4), d, RooflineParams{}, 4);
  BatchShape b;
  b.decode_contexts = {1};
  const StepBreakdown s = r.step_time(b);
  EXPECT_NEAR(s.dense_s, 8'893'251'584.0 / (1008e9 * RooflineParams{}.memory_efficiency), 1e-12);
  EXPECT_DOUBLE_EQ(r.dense_flops(b), 2.0 * (17'112'760'320.0 + 1'318'912.0));
  EXPECT_EQ(s.communication_s, 0.0);
}

// A stand-in compute model: fixed kernel times.
class FixedModel final : public ComputeModel {
 public:
  StepBreakdown step_time(const BatchShape& batch) const override {
    StepBreakdown s;
    if (batch.empty()) return s;
    s.dense_s = 0.010;
    s.attention_s = 0.002;
    s.lm_head_s = 0.001;
    s.overhead_s = 0.0005;
    return s;
  }
  std::string describe() const override { return "fixed"; }
};

// Communication of a step with one 100-token prefill chunk and two decodes (T = 102, S = 3) on
// Llama-3.1-70B, with collectives costing 1 ns per byte: (2 x 80 + 1) all-reduces of 102 x
// 8,192 x 2 = 1,671,168 B -> 161 x 1.671168 ms = 269.058048 ms, plus the logits all-gather of
// 3 x 128,256 x 2 = 769,536 B -> 0.769536 ms; 269.827584 ms in all, added to the total.
TEST(TensorParallelModel, AddsTwoAllReducesPerLayerAndTheLogitsGather) {
  const auto per_byte = [](double bytes) { return bytes * 1e-9; };
  const TensorParallelModel m(std::make_unique<FixedModel>(), llama70b(), 4, per_byte, per_byte);
  BatchShape b;
  b.prefills = {{100, 0}};
  b.decode_contexts = {10, 20};
  const StepBreakdown s = m.step_time(b);
  EXPECT_NEAR(s.communication_s, 0.269827584, 1e-12);
  EXPECT_NEAR(s.total_s(), 0.0135 + 0.269827584, 1e-12);
  EXPECT_EQ(m.step_time(BatchShape{}).total_s(), 0.0);
}

// Rescaling a BF16 one-GPU model to int4 at TP = 4: for a batch-1 decode both rooflines are
// memory-bound, so the dense time scales by the dense weight bytes, 8,893,251,584 B per GPU
// against (68,451,041,280 + 1,318,912) x 2 = 136,904,720,384 B for the whole BF16 model.
// Overheads are not rescaled.
TEST(TensorParallelModel, RescalesAProfileByTheRooflineRatio) {
  DeviceFigures d;
  d.tensor_flops = FlopsPerSec{165.2e12};
  d.memory_bandwidth = BytesPerSec{1008e9};
  auto profiled = std::make_unique<RooflineModel>(llama70b(), d);
  auto target = std::make_unique<RooflineModel>(llama70b(DType::kInt4), d, RooflineParams{}, 4);
  const TensorParallelModel m(std::make_unique<FixedModel>(), llama70b(DType::kInt4), 4, {}, {},
                              std::move(profiled), std::move(target));
  BatchShape b;
  b.decode_contexts = {1};
  EXPECT_NEAR(m.step_time(b).dense_s, 0.010 * 8'893'251'584.0 / 136'904'720'384.0, 1e-12);
  EXPECT_DOUBLE_EQ(m.step_time(b).overhead_s, 0.0005);
}

}  // namespace
}  // namespace kvsim::models
