#include "models/roofline.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "models/moe_block.hpp"
#include "models/quantization.hpp"
#include "models/tensor_parallel.hpp"
#include "sim/core/error.hpp"

namespace kvsim::models {
namespace {

void require_positive(std::vector<Diagnostic>& errors, const std::string& path, double value) {
  if (!(value > 0) || !std::isfinite(value)) {
    errors.push_back(Diagnostic{"", 0, 0, path, "must be a positive number"});
  }
}

void require_fraction(std::vector<Diagnostic>& errors, const std::string& path, double value) {
  if (!(value > 0 && value <= 1)) {
    errors.push_back(Diagnostic{"", 0, 0, path, "must lie in (0, 1]"});
  }
}

void require_non_negative(std::vector<Diagnostic>& errors, const std::string& path, double value) {
  if (!(value >= 0) || !std::isfinite(value)) {
    errors.push_back(Diagnostic{"", 0, 0, path, "must not be negative"});
  }
}

}  // namespace

double attention_pairs_prefill(std::int64_t new_tokens, std::int64_t cached_tokens) {
  const double n = static_cast<double>(new_tokens);
  const double p = static_cast<double>(cached_tokens);
  return n * p + n * (n + 1) / 2;
}

double attention_pairs_decode(std::int64_t context_tokens) {
  return static_cast<double>(context_tokens);
}

RooflineModel::RooflineModel(ModelSpec model, DeviceFigures device, RooflineParams params,
                             int tensor_parallel_size, MoeLayout moe)
    : model_(std::move(model)), device_(device), params_(params), tp_(tensor_parallel_size), moe_(moe) {
  std::vector<Diagnostic> errors;
  require_positive(errors, "model.num_layers", model_.num_layers);
  require_positive(errors, "model.hidden_size", model_.hidden_size);
  require_positive(errors, "model.num_attention_heads", model_.num_attention_heads);
  require_positive(errors, "model.num_kv_heads", model_.num_kv_heads);
  require_positive(errors, "model.head_dim", model_.head_dim);
  require_positive(errors, "model.vocab_size", model_.vocab_size);
  if (model_.dense_params() <= 0) {
    errors.push_back(Diagnostic{"", 0, 0, "model.num_params",
                                "must exceed the embedding and lm_head parameters (vocab x hidden "
                                "each)"});
  }
  require_positive(errors, "gpu.tensor_flops", device_.tensor_flops.value);
  require_positive(errors, "gpu.memory_bandwidth", device_.memory_bandwidth.value);
  require_fraction(errors, "compute.roofline.gemm_efficiency", params_.gemm_efficiency);
  require_fraction(errors, "compute.roofline.attention_efficiency", params_.attention_efficiency);
  require_fraction(errors, "compute.roofline.memory_efficiency", params_.memory_efficiency);
  require_non_negative(errors, "gpu.bf16_dense", device_.bf16_flops.value);
  if (model_.is_moe() && (model_.num_experts_per_tok < 1 || model_.moe_intermediate_size < 1)) {
    errors.push_back(Diagnostic{"", 0, 0, "model.num_experts_per_tok",
                                "an MoE model needs num_experts_per_tok and moe_intermediate_size"});
  }
  if (moe_.expert_parallel_size < 1 || !(moe_.tokens_factor >= 1)) {
    errors.push_back(Diagnostic{"", 0, 0, "engine.data_parallel_size", "must be at least 1"});
  }
  if (!errors.empty()) throw InputError(std::move(errors));
  const int ep = model_.is_moe() ? moe_.expert_parallel_size : 1;
  check_tensor_parallel(model_, tp_, ep);

  // One GPU's shard (models/tensor_parallel.hpp); at k = 1 the whole model. The routed experts
  // are the moe part, not the dense one.
  const double linear = static_cast<double>(linear_params_per_gpu(model_, tp_) - expert_params_per_gpu(model_, tp_));
  const double small = static_cast<double>(small_params(model_));
  const double dense = static_cast<double>(dense_params_per_gpu(model_, tp_));
  const int vocab_rows = (model_.vocab_size + tp_ - 1) / tp_;  // VocabParallel split, rounded up
  const double vocab_per_gpu = vocab_rows;
  const double hv = static_cast<double>(model_.hidden_size) * vocab_per_gpu;
  dense_flops_per_token_ = 2.0 * dense;
  dense_weight_bytes_ =
      linear * linear_bytes_per_param(model_.dtype, model_.quant_group_size) + small * kSixteenBitBytes;
  attention_flops_per_pair_ =
      4.0 * model_.num_layers * heads_per_gpu(model_, tp_) * static_cast<double>(model_.head_dim);
  kv_bytes_per_token_ = kv_bytes_per_token_per_gpu(model_, tp_).as_double();
  lm_head_flops_per_seq_ = 2.0 * hv;
  lm_head_weight_bytes_ = hv * kSixteenBitBytes;
  const double bf16 = device_.bf16_flops.value > 0 ? device_.bf16_flops.value : device_.tensor_flops.value;
  gemm_rate_ = device_.tensor_flops.value * params_.gemm_efficiency;
  lm_head_rate_ = bf16 * params_.gemm_efficiency;
  attention_rate_ = bf16 * params_.attention_efficiency;
  memory_rate_ = device_.memory_bandwidth.value * params_.memory_efficiency;
  if (model_.is_moe()) {
    expert_params_ = static_cast<double>(one_expert_params_per_gpu(model_, tp_, ep));
    expert_bytes_ = expert_params_ * linear_bytes_per_param(model_.dtype, model_.quant_group_size);
  }
}

double RooflineModel::bounded(double flops, double flop_rate, double bytes) const {
  return std::max(flops / flop_rate, bytes / memory_rate_);
}

double RooflineModel::dense_flops(const BatchShape& batch) const {
  return dense_flops_per_token_ * static_cast<double>(batch.num_tokens());
}

double RooflineModel::attention_flops(const BatchShape& batch) const {
  double pairs = 0;
  for (const auto& p : batch.prefills)
    pairs += attention_pairs_prefill(p.new_tokens, p.cached_tokens);
  for (const auto c : batch.decode_contexts) pairs += attention_pairs_decode(c);
  return attention_flops_per_pair_ * pairs;
}

double RooflineModel::lm_head_flops(const BatchShape& batch) const {
  return lm_head_flops_per_seq_ * static_cast<double>(batch.num_sequences());
}

StepBreakdown RooflineModel::step_time(const BatchShape& batch) const {
  StepBreakdown out;
  if (batch.empty()) return out;

  // Attention, one roofline per sequence.
  double attn_flops = 0;
  double attn_bytes = 0;
  for (const auto& p : batch.prefills) {
    KVSIM_ASSERT(p.new_tokens > 0 && p.cached_tokens >= 0, "prefill chunk with no new tokens");
    const double f =
        attention_flops_per_pair_ * attention_pairs_prefill(p.new_tokens, p.cached_tokens);
    const double b = kv_bytes_per_token_ * static_cast<double>(p.cached_tokens + 2 * p.new_tokens);
    out.attention_s += bounded(f, attention_rate_, b);
    attn_flops += f;
    attn_bytes += b;
  }
  for (const auto c : batch.decode_contexts) {
    KVSIM_ASSERT(c > 0, "decode with an empty context");
    const double f = attention_flops_per_pair_ * attention_pairs_decode(c);
    const double b = kv_bytes_per_token_ * static_cast<double>(c + 1);
    out.attention_s += bounded(f, attention_rate_, b);
    attn_flops += f;
    attn_bytes += b;
  }

  const double tokens = static_cast<double>(batch.num_tokens());
  const double seqs = static_cast<double>(batch.num_sequences());
  const double d_flops = dense_flops_per_token_ * tokens;
  out.dense_s = bounded(d_flops, gemm_rate_, dense_weight_bytes_);
  double m_flops = 0;
  double m_bytes = 0;
  if (model_.is_moe()) {
    const double ep = moe_.expert_parallel_size;
    const double routed = tokens * moe_.tokens_factor;
    const double k = model_.num_experts_per_tok;
    const double active = expected_active_experts(model_.num_experts, k, routed) / ep;
    const double layers = model_.moe_layers();
    m_flops = layers * 2.0 * expert_params_ * routed * k / ep;
    m_bytes = layers * expert_bytes_ * active;
    out.moe_s = bounded(m_flops, gemm_rate_, m_bytes);
  }
  const double l_flops = lm_head_flops_per_seq_ * seqs;
  out.lm_head_s = bounded(l_flops, lm_head_rate_, lm_head_weight_bytes_);
  // Launches, as the measured profiles count them (models/step_overheads.hpp): the eight layer
  // ops of the bundles' dense.csv (two RMSNorms, qkv_proj, rotary_emb, o_proj, gate_up_proj,
  // act_fn, down_proj), embedding and final norm per step, the MoE block's kernels.
  out.forward_kernels = 8.0 * model_.num_layers + 2.0 + (model_.is_moe() ? kMoeBlockKernels * model_.moe_layers() : 0.0);
  out.attention_kernels = model_.num_layers;
  out.logits_kernels = kLogitsKernels;
  out.flops = d_flops + m_flops + attn_flops + l_flops;
  out.bytes = dense_weight_bytes_ + m_bytes + lm_head_weight_bytes_ + attn_bytes;
  return out;
}

std::string RooflineModel::describe() const {
  char buf[480];
  char shard[32] = "";
  if (tp_ > 1) std::snprintf(shard, sizeof shard, ", 1/%d shard per GPU", tp_);
  std::snprintf(buf, sizeof buf,
                "roofline: %s (%s%s) on %.1f TFLOP/s, %.0f GB/s; efficiency gemm %.2f, attention "
                "%.2f, memory %.2f (no kernel profile: expect ~9-15 %% error in kernel time, "
                "docs/validation.md)",
                model_.name.c_str(), dtype_name(model_.dtype), shard, device_.tensor_flops.value / 1e12,
                device_.memory_bandwidth.value / 1e9, params_.gemm_efficiency,
                params_.attention_efficiency, params_.memory_efficiency);
  return buf;
}

}  // namespace kvsim::models
