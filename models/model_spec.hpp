#pragma once
// The shape of a decoder-only LLM: what its weights and KV cache weigh. Counts are plain
// integers; byte figures use kvsim::Bytes.
//   kv_bytes_per_token = 2 (K and V) x num_layers x num_kv_heads x head_dim x kv_dtype_bytes
// (vLLM kv_cache_utils / attention spec page size; ../docs/models.md).
#include <cstdint>
#include <string>

#include "kvsim/core/units.hpp"

namespace kvsim::models {

enum class DType { kBf16, kFp16, kFp8, kInt8, kInt4 };

// Bytes per element; int4 is 0.5.
double dtype_bytes(DType d);
const char* dtype_name(DType d);

struct ModelSpec {
  std::string name;   // catalog name, e.g. llama-3.1-8b
  std::string hf_id;  // e.g. meta-llama/Llama-3.1-8B-Instruct
  int num_layers = 0;
  int hidden_size = 0;
  int num_attention_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  int intermediate_size = 0;
  int vocab_size = 0;
  std::int64_t num_params = 0;  // total parameters, embeddings included
  bool tie_word_embeddings = false;
  int max_position_embeddings = 0;
  DType dtype = DType::kBf16;     // weight dtype
  DType kv_dtype = DType::kBf16;  // KV cache dtype (vLLM kv_cache_dtype "auto" = weight dtype)
  std::string source;             // citations for the figures (catalog text)

  // KV cache bytes for one token over all layers (whole model, one GPU, no TP).
  Bytes kv_bytes_per_token() const;
  // Weight bytes: num_params x dtype bytes.
  Bytes weight_bytes() const;
};

}  // namespace kvsim::models
