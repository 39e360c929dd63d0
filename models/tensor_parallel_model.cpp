#include "models/tensor_parallel_model.hpp"

#include <cstdio>
#include <utility>

#include "sim/core/error.hpp"

namespace kvsim::models {
namespace {

constexpr double kActivationBytes = 2.0;  // BF16 activations and logits

double ratio(double target, double profiled) { return profiled > 0 ? target / profiled : 1.0; }

}  // namespace

TensorParallelModel::TensorParallelModel(std::unique_ptr<ComputeModel> inner,
                                         const ModelSpec& model, int tensor_parallel_size,
                                         CollectiveTime all_reduce, CollectiveTime all_gather,
                                         std::unique_ptr<RooflineModel> profiled,
                                         std::unique_ptr<RooflineModel> target, ExpertCollectives experts,
                                         std::string rescale_note)
    : inner_(std::move(inner)),
      tp_(tensor_parallel_size),
      layers_(model.num_layers),
      hidden_(model.hidden_size),
      vocab_(model.vocab_size),
      all_reduce_(std::move(all_reduce)),
      all_gather_(std::move(all_gather)),
      profiled_(std::move(profiled)),
      target_(std::move(target)),
      experts_(std::move(experts)),
      moe_layers_(model.moe_layers()),
      num_experts_(model.num_experts),
      rescale_note_(std::move(rescale_note)) {
  KVSIM_ASSERT(inner_ != nullptr, "tensor-parallel model without an inner model");
  KVSIM_ASSERT((profiled_ == nullptr) == (target_ == nullptr), "rescaling needs both rooflines");
}

double TensorParallelModel::communication_s(const BatchShape& batch) const {
  if (batch.empty()) return 0;
  double t = 0;
  if (all_reduce_) {
    const double bytes = static_cast<double>(batch.num_tokens()) * hidden_ * kActivationBytes;
    t += (2.0 * layers_ + 1.0) * all_reduce_(bytes);
  }
  if (all_gather_)
    t += all_gather_(static_cast<double>(batch.num_sequences()) * vocab_ * kActivationBytes);
  if (experts_.data_parallel_size > 1 && moe_layers_ > 0) {
    const double tokens = static_cast<double>(batch.num_tokens()) * experts_.data_parallel_size;
    const double gathered = tokens * (hidden_ + num_experts_) * kActivationBytes;
    const double combined = tokens * hidden_ * kActivationBytes;
    double per_layer = 0;
    if (experts_.all_gather) per_layer += experts_.all_gather(gathered);
    if (experts_.reduce_scatter) per_layer += experts_.reduce_scatter(combined);
    t += moe_layers_ * per_layer;
  }
  return t;
}

StepBreakdown TensorParallelModel::step_time(const BatchShape& batch) const {
  StepBreakdown out = inner_->step_time(batch);
  if (batch.empty()) return out;
  if (profiled_ != nullptr) {
    const StepBreakdown p = profiled_->step_time(batch);
    const StepBreakdown t = target_->step_time(batch);
    out.dense_s *= ratio(t.dense_s, p.dense_s);
    out.attention_s *= ratio(t.attention_s, p.attention_s);
    out.moe_s *= ratio(t.moe_s, p.moe_s);
    out.lm_head_s *= ratio(t.lm_head_s, p.lm_head_s);
    // Another model's fit: its launch counts follow the layers (the same degree or dtype: 1).
    out.forward_kernels *= ratio(t.forward_kernels, p.forward_kernels);
    out.attention_kernels *= ratio(t.attention_kernels, p.attention_kernels);
    out.flops = t.flops;
    out.bytes = t.bytes;
  }
  out.communication_s = communication_s(batch);
  return out;
}

std::string TensorParallelModel::describe() const {
  std::string out;
  if (tp_ > 1) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "tensor parallel x%d (+ all-reduce and logits all-gather per step)", tp_);
    out = buf;
  }
  if (experts_.data_parallel_size > 1 && moe_layers_ > 0) {
    if (!out.empty()) out += ", ";
    out += "data parallel x" + std::to_string(experts_.data_parallel_size) +
           " (+ MoE all-gather and reduce-scatter per layer)";
  }
  if (profiled_ != nullptr) {
    if (!out.empty()) out += ", ";
    out += "kernel times rescaled by the roofline" + (rescale_note_.empty() ? std::string() : " (" + rescale_note_ + ")");
  }
  return out.empty() ? inner_->describe() : out + ": " + inner_->describe();
}

}  // namespace kvsim::models
