#pragma once
// The contract every compute-time model fulfils: given the composition of one engine step
// (prefill chunks with their cached context, decode requests with their contexts), return how
// long the GPU step takes, with a breakdown. Implementations: roofline (models/roofline.hpp),
// measured profile tables (models/profile_model.hpp), a model fitted to them
// (models/fitted_model.hpp), and a tensor-parallel wrapper adding communication around any of
// them (models/tensor_parallel_model.hpp).
// Contract:
//  - step_time() is a pure function of the batch: same batch, same answer.
//  - times are in seconds (double); the engine rounds once to SimTime.
//  - an empty batch takes 0.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kvsim::models {

// One prefill chunk: `new_tokens` computed this step, attending to `cached_tokens` already in
// the KV cache before the chunk (from the prefix cache or earlier chunks).
struct PrefillChunk {
  std::int64_t new_tokens = 0;
  std::int64_t cached_tokens = 0;
};

// The work of one engine step. Decodes compute one token each; `decode_contexts[i]` is the
// number of tokens the decode attends to (its KV length including the new token).
// The engine reuses one BatchShape across steps (clear(), no reallocation).
struct BatchShape {
  std::vector<PrefillChunk> prefills;
  std::vector<std::int64_t> decode_contexts;

  void clear() {
    prefills.clear();
    decode_contexts.clear();
  }
  std::int64_t num_tokens() const {
    std::int64_t n = static_cast<std::int64_t>(decode_contexts.size());
    for (const auto& p : prefills) n += p.new_tokens;
    return n;
  }
  std::int64_t num_sequences() const {
    return static_cast<std::int64_t>(prefills.size() + decode_contexts.size());
  }
  bool empty() const { return prefills.empty() && decode_contexts.empty(); }
};

// How an MoE model's experts are laid out over the GPUs of an engine, and how many tokens one
// GPU's MoE layers route per token of the engine's own batch. With vLLM's
// --enable-expert-parallel and data_parallel_size d, each of the tp x d GPUs holds experts /
// (tp x d) experts, and the d data-parallel ranks pass every MoE layer together: each rank's
// experts see the tokens of all d ranks' batches. kvsim assumes balanced ranks (d x its own
// tokens); docs/models.md "Mixture of experts".
struct MoeLayout {
  int expert_parallel_size = 1;  // GPUs the experts are split over (1: each GPU holds all)
  double tokens_factor = 1;      // tokens routed by a GPU's MoE layers per token of its batch
};

// Kernels after the forward pass: the lm_head GEMM and the sampler (vllm/v1/sample/sampler.py:
// temperature, top-k/top-p or argmax, the sampled ids gathered; ~4 kernels, a count read from the
// code path, not measured). Their launch gaps: models/step_overheads.hpp.
inline constexpr double kLogitsKernels = 5;

// Where the time of one step goes (seconds).
struct StepBreakdown {
  double dense_s = 0;      // token-parallel GEMMs and elementwise ops (QKV, O, MLP, norms)
  double moe_s = 0;        // MoE layers' routers and experts (0 for a dense model)
  double attention_s = 0;  // attention kernels
  double lm_head_s = 0;    // lm_head and sampler (per sequence)
  double gpu_overhead_s = 0;  // GPU time outside the kernels: gaps between kernels and between
                              // steps (models/step_overheads.hpp); not hidden by async scheduling
  double overhead_s = 0;   // host time of the step (scheduling, input preparation, output
                           // processing): hidden by async scheduling while the GPU is busy
  double communication_s = 0;  // tensor-parallel collectives and expert-parallel dispatch and
                               // combine (models/tensor_parallel_model.hpp)
  // Kernel launches of the step (models/step_overheads.hpp decides which run in a CUDA graph):
  double forward_kernels = 0;    // the forward pass outside attention (dense, MoE, collectives)
  double attention_kernels = 0;  // attention (eager inside piecewise graphs)
  double logits_kernels = 0;     // lm_head and sampler (eager, after the graph)
  double flops = 0;        // total floating-point operations of the step
  double bytes = 0;        // total bytes moved from GPU memory
  double kernels_s() const { return dense_s + moe_s + attention_s + lm_head_s + communication_s; }
  // The step's duration: its GPU and host time overlap (async scheduling with a step already in
  // flight) or add up (sim/engine/engine.cpp time_plan).
  double step_s(bool overlapped) const {
    const double gpu = total_s() - overhead_s;
    return overlapped ? std::max(gpu, overhead_s) : gpu + overhead_s;
  }
  double total_s() const {
    return dense_s + moe_s + attention_s + lm_head_s + communication_s + gpu_overhead_s + overhead_s;
  }
};

class ComputeModel {
 public:
  virtual ~ComputeModel() = default;
  virtual StepBreakdown step_time(const BatchShape& batch) const = 0;
  virtual std::string describe() const = 0;
};

}  // namespace kvsim::models
