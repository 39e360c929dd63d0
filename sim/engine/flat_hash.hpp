#pragma once
// A flat hash map from 64-bit keys (block and chunk hashes) to 32-bit values (block or entry
// indices), for the lookups on the simulation's hot path (prefix-cache hits, tier matches).
// Open addressing with linear probing in one power-of-two array, keys mixed with the
// splitmix64 finalizer, deletion by backward shift (no tombstones), grown to keep the load at
// most 1/2. Unlike std::unordered_map it allocates only when it grows and a lookup touches one
// or two cache lines. Nothing iterates it, so its layout never reaches a result.
#include <cstdint>
#include <vector>

namespace kvsim::engine {

class FlatHashMap {
 public:
  static constexpr std::int32_t kNone = -1;

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // The value of `key`, or kNone.
  std::int32_t find(std::uint64_t key) const {
    if (size_ == 0) return kNone;
    for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
      const Cell& c = cells_[i];
      if (c.value == kNone) return kNone;
      if (c.key == key) return c.value;
    }
  }
  bool contains(std::uint64_t key) const { return find(key) != kNone; }

  // Inserts key -> value when key is absent; returns the value now held for key.
  std::int32_t try_emplace(std::uint64_t key, std::int32_t value) {
    if ((size_ + 1) * 2 > cells_.size()) grow();
    for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
      Cell& c = cells_[i];
      if (c.value == kNone) {
        c.key = key;
        c.value = value;
        ++size_;
        return value;
      }
      if (c.key == key) return c.value;
    }
  }
  // Sets key -> value, inserting or overwriting.
  void assign(std::uint64_t key, std::int32_t value) {
    if ((size_ + 1) * 2 > cells_.size()) grow();
    for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
      Cell& c = cells_[i];
      if (c.value == kNone) {
        c.key = key;
        c.value = value;
        ++size_;
        return;
      }
      if (c.key == key) {
        c.value = value;
        return;
      }
    }
  }
  // Removes key; returns whether it was there.
  bool erase(std::uint64_t key) {
    if (size_ == 0) return false;
    std::size_t i = slot(key);
    while (true) {
      const Cell& c = cells_[i];
      if (c.value == kNone) return false;
      if (c.key == key) break;
      i = (i + 1) & mask_;
    }
    // Backward-shift deletion: move later cells of the probe run into the hole when their home
    // slot does not lie cyclically in (hole, j].
    std::size_t hole = i;
    for (std::size_t j = (hole + 1) & mask_;; j = (j + 1) & mask_) {
      Cell& c = cells_[j];
      if (c.value == kNone) break;
      const std::size_t home = slot(c.key);
      const bool between = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (between) continue;
      cells_[hole] = c;
      hole = j;
    }
    cells_[hole].value = kNone;
    --size_;
    return true;
  }

 private:
  struct Cell {
    std::uint64_t key = 0;
    std::int32_t value = kNone;
  };
  static std::uint64_t mix(std::uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
  }
  std::size_t slot(std::uint64_t key) const { return static_cast<std::size_t>(mix(key)) & mask_; }
  void grow() {
    std::vector<Cell> old;
    old.swap(cells_);
    const std::size_t n = old.empty() ? 16 : old.size() * 2;
    cells_.assign(n, Cell{});
    mask_ = n - 1;
    size_ = 0;
    for (const Cell& c : old) {
      if (c.value != kNone) try_emplace(c.key, c.value);
    }
  }

  std::vector<Cell> cells_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace kvsim::engine
