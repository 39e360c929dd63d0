#pragma once
// vLLM V1's KVCacheManager for one full-attention group (vllm/v1/core/kv_cache_manager.py,
// single_type_kv_cache_manager.py): prefix-cache lookup, slot allocation with cache hits, caching
// of newly full blocks, and freeing in reverse order. Token and block counts are integers.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <span>
#include <utility>
#include <vector>

#include "sim/engine/block_pool.hpp"
#include "sim/engine/request.hpp"

namespace kvsim::engine {

class KvCacheManager {
 public:
  KvCacheManager(std::int64_t num_blocks, int block_size, bool enable_caching, std::int64_t max_model_len);

  // get_computed_blocks(): the longest run of cached blocks from the start of the request's
  // hashes, at most (num_tokens - 1) // block_size blocks ("When all tokens hit the cache, we
  // must recompute the last token to obtain logits"). Fills `hits`; returns the hit tokens.
  // With `memo` (an exact fast path), a waiting request looked up again reuses its last answer
  // while no block it found was evicted, and resumes the walk where it stopped when new blocks
  // were cached since; forget_hit() drops the memo.
  std::int64_t find_longest_cache_hit(const Request& req, std::vector<BlockId>& hits, bool memo = false);
  // The same lookup, its hit blocks returned as a view instead of copied into `hits`: of
  // `scratch` (filled as find_longest_cache_hit() fills `hits`), or, with `memo`, of the
  // request's memo, valid until the next lookup or forget_hit() of the request. A request
  // blocked at the head of the queue is looked up every step; its hits are not copied each time.
  std::span<const BlockId> longest_cache_hit(const Request& req, std::vector<BlockId>& scratch, bool memo);
  void forget_hit(const Request& req);

  // allocate_slots(): room for num_new_tokens more tokens after the computed ones and the new
  // hits; false (and no change) if the free queue cannot supply the blocks. On success the hit
  // blocks are touched, new blocks popped, and full blocks up to
  // min(computed + hits + new, num_tokens) registered in the prefix cache.
  // With `delay_cache` (blocks that a connector will fill asynchronously) nothing is registered in
  // the prefix cache yet.
  bool allocate_slots(Request& req, std::int64_t num_new_tokens, std::int64_t num_new_computed_tokens,
                      std::span<const BlockId> new_computed_blocks, bool delay_cache = false);
  // Whether allocate_slots() with these arguments would succeed; changes nothing.
  bool can_allocate(const Request& req, std::int64_t num_new_tokens, std::int64_t num_new_computed_tokens,
                    std::span<const BlockId> new_computed_blocks) const;

  // cache_blocks(): registers the request's full blocks up to `num_tokens` tokens.
  void cache_full_blocks(Request& req, std::int64_t num_tokens);
  // Whether cache_full_blocks(req, num_tokens) would register a block (else it changes nothing).
  bool caches_more(const Request& req, std::int64_t num_tokens) const {
    return enable_caching_ && full_blocks(req, num_tokens) > req.num_cached_blocks;
  }
  // Whether allocate_slots(req, num_new_tokens, 0, {}) needs a new block.
  bool needs_new_block(const Request& req, std::int64_t num_new_tokens) const {
    return new_blocks_needed(req, req.num_computed + num_new_tokens, 0) > 0;
  }

  // Leading blocks of `hashes` found in the prefix cache (a router's look, no side effects).
  std::int64_t cached_prefix_blocks(const std::vector<std::uint64_t>& hashes) const;

  // free(): releases the request's blocks in reverse order (tail blocks evicted first).
  void free(Request& req);

  // Sequence slots (engine.prefix_cache_sequences; 0, the default, is vLLM's block cache): the
  // cache of an engine with n context sequences that each keep the tokens of the last request
  // they ran (llama.cpp's server slots, validation/cpu-engine). A request that reaches the
  // GPU's blocks (its first allocation) takes a sequence: the idle one whose kept prompt its hit
  // came from (the rest of that sequence's blocks beyond the common prefix are erased), else an
  // empty one, else the least recently released idle one, whose cached blocks are all dropped.
  // A finished (or preempted) request leaves its blocks as an idle sequence. So at most n
  // prompts' prefixes are cached, however many blocks are free; blocks are still handed out
  // from the free queue as vLLM does, and an offload tier behind holds what was dropped.
  void set_prefix_cache_sequences(int n) { sequences_ = n; }
  int prefix_cache_sequences() const { return sequences_; }
  // Idle sequences kept (for tests).
  std::size_t idle_sequences() const { return idle_.size(); }
  // Whether take_sequence(hits) would erase cached tokens of an idle sequence: the tokens the
  // continued sequence kept beyond the hit, or, with no empty sequence left, the least recently
  // used one's.
  bool would_erase(std::span<const BlockId> hits) const;

  BlockPool& pool() { return pool_; }
  const BlockPool& pool() const { return pool_; }
  int block_size() const { return block_size_; }
  bool caching() const { return enable_caching_; }

 private:
  // The admission test: `num_new_blocks` fresh blocks plus the hit blocks that sit in the free
  // queue fit in the free queue.
  bool fits(const Request& req, std::int64_t num_new_blocks, std::span<const BlockId> hits) const;
  // Blocks to add to the request's table, beyond its blocks and `hits` new hit blocks, to hold
  // `tokens` tokens (at most max_model_len).
  std::int64_t new_blocks_needed(const Request& req, std::int64_t tokens, std::size_t hits) const {
    const std::int64_t need_slot = std::min(tokens, max_model_len_);
    const std::int64_t required = (need_slot + block_size_ - 1) / block_size_;
    return std::max<std::int64_t>(
        required - static_cast<std::int64_t>(req.blocks.size()) - static_cast<std::int64_t>(hits), 0);
  }
  // The request's full blocks within its first `num_tokens` tokens that have hashes and blocks.
  std::int64_t full_blocks(const Request& req, std::int64_t num_tokens) const {
    return std::min<std::int64_t>({num_tokens / block_size_, static_cast<std::int64_t>(req.block_hashes.size()),
                                   static_cast<std::int64_t>(req.blocks.size())});
  }

  // Sequence slots: the request that reached the blocks takes a sequence (see
  // set_prefix_cache_sequences); `hits` are the blocks its prefix-cache hit touched.
  void take_sequence(std::span<const BlockId> hits);
  // Drops the cached blocks of an idle sequence from position `from` on that still hold their
  // hashes (blocks handed out again since, or in use by a request, are left alone).
  void drop_sequence(const std::vector<std::pair<BlockId, std::uint64_t>>& seq, std::size_t from);

  BlockPool pool_;
  int block_size_;
  bool enable_caching_;
  std::int64_t max_model_len_;
  int valid_memos_ = 0;  // requests with a valid hit memo (watching blocks in the pool)
  int sequences_ = 0;    // sequence slots; 0: vLLM's block cache
  std::int64_t holders_ = 0;  // requests holding a sequence (with blocks)
  // Idle sequences, least recently released first: each its cached blocks in order, with the
  // hash each held then.
  using Idle = std::deque<std::vector<std::pair<BlockId, std::uint64_t>>>;
  Idle idle_;
  // The idle sequence a request with these hits takes (take_sequence, would_erase): the one its
  // hit continues, keeping the hit's blocks, else, with no empty sequence left, the least
  // recently used one, keeping none; end() when it takes an empty sequence.
  struct Taken {
    Idle::const_iterator sequence;
    std::size_t kept = 0;
  };
  Taken sequence_taken(std::span<const BlockId> hits) const;
};

}  // namespace kvsim::engine
