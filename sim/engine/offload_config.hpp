#pragma once
// KV-cache offload: which connector moves KV blocks between the GPU and which tiers (the
// scenario's `kv_offload:` section). Capacities in bytes.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/units.hpp"

namespace kvsim::engine {

// Where a tier's blocks live. host_dram: pinned host memory of each server; local_nvme: each
// server's NVMe drives; remote: the network-attached store shared by all servers.
enum class KvTierKind : std::uint8_t { kHostDram, kLocalNvme, kRemote };

// The scenario's spelling: "host_dram", "local_nvme", "remote"; also the tier's name in results.
constexpr const char* kv_tier_kind_name(KvTierKind k) {
  switch (k) {
    case KvTierKind::kHostDram:
      return "host_dram";
    case KvTierKind::kLocalNvme:
      return "local_nvme";
    case KvTierKind::kRemote:
      return "remote";
  }
  return "host_dram";
}

// A tier's eviction policy (sim/engine/kv_tier.hpp implements both).
enum class EvictionPolicy { kLru, kArc };

// The scenario's spelling: "lru", "arc".
constexpr const char* eviction_policy_name(EvictionPolicy p) {
  switch (p) {
    case EvictionPolicy::kLru:
      return "lru";
    case EvictionPolicy::kArc:
      return "arc";
  }
  return "lru";
}

struct KvTierSpec {
  KvTierKind kind = KvTierKind::kHostDram;
  Bytes capacity{0};  // host_dram, local_nvme: per server; remote: the one store
  EvictionPolicy eviction = EvictionPolicy::kLru;
};

// Which connector moves KV blocks between the GPU and the tiers.
enum class KvConnector : std::uint8_t { kNone, kNative, kLmcache };

// The scenario's spelling: "none", "native", "lmcache".
constexpr const char* kv_connector_name(KvConnector c) {
  switch (c) {
    case KvConnector::kNone:
      return "none";
    case KvConnector::kNative:
      return "native";
    case KvConnector::kLmcache:
      return "lmcache";
  }
  return "none";
}

struct KvOffloadSpec {
  // none: GPU prefix cache only. native: vLLM's OffloadingConnector (asynchronous loads,
  // write-through stores of full blocks, lower tiers behind the first). lmcache: LMCache's
  // connector (chunks of 256 tokens, synchronous loads before the forward pass and stores after
  // it, hits counted from the prompt's start).
  KvConnector connector = KvConnector::kNone;
  int chunk_tokens = 0;        // tier granularity; 0: one block (native) or 256 (lmcache)
  bool use_layerwise = false;  // lmcache: loads pipelined with the forward pass layer by layer
  std::vector<KvTierSpec> tiers;  // lookup order, fastest first
  bool offload_prompt_only = true;  // vLLM offload_prompt_only: decode blocks are not stored
};

}  // namespace kvsim::engine
