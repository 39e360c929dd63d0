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
// Terms as vLLM 0.19 counts them (gpu_worker.py determine_available_memory with
// vllm/utils memory_profiling: non_kv = weights_memory + torch_peak_increase + non_torch_increase,
// the baseline snapshot being taken after CUDA and NCCL initialisation, so the CUDA context is
// not counted):
//   weights         = num_params x dtype bytes + rotary cos/sin cache
//                     (model_memory_usage, measured around load_model; the RotaryEmbedding
//                     buffer is max_position_embeddings x head_dim in the 2-byte model dtype)
//   activation_peak = torch_peak_increase: the torch peak of the profile run above what was
//                     allocated before it
//   non_torch       = non_torch_increase: memory outside PyTorch's allocator that appears
//                     between that baseline and the end of profiling (an input)
//   cuda_graphs     = subtracted only when VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS is on, off
//                     by default in 0.19; graphs are captured after the KV cache is allocated.
//
// The profile run (gpu_model_runner.profile_run) is a dummy forward of T tokens spread over
// S = min(T, max_num_seqs) sequences (T = max_num_batched_tokens in V1; max(max_num_batched_tokens,
// max_model_len) in V0 without chunked prefill), then _dummy_sampler_run on the S last rows:
//   activation_peak = max(forward, sampler)
//   forward = T x act_bytes x (3 x intermediate + h x hidden)
//       (an MoE model: T x act_bytes x (top_k x (max(2 x moe_inter, hidden) + moe_inter)
//       + h x hidden), the fused-MoE kernel's workspaces, when larger)
//       the MLP is the widest point of a layer: gate_up output (2 x intermediate), the SiLU-and-
//       mul output (intermediate) and h hidden-sized tensors alive at once: the residual, the
//       normalised MLP input and the down_proj output in eager PyTorch (h = 3); the compiled
//       graph frees the MLP input first (h = 2). act_bytes = 2 (BF16 activations).
//   sampler = (T + S) x hidden x act_bytes + S x vocab x b + buffer
//       profile_run still holds the T hidden states and the S gathered rows. Per logit element
//       b bytes are alive at the sampler's peak (SamplerProfile):
//       kV1TopKTopP, the V1 runner's dummy metadata (temperature 0.5, top_k = vocab - 1,
//       top_p 0.9, all_random false) through vllm/v1/sample/sampler.py:
//         S >= 8: apply_top_k_top_p_triton masks in place, b = 2 (BF16 logits held by
//           _dummy_sampler_run) + 4 (FP32 upcast) + 4 (softmax probs) + 4 (random_sample's
//           exponential q) = 14, and the kernel's cached per-program buffer of
//           min(next_pow2(min(S, num_sms)), num_sms) x vocab FP32 (topk_topp_triton.py)
//         S < 8: the PyTorch sort path, b = 2 + 4 + 4 + 8 (sorted values, int64 indices)
//           + 1 + 1 (top-k and top-p masks) + 4 (softmax) + 4 (scatter output) = 28
//       kLogitsOnly, a profile whose sampler skips top-k/top-p (the V2 model runner):
//         b = 2 + 4 = 6, no buffer.
// Tensor parallelism (models/tensor_parallel.hpp): every GPU of a k-way group runs this sizing
// for itself and vLLM takes the smallest block count of the group (identical GPUs: the same
// count), so every term above is per GPU: weights = weight_bytes_per_gpu + rotary cache (the
// rotary cache is replicated); the forward peak's MLP tensors are inter / k wide while the
// hidden-sized ones stay whole (each GPU holds the full residual stream after the all-reduce);
// the sampler's logits are all-gathered, so its peak is unchanged; non_torch is per GPU
// (NCCL's buffers when k > 1 fall in it: an input); the block size in bytes uses the KV bytes
// per token per GPU. kv_tokens = num_blocks x block_size is then the replica's capacity, the
// "GPU KV cache size" vLLM logs for the whole group.
// Quantized weights (models/quantization.hpp) change the weights term only; activations stay
// BF16.
// Calibrated against a vLLM 0.19.0 RTX 4090 startup (Llama-3.1-8B, 2,588 blocks), the issue
// 10517 log (V0) and PR 48322 (Qwen3-8B); see the tests and docs/models.md.
#include <cstdint>
#include <string>
#include <vector>

#include "models/model_spec.hpp"
#include "sim/core/units.hpp"

namespace kvsim::models {

// How many tokens vLLM's profile run pushes through the model.
enum class ProfileRule {
  kV1,                  // max_num_batched_tokens (V1 engine; chunked prefill always on)
  kV0NoChunkedPrefill,  // max(max_num_batched_tokens, max_model_len) (V0 with chunked prefill off)
};

// What the profile run's dummy sampler keeps alive (see the header comment).
enum class SamplerProfile {
  kV1TopKTopP,  // vLLM 0.19 V1 runner: top-k and top-p on every row, Triton path for S >= 8
  kLogitsOnly,  // the sampler skips top-k/top-p in the profile (V2 model runner)
  kFlashInferTopKTopP,  // vLLM 0.10 with FlashInfer (its Docker image): b = 14, no buffer
};

// What vLLM's startup sizing depends on: the model, the GPU's memory and the engine arguments.
// Bytes for memory, counts for tokens and sequences.
struct MemoryInputs {
  ModelSpec model;
  Bytes total_memory{0};  // total device memory as CUDA reports it
  // The most CUDA reports for this kind of card on other hosts (hw::GpuSpec::memory_max); 0, or
  // not above total_memory: none. When one max_model_len request fits at this total but not at
  // total_memory, whether vLLM starts depends on the card at hand: the cache is sized at the
  // least that starts (one max_model_len request) and `started_note` says so.
  Bytes total_memory_max{0};
  double gpu_memory_utilization = 0.9;
  std::int64_t max_num_batched_tokens = 2048;  // vllm serve default on < 70 GiB GPUs
  std::int64_t max_num_seqs = 256;
  std::int64_t max_model_len = 0;  // 0: the model's max_position_embeddings
  int block_size = 16;
  ProfileRule profile_rule = ProfileRule::kV1;
  bool enforce_eager = false;  // no CUDA graphs, no torch.compile
  // Memory outside PyTorch's allocator that appears during profiling (kernel modules loaded
  // for the profile's kernels, cuBLAS/NCCL state created after the baseline snapshot). Not a
  // function of the model's shape. 0.6 GiB is what the vLLM 0.19 RTX 4090 calibration point
  // (docs/models.md) leaves after the modelled weights and activation peak; logs on one GPU
  // range 0.05-0.65 GiB, the issue 10517 log shows 0.35 GiB.
  Bytes non_torch_memory{kGiB.value * 6 / 10};
  // CUDA graph memory when not enforce_eager: 0.52 GiB is vLLM 0.21's estimate for Qwen3-8B on
  // a 24 GB card at the default capture sizes (LMCache issue 3430 log).
  Bytes cuda_graph_memory{static_cast<std::int64_t>(0.52 * static_cast<double>(kGiB.value))};
  // Whether vLLM subtracts the CUDA graph estimate from the KV budget: off by default when it
  // was added (PR 30515, through 0.20), on by default since 0.21 (vLLM's own startup log).
  // false models vLLM 0.19, the version of the measured 4090 profile.
  bool subtract_cuda_graphs = false;
  SamplerProfile sampler_profile = SamplerProfile::kV1TopKTopP;
  // Streaming multiprocessors: the Triton top-k/top-p kernel runs one program per SM at most.
  // 128 on the RTX 4090 (NVIDIA Ada Lovelace architecture whitepaper, AD102 as in the 4090).
  int gpu_num_sms = 128;
  int tensor_parallel_size = 1;              // GPUs of the replica (sizing is per GPU)
  // GPUs the experts of an MoE model are split over (tensor_parallel_size x data_parallel_size
  // with vLLM's --enable-expert-parallel; 1 without): weights per GPU hold experts / this.
  int expert_parallel_size = 1;
  std::int64_t num_gpu_blocks_override = 0;  // > 0 replaces the derived block count
  Bytes kv_cache_memory{0};                  // > 0 replaces available_kv (--kv-cache-memory-bytes)
};

// Every term of the sizing, in bytes, and the resulting block and token counts.
struct MemoryBreakdown {
  Bytes requested{0};        // total x utilization
  Bytes weights{0};          // parameters plus the rotary cos/sin cache
  Bytes rotary_cache{0};     // the part of weights that is the rotary cos/sin cache
  Bytes activation_peak{0};  // torch peak of the profile run, above the weights
  Bytes forward_peak{0};     // the dummy forward's share (activation_peak is the larger one)
  Bytes sampler_peak{0};     // the dummy sampler's share
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
  // Non-empty when the cache was sized at the least that starts (MemoryInputs::total_memory_max).
  std::string started_note;
  std::vector<std::string> explanation;  // one line per term, for reports
};

// Throws InputError for inputs vLLM would reject (utilization outside (0, 1], non-positive
// sizes or shapes). When nothing is left for the KV cache the breakdown says so (available_kv
// <= 0, num_blocks 0, fits_max_model_len false), where vLLM stops with "No available memory for
// the cache blocks": a capacity planner wants the figure, the scenario layer may reject it.
MemoryBreakdown kv_capacity(const MemoryInputs& in);

// The two candidates for the profile run's activation peak (the equations in the header
// comment); the peak is the larger.
Bytes profile_forward_peak(const ModelSpec& model, std::int64_t tokens, bool eager_layout,
                           int tensor_parallel_size = 1, int expert_parallel_size = 1);
Bytes profile_sampler_peak(const ModelSpec& model, std::int64_t tokens, std::int64_t sequences,
                           SamplerProfile profile, int num_sms);
Bytes profile_activation_peak(const ModelSpec& model, std::int64_t tokens, std::int64_t sequences,
                              bool eager_layout, SamplerProfile profile, int num_sms,
                              int tensor_parallel_size = 1, int expert_parallel_size = 1);

// vLLM's model_memory_usage on one GPU of a k-way group: weight_bytes_per_gpu (num_params x 2 B
// for BF16 at k = 1) plus the rotary cos/sin cache (max_position_embeddings x head_dim x 2 bytes).
Bytes weights_memory(const ModelSpec& model, int tensor_parallel_size = 1, int expert_parallel_size = 1);

}  // namespace kvsim::models
