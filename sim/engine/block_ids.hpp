#pragma once
// Dense block ids for block hashes. The simulator keys its prefix caches by a block's chained
// hash only to tell blocks apart; any one-to-one renaming of the hashes in use gives the same
// hits, the same evictions and the same results. BlockIds renames each hash to a small integer,
// so the offload tiers can index their entries by an array (DenseIndex) instead of a hash table,
// and the blocks of one conversation, named together, sit side by side in it.
// Ids are reclaimed by mark and sweep, not counted per reference: collect() asks the owner to
// mark every id still held (by requests, the GPU prefix caches, the tiers, the block hash cache)
// and frees the rest, which may then name other hashes. The owner calls it only where every
// holder can be reached (between requests, not while one is being built), when the bound ids
// have doubled since the last collection, and once before each doubling of the hash table (so
// that ids no longer held do not make it grow), so its cost per new id stays constant.
#include <cstdint>
#include <vector>

#include "sim/core/flat_hash.hpp"
#include "sim/core/tokens.hpp"

namespace kvsim::engine {

class BlockIds final : public HashInterner {
 public:
  // The hash -> id table holds every id in use (several million on long traces) and is read
  // once per new block: filled to 3/4 it takes half the memory of a table filled to 1/2.
  // `reclaim`: false keeps every id bound for good (a plain renaming; the reference the
  // reclaiming run is checked against).
  explicit BlockIds(bool reclaim = true) : reclaim_(reclaim) { by_hash_.set_max_load_quarters(3); }
  // Ids below `first` are someone else's (FixedPrefixNames): ids handed out start there. Set
  // before the first intern().
  void set_first_id(std::uint64_t first);
  std::uint64_t intern(std::uint64_t hash) override;
  // Looks ahead: the table slots of the next hashes are fetched while this one is interned.
  void intern_all(std::uint64_t* hashes, std::size_t n) override;

  // Ids bound now (named hashes).
  std::size_t live() const { return by_hash_.size(); }
  // Ids handed out so far, free ones included, plus the first id: every id is below this.
  std::size_t capacity() const { return first_ + hash_.size(); }
  // The hash an id is bound to (for tests and checks).
  std::uint64_t hash_of(std::uint64_t id) const { return hash_[static_cast<std::size_t>(id - first_)]; }
  bool bound(std::uint64_t id) const {
    return id >= first_ && id - first_ < hash_.size() && bound_[static_cast<std::size_t>(id - first_)] != 0;
  }

  // Whether a collection is due before up to `coming` more ids are bound.
  bool wants_collect(std::size_t coming) const {
    if (!reclaim_) return false;
    return live() >= next_collect_ || (live() + coming >= by_hash_.grows_at() && by_hash_.grows_at() != collected_at_table_);
  }
  // Frees every bound id that `mark_held` does not mark. mark_held(mark) must call mark(id) for
  // every id anyone still holds.
  template <class MarkHeld>
  void collect(MarkHeld&& mark_held) {
    marks_.assign(hash_.size(), 0);
    mark_held([this](std::uint64_t id) {
      if (id >= first_) marks_[static_cast<std::size_t>(id - first_)] = 1;
    });
    sweep();
  }

 private:
  void sweep();
  static constexpr std::size_t kFirstCollect = std::size_t{1} << 14;

  FlatHashMap by_hash_;  // hash -> id - first_, bound ids only
  std::uint64_t first_ = 0;
  std::vector<std::uint64_t> hash_;
  std::vector<std::uint8_t> bound_;
  std::vector<std::uint8_t> marks_;
  std::vector<std::uint32_t> free_;
  bool reclaim_;
  std::size_t next_collect_ = kFirstCollect;
  std::size_t collected_at_table_ = 0;  // grows_at() when the last collection ran
};

}  // namespace kvsim::engine
