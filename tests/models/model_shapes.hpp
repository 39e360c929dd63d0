#pragma once
// Model shapes typed in from the models' HuggingFace config.json files (the same sources as
// scenarios/catalog/models.yaml cites), independently of the catalog file, so that tests can
// check the catalog against them. num_params is the exact total (model_spec_test.cpp derives it
// by hand).
#include "models/model_spec.hpp"

namespace kvsim::models::testing {

inline ModelSpec llama_like(const char* name, int layers, int hidden, int heads, int kv_heads,
                            int inter, int vocab, std::int64_t params, int max_pos) {
  ModelSpec m;
  m.name = name;
  m.num_layers = layers;
  m.hidden_size = hidden;
  m.num_attention_heads = heads;
  m.num_kv_heads = kv_heads;
  m.head_dim = 128;
  m.intermediate_size = inter;
  m.vocab_size = vocab;
  m.num_params = params;
  m.max_position_embeddings = max_pos;
  return m;
}

inline ModelSpec llama_31_8b() {
  return llama_like("llama-3.1-8b", 32, 4096, 32, 8, 14336, 128256, 8'030'261'248, 131072);
}
inline ModelSpec llama_31_70b() {
  return llama_like("llama-3.1-70b", 80, 8192, 64, 8, 28672, 128256, 70'553'706'496, 131072);
}
inline ModelSpec mistral_7b_v03() {
  return llama_like("mistral-7b", 32, 4096, 32, 8, 14336, 32768, 7'248'023'552, 32768);
}
inline ModelSpec qwen25_7b() {
  ModelSpec m = llama_like("qwen2.5-7b", 28, 3584, 28, 4, 18944, 152064, 7'615'616'512, 32768);
  m.qkv_bias = true;
  return m;
}
inline ModelSpec qwen25_32b() {
  ModelSpec m = llama_like("qwen2.5-32b", 64, 5120, 40, 8, 27648, 152064, 32'763'876'352, 32768);
  m.qkv_bias = true;
  return m;
}
inline ModelSpec qwen3_8b() {
  ModelSpec m = llama_like("qwen3-8b", 36, 4096, 32, 8, 12288, 151936, 8'190'735'360, 40960);
  m.qk_norm = true;
  return m;
}
// Qwen3-32B: 2 x 151,936 x 5,120 embeddings + 64 x (5,120 x 8,192 x 2 + 2 x 5,120 x 1,024
// + 3 x 5,120 x 25,600 + 2 x 5,120 + 256) + 5,120 = 32,762,123,264 (the card's 32.8B).
inline ModelSpec qwen3_32b() {
  ModelSpec m = llama_like("qwen3-32b", 64, 5120, 64, 8, 25600, 151936, 32'762'123'264, 40960);
  m.qk_norm = true;
  return m;
}

}  // namespace kvsim::models::testing
