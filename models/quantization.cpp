#include "models/quantization.hpp"

namespace kvsim::models {

double linear_bytes_per_param(DType weight_dtype, int group_size) {
  const double g = group_size > 0 ? group_size : 128.0;
  switch (weight_dtype) {
    case DType::kBf16:
    case DType::kFp16:
      return kSixteenBitBytes;
    case DType::kFp8:
      return 1.0;
    case DType::kInt8:
      return 1.0 + (2.0 + 1.0) / g;
    case DType::kInt4:
      return 0.5 + (2.0 + 0.5) / g;
  }
  return kSixteenBitBytes;
}

std::int64_t linear_params(const ModelSpec& m) {
  const std::int64_t h = m.hidden_size;
  const std::int64_t q = static_cast<std::int64_t>(m.num_attention_heads) * m.head_dim;
  const std::int64_t kv = static_cast<std::int64_t>(m.num_kv_heads) * m.head_dim;
  const std::int64_t inter = m.intermediate_size;
  const auto mlp_layers = static_cast<std::int64_t>(m.mlp_layers());
  const auto moe_layers = static_cast<std::int64_t>(m.moe_layers());
  return m.num_layers * (h * q + 2 * h * kv + q * h) + mlp_layers * 3 * h * inter +
         moe_layers * (m.num_experts * m.expert_params() + 3 * h * m.shared_expert_intermediate_size);
}

std::int64_t small_params(const ModelSpec& m) {
  return m.num_params - linear_params(m) - m.embedding_params() - m.lm_head_params();
}

bool weight_only(DType weight_dtype) {
  return weight_dtype == DType::kInt8 || weight_dtype == DType::kInt4;
}

}  // namespace kvsim::models
