#include "models/model_spec.hpp"

#include <algorithm>
#include <cmath>

#include "models/tensor_parallel.hpp"

namespace kvsim::models {

double dtype_bytes(DType d) {
  switch (d) {
    case DType::kBf16:
    case DType::kFp16:
      return 2.0;
    case DType::kFp8:
    case DType::kInt8:
      return 1.0;
    case DType::kInt4:
      return 0.5;
  }
  return 2.0;
}

const char* dtype_name(DType d) {
  switch (d) {
    case DType::kBf16:
      return "bf16";
    case DType::kFp16:
      return "fp16";
    case DType::kFp8:
      return "fp8";
    case DType::kInt8:
      return "int8";
    case DType::kInt4:
      return "int4";
  }
  return "bf16";
}

Bytes ModelSpec::kv_bytes_per_token() const {
  const double b = 2.0 * num_layers * num_kv_heads * head_dim * dtype_bytes(kv_dtype);
  return Bytes{static_cast<std::int64_t>(std::llround(b))};
}

Bytes ModelSpec::weight_bytes() const { return weight_bytes_per_gpu(*this, 1); }

std::int64_t ModelSpec::embedding_params() const {
  return static_cast<std::int64_t>(vocab_size) * hidden_size;
}

std::int64_t ModelSpec::lm_head_params() const {
  return tie_word_embeddings ? 0 : embedding_params();
}

std::int64_t ModelSpec::expert_params() const {
  return 3 * static_cast<std::int64_t>(hidden_size) * moe_intermediate_size;
}

std::int64_t ModelSpec::router_params() const {
  const std::int64_t per_layer = static_cast<std::int64_t>(hidden_size) * num_experts +
                                 (shared_expert_intermediate_size > 0 ? hidden_size : 0);
  return moe_layers() * per_layer;
}

std::int64_t ModelSpec::dense_params() const {
  // The lm_head GEMM is vocab x hidden whether or not its weights are shared.
  const std::int64_t idle_experts =
      is_moe() ? static_cast<std::int64_t>(moe_layers()) * (num_experts - num_experts_per_tok) * expert_params() : 0;
  return num_params - 2 * embedding_params() + (tie_word_embeddings ? embedding_params() : 0) - idle_experts;
}

double expected_active_experts(double experts, double top_k, double tokens) {
  if (experts <= 0 || top_k <= 0 || tokens <= 0) return 0;
  const double k = std::min(top_k, experts);
  const double e = experts * (1.0 - std::pow(1.0 - k / experts, tokens));
  return std::min(e, std::min(experts, tokens * k));
}

std::int64_t params_from_shape(const ModelSpec& m) {
  const std::int64_t h = m.hidden_size;
  const std::int64_t q = static_cast<std::int64_t>(m.num_attention_heads) * m.head_dim;
  const std::int64_t kv = static_cast<std::int64_t>(m.num_kv_heads) * m.head_dim;
  const std::int64_t inter = m.intermediate_size;
  std::int64_t layer = h * q + 2 * h * kv + q * h  // q, k, v, o projections
                       + 2 * h;                    // input and post-attention RMSNorm
  if (m.qkv_bias) layer += q + 2 * kv;
  if (m.qk_norm) layer += 2 * static_cast<std::int64_t>(m.head_dim);
  const std::int64_t dense_mlp = 3 * h * inter;  // gate, up, down
  const std::int64_t moe_mlp = m.num_experts * m.expert_params() +
                               3 * h * m.shared_expert_intermediate_size;  // experts, shared expert
  return m.embedding_params() + m.num_layers * layer + m.mlp_layers() * dense_mlp +
         m.moe_layers() * moe_mlp + m.router_params() + h + m.lm_head_params();
}

}  // namespace kvsim::models
