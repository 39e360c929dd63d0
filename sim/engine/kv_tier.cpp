#include "sim/engine/kv_tier.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "sim/core/error.hpp"
#include "sim/core/flat_hash.hpp"

namespace kvsim::engine {

KvTier::KvTier(std::string name, std::int64_t capacity_chunks, EvictionPolicy policy)
    : name_(std::move(name)), capacity_(capacity_chunks), policy_(policy) {
  KVSIM_ASSERT(capacity_ >= 1, "tier '" + name_ + "' needs room for at least one chunk");
  // Entries are read at random: reserve them once (up to 4M; pages are touched only as used)
  // on huge pages. A large reserve, once its first 8 MiB are used, is faulted in a window ahead
  // of use on a helper thread.
  const auto reserve = static_cast<std::size_t>(std::min<std::int64_t>(capacity_, std::int64_t{1} << 22));
  entries_.reserve(reserve);
  advise_huge_pages(entries_.data(), reserve * sizeof(Entry));
  constexpr std::size_t kPrefaultFrom = std::size_t{16} << 20;
  constexpr std::size_t kPrefaultWindow = std::size_t{8} << 20;
  if (reserve * sizeof(Entry) >= kPrefaultFrom) {
    prefault_ = std::make_unique<PagePrefaulter>(entries_.data(), reserve * sizeof(Entry), kPrefaultWindow,
                                                 kPrefaultWindow);
  }
}

void KvTier::push_mru(std::int32_t e, List l) {
  Entry& x = entries_[static_cast<std::size_t>(e)];
  DList& d = list(l);
  x.list = l;
  x.prev = d.tail;
  x.next = -1;
  if (d.tail >= 0) entries_[static_cast<std::size_t>(d.tail)].next = e;
  else d.head = e;
  d.tail = e;
  ++d.size;
}

void KvTier::unlink(std::int32_t e) {
  Entry& x = entries_[static_cast<std::size_t>(e)];
  DList& d = list(x.list);
  if (x.prev >= 0) entries_[static_cast<std::size_t>(x.prev)].next = x.next;
  else d.head = x.next;
  if (x.next >= 0) entries_[static_cast<std::size_t>(x.next)].prev = x.prev;
  else d.tail = x.prev;
  x.prev = x.next = -1;
  --d.size;
}

std::int32_t KvTier::alloc(std::uint64_t hash) {
  std::int32_t e = 0;
  if (!free_.empty()) {
    e = free_.back();
    free_.pop_back();
  } else {
    KVSIM_ASSERT(entries_.size() <= static_cast<std::size_t>(DenseIndex::kMaxValue),
                 "tier '" + name_ + "' holds more chunks than its index can address");
    e = static_cast<std::int32_t>(entries_.size());
    // Past the reserve the array moves: stop faulting in the old one first.
    if (entries_.size() == entries_.capacity()) prefault_.reset();
    entries_.emplace_back();
    if (prefault_) prefault_->written(entries_.size() * sizeof(Entry));
  }
  reset(e, hash);
  return e;
}

void KvTier::release(std::int32_t e) { free_.push_back(e); }

void KvTier::reset(std::int32_t e, std::uint64_t hash) {
  // A fresh entry in slot e; the slot's watch count stays (it counts lookups, not entries).
  Entry& x = entries_[static_cast<std::size_t>(e)];
  const std::int32_t watch = x.watch;
  x = Entry{};
  x.hash = hash;
  x.watch = watch;
}

std::int64_t KvTier::match(std::span<const std::uint64_t> hashes, std::size_t first) {
  std::int64_t n = 0;
  for (std::size_t i = first; i < hashes.size(); ++i) {
    ++stats_.lookups;
    if (!is_ready(hashes[i])) break;
    ++n;
  }
  stats_.hits += n;
  return n;
}

bool KvTier::is_ready(std::uint64_t hash) const {
  const DenseIndex::Cell* c = index_.find_cell(hash);
  return c != nullptr && (c->flags() & kReadyBit) != 0;
}

int KvTier::pins(std::uint64_t hash) const {
  const std::int32_t e = index_.find(hash);
  return e == DenseIndex::kNone ? 0 : entries_[static_cast<std::size_t>(e)].pins;
}

int KvTier::ready_pins(std::uint64_t hash) const {
  const std::int32_t e = index_.find(hash);
  if (e == DenseIndex::kNone) return -1;
  const Entry& x = entries_[static_cast<std::size_t>(e)];
  return x.ready ? x.pins : -1;
}

std::int32_t KvTier::evictable_in(List l) const {
  for (std::int32_t e = list(l).head; e >= 0; e = entries_[static_cast<std::size_t>(e)].next) {
    const Entry& x = entries_[static_cast<std::size_t>(e)];
    if (x.ready && x.pins == 0) return e;
  }
  return -1;
}

bool KvTier::evict_one(std::int32_t& freed) {
  std::int32_t victim = -1;
  if (policy_ == EvictionPolicy::kLru) {
    victim = evictable_in(List::kT1);
  } else {
    // ARC REPLACE: take from T1 when it is above its target size p, else from T2; fall back to
    // the other list when the chosen one has nothing evictable (entries pinned or in flight).
    const auto t1 = static_cast<double>(list(List::kT1).size);
    const bool from_t1 = list(List::kT1).size > 0 && t1 > arc_p_;
    victim = evictable_in(from_t1 ? List::kT1 : List::kT2);
    if (victim < 0) victim = evictable_in(from_t1 ? List::kT2 : List::kT1);
  }
  if (victim < 0) return false;
  Entry& x = entries_[static_cast<std::size_t>(victim)];
  const List from = x.list;
  unlink(victim);
  index_.erase(x.hash);
  // The next victim is likely the new head of the list: bring its index slot into cache.
  if (const std::int32_t next = list(from).head; next >= 0) index_.prefetch(entries_[static_cast<std::size_t>(next)].hash);
  --ready_;
  ++stats_.evictions;
  if (x.watch > 0) ++shrink_version_;
  if (policy_ == EvictionPolicy::kArc) {
    x.ready = false;
    push_mru(victim, from == List::kT1 ? List::kB1 : List::kB2);
    ghosts_.assign(x.hash, victim);
  } else {
    freed = victim;
  }
  return true;
}

void KvTier::trim_ghosts() {
  // ARC keeps |T1| + |B1| <= c and |T1| + |T2| + |B1| + |B2| <= 2c.
  auto drop_lru = [this](List l) {
    const std::int32_t e = list(l).head;
    if (e < 0) return false;
    unlink(e);
    ghosts_.erase(entries_[static_cast<std::size_t>(e)].hash);
    release(e);
    return true;
  };
  while (list(List::kT1).size + list(List::kB1).size > capacity_ && drop_lru(List::kB1)) {
  }
  while (size() + list(List::kB1).size + list(List::kB2).size > 2 * capacity_ &&
         (drop_lru(List::kB2) || drop_lru(List::kB1))) {
  }
}

bool KvTier::begin_store(std::uint64_t hash) {
  if (index_.contains(hash)) {
    ++stats_.stores_dropped;
    return false;
  }
  List target = List::kT1;
  std::int32_t ghost = -1;
  if (policy_ == EvictionPolicy::kArc) {
    const std::int32_t g = ghosts_.find(hash);
    if (g != DenseIndex::kNone) {
      ghost = g;
      const auto b1 = static_cast<double>(std::max<std::int64_t>(list(List::kB1).size, 1));
      const auto b2 = static_cast<double>(std::max<std::int64_t>(list(List::kB2).size, 1));
      // A ghost hit in B1 says T1 was too small: grow p; in B2, shrink it.
      if (entries_[static_cast<std::size_t>(ghost)].list == List::kB1) {
        arc_p_ = std::min(static_cast<double>(capacity_), arc_p_ + std::max(b2 / b1, 1.0));
      } else {
        arc_p_ = std::max(0.0, arc_p_ - std::max(b1 / b2, 1.0));
      }
      target = List::kT2;
    }
  }
  std::int32_t freed = -1;
  if (size() >= capacity_ && !evict_one(freed)) {
    ++stats_.stores_dropped;
    return false;
  }
  std::int32_t e = 0;
  if (ghost >= 0) {
    unlink(ghost);
    ghosts_.erase(hash);
    e = ghost;
    reset(e, hash);
  } else if (freed >= 0) {
    // Under LRU the victim's slot is free: the one release() then alloc() would hand back.
    e = freed;
    reset(e, hash);
  } else {
    e = alloc(hash);
  }
  push_mru(e, target);
  index_.try_emplace(hash, e);
  ++stats_.stores_started;
  if (policy_ == EvictionPolicy::kArc) trim_ghosts();
  return true;
}

void KvTier::finish_store(std::uint64_t hash) {
  DenseIndex::Cell* c = index_.find_cell(hash);
  KVSIM_ASSERT(c != nullptr, "finish_store of a chunk that is not in tier '" + name_ + "'");
  c->set_flags(kReadyBit);
  Entry& x = entries_[static_cast<std::size_t>(c->value())];
  KVSIM_ASSERT(!x.ready, "finish_store twice in tier '" + name_ + "'");
  x.ready = true;
  ++ready_;
  ++stats_.stores_completed;
  ++grow_version_;
}

void KvTier::pin_cell(DenseIndex::Cell& c) {
  Entry& x = entries_[static_cast<std::size_t>(c.value())];
  KVSIM_ASSERT(x.pins < std::numeric_limits<std::int16_t>::max(), "more than 32,766 loads of one chunk in tier '" + name_ + "'");
  if (x.pins++ == 0) {
    c.set_flags(kPinnedBit);
    ++pinned_;
    // A memoized run of ready, unpinned chunks is shortened by a pin on one of its own chunks,
    // which the memo watches; when lookups also read other tiers, a pin here can shadow a chunk
    // a memo found in a later tier, so every first pin counts.
    if (x.watch > 0 || pins_shrink_all_) ++shrink_version_;
  }
  ++stats_.loads;
}

void KvTier::pin(std::uint64_t hash) {
  DenseIndex::Cell* c = index_.find_cell(hash);
  KVSIM_ASSERT(c != nullptr && entries_[static_cast<std::size_t>(c->value())].ready,
               "a load pinned a chunk that is not ready in tier '" + name_ + "'");
  pin_cell(*c);
}

std::int32_t KvTier::pin_if_ready(std::uint64_t hash) {
  DenseIndex::Cell* c = index_.find_cell(hash);
  if (c == nullptr || (c->flags() & kReadyBit) == 0) return -1;
  pin_cell(*c);
  return c->value();
}

void KvTier::unpin(std::uint64_t hash) {
  DenseIndex::Cell* c = index_.find_cell(hash);
  KVSIM_ASSERT(c != nullptr, "unpin of a chunk not in tier '" + name_ + "'");
  Entry& x = entries_[static_cast<std::size_t>(c->value())];
  KVSIM_ASSERT(x.pins > 0, "unpin without pin in tier '" + name_ + "'");
  if (--x.pins == 0) {
    c->clear_flags(kPinnedBit);
    --pinned_;
    ++grow_version_;
  }
}

void KvTier::touch(std::span<const std::uint64_t> hashes) {
  constexpr std::size_t kAhead = 8;
  const std::size_t n = hashes.size();
  for (std::size_t i = 0; i < std::min(kAhead, n); ++i) index_.prefetch(hashes[n - 1 - i]);
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) index_.prefetch(hashes[n - 1 - i - kAhead]);
    const std::uint64_t* h = &hashes[n - 1 - i];
    const std::int32_t e = index_.find(*h);
    if (e == DenseIndex::kNone) continue;
    unlink(e);
    push_mru(e, policy_ == EvictionPolicy::kArc ? List::kT2 : List::kT1);
  }
}

void KvTier::touch_entries(std::span<const std::int32_t> entries) {
  const List to = policy_ == EvictionPolicy::kArc ? List::kT2 : List::kT1;
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    KVSIM_ASSERT(entries_[static_cast<std::size_t>(*it)].pins > 0, "touch_entries of an unpinned entry");
    unlink(*it);
    push_mru(*it, to);
  }
}

std::vector<std::uint64_t> KvTier::order() const {
  std::vector<std::uint64_t> out;
  for (const List l : {List::kT1, List::kT2}) {
    for (std::int32_t e = list(l).head; e >= 0; e = entries_[static_cast<std::size_t>(e)].next) {
      out.push_back(entries_[static_cast<std::size_t>(e)].hash);
    }
  }
  return out;
}

void KvTier::check_invariants() const {
  std::int64_t resident = 0;
  std::int64_t ready = 0;
  for (const List l : {List::kT1, List::kT2, List::kB1, List::kB2}) {
    std::int64_t n = 0;
    std::int32_t prev = -1;
    for (std::int32_t e = list(l).head; e >= 0; e = entries_[static_cast<std::size_t>(e)].next) {
      const Entry& x = entries_[static_cast<std::size_t>(e)];
      KVSIM_ASSERT(x.prev == prev && x.list == l, "broken list in tier '" + name_ + "'");
      prev = e;
      ++n;
      if (l == List::kT1 || l == List::kT2) {
        ++resident;
        ready += x.ready ? 1 : 0;
        const DenseIndex::Cell* c = index_.find_cell(x.hash);
        KVSIM_ASSERT(c != nullptr, "resident entry missing from the index");
        const std::uint32_t flags = (x.ready ? kReadyBit : 0U) | (x.pins > 0 ? kPinnedBit : 0U);
        KVSIM_ASSERT(c->flags() == flags, "index flags out of step with the entry");
      } else {
        KVSIM_ASSERT(ghosts_.contains(x.hash), "ghost entry missing from the ghost index");
      }
    }
    KVSIM_ASSERT(n == list(l).size, "list size out of step in tier '" + name_ + "'");
  }
  KVSIM_ASSERT(resident == size(), "index size out of step");
  KVSIM_ASSERT(resident <= capacity_, "tier '" + name_ + "' over capacity");
  KVSIM_ASSERT(ready == ready_, "ready count out of step");
}

}  // namespace kvsim::engine
