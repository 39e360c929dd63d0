#include "sim/engine/kv_cache_manager.hpp"

#include <algorithm>

#include "sim/core/error.hpp"

namespace kvsim::engine {

KvCacheManager::KvCacheManager(std::int64_t num_blocks, int block_size, bool enable_caching,
                               std::int64_t max_model_len)
    : pool_(num_blocks, enable_caching),
      block_size_(block_size),
      enable_caching_(enable_caching),
      max_model_len_(max_model_len) {}

std::int64_t KvCacheManager::find_longest_cache_hit(const Request& req, std::vector<BlockId>& hits, bool memo) {
  const std::span<const BlockId> found = longest_cache_hit(req, hits, memo);
  if (found.data() != hits.data()) hits.assign(found.begin(), found.end());
  return static_cast<std::int64_t>(found.size()) * block_size_;
}

std::span<const BlockId> KvCacheManager::longest_cache_hit(const Request& req, std::vector<BlockId>& scratch,
                                                           bool memo) {
  scratch.clear();
  if (!enable_caching_) return scratch;
  const std::int64_t max_hit_tokens = req.num_tokens() - 1;
  const std::int64_t max_blocks =
      std::min<std::int64_t>(max_hit_tokens / block_size_, static_cast<std::int64_t>(req.block_hashes.size()));
  auto& m = req.hit_memo;
  // With a memo the walk runs on the memo's own blocks: those it found before (while none was
  // evicted), extended where new blocks were cached since.
  std::vector<BlockId>& hits = memo ? m.blocks : scratch;
  if (memo && m.valid && m.shrink == pool_.shrink_version() && m.num_tokens == req.num_tokens()) {
    if (m.grow == pool_.grow_version()) return hits;
  } else if (memo) {
    forget_hit(req);
  }
  const std::size_t from = hits.size();
  for (auto i = static_cast<std::int64_t>(from); i < max_blocks; ++i) {
    const BlockId b = pool_.lookup(req.block_hashes[static_cast<std::size_t>(i)]);
    if (b == kNoBlock) break;
    hits.push_back(b);
  }
  if (memo) {
    for (std::size_t i = from; i < hits.size(); ++i) pool_.watch(hits[i]);
    if (!m.valid) ++valid_memos_;
    m.valid = true;
    m.num_tokens = req.num_tokens();
    m.grow = pool_.grow_version();
    m.shrink = pool_.shrink_version();
  }
  return hits;
}

void KvCacheManager::forget_hit(const Request& req) {
  auto& m = req.hit_memo;
  if (!m.valid) return;
  for (const BlockId b : m.blocks) pool_.unwatch(b);
  --valid_memos_;
  m.valid = false;
  m.blocks.clear();
}

bool KvCacheManager::allocate_slots(Request& req, std::int64_t num_new_tokens,
                                    std::int64_t num_new_computed_tokens,
                                    std::span<const BlockId> new_computed_blocks, bool delay_cache) {
  const std::int64_t total_computed = req.num_computed + num_new_computed_tokens;
  const std::int64_t num_new_blocks =
      new_blocks_needed(req, total_computed + num_new_tokens, new_computed_blocks.size());
  if (!fits(req, num_new_blocks, new_computed_blocks)) return false;
  const bool takes_sequence = sequences_ > 0 && req.blocks.empty();

  for (BlockId b : new_computed_blocks) {
    pool_.touch(b);
    req.blocks.push_back(b);
  }
  if (!new_computed_blocks.empty()) req.num_cached_blocks = static_cast<std::int64_t>(req.blocks.size());
  if (takes_sequence) take_sequence(new_computed_blocks);
  if (num_new_blocks > 0) pool_.get_new_blocks(num_new_blocks, req.blocks);

  if (!delay_cache) cache_full_blocks(req, std::min(total_computed + num_new_tokens, req.num_tokens()));
  return true;
}

KvCacheManager::Taken KvCacheManager::sequence_taken(std::span<const BlockId> hits) const {
  if (!hits.empty()) {
    const auto from_sequence = std::find_if(idle_.begin(), idle_.end(), [&](const auto& seq) {
      return !seq.empty() && seq.front().first == hits.front();
    });
    // The request continues this sequence: what it kept beyond the common prefix is erased.
    if (from_sequence != idle_.end()) return {from_sequence, hits.size()};
  }
  // No empty sequence: the least recently used idle one is erased for it.
  if (holders_ + static_cast<std::int64_t>(idle_.size()) >= sequences_ && !idle_.empty())
    return {idle_.begin(), 0};
  return {idle_.end(), 0};
}

void KvCacheManager::take_sequence(std::span<const BlockId> hits) {
  // The hit blocks are touched (in use), so nothing below drops them.
  const Taken taken = sequence_taken(hits);
  if (taken.sequence != idle_.end()) {
    drop_sequence(*taken.sequence, taken.kept);
    idle_.erase(taken.sequence);
  }
  ++holders_;
}

bool KvCacheManager::would_erase(std::span<const BlockId> hits) const {
  if (sequences_ == 0) return false;
  const Taken taken = sequence_taken(hits);
  return taken.sequence != idle_.end() && taken.sequence->size() > taken.kept;
}

void KvCacheManager::drop_sequence(const std::vector<std::pair<BlockId, std::uint64_t>>& seq,
                                   std::size_t from) {
  for (std::size_t i = from; i < seq.size(); ++i) {
    const auto [block, hash] = seq[i];
    if (pool_.is_cached(block) && pool_.hash_of(block) == hash) pool_.drop_cached(block);
  }
}

bool KvCacheManager::can_allocate(const Request& req, std::int64_t num_new_tokens,
                                  std::int64_t num_new_computed_tokens,
                                  std::span<const BlockId> new_computed_blocks) const {
  // The admission test of allocate_slots(), term for term.
  const std::int64_t total_computed = req.num_computed + num_new_computed_tokens;
  return fits(req, new_blocks_needed(req, total_computed + num_new_tokens, new_computed_blocks.size()),
              new_computed_blocks);
}

bool KvCacheManager::fits(const Request& req, std::int64_t num_new_blocks, std::span<const BlockId> hits) const {
  // Hit blocks with no other user sit in the free queue: touching them takes them out of it.
  // The count of those lies in [0, hits], so the answer is often known without it; and when
  // the hits are those of the one memoized lookup, the pool keeps the count.
  const std::int64_t free = pool_.num_free_blocks();
  if (num_new_blocks > free) return false;
  if (num_new_blocks + static_cast<std::int64_t>(hits.size()) <= free) return true;
  auto count = [&] {
    std::int64_t evictable_hits = 0;
    for (BlockId b : hits) evictable_hits += pool_.ref_cnt(b) == 0 ? 1 : 0;
    return evictable_hits;
  };
  if (valid_memos_ == 1 && req.hit_memo.valid && req.hit_memo.blocks.size() == hits.size()) {
#ifndef NDEBUG
    KVSIM_ASSERT(pool_.watched_free() == count(), "the pool's count of free watched blocks is out of step");
#endif
    return num_new_blocks + pool_.watched_free() <= free;
  }
  return num_new_blocks + count() <= free;
}

void KvCacheManager::cache_full_blocks(Request& req, std::int64_t num_tokens) {
  if (!enable_caching_) return;
  const std::int64_t full = full_blocks(req, num_tokens);
  for (std::int64_t i = req.num_cached_blocks; i < full; ++i) {
    pool_.cache_block(req.blocks[static_cast<std::size_t>(i)], req.block_hashes[static_cast<std::size_t>(i)]);
  }
  req.num_cached_blocks = std::max(req.num_cached_blocks, full);
}

std::int64_t KvCacheManager::cached_prefix_blocks(const std::vector<std::uint64_t>& hashes) const {
  std::int64_t n = 0;
  if (!enable_caching_) return 0;
  for (const auto h : hashes) {
    if (pool_.lookup(h) == kNoBlock) break;
    ++n;
  }
  return n;
}

void KvCacheManager::free(Request& req) {
  if (sequences_ > 0 && !req.blocks.empty()) {
    // The request's sequence goes idle, keeping its cached blocks (a leading run: blocks are
    // cached in order).
    std::vector<std::pair<BlockId, std::uint64_t>> seq;
    for (const BlockId b : req.blocks) {
      if (!pool_.is_cached(b)) break;
      seq.emplace_back(b, pool_.hash_of(b));
    }
    --holders_;
    idle_.push_back(std::move(seq));
  }
  for (auto it = req.blocks.rbegin(); it != req.blocks.rend(); ++it) pool_.free_block(*it);
  req.blocks.clear();
  req.num_cached_blocks = 0;
}

}  // namespace kvsim::engine
