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
// Mixture-of-experts layers (Mixtral, Qwen3-MoE, Qwen2-MoE) replace gate, up and down by
//                     router: hidden x num_experts (+ hidden x 1 gate of a shared expert)
//                     experts: num_experts x 3 x hidden x moe_intermediate_size
//                     shared expert: 3 x hidden x shared_expert_intermediate_size
// in every layer but num_dense_layers, which keep the dense MLP of intermediate_size
// (HuggingFace transformers modeling_llama.py / modeling_qwen2.py / modeling_qwen3.py /
// modeling_qwen3_moe.py / modeling_mixtral.py / modeling_qwen2_moe.py layouts).
#include <cstdint>
#include <string>

#include "sim/core/units.hpp"

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
  // Mixture of experts; num_experts 0 is a dense model.
  int num_experts = 0;                      // routed experts per MoE layer
  int num_experts_per_tok = 0;              // experts each token runs through (top-k)
  int moe_intermediate_size = 0;            // inner width of one expert
  int shared_expert_intermediate_size = 0;  // inner width of the shared expert; 0: none
  int num_dense_layers = 0;                 // layers of an MoE model whose MLP is dense
  std::string source;             // citations for the figures (catalog text)

  bool is_moe() const { return num_experts > 0; }
  // Decoder layers whose MLP is a mixture of experts (0 for a dense model).
  int moe_layers() const { return is_moe() ? num_layers - num_dense_layers : 0; }
  // Decoder layers whose MLP is dense (of intermediate_size).
  int mlp_layers() const { return num_layers - moe_layers(); }
  // Linear parameters of one expert: gate, up and down of moe_intermediate_size.
  std::int64_t expert_params() const;
  // Parameters of the routers and the shared experts' gates of all MoE layers (kept in 16 bits).
  std::int64_t router_params() const;

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
  // tied, since it is applied once per sequence, not once per token). For an MoE model, the
  // experts a token does not run through are left out: num_experts - num_experts_per_tok of
  // them in every MoE layer (the activated parameters).
  std::int64_t dense_params() const;
};

// Expected number of distinct experts a step of `tokens` tokens activates in one MoE layer when
// each token picks top_k of `experts` experts uniformly at random:
//   E[distinct] = experts x (1 - (1 - top_k / experts)^tokens)
// (an expert is missed by one token with probability 1 - k / E, independently across tokens).
// 0 for 0 tokens; at most min(experts, tokens x top_k).
double expected_active_experts(double experts, double top_k, double tokens);

// Total parameters computed from the shapes (equation in the header comment); the catalog's
// num_params is checked against it.
std::int64_t params_from_shape(const ModelSpec& m);

}  // namespace kvsim::models
