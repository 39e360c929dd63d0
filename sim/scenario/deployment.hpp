#pragma once
// A scenario's deployment as vLLM sizes it when it starts, and every check of the whole scenario
// that no single key can make on its own: the decoder runs them after decoding (so a problem
// names the file, line and column of the key it is about) and so does the Simulation for a
// scenario built in code.
//
// Sizing (models/memory.hpp): per engine replica of tensor_parallel_size GPUs, the KV cache is
// what the GPU's memory x gpu_memory_utilization leaves after weights, the profile run's
// activation peak, non-torch memory and CUDA graphs; vLLM refuses to start when one request of
// max_model_len does not fit (_check_enough_kv_cache_memory) or no block is left.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/compute_model.hpp"
#include "models/memory.hpp"
#include "sim/core/units.hpp"
#include "sim/scenario/scenario.hpp"

namespace kvsim::scenario {

// A problem with the scenario as a whole: the dotted path of the key it is about, and what is
// wrong.
struct ScenarioProblem {
  std::string path;
  std::string message;
};

// The first problem found, in the order vLLM and kvsim meet them when a run starts: servers
// (present, same GPU, within kvsim's limits), parallel layout (tensor_parallel_size and
// data_parallel_size divide each server's GPUs, the model's heads and experts), scheduling
// policy, the KV cache's size (as vLLM's start-up refuses), then the offload section (tiers need
// their devices: a remote store and NICs, local drives, enough host DRAM; chunks are whole
// blocks and tiers hold at least one).
std::optional<ScenarioProblem> check_deployment(const Scenario& sc);

struct EngineSizing {
  models::MemoryBreakdown kv;      // per engine replica
  std::int64_t max_model_len = 0;  // engine.max_model_len, else the model's
  std::int64_t gpus = 0;           // over all servers
  std::int64_t replicas = 0;       // engines: gpus / tensor_parallel_size
  // Said of the sizing (a KV cache sized at the GPU's memory_max, not refused): run notes.
  std::vector<std::string> notes;
};
// The sizing of a scenario that check_deployment passes.
EngineSizing size_engines(const Scenario& sc);

// check_deployment's answer and, when it passes, the sizing it computed on the way (what a run
// needs: one computation of the KV cache instead of two).
struct CheckedDeployment {
  std::optional<ScenarioProblem> problem;
  EngineSizing sizing;  // meaningful only without a problem
};
CheckedDeployment check_and_size(const Scenario& sc);

// Whether the offload section has a tier on the remote store (which then needs the store, every
// server's NIC and the switch between them).
bool has_remote_tier(const engine::KvOffloadSpec& ko);

// How the scenario's MoE experts lie over its GPUs (models/compute_model.hpp MoeLayout): with
// data_parallel_size d > 1 or enable_expert_parallel, over tensor_parallel_size x d GPUs, each
// seeing d times its own batch's tokens.
models::MoeLayout moe_layout(const Scenario& sc);

// KV bytes of one block of an engine replica (all its GPUs' shards).
Bytes replica_block_bytes(const Scenario& sc);
// Tokens per offload tier entry: kv_offload.chunk_tokens, else one block (native) or 256 tokens
// (LMCache's chunk).
int offload_chunk_tokens(const Scenario& sc);

}  // namespace kvsim::scenario
