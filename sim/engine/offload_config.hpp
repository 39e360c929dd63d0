#pragma once
// KV-cache offload: which connector moves KV blocks between the GPU and which tiers (the
// scenario's `kv_offload:` section). Capacities in bytes.
#include <string>
#include <vector>

#include "sim/core/units.hpp"

namespace kvsim::engine {

struct KvTierSpec {
  std::string kind = "host_dram";  // host_dram | local_nvme | remote
  Bytes capacity{0};               // host_dram, local_nvme: per server; remote: the one store
  std::string eviction = "lru";    // lru | arc
};

struct KvOffloadSpec {
  // none: GPU prefix cache only. native: vLLM's OffloadingConnector (asynchronous loads,
  // write-through stores of full blocks, lower tiers behind the first). lmcache: LMCache's
  // connector (chunks of 256 tokens, synchronous loads before the forward pass and stores after
  // it, hits counted from the prompt's start).
  std::string connector = "none";
  int chunk_tokens = 0;        // tier granularity; 0: one block (native) or 256 (lmcache)
  bool use_layerwise = false;  // lmcache: loads pipelined with the forward pass layer by layer
  std::vector<KvTierSpec> tiers;  // lookup order, fastest first
  bool offload_prompt_only = true;  // vLLM offload_prompt_only: decode blocks are not stored
};

}  // namespace kvsim::engine
