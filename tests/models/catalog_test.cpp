// The model catalog (scenarios/catalog/models.yaml) against the HuggingFace shapes typed into
// model_shapes.hpp and the parameter counts derived by hand in model_spec_test.cpp.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "models/model_spec.hpp"
#include "tests/models/catalog_reader.hpp"
#include "tests/models/model_shapes.hpp"

namespace kvsim::models {
namespace {

using kvsim::testing::Catalog;
using kvsim::testing::CatalogEntry;

const Catalog& models_catalog() {
  static const Catalog c = kvsim::testing::read_catalog(std::string(KVSIM_SOURCE_DIR) +
                                                        "/scenarios/catalog/models.yaml");
  return c;
}

int as_int(const CatalogEntry& e, const std::string& key) { return std::stoi(e.at(key)); }

bool as_bool(const CatalogEntry& e, const std::string& key) {
  auto it = e.find(key);
  if (it == e.end()) return false;
  EXPECT_TRUE(it->second == "true" || it->second == "false") << key << ": " << it->second;
  return it->second == "true";
}

// Builds a ModelSpec from a catalog entry the way the scenario decoder will (same key names).
ModelSpec spec_from(const std::string& name, const CatalogEntry& e) {
  ModelSpec m;
  m.name = name;
  m.hf_id = e.at("hf_id");
  m.num_layers = as_int(e, "num_layers");
  m.hidden_size = as_int(e, "hidden_size");
  m.num_attention_heads = as_int(e, "num_attention_heads");
  m.num_kv_heads = as_int(e, "num_kv_heads");
  m.head_dim = as_int(e, "head_dim");
  m.intermediate_size = as_int(e, "intermediate_size");
  m.vocab_size = as_int(e, "vocab_size");
  m.num_params = std::stoll(e.at("num_params"));
  m.tie_word_embeddings = as_bool(e, "tie_word_embeddings");
  m.max_position_embeddings = as_int(e, "max_position_embeddings");
  m.qkv_bias = as_bool(e, "qkv_bias");  // absent in the catalog file: false
  m.qk_norm = as_bool(e, "qk_norm");
  m.source = e.at("source");
  return m;
}

// The eight BF16 models (one a mixture of experts) and two quantized Llama-3.1-70B variants, each
// with only ModelSpec field names as keys.
TEST(ModelCatalog, HasTheModelsWithKnownKeys) {
  const std::set<std::string> expected = {"llama-3.1-8b", "llama-3.1-70b", "mistral-7b",
                                          "qwen2.5-7b",   "qwen2.5-32b",   "qwen3-8b",
                                          "qwen3-32b",    "qwen3-30b-a3b",
                                          "llama-3.1-70b-awq-int4", "llama-3.1-70b-fp8"};
  std::set<std::string> names;
  for (const auto& [name, entry] : models_catalog()) names.insert(name);
  EXPECT_EQ(names, expected);

  const std::set<std::string> fields = {"hf_id",
                                        "num_layers",
                                        "hidden_size",
                                        "num_attention_heads",
                                        "num_kv_heads",
                                        "head_dim",
                                        "intermediate_size",
                                        "vocab_size",
                                        "num_params",
                                        "tie_word_embeddings",
                                        "max_position_embeddings",
                                        "dtype",
                                        "kv_dtype",
                                        "qkv_bias",
                                        "qk_norm",
                                        "quant_group_size",
                                        "num_experts",
                                        "num_experts_per_tok",
                                        "moe_intermediate_size",
                                        "shared_expert_intermediate_size",
                                        "num_dense_layers",
                                        "source"};
  for (const auto& [name, entry] : models_catalog()) {
    for (const auto& [key, value] : entry) EXPECT_TRUE(fields.count(key)) << name << "." << key;
    const bool quantized = name.find("-awq-int4") != std::string::npos || name.find("-fp8") != std::string::npos;
    EXPECT_EQ(entry.at("dtype"), quantized ? (name.find("fp8") != std::string::npos ? "fp8" : "int4") : "bf16")
        << name;
    EXPECT_FALSE(entry.at("source").empty()) << name;
  }
}

// Every shape equals the HuggingFace config and num_params equals the count from the shapes
// (with the layout flags of the reference: q/k/v biases for Qwen2.5, q/k norms for Qwen3).
TEST(ModelCatalog, ShapesAndParamCountsMatch) {
  const std::vector<ModelSpec> reference = {testing::llama_31_8b(),    testing::llama_31_70b(),
                                            testing::mistral_7b_v03(), testing::qwen25_7b(),
                                            testing::qwen25_32b(),     testing::qwen3_8b(),
                                            testing::qwen3_32b()};
  for (const auto& ref : reference) {
    SCOPED_TRACE(ref.name);
    const ModelSpec m = spec_from(ref.name, models_catalog().at(ref.name));
    EXPECT_EQ(m.num_layers, ref.num_layers);
    EXPECT_EQ(m.hidden_size, ref.hidden_size);
    EXPECT_EQ(m.num_attention_heads, ref.num_attention_heads);
    EXPECT_EQ(m.num_kv_heads, ref.num_kv_heads);
    EXPECT_EQ(m.head_dim, ref.head_dim);
    EXPECT_EQ(m.intermediate_size, ref.intermediate_size);
    EXPECT_EQ(m.vocab_size, ref.vocab_size);
    EXPECT_EQ(m.tie_word_embeddings, ref.tie_word_embeddings);
    EXPECT_EQ(m.max_position_embeddings, ref.max_position_embeddings);
    EXPECT_EQ(m.num_params, ref.num_params);
    // The layout flags (q/k/v biases, q/k norms) come from the reference shapes.
    ModelSpec shaped = m;
    shaped.qkv_bias = ref.qkv_bias;
    shaped.qk_norm = ref.qk_norm;
    EXPECT_EQ(m.num_params, params_from_shape(shaped));
  }
}

// The quantized Llama-3.1-70B variants keep the BF16 model's shapes and parameter count
// (quantization changes bytes, not parameters).
TEST(ModelCatalog, QuantizedVariantsKeepTheShapes) {
  const ModelSpec ref = testing::llama_31_70b();
  for (const char* name : {"llama-3.1-70b-awq-int4", "llama-3.1-70b-fp8"}) {
    SCOPED_TRACE(name);
    const ModelSpec m = spec_from(name, models_catalog().at(name));
    EXPECT_EQ(m.num_layers, ref.num_layers);
    EXPECT_EQ(m.hidden_size, ref.hidden_size);
    EXPECT_EQ(m.num_attention_heads, ref.num_attention_heads);
    EXPECT_EQ(m.num_kv_heads, ref.num_kv_heads);
    EXPECT_EQ(m.intermediate_size, ref.intermediate_size);
    EXPECT_EQ(m.vocab_size, ref.vocab_size);
    EXPECT_EQ(m.num_params, ref.num_params);
    EXPECT_EQ(models_catalog().at(name).at("kv_dtype"), "bf16");
  }
  EXPECT_EQ(models_catalog().at("llama-3.1-70b-awq-int4").at("quant_group_size"), "128");
}

// KV bytes per token of the catalog entries (docs/sources.md A4 table; Qwen3-8B:
// 2 x 36 x 8 x 128 x 2 = 147,456 = 144 KiB).
TEST(ModelCatalog, KvBytesPerToken) {
  auto kv = [](const char* name) {
    return spec_from(name, models_catalog().at(name)).kv_bytes_per_token().value;
  };
  EXPECT_EQ(kv("llama-3.1-8b"), 128 * 1024);
  EXPECT_EQ(kv("llama-3.1-70b"), 320 * 1024);
  EXPECT_EQ(kv("mistral-7b"), 128 * 1024);
  EXPECT_EQ(kv("qwen2.5-7b"), 56 * 1024);
  EXPECT_EQ(kv("qwen2.5-32b"), 256 * 1024);
  EXPECT_EQ(kv("qwen3-8b"), 144 * 1024);
}

}  // namespace
}  // namespace kvsim::models
