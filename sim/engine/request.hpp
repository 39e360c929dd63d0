#pragma once
// One request inside an engine: its tokens as block hashes, how far its KV has been computed,
// the blocks it holds and what happened to it. Token counts are plain integers.
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/engine/block_pool.hpp"

namespace kvsim::engine {

enum class RequestStatus { kWaiting, kRunning, kPreempted, kFinished, kRejected };

struct Request {
  std::uint64_t id = 0;                     // the simulation's request id
  std::int64_t prompt_tokens = 0;
  std::int64_t max_output_tokens = 1;       // forced output length
  std::vector<std::uint64_t> block_hashes;  // chained hashes of every full block of prompt+output
  SimTime arrival = 0;
  int priority = 0;

  RequestStatus status = RequestStatus::kWaiting;
  std::int64_t generated = 0;       // output tokens sampled so far
  std::int64_t num_computed = 0;    // tokens whose KV is (being) computed
  std::vector<BlockId> blocks;      // block table, in token order
  std::int64_t num_cached_blocks = 0;  // blocks of the table registered in the prefix cache
  std::int64_t num_cached_tokens = -1;  // prefix hit at first scheduling (-1: not yet scheduled)
  int preemptions = 0;
  SimTime first_token_time = -1;   // when the first output token left the engine
  SimTime finish_time = -1;
  // Tokens scheduled in steps whose outputs are not applied yet (vLLM num_output_placeholders,
  // AsyncScheduler); always 0 between steps without async scheduling.
  std::int64_t placeholders = 0;
  // KV connector state: the request waits for an asynchronous load (vLLM
  // WAITING_FOR_REMOTE_KVS) until load_ready; external_tokens were loaded from offload tiers;
  // stored_blocks are the blocks already handed to the connector for storing.
  bool loading = false;
  bool load_ready = false;
  std::int64_t external_tokens = 0;
  std::int64_t load_base = 0;  // GPU prefix-cache hit tokens when the load was started
  std::int64_t stored_blocks = 0;
  // The native connector's last match() for this request, reused while the tiers' change
  // counters say its answer still holds (an exact fast path; see OffloadSystem).
  struct MatchMemo {
    bool valid = false;
    int matches = 0;                  // match() calls so far; the first one memoizes nothing
    bool deferred = false;            // chunk `end` is pinned by a load: match() said "later"
    std::int64_t local_hit_tokens = 0;
    std::int64_t num_tokens = 0;
    std::uint64_t grow = 0;           // sums of the path's tiers' change counters
    std::uint64_t shrink = 0;
    std::int64_t end = 0;             // chunks [first, end) were ready and unpinned
    // Where each of those chunks was found (stack position, entry slot), watched there.
    std::vector<std::pair<std::int32_t, std::int32_t>> found;
  };
  mutable MatchMemo match_memo;
  // The GPU prefix-cache lookup of this waiting request, reused likewise (KvCacheManager).
  struct HitMemo {
    bool valid = false;
    std::int64_t num_tokens = 0;
    std::uint64_t grow = 0;
    std::uint64_t shrink = 0;
    std::vector<BlockId> blocks;  // watched in the block pool while valid
  };
  mutable HitMemo hit_memo;

  // vLLM Request.num_tokens: prompt plus output tokens so far.
  std::int64_t num_tokens() const { return prompt_tokens + generated; }
};

}  // namespace kvsim::engine
