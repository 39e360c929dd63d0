#include "models/tensor_parallel.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "models/quantization.hpp"
#include "sim/core/error.hpp"

namespace kvsim::models {
namespace {

constexpr const char* kPath = "engine.tensor_parallel_size";

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

void check_tensor_parallel(const ModelSpec& m, int tp, int ep) {
  std::vector<Diagnostic> errors;
  auto fail = [&](const std::string& message) {
    errors.push_back(Diagnostic{"", 0, 0, kPath, message});
  };
  if (tp < 1) {
    fail("must be at least 1, got " + std::to_string(tp));
    throw InputError(std::move(errors));
  }
  if (m.num_attention_heads % tp != 0) {
    fail("must divide the model's attention heads (" + std::to_string(m.num_attention_heads) +
         "), got " + std::to_string(tp));
  }
  if (m.num_kv_heads > 0) {
    const bool ok = tp >= m.num_kv_heads ? tp % m.num_kv_heads == 0 : m.num_kv_heads % tp == 0;
    if (!ok) {
      fail("must divide the model's KV heads (" + std::to_string(m.num_kv_heads) +
           ") or be a multiple of them, got " + std::to_string(tp));
    }
  }
  if (m.mlp_layers() > 0 && m.intermediate_size % tp != 0) {
    fail("must divide the model's intermediate_size (" + std::to_string(m.intermediate_size) +
         "), got " + std::to_string(tp));
  }
  if (m.is_moe() && ep <= 1 && m.moe_intermediate_size % tp != 0) {
    fail("must divide the model's moe_intermediate_size (" + std::to_string(m.moe_intermediate_size) +
         "), got " + std::to_string(tp));
  }
  if (m.is_moe() && ep > 1 && m.num_experts % ep != 0) {
    errors.push_back(Diagnostic{"", 0, 0, "engine.enable_expert_parallel",
                                "the model's " + std::to_string(m.num_experts) +
                                    " experts do not split evenly over tensor_parallel_size x "
                                    "data_parallel_size = " + std::to_string(ep) + " GPUs"});
  }
  if (weight_only(m.dtype) && errors.empty() && m.quant_group_size > 0) {
    const std::int64_t q_rows = static_cast<std::int64_t>(m.num_attention_heads) * m.head_dim / tp;
    const std::int64_t inter_rows = m.intermediate_size / tp;
    if (q_rows % m.quant_group_size != 0 || inter_rows % m.quant_group_size != 0) {
      fail("splits the " + std::string(dtype_name(m.dtype)) +
           " weight groups: each GPU's input rows of o_proj (" + std::to_string(q_rows) +
           ") and down_proj (" + std::to_string(inter_rows) +
           ") must be multiples of quant_group_size " + std::to_string(m.quant_group_size));
    }
  }
  if (!errors.empty()) throw InputError(std::move(errors));
}

int heads_per_gpu(const ModelSpec& m, int tp) { return m.num_attention_heads / tp; }

int kv_heads_per_gpu(const ModelSpec& m, int tp) {
  return tp >= m.num_kv_heads ? 1 : m.num_kv_heads / tp;
}

Bytes kv_bytes_per_token_per_gpu(const ModelSpec& m, int tp) {
  const double b =
      2.0 * m.num_layers * kv_heads_per_gpu(m, tp) * m.head_dim * dtype_bytes(m.kv_dtype);
  return Bytes{static_cast<std::int64_t>(std::llround(b))};
}

int experts_per_gpu(const ModelSpec& m, int ep) { return m.num_experts / std::max(ep, 1); }

std::int64_t one_expert_params_per_gpu(const ModelSpec& m, int tp, int ep) {
  const std::int64_t h = m.hidden_size;
  return ep > 1 ? 3 * h * m.moe_intermediate_size : 3 * h * (m.moe_intermediate_size / tp);
}

std::int64_t expert_params_per_gpu(const ModelSpec& m, int tp, int ep) {
  return static_cast<std::int64_t>(m.moe_layers()) * experts_per_gpu(m, ep) * one_expert_params_per_gpu(m, tp, ep);
}

std::int64_t linear_params_per_gpu(const ModelSpec& m, int tp, int ep) {
  if (tp == 1 && ep <= 1) return linear_params(m);
  const std::int64_t h = m.hidden_size;
  const std::int64_t q = static_cast<std::int64_t>(heads_per_gpu(m, tp)) * m.head_dim;
  const std::int64_t kv = static_cast<std::int64_t>(kv_heads_per_gpu(m, tp)) * m.head_dim;
  const std::int64_t inter = m.intermediate_size / tp;
  const std::int64_t shared = m.shared_expert_intermediate_size / tp;
  const auto mlp_layers = static_cast<std::int64_t>(m.mlp_layers());
  const auto moe_layers = static_cast<std::int64_t>(m.moe_layers());
  return m.num_layers * (h * q + 2 * h * kv + q * h) + mlp_layers * 3 * h * inter + moe_layers * 3 * h * shared +
         expert_params_per_gpu(m, tp, ep);
}

std::int64_t vocab_params_per_gpu(const ModelSpec& m, int tp) {
  const std::int64_t per_matrix = ceil_div(m.vocab_size, tp) * m.hidden_size;
  return m.tie_word_embeddings ? per_matrix : 2 * per_matrix;
}

std::int64_t dense_params_per_gpu(const ModelSpec& m, int tp) {
  return linear_params_per_gpu(m, tp) - expert_params_per_gpu(m, tp) + small_params(m);
}

Bytes weight_bytes_per_gpu(const ModelSpec& m, int tp, int ep) {
  const double linear = static_cast<double>(linear_params_per_gpu(m, tp, ep)) *
                        linear_bytes_per_param(m.dtype, m.quant_group_size);
  const double sixteen =
      static_cast<double>(vocab_params_per_gpu(m, tp) + small_params(m)) * kSixteenBitBytes;
  return Bytes{static_cast<std::int64_t>(std::llround(linear + sixteen))};
}

}  // namespace kvsim::models
