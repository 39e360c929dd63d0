#include "models/model_spec.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/models/model_shapes.hpp"

namespace kvsim::models {
namespace {

using testing::llama_31_70b;
using testing::llama_31_8b;
using testing::mistral_7b_v03;
using testing::qwen25_32b;
using testing::qwen25_7b;
using testing::qwen3_8b;

// KV bytes per token = 2 x layers x kv_heads x head_dim x 2 bytes (docs/sources.md A4):
//   Llama-3.1-8B  2 x 32 x 8 x 128 x 2 = 131,072 = 128 KiB
//   Llama-3.1-70B 2 x 80 x 8 x 128 x 2 = 327,680 = 320 KiB
//   Qwen2.5-7B    2 x 28 x 4 x 128 x 2 =  57,344 =  56 KiB
//   Qwen2.5-32B   2 x 64 x 8 x 128 x 2 = 262,144 = 256 KiB
TEST(ModelSpec, KvBytesPerTokenByHand) {
  EXPECT_EQ(llama_31_8b().kv_bytes_per_token().value, 128 * 1024);
  EXPECT_EQ(llama_31_70b().kv_bytes_per_token().value, 320 * 1024);
  EXPECT_EQ(qwen25_7b().kv_bytes_per_token().value, 56 * 1024);
  EXPECT_EQ(qwen25_32b().kv_bytes_per_token().value, 256 * 1024);
}

// An FP8 KV cache halves the bytes per token.
TEST(ModelSpec, Fp8KvHalvesTheBytes) {
  ModelSpec m = llama_31_8b();
  m.kv_dtype = DType::kFp8;
  EXPECT_EQ(m.kv_bytes_per_token().value, 64 * 1024);
}

// Llama-3.1-8B by hand:
//   embeddings 128,256 x 4,096 = 525,336,576 (and the same again for the untied lm_head)
//   per layer  q 4096x4096 = 16,777,216; k, v 4096x1024 = 4,194,304 each; o 16,777,216;
//              gate, up, down 3 x 4096 x 14336 = 176,160,768; norms 2 x 4096 = 8,192
//              = 218,112,000; x 32 layers = 6,979,584,000
//   final norm 4,096
//   total      525,336,576 x 2 + 6,979,584,000 + 4,096 = 8,030,261,248 (published 8.03B)
TEST(ModelSpec, ParamsFromShapeLlama8B) {
  ModelSpec m = llama_31_8b();
  EXPECT_EQ(params_from_shape(m), 8'030'261'248);
  EXPECT_EQ(m.embedding_params(), 525'336'576);
  EXPECT_EQ(m.lm_head_params(), 525'336'576);
  m.num_params = params_from_shape(m);
  EXPECT_EQ(m.dense_params(), 6'979'588'096);  // 32 layers + final norm
}

// The other five, each by the same sums (layer sum x layers + embeddings (+ lm_head) + norm):
//   Llama-3.1-70B  855,654,400 x 80 + 1,050,673,152 x 2 + 8,192          = 70,553,706,496
//   Mistral-7B     218,112,000 x 32 + 134,217,728 x 2 + 4,096             =  7,248,023,552
//   Qwen2.5-7B     (233,053,184 + biases 3,584 + 512 + 512) x 28
//                  + 544,997,376 x 2 + 3,584                              =  7,615,616,512
//   Qwen2.5-32B    (487,598,080 + biases 5,120 + 1,024 + 1,024) x 64
//                  + 778,567,680 x 2 + 5,120                              = 32,763,876,352
//   Qwen3-8B       (192,946,176 + q/k norms 2 x 128) x 36
//                  + 622,329,856 x 2 + 4,096                              =  8,190,735,360
// and each rounds to its published total.
TEST(ModelSpec, ParamsFromShapeMatchHandSumsAndPublishedTotals) {
  EXPECT_EQ(params_from_shape(llama_31_70b()), 70'553'706'496);
  EXPECT_EQ(params_from_shape(mistral_7b_v03()), 7'248'023'552);
  EXPECT_EQ(params_from_shape(qwen25_7b()), 7'615'616'512);
  EXPECT_EQ(params_from_shape(qwen25_32b()), 32'763'876'352);
  EXPECT_EQ(params_from_shape(qwen3_8b()), 8'190'735'360);

  auto billions = [](const ModelSpec& m, int decimals) {
    const double scale = std::pow(10.0, decimals);
    return std::round(static_cast<double>(params_from_shape(m)) / 1e9 * scale) / scale;
  };
  EXPECT_DOUBLE_EQ(billions(llama_31_8b(), 2), 8.03);
  EXPECT_DOUBLE_EQ(billions(llama_31_70b(), 1), 70.6);
  EXPECT_DOUBLE_EQ(billions(mistral_7b_v03(), 2), 7.25);
  EXPECT_DOUBLE_EQ(billions(qwen25_7b(), 2), 7.62);
  EXPECT_DOUBLE_EQ(billions(qwen25_32b(), 1), 32.8);
  EXPECT_DOUBLE_EQ(billions(qwen3_8b(), 2), 8.19);
}

// Without the Qwen2.5 biases the count drops by exactly (q + 2 kv) x layers = 4,608 x 28.
TEST(ModelSpec, BiasesAreCounted) {
  ModelSpec m = qwen25_7b();
  const auto with = params_from_shape(m);
  m.qkv_bias = false;
  EXPECT_EQ(with - params_from_shape(m), 4'608 * 28);
}

// A tied model has no separate lm_head: dense params = total - one embedding table.
TEST(ModelSpec, TiedEmbeddings) {
  ModelSpec m = llama_31_8b();
  m.tie_word_embeddings = true;
  m.num_params = params_from_shape(m);
  EXPECT_EQ(m.num_params, 8'030'261'248 - 525'336'576);
  EXPECT_EQ(m.lm_head_params(), 0);
  EXPECT_EQ(m.dense_params(), 6'979'588'096);
}

// BF16 weights weigh 2 bytes per parameter: 8,030,261,248 x 2 = 16,060,522,496 B (14.96 GiB).
// FP8 quantizes the linear layers only, 32 x (4,096 x 4,096 x 2 + 2 x 4,096 x 1,024
// + 3 x 4,096 x 14,336) = 6,979,321,856 parameters at 1 B; embeddings, lm_head and norms
// (1,050,939,392 parameters) stay at 2 B: 9,081,200,640 B (the FP8 checkpoints ship ~9.08 GB).
TEST(ModelSpec, WeightBytes) {
  EXPECT_EQ(llama_31_8b().weight_bytes().value, 16'060'522'496);
  ModelSpec m = llama_31_8b();
  m.dtype = DType::kFp8;
  EXPECT_EQ(m.weight_bytes().value, 9'081'200'640);
}

}  // namespace
}  // namespace kvsim::models
