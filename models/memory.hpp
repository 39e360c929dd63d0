#pragma once
// GPU memory accounting of one vLLM instance: how much KV cache it gets. Bytes throughout.
// Follows vLLM's startup (vllm/v1/worker/gpu_worker.py determine_available_memory,
// vllm/v1/core/kv_cache_utils.py get_num_blocks; docs/models.md "Memory accounting"):
//
//   requested       = total_memory x gpu_memory_utilization
//   non_kv          = weights + activation_peak + non_torch [+ cuda_graphs if subtracted]
//   available_kv    = requested - non_kv          (or kv_cache_memory when given)
//   num_blocks      = available_kv // (block_size x kv_bytes_per_token)
//                     (vLLM: available // page_size // num_layers, page_size = one layer's
//                     block; the two floors give the same integer)
//                     replaced by num_gpu_blocks_override when that is set
//   usable_blocks   = num_blocks - 1              (block 0 is the null block)
//   kv_tokens       = num_blocks x block_size     (the "GPU KV cache size" vLLM logs)
//   max_concurrency = kv_tokens / max_model_len
//
// The activation peak is that of vLLM's profile run, a dummy forward of T tokens spread over
// S = min(T, max_num_seqs) sequences (T = max_num_batched_tokens in V1; max(max_num_batched_tokens,
// max_model_len) in V0 without chunked prefill), then logits and sampling for S rows:
//   activation_peak = max(forward, sampler)
//   forward = T x act_bytes x (3 x intermediate + h x hidden)
//       the MLP is the widest point of a layer: gate_up output (2 x intermediate), the SiLU-and-
//       mul output (intermediate) and h hidden-sized tensors alive at once: the residual, the
//       normalised MLP input and the down_proj output in eager PyTorch (h = 3); the compiled
//       graph frees the MLP input first (h = 2). act_bytes = 2 (BF16 activations).
//   sampler = T x hidden x act_bytes + S x vocab x 4 x sampler_logit_copies
//       the final hidden states stay alive while lm_head produces S rows of logits, which the
//       sampler upcasts to FP32 (one copy per live FP32 tensor of S x vocab).
// Calibrated against vLLM logs: issue 10517 (V0, 24 GB card, Llama-3.1-8B) and PR 48322
// (V1, RTX 4090, Qwen3-8B); see the tests and docs/models.md.
#include <cstdint>
#include <string>
#include <vector>

#include "kvsim/core/units.hpp"
#include "kvsim/models/model_spec.hpp"

namespace kvsim::models {

// How many tokens vLLM's profile run pushes through the model.
enum class ProfileRule {
  kV1,                  // max_num_batched_tokens (V1 engine; chunked prefill always on)
  kV0NoChunkedPrefill,  // max(max_num_batched_tokens, max_model_len) (V0 with chunked prefill off)
};

// What vLLM's startup sizing depends on: the model, the GPU's memory and the engine arguments.
// Bytes for memory, counts for tokens and sequences.
struct MemoryInputs {
  ModelSpec model;
  Bytes total_memory{0};  // total device memory as CUDA reports it
  double gpu_memory_utilization = 0.9;
  std::int64_t max_num_batched_tokens = 2048;  // vllm serve default on < 70 GiB GPUs
  std::int64_t max_num_seqs = 256;
  std::int64_t max_model_len = 0;  // 0: the model's max_position_embeddings
  int block_size = 16;
  ProfileRule profile_rule = ProfileRule::kV1;
  bool enforce_eager = false;  // no CUDA graphs, no torch.compile
  // Memory outside PyTorch's allocator that vLLM counts (NCCL, cuBLAS workspaces, CUDA
  // context growth). 0.5 GiB fits PR 48322's RTX 4090 measurement; the issue 10517 log shows
  // 0.35 GiB; logs on one GPU range 0.05-0.65 GiB.
  Bytes non_torch_memory{kGiB.value / 2};
  // CUDA graph memory when not enforce_eager: 0.52 GiB is vLLM 0.21's estimate for Qwen3-8B on
  // a 24 GB card at the default capture sizes (LMCache issue 3430 log).
  Bytes cuda_graph_memory{static_cast<std::int64_t>(0.52 * static_cast<double>(kGiB.value))};
  // Whether vLLM subtracts the CUDA graph estimate from the KV budget: off by default when it
  // was added (PR 30515, through 0.20), on by default since 0.21 (vLLM's own startup log).
  // false models vLLM 0.19, the version of the measured 4090 profile.
  bool subtract_cuda_graphs = false;
  // FP32 copies of the S x vocab logits alive at the sampler's peak (see the header comment).
  double sampler_logit_copies = 1.0;
  std::int64_t num_gpu_blocks_override = 0;  // > 0 replaces the derived block count
  Bytes kv_cache_memory{0};                  // > 0 replaces available_kv (--kv-cache-memory-bytes)
};

// Every term of the sizing, in bytes, and the resulting block and token counts.
struct MemoryBreakdown {
  Bytes requested{0};  // total x utilization
  Bytes weights{0};
  Bytes activation_peak{0};  // torch peak of the profile run, above the weights
  Bytes non_torch{0};
  Bytes cuda_graphs{0};  // CUDA graph memory (0 when enforce_eager)
  bool cuda_graphs_subtracted = false;
  Bytes available_kv{0};            // memory given to the KV cache (may be negative: does not fit)
  std::int64_t profile_tokens = 0;  // T of the profile run
  std::int64_t profile_sequences = 0;  // S of the profile run
  std::int64_t num_blocks = 0;         // KV blocks allocated, null block included
  std::int64_t usable_blocks = 0;      // num_blocks - 1
  std::int64_t kv_tokens = 0;          // num_blocks x block_size
  std::int64_t max_model_len = 0;
  double max_concurrency = 0;  // kv_tokens / max_model_len
  // vLLM refuses to start when one max_model_len request does not fit ("The model's max seq
  // len (...) is larger than the maximum number of tokens that can be stored in KV cache").
  bool fits_max_model_len = false;
  std::vector<std::string> explanation;  // one line per term, for reports
};

// Throws InputError for inputs vLLM would reject (utilization outside (0, 1], non-positive
// sizes or shapes). When nothing is left for the KV cache the breakdown says so (available_kv
// <= 0, num_blocks 0, fits_max_model_len false), where vLLM stops with "No available memory for
// the cache blocks": a capacity planner wants the figure, the scenario layer may reject it.
MemoryBreakdown kv_capacity(const MemoryInputs& in);

// The profile run's activation peak alone (the equation in the header comment).
Bytes profile_activation_peak(const ModelSpec& model, std::int64_t tokens, std::int64_t sequences,
                              bool eager_layout, double sampler_logit_copies);

}  // namespace kvsim::models
