#pragma once
// One KV-cache tier outside the GPU (host DRAM, local NVMe, a remote store): a capacity in
// chunks of `chunk_tokens` tokens, entries keyed by the chained hash of their last block, and an
// eviction policy. An entry is written (store in flight), then ready (loadable); loads pin it so
// it cannot be evicted while read. Mirrors vLLM's CPU offloading manager
// (vllm/v1/kv_offload/cpu/policies/lru.py, arc.py): lookups count consecutive ready hits from a
// position; eviction takes only entries that are ready and not pinned; on a hit or store the
// request's chunks are touched in reverse order, so its first chunk ends most recently used and
// its tail is evicted first.
// Chunks are keyed by dense block ids (BlockIds), which index an array.
// ARC (Megiddo and Modha, FAST'03) keeps a recency list T1 and a frequency list T2 with ghost
// lists B1/B2 that adapt the target size p of T1.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sim/core/prefault.hpp"
#include "sim/engine/dense_index.hpp"
#include "sim/engine/offload_config.hpp"

namespace kvsim::engine {

struct TierStats {
  std::int64_t lookups = 0;        // chunks asked for
  std::int64_t hits = 0;           // chunks found ready
  std::int64_t stores_started = 0;
  std::int64_t stores_completed = 0;
  std::int64_t stores_dropped = 0;  // no room (everything pinned or in flight) or already there
  std::int64_t evictions = 0;
  std::int64_t loads = 0;           // chunks read out
};

class KvTier {
 public:
  KvTier(std::string name, std::int64_t capacity_chunks, EvictionPolicy policy);

  const std::string& name() const { return name_; }
  std::int64_t capacity() const { return capacity_; }
  std::int64_t size() const { return static_cast<std::int64_t>(index_.size()); }
  std::int64_t ready_count() const { return ready_; }
  // Entries with at least one pin (loads reading them).
  std::int64_t pinned_count() const { return pinned_; }
  // Change counters for memoized lookups (an exact fast path of the connector's match()):
  // grow_version() counts changes that can only lengthen a run of ready, unpinned chunks (a
  // store finished, a last pin dropped); shrink_version() those that can shorten one: a first
  // pin taken on, or the eviction of, an entry some memoized lookup watches (watch counts per
  // entry slot, so an entry found in this tier can be watched without a second lookup).
  std::uint64_t grow_version() const { return grow_version_; }
  std::uint64_t shrink_version() const { return shrink_version_; }
  void watch(std::int32_t entry) { ++entries_[static_cast<std::size_t>(entry)].watch; }
  void unwatch(std::int32_t entry) { --entries_[static_cast<std::size_t>(entry)].watch; }
  // Whether every first pin counts as a shrink (lookups read this tier and others: the default),
  // or only a pin on a watched entry (every lookup reads this tier alone).
  void set_pins_shrink_all(bool all) { pins_shrink_all_ = all; }

  // Consecutive ready entries of `hashes` starting at `first` (counts toward the stats).
  std::int64_t match(std::span<const std::uint64_t> hashes, std::size_t first);
  bool is_ready(std::uint64_t hash) const;
  bool contains(std::uint64_t hash) const { return index_.contains(hash); }
  // Loads in progress reading this chunk (0 when absent).
  int pins(std::uint64_t hash) const;
  // One lookup for both: -1 when the chunk is not ready here, else its pins.
  int ready_pins(std::uint64_t hash) const;
  // What a match needs, from the index alone: -1 not ready here, 0 ready and unpinned, 1 ready
  // and pinned by a load.
  // `entry` receives the entry slot when the chunk is here.
  int state(std::uint64_t hash, std::int32_t& entry) const {
    const DenseIndex::Cell* c = index_.find_cell(hash);
    if (c == nullptr || (c->flags() & kReadyBit) == 0) return -1;
    entry = c->value();
    return (c->flags() & kPinnedBit) != 0 ? 1 : 0;
  }
  // Brings the chunk's index slot into cache ahead of a lookup (walks over many chunks).
  void prefetch(std::uint64_t hash) const { index_.prefetch(hash); }

  // Makes room for a chunk about to be written, evicting as the policy says. Returns false, and
  // changes nothing, when the chunk is already here or no unpinned ready entry can be evicted.
  bool begin_store(std::uint64_t hash);
  // The write finished: the chunk becomes loadable.
  void finish_store(std::uint64_t hash);
  // A load reads the chunk: it may not be evicted until unpin().
  void pin(std::uint64_t hash);
  // pin() when the chunk is ready here, with the same lookup; returns its entry slot (for
  // touch_entries), or -1 when it is not ready here.
  std::int32_t pin_if_ready(std::uint64_t hash);
  void unpin(std::uint64_t hash);
  // Marks chunks used, last to first, so that the first ends most recently used.
  void touch(std::span<const std::uint64_t> hashes);
  // touch() of chunks given by the entry slots pin_if_ready() returned (still pinned).
  void touch_entries(std::span<const std::int32_t> entries);

  const TierStats& stats() const { return stats_; }
  // For tests: resident hashes from least to most recently used (LRU order; for ARC, T1 then T2).
  std::vector<std::uint64_t> order() const;
  // Calls f(key) for every chunk held, resident or (ARC) ghost, and for the last key of each
  // free entry slot too (a superset, read in slot order).
  template <class F>
  void for_each_key(F&& f) const {
    for (const Entry& x : entries_) f(x.hash);
  }
  // For tests: checks list links and counts.
  void check_invariants() const;

 private:
  // Flags mirrored into the index cell (DenseIndex::Cell flags) so a lookup need not read the
  // entry.
  static constexpr std::uint32_t kReadyBit = 1;
  static constexpr std::uint32_t kPinnedBit = 2;
  enum class List : std::uint8_t { kT1, kT2, kB1, kB2 };
  // 24 bytes: a remote store holds millions of them.
  struct Entry {
    std::uint64_t hash = 0;
    std::int32_t prev = -1, next = -1;
    std::int32_t watch = 0;  // memoized lookups relying on this slot (kept across reuse)
    std::int16_t pins = 0;   // loads reading it (each a request's load in flight)
    List list = List::kT1;
    bool ready = false;
  };
  static_assert(sizeof(Entry) == 24);
  struct DList {
    std::int32_t head = -1, tail = -1;  // head: least recently used
    std::int64_t size = 0;
  };
  DList& list(List l) { return lists_[static_cast<int>(l)]; }
  const DList& list(List l) const { return lists_[static_cast<int>(l)]; }
  void pin_cell(DenseIndex::Cell& c);
  void push_mru(std::int32_t e, List l);
  void unlink(std::int32_t e);
  std::int32_t alloc(std::uint64_t hash);
  void release(std::int32_t e);
  void reset(std::int32_t e, std::uint64_t hash);
  // Evicts one entry as the policy says; false when none is evictable. Under LRU the victim's
  // slot is free and goes to `freed` (the caller reuses it); under ARC it becomes a ghost.
  bool evict_one(std::int32_t& freed);
  std::int32_t evictable_in(List l) const;
  void trim_ghosts();

  std::string name_;
  std::int64_t capacity_;
  EvictionPolicy policy_;
  std::vector<Entry> entries_;
  // Faults in the reserved entries just ahead of use on a helper thread (large tiers only).
  std::unique_ptr<PagePrefaulter> prefault_;
  std::vector<std::int32_t> free_;
  DenseIndex index_;   // resident entries (T1, T2)
  DenseIndex ghosts_;  // ARC B1, B2
  DList lists_[4];
  std::int64_t ready_ = 0;
  std::int64_t pinned_ = 0;
  double arc_p_ = 0;  // ARC target size of T1
  std::uint64_t grow_version_ = 0;
  std::uint64_t shrink_version_ = 0;
  bool pins_shrink_all_ = true;
  TierStats stats_;
};

// Calls f(hash) for each hash in order, prefetching the tier's index slots a few hashes ahead so
// the lookups of a long run of chunks overlap.
template <class F>
void for_each_prefetched(const KvTier& tier, std::span<const std::uint64_t> hashes, F&& f) {
  constexpr std::size_t kAhead = 8;
  for (std::size_t i = 0; i < std::min(kAhead, hashes.size()); ++i) tier.prefetch(hashes[i]);
  for (std::size_t i = 0; i < hashes.size(); ++i) {
    if (i + kAhead < hashes.size()) tier.prefetch(hashes[i + kAhead]);
    f(hashes[i]);
  }
}

}  // namespace kvsim::engine
