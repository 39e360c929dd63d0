#pragma once
// vLLM V1's GPU block pool (vllm/v1/core/block_pool.py, kv_cache_utils.py FreeKVCacheBlockQueue):
// a fixed array of KV blocks, a doubly linked free queue that evicts from the head (LRU), and a
// map from block hash to cached block. Block 0 is the null block, taken out of the free queue at
// start, so num_blocks - 1 are usable. Freed blocks keep their hash and stay hit-able until they
// are handed out again; only then is the hash dropped (lazy eviction). Duplicated blocks (two
// blocks with one hash) are allowed, as in vLLM; a lookup returns the earliest still cached.
// Hashes are dense block ids (BlockIds), so the map is an array indexed by them (DenseIndex):
// the blocks of one request, named together, share its cache lines. Flat arrays otherwise; no
// allocation after construction except for the map's pages.
#include <cstdint>
#include <vector>

#include "sim/engine/dense_index.hpp"

namespace kvsim::engine {

using BlockId = std::int32_t;
inline constexpr BlockId kNoBlock = -1;

class BlockPool {
 public:
  BlockPool(std::int64_t num_blocks, bool enable_caching);

  std::int64_t num_blocks() const { return static_cast<std::int64_t>(blocks_.size()); }
  std::int64_t num_free_blocks() const { return num_free_; }
  // vLLM get_usage(): 1 - free / (num_blocks - 1 null block).
  double usage() const;

  // Pops n blocks from the head of the free queue (caller checked num_free_blocks() >= n),
  // dropping the cached hash of each popped block; appends their ids to `out`.
  void get_new_blocks(std::int64_t n, std::vector<BlockId>& out);
  // A prefix-cache hit: ref_cnt + 1, removed from the free queue if it was there.
  void touch(BlockId id);
  // ref_cnt - 1; blocks reaching 0 go to the free queue's tail in the order given (callers pass
  // a request's blocks in reverse, so its tail blocks are evicted first).
  void free_block(BlockId id);
  // Registers a now-full block under its hash.
  void cache_block(BlockId id, std::uint64_t hash);
  // The cached block holding `hash`, or kNoBlock.
  BlockId lookup(std::uint64_t hash) const;

  int ref_cnt(BlockId id) const { return blocks_[static_cast<std::size_t>(id)].ref_cnt; }
  bool is_cached(BlockId id) const { return blocks_[static_cast<std::size_t>(id)].cached; }
  // The hash a cached block holds (meaningful only while is_cached).
  std::uint64_t hash_of(BlockId id) const { return blocks_[static_cast<std::size_t>(id)].hash; }
  // Drops a free block's cached hash at once (it stays in the free queue, no longer hit-able);
  // nothing for a block in use or not cached. For engines whose cache forgets a whole sequence
  // (KvCacheManager::set_prefix_cache_sequences).
  void drop_cached(BlockId id) {
    if (at(id).cached && at(id).ref_cnt == 0) evict_hash(id);
  }
  bool in_free_queue(BlockId id) const;
  std::int64_t num_cached_blocks() const { return num_cached_; }
  // Free queue from head (next evicted) to tail; for tests.
  std::vector<BlockId> free_queue_order() const;
  std::int64_t evictions() const { return evictions_; }
  // Calls f(hash) for the hash of every cached block.
  template <class F>
  void for_each_cached_hash(F&& f) const {
    for (const Block& b : blocks_) {
      if (b.cached) f(b.hash);
    }
  }

  // Change counters for memoized prefix lookups (an exact fast path): grow_version() counts new
  // hashes entering the cache (a lookup run can only lengthen); shrink_version() evictions of
  // watched blocks (blocks some memoized lookup returned; watch counts per block).
  std::uint64_t grow_version() const { return grow_version_; }
  std::uint64_t shrink_version() const { return shrink_version_; }
  void watch(BlockId id) {
    ++watch_[static_cast<std::size_t>(id)];
    if (at(id).ref_cnt == 0) ++watched_free_;
  }
  void unwatch(BlockId id) {
    --watch_[static_cast<std::size_t>(id)];
    if (at(id).ref_cnt == 0) --watched_free_;
  }
  // Sum over blocks of (watch count) x (ref_cnt == 0): with one memoized lookup, how many of
  // the blocks it found sit in the free queue.
  std::int64_t watched_free() const { return watched_free_; }

 private:
  struct Block {
    BlockId prev = kNoBlock;  // free-queue links; kNoBlock at the ends
    BlockId next = kNoBlock;
    BlockId dup_next = kNoBlock;  // next block with the same hash
    int ref_cnt = 0;
    bool cached = false;
    bool queued = false;
    std::uint64_t hash = 0;
  };
  void push_tail(BlockId id);
  void unlink(BlockId id);
  void evict_hash(BlockId id);
  Block& at(BlockId id) { return blocks_[static_cast<std::size_t>(id)]; }
  const Block& at(BlockId id) const { return blocks_[static_cast<std::size_t>(id)]; }

  std::vector<Block> blocks_;
  BlockId head_ = kNoBlock;
  BlockId tail_ = kNoBlock;
  std::int64_t num_free_ = 0;
  std::int64_t num_cached_ = 0;
  std::int64_t evictions_ = 0;
  bool enable_caching_;
  DenseIndex cached_;  // block id (hash) -> first block of its dup chain
  std::vector<std::int32_t> watch_;
  std::uint64_t grow_version_ = 0;
  std::uint64_t shrink_version_ = 0;
  std::int64_t watched_free_ = 0;
};

}  // namespace kvsim::engine
