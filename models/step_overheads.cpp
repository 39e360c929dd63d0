#include "models/step_overheads.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "sim/core/error.hpp"

namespace kvsim::models {

namespace {
constexpr double kUsToS = 1e-6;
}  // namespace

StepLaunches step_launches(const GraphPolicy& policy, const BatchShape& batch, const StepBreakdown& b) {
  StepLaunches n;
  const double all = b.forward_kernels + b.attention_kernels;
  const bool graphed = policy.mode != GraphMode::kEager && batch.num_tokens() <= policy.max_capture_tokens;
  if (!graphed) {
    n.eager = all;
  } else if (policy.mode == GraphMode::kFullAndPiecewise && batch.prefills.empty()) {
    n.graph = all;  // one full graph, attention included
  } else {
    n.graph = b.forward_kernels;  // piecewise: attention between the pieces, eagerly
    n.eager = b.attention_kernels;
  }
  n.eager += b.logits_kernels;
  return n;
}

void add_step_overheads(const StepOverheadParams& p, const GraphPolicy& policy, const BatchShape& batch,
                        StepBreakdown& b) {
  if (batch.empty() || !p.enabled) return;
  const StepLaunches n = step_launches(policy, batch, b);
  const double kernels_us = b.kernels_s() / kUsToS;
  const double gpu_bound = kernels_us + n.graph * p.graph_kernel_gap_us + n.eager * p.eager_kernel_gap_us;
  const double host_bound = n.eager * p.eager_launch_us;
  const double phase_us = std::max(gpu_bound, host_bound);
  const double step_gap = policy.async_scheduling ? p.step_gap_us : 0.0;
  b.gpu_overhead_s = (phase_us - kernels_us + step_gap) * kUsToS;
  b.overhead_s = (p.host_step_us + p.host_per_sequence_us * static_cast<double>(batch.num_sequences())) * kUsToS;
}

void validate(const StepOverheadParams& p) {
  const std::pair<const char*, double> keys[] = {
      {"graph_kernel_gap_us", p.graph_kernel_gap_us}, {"eager_kernel_gap_us", p.eager_kernel_gap_us},
      {"eager_launch_us", p.eager_launch_us},         {"step_gap_us", p.step_gap_us},
      {"host_step_us", p.host_step_us},               {"host_per_sequence_us", p.host_per_sequence_us},
  };
  for (const auto& [key, v] : keys) {
    if (!(v >= 0) || !std::isfinite(v)) {
      throw InputError(Diagnostic{"", 0, 0, std::string("compute.overheads.") + key, "must be a finite number >= 0"});
    }
  }
}

ServedStepModel::ServedStepModel(std::unique_ptr<ComputeModel> inner, StepOverheadParams params, GraphPolicy policy)
    : inner_(std::move(inner)), params_(params), policy_(policy) {
  KVSIM_ASSERT(inner_ != nullptr, "served step model without an inner model");
  validate(params_);
}

StepBreakdown ServedStepModel::step_time(const BatchShape& batch) const {
  StepBreakdown b = inner_->step_time(batch);
  add_step_overheads(params_, policy_, batch, b);
  return b;
}

std::string ServedStepModel::describe() const {
  if (!params_.enabled) return inner_->describe() + "; no overheads (compute.overheads.enabled false)";
  const char* mode = policy_.mode == GraphMode::kEager        ? "eager"
                     : policy_.mode == GraphMode::kPiecewise ? "piecewise CUDA graphs"
                                                              : "full and piecewise CUDA graphs";
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%s; + overheads (%s up to %lld tokens, gaps %g/%g us per kernel, step gap %g us, host %g us + %g us "
                "per sequence%s)",
                inner_->describe().c_str(), mode, static_cast<long long>(policy_.max_capture_tokens),
                params_.graph_kernel_gap_us, params_.eager_kernel_gap_us, policy_.async_scheduling ? params_.step_gap_us : 0.0,
                params_.host_step_us, params_.host_per_sequence_us,
                policy_.async_scheduling ? ", overlapped by async scheduling" : "");
  return buf;
}

}  // namespace kvsim::models
