#pragma once
// The shape of a decoder-only LLM: what its weights and KV cache weigh. Counts are plain
// integers; byte figures use kvsim::Bytes.
//   kv_bytes_per_token = 2 (K and V) x num_layers x num_kv_heads x head_dim x kv_dtype_bytes
// (vLLM kv_cache_utils / attention spec page size; ../docs/models.md).
// Parameters of a Llama-style decoder (Llama 3.x, Mistral, Qwen2.5, Qwen3), from the shapes:
//   embeddings        vocab x hidden
//   per layer         q: hidden x heads*head_dim, k and v: hidden x kv_heads*head_dim,
//                     o: heads*head_dim x hidden, gate and up: hidden x intermediate,
//                     down: intermediate x hidden, two RMSNorm weights of hidden,
//                     + q/k/v biases (Qwen2.5: heads*head_dim + 2 kv_heads*head_dim),
//                     + per-head q/k RMSNorm weights (Qwen3: 2 x head_dim)
//   final norm        hidden
//   lm_head           vocab x hidden unless tied to the embeddings
// (HuggingFace transformers modeling_llama.py / modeling_qwen2.py / modeling_qwen3.py layouts).
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
  DType dtype = DType::kBf16;     // weight dtype of the linear layers (models/quantization.hpp)
  DType kv_dtype = DType::kBf16;  // KV cache dtype (vLLM kv_cache_dtype: "auto" = the 16-bit
                                  // activation dtype, "fp8" = 1 byte)
  int quant_group_size = 128;     // int8 / int4 weight-only: input rows per fp16 scale and zero
  bool qkv_bias = false;          // q/k/v projections carry biases (Qwen2.5)
  bool qk_norm = false;           // per-head RMSNorm on q and k (Qwen3)
  std::string source;             // citations for the figures (catalog text)

  // KV cache bytes for one token over all layers (whole model, one GPU, no TP).
  Bytes kv_bytes_per_token() const;
  // Weight bytes of the whole model: 16-bit parameters x 2 B, linear layers in their dtype with
  // group scales (models/quantization.hpp); num_params x 2 for BF16/FP16.
  Bytes weight_bytes() const;

  // Parameters of the input embedding table: vocab x hidden.
  std::int64_t embedding_params() const;
  // Parameters of a separate lm_head matrix: vocab x hidden, 0 when tied to the embeddings.
  std::int64_t lm_head_params() const;
  // Parameters that every token multiplies through (attention projections, MLP, norms):
  // num_params minus the embedding table and the lm_head matrix (the latter counted even when
  // tied, since it is applied once per sequence, not once per token).
  std::int64_t dense_params() const;
};

// Total parameters computed from the shapes (equation in the header comment); the catalog's
// num_params is checked against it.
std::int64_t params_from_shape(const ModelSpec& m);

}  // namespace kvsim::models
