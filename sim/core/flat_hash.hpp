#pragma once
// A flat hash map from 64-bit keys (block and chunk hashes) to 32-bit values (block or entry
// indices), for the lookups on the simulation's hot path (prefix-cache hits, tier matches).
// Open addressing with linear probing in one power-of-two array, slots by Fibonacci hashing,
// deletion by backward shift (no tombstones), grown to keep the load at most 1/2. Unlike
// std::unordered_map it allocates only when it grows and a lookup touches one or two cache lines.
// Nothing iterates it, so its layout never reaches a result.
#include <bit>
#include <cstdint>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace kvsim {

// Large arrays read at random (hash tables, tier entries): back them with 2 MiB pages where the
// kernel allows it (transparent huge pages in madvise mode), which saves a TLB miss on most
// accesses. Call before the memory is first touched. Changes only speed.
inline void advise_huge_pages(void* p, std::size_t bytes) {
#if defined(__linux__)
  constexpr std::uintptr_t kHuge = std::uintptr_t{1} << 21;
  if (bytes < 2 * kHuge) return;
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t begin = (addr + kHuge - 1) & ~(kHuge - 1);
  const std::uintptr_t end = (addr + bytes) & ~(kHuge - 1);
  if (end > begin) madvise(static_cast<char*>(p) + (begin - addr), end - begin, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

class FlatHashMap {
 public:
  static constexpr std::int32_t kNone = -1;
  // One slot: a key, its value, and 32 bits the owner may use for flags it wants to read
  // without following the value (kept with the key when cells move).
  struct Cell {
    std::uint64_t key = 0;
    std::int32_t value = kNone;
    std::uint32_t aux = 0;
  };

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // The size at which the next insertion doubles the table.
  std::size_t grows_at() const { return cells_.size() / 4 * max_quarters_; }
  // Lets the table fill to `quarters`/4 of its cells before it doubles (default 2: one half).
  // Fuller tables take less memory and longer probes.
  void set_max_load_quarters(int quarters) { max_quarters_ = static_cast<std::size_t>(quarters); }

  // The value of `key`, or kNone.
  std::int32_t find(std::uint64_t key) const {
    const Cell* c = find_cell(key);
    return c == nullptr ? kNone : c->value;
  }
  bool contains(std::uint64_t key) const { return find(key) != kNone; }
  // The cell of `key`, or nullptr; valid until the next insertion or erase.
  Cell* find_cell(std::uint64_t key) {
    if (size_ == 0) return nullptr;
    for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
      Cell& c = cells_[i];
      if (c.value == kNone) return nullptr;
      if (c.key == key) return &c;
    }
  }
  const Cell* find_cell(std::uint64_t key) const {
    if (size_ == 0) return nullptr;
    for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
      const Cell& c = cells_[i];
      if (c.value == kNone) return nullptr;
      if (c.key == key) return &c;
    }
  }
  // Asks the CPU to bring key's home slot into cache ahead of a lookup (walks over many keys).
  void prefetch(std::uint64_t key) const {
    if (!cells_.empty()) __builtin_prefetch(&cells_[slot(key)]);
  }

  // Inserts key -> value when key is absent; returns the value now held for key.
  std::int32_t try_emplace(std::uint64_t key, std::int32_t value) { return at_or_insert(key, value); }
  // The value held for key, inserted as `init` when absent. The reference is valid until the
  // next insertion.
  std::int32_t& at_or_insert(std::uint64_t key, std::int32_t init) {
    if (size_ + 1 > grows_at()) grow();
    for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
      Cell& c = cells_[i];
      if (c.value == kNone) {
        c.key = key;
        c.value = init;
        c.aux = 0;
        ++size_;
        return c.value;
      }
      if (c.key == key) return c.value;
    }
  }
  // Sets key -> value, inserting or overwriting.
  void assign(std::uint64_t key, std::int32_t value) { at_or_insert(key, value) = value; }
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
  // Fibonacci hashing: the top bits of key x 2^64/phi. One multiply; the keys are block hashes,
  // already well mixed, and the multiply spreads any others.
  std::size_t slot(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift_);
  }
  void grow() {
    std::vector<Cell> old;
    old.swap(cells_);
    const std::size_t n = old.empty() ? 16 : old.size() * 2;
    cells_.reserve(n);
    advise_huge_pages(cells_.data(), n * sizeof(Cell));
    cells_.assign(n, Cell{});
    mask_ = n - 1;
    shift_ = 64 - std::countr_zero(n);
    size_ = 0;
    for (const Cell& c : old) {
      if (c.value == kNone) continue;
      for (std::size_t i = slot(c.key);; i = (i + 1) & mask_) {
        if (cells_[i].value == kNone) {
          cells_[i] = c;
          ++size_;
          break;
        }
      }
    }
  }

  std::vector<Cell> cells_;
  std::size_t max_quarters_ = 2;
  std::size_t mask_ = 0;
  int shift_ = 64;
  std::size_t size_ = 0;
};

}  // namespace kvsim
