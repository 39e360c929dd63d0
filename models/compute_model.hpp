#pragma once
// The contract every compute-time model fulfils: given the composition of one engine step
// (prefill chunks with their cached context, decode requests with their contexts), return how
// long the GPU step takes, with a breakdown. Implementations: roofline (models/roofline.hpp);
// measured profile tables and a fitted model come later behind the same interface.
// Contract:
//  - step_time() is a pure function of the batch: same batch, same answer.
//  - times are in seconds (double); the engine rounds once to SimTime.
//  - an empty batch takes 0.
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

// Where the time of one step goes (seconds).
struct StepBreakdown {
  double dense_s = 0;      // token-parallel GEMMs and elementwise ops (QKV, O, MLP, norms)
  double attention_s = 0;  // attention kernels
  double lm_head_s = 0;    // lm_head and sampler (per sequence)
  double gpu_overhead_s = 0;  // GPU-side per-step time outside the kernels (graph launch, sync,
                              // sampled tokens copied back): not hidden by async scheduling
  double overhead_s = 0;   // host-side per-step overhead (scheduling, input prep, output
                           // processing): hidden by async scheduling while the GPU is busy
  double communication_s = 0;  // tensor-parallel collectives (models/tensor_parallel_model.hpp)
  double flops = 0;        // total floating-point operations of the step
  double bytes = 0;        // total bytes moved from GPU memory
  double total_s() const {
    return dense_s + attention_s + lm_head_s + communication_s + gpu_overhead_s + overhead_s;
  }
};

class ComputeModel {
 public:
  virtual ~ComputeModel() = default;
  virtual StepBreakdown step_time(const BatchShape& batch) const = 0;
  virtual std::string describe() const = 0;
};

}  // namespace kvsim::models
