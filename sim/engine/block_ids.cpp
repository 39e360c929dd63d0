#include "sim/engine/block_ids.hpp"

#include <algorithm>

#include "sim/core/error.hpp"

namespace kvsim::engine {

void BlockIds::set_first_id(std::uint64_t first) {
  KVSIM_ASSERT(hash_.empty(), "block ids are already handed out");
  first_ = first;
}

std::uint64_t BlockIds::intern(std::uint64_t hash) {
  std::int32_t id = by_hash_.find(hash);
  if (id != FlatHashMap::kNone) return first_ + static_cast<std::uint64_t>(id);
  if (!free_.empty()) {
    id = static_cast<std::int32_t>(free_.back());
    free_.pop_back();
  } else {
    KVSIM_ASSERT(hash_.size() < 0x7fffffffU, "more than 2^31 block ids in use");
    id = static_cast<std::int32_t>(hash_.size());
    hash_.push_back(0);
    bound_.push_back(0);
  }
  hash_[static_cast<std::size_t>(id)] = hash;
  bound_[static_cast<std::size_t>(id)] = 1;
  by_hash_.try_emplace(hash, id);
  return first_ + static_cast<std::uint64_t>(id);
}

void BlockIds::intern_all(std::uint64_t* hashes, std::size_t n) {
  constexpr std::size_t kAhead = 8;
  for (std::size_t i = 0; i < std::min(kAhead, n); ++i) by_hash_.prefetch(hashes[i]);
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) by_hash_.prefetch(hashes[i + kAhead]);
    hashes[i] = intern(hashes[i]);
  }
}

void BlockIds::sweep() {
  // Freed highest first, so that the free list hands out low ids first, in order; their
  // hashes leave the table looking ahead, so that the erasures' cache misses overlap.
  const std::size_t first = free_.size();
  for (std::size_t id = hash_.size(); id-- > 0;) {
    if (bound_[id] == 0 || marks_[id] != 0) continue;
    bound_[id] = 0;
    free_.push_back(static_cast<std::uint32_t>(id));
  }
  constexpr std::size_t kAhead = 8;
  for (std::size_t i = first; i < free_.size(); ++i) {
    if (i + kAhead < free_.size()) by_hash_.prefetch(hash_[free_[i + kAhead]]);
    by_hash_.erase(hash_[free_[i]]);
  }
  next_collect_ = std::max<std::size_t>(2 * live(), kFirstCollect);
  collected_at_table_ = by_hash_.grows_at();
}

}  // namespace kvsim::engine
