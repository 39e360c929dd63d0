#pragma once
// vLLM V1 engine arguments, with vLLM's names and `vllm serve` defaults for a GPU under 70 GiB
// (vllm/engine/arg_utils.py get_batch_defaults: 2048 tokens / 256 sequences).
#include <cstdint>
#include <string>

#include "kvsim/core/units.hpp"

namespace kvsim::engine {

struct EngineConfig {
  int max_num_seqs = 256;
  int max_num_batched_tokens = 2048;
  double gpu_memory_utilization = 0.9;
  int block_size = 16;
  bool enable_prefix_caching = true;
  bool enable_chunked_prefill = true;
  int max_model_len = 0;  // 0: the model's max_position_embeddings
  bool async_scheduling = true;  // vLLM's default since 0.14 (PR #27614)
  std::int64_t num_gpu_blocks_override = 0;  // 0: derive from memory as vLLM does
  int long_prefill_token_threshold = 0;      // 0: no per-request chunk cap
  std::string scheduling_policy = "fcfs";    // fcfs | priority
  bool enforce_eager = false;                // no CUDA graphs
  int tensor_parallel_size = 1;              // GPUs per engine replica (models/tensor_parallel.hpp)
  // Time from a token leaving the engine to the client seeing it (API server, detokenize,
  // network), added to every streamed token.
  SimTime output_latency = 0;
};

}  // namespace kvsim::engine
