#include "kvsim/engine/block_ids.hpp"

#include <algorithm>

#include "kvsim/core/error.hpp"

namespace kvsim::engine {

std::uint64_t BlockIds::intern(std::uint64_t hash) {
  std::int32_t id = by_hash_.find(hash);
  if (id != FlatHashMap::kNone) return static_cast<std::uint64_t>(id);
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
  return static_cast<std::uint64_t>(id);
}

void BlockIds::sweep() {
  // Freed highest first, so that the free list hands out low ids first, in order.
  for (std::size_t id = hash_.size(); id-- > 0;) {
    if (bound_[id] == 0 || marks_[id] != 0) continue;
    by_hash_.erase(hash_[id]);
    bound_[id] = 0;
    free_.push_back(static_cast<std::uint32_t>(id));
  }
  marks_.clear();
  marks_.shrink_to_fit();
  next_collect_ = std::max<std::size_t>(2 * live(), kFirstCollect);
  collected_at_table_ = by_hash_.grows_at();
}

}  // namespace kvsim::engine
