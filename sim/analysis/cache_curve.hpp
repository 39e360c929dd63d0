#pragma once
// Timing-free prefix-cache hit rate against cache capacity for a trace, for every capacity in
// one pass (Mattson et al., "Evaluation techniques for storage hierarchies", IBM Systems
// Journal 1970): under LRU a block is cached in a cache of C blocks exactly when its stack
// distance (distinct blocks touched since its last use) is below C. A request hits the leading
// blocks of its prompt that are cached, so with m_k the largest stack distance among its first
// k+1 blocks, it hits k+1 blocks in every cache larger than m_k. After the lookup the request's
// blocks become most recently used, its first block last (vLLM frees a request's blocks in
// reverse so that its prefix is evicted last). Stack distances come from a Fenwick tree over
// access times: O(log N) per block.
#include <cstdint>
#include <vector>

#include "kvsim/workload/mooncake_trace.hpp"

namespace kvsim::workload {

struct CacheCurvePoint {
  std::int64_t capacity_blocks = 0;  // in the trace's hash blocks
  double token_hit_rate = 0;         // hit tokens / prompt tokens
  double request_hit_rate = 0;       // requests with at least one hit block / requests
};

struct CacheCurve {
  std::int64_t requests = 0;
  std::int64_t prompt_tokens = 0;
  std::int64_t distinct_blocks = 0;
  double infinite_token_hit_rate = 0;  // every block ever seen still cached
  std::vector<CacheCurvePoint> points;
};

// Hit rates of an LRU prefix cache of each capacity (in hash blocks of `block_tokens` tokens);
// a trace's last, partial block never hits (it is unique to its request).
CacheCurve lru_cache_curve(const std::vector<TraceRequest>& trace, int block_tokens,
                           const std::vector<std::int64_t>& capacities);

}  // namespace kvsim::workload
