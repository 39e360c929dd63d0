#include "models/hf_config.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "sim/core/error.hpp"

namespace kvsim::models {
namespace {

const std::string kDir = std::string(KVSIM_TEST_DATA_DIR) + "/fixtures/hf_configs/";

ModelSpec fixture(const std::string& name) { return load_hf_config(kDir + name + ".json"); }

// |a / b - 1|
double relative_error(double a, double b) { return std::abs(a / b - 1.0); }

// The first diagnostic of the InputError that reading `text` throws.
Diagnostic first_error(const std::string& text) {
  try {
    model_from_hf_config(text, "config.json");
  } catch (const InputError& e) {
    if (e.diagnostics().empty()) ADD_FAILURE() << "an InputError without diagnostics";
    return e.diagnostics().empty() ? Diagnostic{} : e.diagnostics()[0];
  }
  ADD_FAILURE() << "no error";
  return {};
}

// A small Llama config with `extra` members inserted after model_type (line 3 on).
std::string llama_with(const std::string& extra) {
  return "{\n"
         "  \"model_type\": \"llama\",\n" +
         extra +
         "  \"hidden_size\": 256,\n"
         "  \"num_attention_heads\": 4,\n"
         "  \"num_hidden_layers\": 2,\n"
         "  \"intermediate_size\": 512,\n"
         "  \"vocab_size\": 1000,\n"
         "  \"max_position_embeddings\": 2048\n"
         "}\n";
}

// Llama-3.1-8B: every shape field is read as published, head_dim is 4096 / 32 = 128, and the
// totals are the hand sums of model_spec_test.cpp: 8,030,261,248 parameters and
// 2 x 32 layers x 8 KV heads x 128 x 2 B = 131,072 KV bytes per token. Without _name_or_path the
// name is the file's stem and hf_id is empty.
TEST(HfConfig, Llama31_8bMatchesPublishedTotals) {
  const ModelSpec m = fixture("llama-3.1-8b");
  EXPECT_EQ(m.name, "llama-3.1-8b");
  EXPECT_EQ(m.hf_id, "");
  EXPECT_EQ(m.source, "config.json: " + kDir + "llama-3.1-8b.json");
  EXPECT_EQ(m.num_layers, 32);
  EXPECT_EQ(m.hidden_size, 4096);
  EXPECT_EQ(m.num_attention_heads, 32);
  EXPECT_EQ(m.num_kv_heads, 8);
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(m.intermediate_size, 14336);
  EXPECT_EQ(m.vocab_size, 128256);
  EXPECT_EQ(m.max_position_embeddings, 131072);
  EXPECT_FALSE(m.tie_word_embeddings);
  EXPECT_EQ(m.dtype, DType::kBf16);
  EXPECT_EQ(m.kv_dtype, DType::kBf16);
  EXPECT_FALSE(m.qkv_bias);
  EXPECT_FALSE(m.qk_norm);
  EXPECT_FALSE(m.is_moe());
  EXPECT_EQ(m.num_params, 8'030'261'248);
  EXPECT_EQ(m.kv_bytes_per_token().value, 131'072);
}

// Qwen3-32B (head_dim 128 given; q = 64 x 128 = 8,192, kv = 8 x 128 = 1,024), by hand:
//   per layer  q 5120x8192 = 41,943,040; k, v 5120x1024 = 5,242,880 each; o 41,943,040;
//              norms 2 x 5,120 = 10,240; q/k norms 2 x 128 = 256 -> attention 94,382,336
//              gate, up, down 3 x 5120 x 25600 = 393,216,000 -> 487,598,336; x 64 = 31,206,293,504
//   embeddings 151,936 x 5,120 = 777,912,320, twice (untied) = 1,555,824,640; final norm 5,120
//   total      32,762,123,264, 0.12 % under the published 32.8B.
TEST(HfConfig, Qwen3_32bHasQkNormAndPublishedSize) {
  const ModelSpec m = fixture("qwen3-32b");
  EXPECT_TRUE(m.qk_norm);
  EXPECT_FALSE(m.qkv_bias);
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(m.num_params, 32'762'123'264);
  EXPECT_LT(relative_error(static_cast<double>(m.num_params), 32.8e9), 0.005);
}

// Qwen3-30B-A3B-Instruct-2507, every one of its 48 layers an MoE layer (decoder_sparse_step 1,
// mlp_only_layers []), by hand:
//   attention per layer  2 x 2048x4096 + 2 x 2048x512 + norms 4,096 + q/k norms 256 = 18,878,720
//   experts per layer    128 x 3 x 2048 x 768 = 603,979,776; router 2048 x 128 = 262,144
//   48 layers            48 x 623,120,640 = 29,909,790,720
//   embeddings           151,936 x 2,048 = 311,164,928, twice = 622,329,856; final norm 2,048
//   total                30,532,122,624 (published 30.5B: +0.11 %)
// Activated: dense_params() leaves out the embeddings, the lm_head and 120 idle experts of 128 in
// each layer (48 x 120 x 4,718,592 = 27,179,089,920): 2,730,702,848; with the embedding and the
// lm_head (2 x 151,936 x 2,048) 3,353,032,704 (published 3.3B activated: +1.6 %).
TEST(HfConfig, Qwen3_30bA3bTotalAndActivatedParameters) {
  const ModelSpec m = fixture("qwen3-30b-a3b-instruct-2507");
  EXPECT_TRUE(m.qk_norm);
  EXPECT_EQ(m.num_experts, 128);
  EXPECT_EQ(m.num_experts_per_tok, 8);
  EXPECT_EQ(m.moe_intermediate_size, 768);
  EXPECT_EQ(m.shared_expert_intermediate_size, 0);
  EXPECT_EQ(m.num_dense_layers, 0);
  EXPECT_EQ(m.moe_layers(), 48);
  EXPECT_EQ(m.max_position_embeddings, 262144);
  EXPECT_EQ(m.num_params, 30'532'122'624);
  EXPECT_LT(relative_error(static_cast<double>(m.num_params), 30.5e9), 0.005);
  const std::int64_t activated = m.dense_params() + 2 * m.embedding_params();
  EXPECT_EQ(activated, 3'353'032'704);
  EXPECT_LT(relative_error(static_cast<double>(activated), 3.3e9), 0.05);
}

// Mixtral-8x7B-v0.1: 8 experts of the config's intermediate_size (14,336) in all 32 layers,
// top 2, no q/k/v biases. By hand:
//   attention per layer  2 x 4096x4096 + 2 x 4096x1024 + norms 8,192 = 41,951,232
//   experts per layer    8 x 3 x 4096 x 14336 = 1,409,286,144; router 4096 x 8 = 32,768
//   32 layers            32 x 1,451,270,144 = 46,440,644,608
//   embeddings           32,000 x 4,096 = 131,072,000, twice = 262,144,000; final norm 4,096
//   total                46,702,792,704 (published 46.7B: +0.006 %)
TEST(HfConfig, Mixtral8x7bHasExpertsInEveryLayer) {
  const ModelSpec m = fixture("mixtral-8x7b-v0.1");
  EXPECT_EQ(m.num_experts, 8);
  EXPECT_EQ(m.num_experts_per_tok, 2);
  EXPECT_EQ(m.moe_intermediate_size, 14336);
  EXPECT_EQ(m.num_dense_layers, 0);
  EXPECT_FALSE(m.qkv_bias);
  EXPECT_FALSE(m.qk_norm);
  EXPECT_EQ(m.num_params, 46'702'792'704);
  EXPECT_LT(relative_error(static_cast<double>(m.num_params), 46.7e9), 0.005);
}

// Qwen2.5-7B-Instruct: Qwen2 attention always carries q/k/v biases (the config has no
// attention_bias key); the total is model_spec_test.cpp's hand sum 7,615,616,512.
TEST(HfConfig, Qwen25_7bHasQkvBias) {
  const ModelSpec m = fixture("qwen2.5-7b-instruct");
  EXPECT_TRUE(m.qkv_bias);
  EXPECT_FALSE(m.qk_norm);
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(m.num_kv_heads, 4);
  EXPECT_EQ(m.num_params, 7'615'616'512);
}

// Mistral-7B-Instruct-v0.3 has no head_dim key: 4096 / 32 = 128; total 7,248,023,552
// (model_spec_test.cpp).
TEST(HfConfig, Mistral7bDerivesHeadDim) {
  const ModelSpec m = fixture("mistral-7b-instruct-v0.3");
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(m.vocab_size, 32768);
  EXPECT_EQ(m.num_params, 7'248'023'552);
}

// Qwen2-MoE, 6 layers, decoder_sparse_step 2, mlp_only_layers [0]: layer l is dense when it is
// in mlp_only_layers or (l + 1) % 2 != 0, i.e. layers 0, 2 and 4 (layer 0 on both counts, once):
// 3 dense layers, 3 MoE layers. By hand (q = kv = 16 x 128 = 2,048):
//   attention per layer  4 x 2048x2048 + biases 3 x 2,048 + norms 4,096 = 16,787,456; x 6
//                        = 100,724,736
//   dense MLP            3 x 2048 x 5632 = 34,603,008; x 3 = 103,809,024
//   MoE MLP              60 x 3 x 2048 x 1408 = 519,045,120 + shared 34,603,008
//                        + router 2048 x 60 = 122,880 + shared gate 2,048 = 553,773,056; x 3
//                        = 1,661,319,168
//   embeddings, lm_head  2 x 151,936 x 2,048 = 622,329,856; final norm 2,048
//   total                2,488,184,832
// With mlp_only_layers [1] instead, layers 0, 1, 2 and 4 are dense (4), and one MoE layer turns
// into a dense one: 2,488,184,832 - 553,773,056 + 34,603,008 = 1,969,014,784.
TEST(HfConfig, Qwen2MoeDenseLayersFollowSparseStepAndMlpOnlyLayers) {
  const ModelSpec m = fixture("qwen2-moe-sparse-step");
  EXPECT_TRUE(m.qkv_bias);
  EXPECT_EQ(m.num_experts, 60);
  EXPECT_EQ(m.num_experts_per_tok, 4);
  EXPECT_EQ(m.moe_intermediate_size, 1408);
  EXPECT_EQ(m.shared_expert_intermediate_size, 5632);
  EXPECT_EQ(m.num_dense_layers, 3);
  EXPECT_EQ(m.moe_layers(), 3);
  EXPECT_EQ(m.num_params, 2'488'184'832);

  const std::string text = R"({
  "model_type": "qwen2_moe",
  "decoder_sparse_step": 2,
  "mlp_only_layers": [1],
  "hidden_size": 2048,
  "intermediate_size": 5632,
  "max_position_embeddings": 8192,
  "moe_intermediate_size": 1408,
  "num_attention_heads": 16,
  "num_experts": 60,
  "num_experts_per_tok": 4,
  "num_hidden_layers": 6,
  "shared_expert_intermediate_size": 5632,
  "vocab_size": 151936
})";
  const ModelSpec one = model_from_hf_config(text, "qwen2-moe.json");
  EXPECT_EQ(one.num_dense_layers, 4);
  EXPECT_EQ(one.num_kv_heads, 16);  // num_key_value_heads absent: num_attention_heads
  EXPECT_EQ(one.num_params, 1'969'014'784);
}

// _name_or_path names the model and is its hf_id; attention_bias turns on Llama's q/k/v biases;
// tie_word_embeddings drops the lm_head.
TEST(HfConfig, NameOrPathAttentionBiasAndTiedEmbeddings) {
  const ModelSpec m = model_from_hf_config(llama_with("  \"_name_or_path\": \"org/tiny-llama\",\n"
                                                      "  \"attention_bias\": true,\n"
                                                      "  \"tie_word_embeddings\": true,\n"),
                                           "dir/config.json");
  EXPECT_EQ(m.name, "org/tiny-llama");
  EXPECT_EQ(m.hf_id, "org/tiny-llama");
  EXPECT_EQ(m.source, "config.json: dir/config.json");
  EXPECT_TRUE(m.qkv_bias);
  EXPECT_TRUE(m.tie_word_embeddings);
  EXPECT_EQ(m.lm_head_params(), 0);
  EXPECT_EQ(m.head_dim, 64);
  EXPECT_EQ(m.num_params, params_from_shape(m));
}

// Weight and KV dtypes: float16 -> fp16 and an fp16 KV cache; float32 and an absent dtype ->
// bf16; the newer `dtype` key reads like torch_dtype; fp8 quantization -> fp8 weights with a
// 16-bit KV cache; awq 4 bits -> int4 with group 128 by default; gptq 8 bits group 64 on a
// float16 checkpoint -> int8, group 64, fp16 KV cache.
TEST(HfConfig, DtypesAndQuantization) {
  auto read = [](const std::string& extra) {
    return model_from_hf_config(llama_with(extra), "config.json");
  };
  ModelSpec m = read("  \"torch_dtype\": \"float16\",\n");
  EXPECT_EQ(m.dtype, DType::kFp16);
  EXPECT_EQ(m.kv_dtype, DType::kFp16);
  m = read("  \"torch_dtype\": \"float32\",\n");
  EXPECT_EQ(m.dtype, DType::kBf16);
  EXPECT_EQ(m.kv_dtype, DType::kBf16);
  m = read("");
  EXPECT_EQ(m.dtype, DType::kBf16);
  EXPECT_EQ(m.kv_dtype, DType::kBf16);
  m = read("  \"dtype\": \"float16\",\n");
  EXPECT_EQ(m.dtype, DType::kFp16);

  m = read(
      "  \"quantization_config\": {\"quant_method\": \"fp8\", \"activation_scheme\": "
      "\"dynamic\"},\n");
  EXPECT_EQ(m.dtype, DType::kFp8);
  EXPECT_EQ(m.kv_dtype, DType::kBf16);

  m = read(
      "  \"torch_dtype\": \"float16\",\n"
      "  \"quantization_config\": {\"quant_method\": \"awq\", \"bits\": 4},\n");
  EXPECT_EQ(m.dtype, DType::kInt4);
  EXPECT_EQ(m.kv_dtype, DType::kFp16);
  EXPECT_EQ(m.quant_group_size, 128);

  m = read(
      "  \"torch_dtype\": \"float16\",\n"
      "  \"quantization_config\": {\"quant_method\": \"gptq\", \"bits\": 8, "
      "\"group_size\": 64},\n");
  EXPECT_EQ(m.dtype, DType::kInt8);
  EXPECT_EQ(m.kv_dtype, DType::kFp16);
  EXPECT_EQ(m.quant_group_size, 64);
}

// Malformed JSON (a trailing comma before the closing brace) is reported at the brace: line 4,
// column 1, with no key path.
TEST(HfConfig, MalformedJsonNamesLineAndColumn) {
  const Diagnostic d = first_error(
      "{\n"
      "  \"model_type\": \"llama\",\n"
      "  \"hidden_size\": 4096,\n"
      "}\n");
  EXPECT_EQ(d.file, "config.json");
  EXPECT_EQ(d.line, 4);
  EXPECT_EQ(d.column, 1);
  EXPECT_EQ(d.path, "");
  EXPECT_NE(d.message.find("invalid JSON"), std::string::npos) << d.message;
}

// A missing num_hidden_layers names the key; the text has no place for it: 0:0.
TEST(HfConfig, MissingNumHiddenLayers) {
  std::string text = llama_with("");
  const std::string line = "  \"num_hidden_layers\": 2,\n";
  text.erase(text.find(line), line.size());
  const Diagnostic d = first_error(text);
  EXPECT_EQ(d.path, "num_hidden_layers");
  EXPECT_EQ(d.line, 0);
  EXPECT_EQ(d.column, 0);
  EXPECT_EQ(d.message, "missing required key");
}

// num_hidden_layers given as a string is a type error at its value: line 3 ("num_hidden_layers"
// is the first extra member), column 24 (two spaces, 19 characters of key, ": ").
TEST(HfConfig, NumHiddenLayersAsString) {
  std::string text = llama_with("  \"num_hidden_layers\": \"32\",\n");
  const std::string line = "  \"num_hidden_layers\": 2,\n";
  text.erase(text.find(line), line.size());
  const Diagnostic d = first_error(text);
  EXPECT_EQ(d.path, "num_hidden_layers");
  EXPECT_EQ(d.line, 3);
  EXPECT_EQ(d.column, 24);
  EXPECT_EQ(d.message, "must be an integer, got string \"32\"");
}

// model_type "gpt2" is unsupported; the message lists the seven supported types; the value is on
// line 2, column 17.
TEST(HfConfig, UnsupportedModelTypeListsSupportedOnes) {
  std::string text = llama_with("");
  text.replace(text.find("\"llama\""), 7, "\"gpt2\"");
  const Diagnostic d = first_error(text);
  EXPECT_EQ(d.path, "model_type");
  EXPECT_EQ(d.line, 2);
  EXPECT_EQ(d.column, 17);
  EXPECT_EQ(d.message,
            "unsupported model_type 'gpt2'; supported: llama, mistral, qwen2, qwen3, qwen3_moe, "
            "mixtral, qwen2_moe");
}

// 4 attention heads over 3 KV heads do not group evenly: the error points at
// num_key_value_heads (line 3).
TEST(HfConfig, HeadsNotDivisibleByKvHeads) {
  const Diagnostic d = first_error(llama_with("  \"num_key_value_heads\": 3,\n"));
  EXPECT_EQ(d.path, "num_key_value_heads");
  EXPECT_EQ(d.line, 3);
  EXPECT_EQ(d.column, 26);
  EXPECT_EQ(d.message, "num_attention_heads (4) must be a multiple of num_key_value_heads (3)");
}

// An awq checkpoint of 3 bits is out of range: the path is quantization_config.bits and the
// location its value inside the nested object (line 5, column 13).
TEST(HfConfig, AwqWithThreeBits) {
  const Diagnostic d =
      first_error(llama_with("  \"quantization_config\": {\n"
                             "    \"quant_method\": \"awq\",\n"
                             "    \"bits\": 3,\n"
                             "    \"group_size\": 128\n"
                             "  },\n"));
  EXPECT_EQ(d.path, "quantization_config.bits");
  EXPECT_EQ(d.line, 5);
  EXPECT_EQ(d.column, 13);
  EXPECT_EQ(d.message, "awq quantization needs 4 or 8 bits, got 3");
}

// A quant_method other than fp8, awq and gptq is an error naming it.
TEST(HfConfig, UnsupportedQuantMethod) {
  const Diagnostic d = first_error(llama_with(
      "  \"quantization_config\": {\"quant_method\": \"bitsandbytes\", \"bits\": 4},\n"));
  EXPECT_EQ(d.path, "quantization_config.quant_method");
  EXPECT_EQ(d.line, 3);
  EXPECT_EQ(d.message, "unsupported quant_method 'bitsandbytes'; supported: fp8, awq, gptq");
}

// Top-k above the number of experts and an mlp_only_layers entry past the last layer are range
// errors at their keys.
TEST(HfConfig, MoeRangeErrors) {
  const std::string moe = R"({
  "model_type": "qwen3_moe",
  "hidden_size": 256,
  "num_attention_heads": 4,
  "num_hidden_layers": 2,
  "intermediate_size": 512,
  "moe_intermediate_size": 64,
  "num_experts": 4,
  "num_experts_per_tok": TOPK,
  "mlp_only_layers": [LAYERS],
  "vocab_size": 1000,
  "max_position_embeddings": 2048
})";
  auto with = [&](const std::string& topk, const std::string& layers) {
    std::string t = moe;
    t.replace(t.find("TOPK"), 4, topk);
    t.replace(t.find("LAYERS"), 6, layers);
    return t;
  };
  EXPECT_EQ(model_from_hf_config(with("2", "1"), "m.json").num_dense_layers, 1);
  Diagnostic d = first_error(with("5", ""));
  EXPECT_EQ(d.path, "num_experts_per_tok");
  EXPECT_EQ(d.line, 9);
  d = first_error(with("2", "0, 2"));
  EXPECT_EQ(d.path, "mlp_only_layers[1]");
  EXPECT_EQ(d.line, 10);
  EXPECT_EQ(d.message, "must be between 0 and 1, got 2");
  d = first_error(with("2", "0, 1"));
  EXPECT_EQ(d.path, "mlp_only_layers");
}

// A file that cannot be read is an InputError naming it, without a location.
TEST(HfConfig, UnreadableFileIsNamed) {
  const std::string path = kDir + "no-such-config.json";
  try {
    load_hf_config(path);
    FAIL() << "no error";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].file, path);
    EXPECT_EQ(e.diagnostics()[0].line, 0);
  }
}

}  // namespace
}  // namespace kvsim::models
