#pragma once
// vLLM V1 engine arguments, with vLLM's names and `vllm serve` defaults. The batch limits depend
// on the GPU (vllm/engine/arg_utils.py get_batch_defaults: 2048 tokens / 256 sequences under
// 70 GiB of device memory or on an A100, 8192 / 1024 otherwise); the scenario loader fills them
// when they are not given (sim/scenario/tables.cpp), as it fills the defaults that differ
// between vLLM releases (vllm_version).
#include <cstdint>
#include <string>

#include "sim/core/units.hpp"

namespace kvsim::engine {

// Order in which the scheduler takes waiting requests (vLLM --scheduling-policy).
enum class SchedulingPolicy : std::uint8_t { kFcfs, kPriority };

// The scenario's spelling: "fcfs", "priority".
constexpr const char* scheduling_policy_name(SchedulingPolicy p) {
  switch (p) {
    case SchedulingPolicy::kFcfs:
      return "fcfs";
    case SchedulingPolicy::kPriority:
      return "priority";
  }
  return "fcfs";
}

struct EngineConfig {
  int max_num_seqs = 256;
  int max_num_batched_tokens = 2048;
  double gpu_memory_utilization = 0.9;
  int block_size = 16;
  bool enable_prefix_caching = true;
  // Not vLLM: for engines whose prefix cache is per context sequence (llama.cpp's server with
  // this many slots, the CPU engine of validation/cpu-engine): at most this many prompts'
  // prefixes are kept, each reused only by a request that continues it (KvCacheManager::
  // set_prefix_cache_sequences). 0: vLLM's block prefix cache.
  int prefix_cache_sequences = 0;
  // Not vLLM: for engines that prepare a request's sequence only between batches while they
  // have the engine to themselves (the CPU engine of validation/cpu-engine: node-llama-cpp's batch
  // loop keeps the llama.cpp context while two or more sequences decode, and loading a saved
  // state into a sequence or erasing what another request left in it waits for the context): a
  // request that needs such a preparation (a synchronous load from the offload tier, connector
  // lmcache; with prefix_cache_sequences, a sequence whose tokens it does not continue) starts
  // only in a step that at most this many other requests run in; it waits at the head of the
  // queue and the requests behind it go ahead. -1: no such wait (vLLM). kvsim probe --offload
  // measures it (tier_hit_busy points).
  int prepare_max_running = -1;
  bool enable_chunked_prefill = true;
  int max_model_len = 0;  // 0: the model's max_position_embeddings
  bool async_scheduling = true;  // vLLM's default since 0.14 (PR #27614)
  std::int64_t num_gpu_blocks_override = 0;  // 0: derive from memory as vLLM does
  int long_prefill_token_threshold = 0;      // 0: no per-request chunk cap
  SchedulingPolicy scheduling_policy = SchedulingPolicy::kFcfs;
  bool enforce_eager = false;                // no CUDA graphs
  int tensor_parallel_size = 1;              // GPUs per engine replica (models/tensor_parallel.hpp)
  // Data-parallel ranks of one vLLM deployment (--data-parallel-size): that many engines, each
  // of tensor_parallel_size GPUs, behind one API server that balances requests over them. For an
  // MoE model they pass every MoE layer together (docs/models.md "Mixture of experts").
  int data_parallel_size = 1;
  // --enable-expert-parallel: an MoE model's experts split over tensor_parallel_size x
  // data_parallel_size GPUs instead of each expert over tensor_parallel_size.
  bool enable_expert_parallel = false;
  // The vLLM release modelled, "major.minor" (patch levels accepted): picks the defaults and
  // behaviours that changed between releases (docs/engine.md "vLLM versions").
  std::string vllm_version = "0.19";
  // scheduler_reserve_full_isl (vLLM 0.19, vllm/config/scheduler.py): a waiting request is
  // admitted only when its whole prompt (beyond its cache hits) fits in the free blocks, not
  // just its first chunk; head-of-line blocking otherwise. A scenario turns it on from 0.19.
  bool scheduler_reserve_full_isl = false;
  // Full CUDA graphs for decode-only steps (FULL_AND_PIECEWISE, vLLM >= 0.11); false: piecewise
  // graphs only, whose attention runs eagerly (vLLM 0.10). Follows vllm_version.
  bool full_cuda_graphs = true;
  // Memory outside PyTorch's allocator that vLLM's start-up profile counts (models/memory.hpp);
  // 0: the version's default (0.6 GiB from 0.11, whose final reading follows the CUDA-graph
  // memory profiling; for 0.10, which has none, 0.13 GiB on one GPU and 0.55 GiB with tensor
  // parallelism). Set it from your start-up log.
  Bytes non_torch_memory{0};
  // Set by the scenario loader when max_num_seqs / max_num_batched_tokens were not given (or 0):
  // they take vllm serve's default for the scenario's GPU.
  bool max_num_seqs_auto = false;
  bool max_num_batched_tokens_auto = false;
  // Time from a token leaving the engine to the client seeing it (API server, detokenize,
  // network), added to every streamed token.
  SimTime output_latency = 0;
  // The engine's exact fast paths (decode stretches, skipped admission checks, reclaimed block
  // ids); false takes the plain step-by-step path, with byte-identical results
  // (tests/scenario/fast_path_test.cpp). A run option, not a scenario key: the loader sets it
  // from LoadOptions::fast_paths.
  bool fast_paths = true;
};

// The vLLM version "major.minor[.patch...]" as major x 1000 + minor (0.19 -> 19, 0.10.1.1 -> 10,
// 1.2 -> 1002); -1 when it is not of that form.
inline int vllm_version_code(const std::string& v) {
  int parts[2] = {0, 0};
  std::size_t i = 0;
  for (int k = 0; k < 2; ++k) {
    const std::size_t start = i;
    int n = 0;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9' && i - start < 6) n = n * 10 + (v[i++] - '0');
    if (i == start) return -1;
    parts[k] = n;
    if (k == 0) {
      if (i >= v.size() || v[i] != '.') return -1;
      ++i;
    }
  }
  while (i < v.size()) {  // further .N parts
    if (v[i] != '.' || i + 1 >= v.size()) return -1;
    ++i;
    const std::size_t start = i;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9') ++i;
    if (i == start) return -1;
  }
  return parts[0] * 1000 + parts[1];
}

}  // namespace kvsim::engine
