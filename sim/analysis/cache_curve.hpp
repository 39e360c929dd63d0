#pragma once
// Timing-free prefix-cache hit rates of a trace: how much of the prompt tokens a cache of a given
// capacity (in the trace's hash blocks) would have served, for one cache or a stack of tiers.
//
// A request is a list of hash ids, one per block of `block_tokens` prompt tokens; equal leading
// ids are a shared prefix. Requests are taken in trace (timestamp) order. Two rule sets:
//
//  - kPublished, the rules of the LRU curve published with the Mooncake FAST'25 traces:
//    every hash id is one block, the partial last one too; the hit length h is the longest
//    prefix of the request's ids present in the cache; hit tokens = min(block_tokens * h,
//    input_length); then every id of the request is touched or inserted as most recently used,
//    first to last (so the last block ends most recently used).
//  - kVllm, vLLM's prefix cache: only full blocks are cached (the partial last block never
//    hits), hit tokens = block_tokens * h; the request's blocks are touched last to first, so its
//    first block ends most recently used (vLLM frees a request's blocks in reverse order and its
//    offloading LRU touches them the same way: vllm/v1/core/kv_cache_utils.py,
//    vllm/v1/kv_offload/cpu/policies/lru.py).
//
// Token-weighted hit rate = sum of hit tokens / sum of input tokens. Request-weighted hit rate =
// the mean over requests of hit tokens / input tokens (every request counts the same).
//
// LRU curves for every capacity come from one pass (Mattson, Gecsei, Slutz and Traiger,
// "Evaluation techniques for storage hierarchies", IBM Systems Journal 9(2), 1970): LRU is a
// stack algorithm, so a block is in a cache of C blocks exactly when its stack distance (distinct
// blocks used since its last use) is below C; with m_k the largest distance among a request's
// first k+1 blocks, the request hits k+1 blocks in every cache larger than m_k. Distances come
// from a Fenwick tree over access times (O(log N) per block). ARC (Megiddo and Modha, FAST'03)
// is not a stack algorithm: each capacity is simulated with the simulator's own tier
// (kvsim::engine::KvTier), capacities in parallel.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/engine/kv_tier.hpp"
#include "sim/workload/mooncake_trace.hpp"

namespace kvsim::analysis {

using workload::TraceRequest;

enum class CurveRules { kPublished, kVllm };

struct CurveOptions {
  int block_tokens = 512;
  CurveRules rules = CurveRules::kPublished;
  engine::EvictionPolicy policy = engine::EvictionPolicy::kLru;
  int threads = 0;  // ARC: capacities simulated in parallel (0 = one per core)
};

struct CacheCurvePoint {
  std::int64_t capacity_blocks = 0;  // in the trace's hash blocks
  std::int64_t hit_tokens = 0;
  double token_hit_rate = 0;    // hit tokens / prompt tokens
  double request_hit_rate = 0;  // mean over requests of hit tokens / input tokens
};

struct CacheCurve {
  std::int64_t requests = 0;
  std::int64_t prompt_tokens = 0;
  std::int64_t distinct_blocks = 0;
  double infinite_token_hit_rate = 0;    // a cache that never evicts
  double infinite_request_hit_rate = 0;
  std::vector<CacheCurvePoint> points;  // in ascending capacity
};

// Hit rates of a prefix cache of each capacity (hash blocks); capacities must be positive.
CacheCurve cache_curve(const std::vector<TraceRequest>& trace, const std::vector<std::int64_t>& capacities,
                       const CurveOptions& options);

// One tier of a stack: a name (gpu, dram, nvme, remote, ...), a capacity in hash blocks and an
// eviction policy.
struct TierLevel {
  std::string name;
  std::int64_t capacity_blocks = 0;
  engine::EvictionPolicy policy = engine::EvictionPolicy::kLru;
};

struct TierHits {
  std::string name;
  std::int64_t capacity_blocks = 0;
  std::int64_t hit_tokens = 0;  // tokens this tier served (not served by a tier above it)
  double token_hit_rate = 0;
  double request_hit_rate = 0;
};

struct TierStackResult {
  std::int64_t requests = 0;
  std::int64_t prompt_tokens = 0;
  std::vector<TierHits> tiers;  // in stack order
  TierHits total;               // all tiers together
};

// A stack of tiers, first = fastest, each fed every block of every request (write-through, as the
// native connector stores every computed block in its first tier and stages lower tiers from it;
// timing-free: every store has finished before the next request). A request's prefix is served
// block by block from the first tier that holds it, as long as some tier does; each block counts
// for that tier. Then every tier touches or inserts every block of the request (`options.rules`
// sets the order and whether the partial last block counts). `options.policy` is ignored: each
// level has its own.
TierStackResult tier_stack_hits(const std::vector<TraceRequest>& trace, const std::vector<TierLevel>& levels,
                                const CurveOptions& options);

}  // namespace kvsim::analysis
