#include "sim/engine/block_pool.hpp"

#include <string>

#include "sim/core/error.hpp"

namespace kvsim::engine {

BlockPool::BlockPool(std::int64_t num_blocks, bool enable_caching) : enable_caching_(enable_caching) {
  KVSIM_ASSERT(num_blocks >= 2, "a block pool needs the null block and at least one more");
  blocks_.resize(static_cast<std::size_t>(num_blocks));
  watch_.assign(static_cast<std::size_t>(num_blocks), 0);
  // vLLM: all blocks start in the free queue in id order; the null block (id 0) is popped first.
  for (BlockId i = 1; i < static_cast<BlockId>(num_blocks); ++i) push_tail(i);
  at(0).ref_cnt = 1;
}

double BlockPool::usage() const {
  const auto usable = static_cast<double>(num_blocks() - 1);
  return 1.0 - static_cast<double>(num_free_) / usable;
}

bool BlockPool::in_free_queue(BlockId id) const { return at(id).queued; }

void BlockPool::push_tail(BlockId id) {
  Block& b = at(id);
  b.prev = tail_;
  b.next = kNoBlock;
  if (tail_ != kNoBlock) at(tail_).next = id;
  else head_ = id;
  tail_ = id;
  b.queued = true;
  ++num_free_;
}

void BlockPool::unlink(BlockId id) {
  Block& b = at(id);
  KVSIM_ASSERT(b.queued, "unlinking a block that is not in the free queue");
  if (b.prev != kNoBlock) at(b.prev).next = b.next;
  else head_ = b.next;
  if (b.next != kNoBlock) at(b.next).prev = b.prev;
  else tail_ = b.prev;
  b.prev = b.next = kNoBlock;
  b.queued = false;
  --num_free_;
}

void BlockPool::evict_hash(BlockId id) {
  Block& b = at(id);
  if (!b.cached) return;
  if (watch_[static_cast<std::size_t>(id)] > 0) ++shrink_version_;
  const BlockId first = cached_.find(b.hash);
  KVSIM_ASSERT(first != DenseIndex::kNone, "cached block missing from the map");
  if (first == id) {
    if (b.dup_next == kNoBlock) cached_.erase(b.hash);
    else cached_.assign(b.hash, b.dup_next);
  } else {
    BlockId cur = first;
    while (at(cur).dup_next != id) {
      cur = at(cur).dup_next;
      KVSIM_ASSERT(cur != kNoBlock, "duplicate chain broken");
    }
    at(cur).dup_next = b.dup_next;
  }
  b.dup_next = kNoBlock;
  b.cached = false;
  --num_cached_;
  ++evictions_;
}

void BlockPool::get_new_blocks(std::int64_t n, std::vector<BlockId>& out) {
  KVSIM_ASSERT(n <= num_free_, "asked for " + std::to_string(n) + " blocks with " +
                                   std::to_string(num_free_) + " free");
  for (std::int64_t i = 0; i < n; ++i) {
    const BlockId id = head_;
    unlink(id);
    evict_hash(id);
    Block& b = at(id);
    KVSIM_ASSERT(b.ref_cnt == 0, "a block in the free queue had references");
    b.ref_cnt = 1;
    watched_free_ -= watch_[static_cast<std::size_t>(id)];
    out.push_back(id);
  }
}

void BlockPool::touch(BlockId id) {
  Block& b = at(id);
  if (b.ref_cnt == 0 && id != 0) {
    unlink(id);
    watched_free_ -= watch_[static_cast<std::size_t>(id)];
  }
  ++b.ref_cnt;
}

void BlockPool::free_block(BlockId id) {
  Block& b = at(id);
  KVSIM_ASSERT(b.ref_cnt > 0, "freeing a block with no references");
  --b.ref_cnt;
  if (b.ref_cnt == 0 && id != 0) {
    push_tail(id);
    watched_free_ += watch_[static_cast<std::size_t>(id)];
  }
}

void BlockPool::cache_block(BlockId id, std::uint64_t hash) {
  if (!enable_caching_) return;
  Block& b = at(id);
  if (b.cached) return;
  b.hash = hash;
  b.cached = true;
  b.dup_next = kNoBlock;
  ++num_cached_;
  const BlockId first = cached_.try_emplace(hash, id);
  if (first == id) ++grow_version_;
  if (first != id) {
    BlockId cur = first;
    while (at(cur).dup_next != kNoBlock) cur = at(cur).dup_next;
    at(cur).dup_next = id;
  }
}

BlockId BlockPool::lookup(std::uint64_t hash) const {
  if (!enable_caching_) return kNoBlock;
  const BlockId b = cached_.find(hash);
  return b == DenseIndex::kNone ? kNoBlock : b;
}

std::vector<BlockId> BlockPool::free_queue_order() const {
  std::vector<BlockId> out;
  for (BlockId id = head_; id != kNoBlock; id = at(id).next) out.push_back(id);
  return out;
}

}  // namespace kvsim::engine
