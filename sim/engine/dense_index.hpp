#pragma once
// An index from dense keys (block ids from BlockIds: small integers, reused once reclaimed) to
// 30-bit values (tier entry slots, GPU block ids), as an array addressed by the key: a lookup is
// one read at a known place, and a walk over a conversation's blocks, whose ids were handed out
// together, reads neighbouring cells. The operations FlatHashMap has, for KvTier's index and the
// GPU prefix cache; four bytes a key, in pages that exist only while they hold a key (and a few
// spare ones). Nothing iterates it, so its layout never reaches a result.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#include "sim/core/error.hpp"

namespace kvsim::engine {

class DenseIndex {
 public:
  static constexpr std::int32_t kNone = -1;
  // One key's cell, four bytes: its value (below 2^30 - 1) and two bits the owner may use for
  // flags; all zero bits mean no value, so zeroed memory is an empty index.
  class Cell {
   public:
    std::int32_t value() const { return static_cast<std::int32_t>(w_ >> 2) - 1; }
    std::uint32_t flags() const { return w_ & 3U; }
    void set_flags(std::uint32_t f) { w_ |= f & 3U; }
    void clear_flags(std::uint32_t f) { w_ &= ~(f & 3U); }

   private:
    friend class DenseIndex;
    bool present() const { return w_ != 0; }
    void bind(std::int32_t value) { w_ = static_cast<std::uint32_t>(value + 1) << 2; }
    std::uint32_t w_ = 0;
  };
  static constexpr std::int32_t kMaxValue = (1 << 30) - 2;

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  Cell* find_cell(std::uint64_t key) {
    Cell* page = page_of(key);
    if (page == nullptr) return nullptr;
    Cell& c = page[key & kPageMask];
    return c.present() ? &c : nullptr;
  }
  const Cell* find_cell(std::uint64_t key) const {
    const Cell* page = page_of(key);
    if (page == nullptr) return nullptr;
    const Cell& c = page[key & kPageMask];
    return c.present() ? &c : nullptr;
  }
  std::int32_t find(std::uint64_t key) const {
    const Cell* c = find_cell(key);
    return c == nullptr ? kNone : c->value();
  }
  bool contains(std::uint64_t key) const { return find_cell(key) != nullptr; }
  void prefetch(std::uint64_t key) const {
    if (const Cell* page = page_of(key)) __builtin_prefetch(page + (key & kPageMask));
  }

  // Inserts key -> value (0 <= value <= kMaxValue) when key is absent; returns the value now
  // held for key.
  std::int32_t try_emplace(std::uint64_t key, std::int32_t value) {
    Cell& c = make_cell(key);
    if (c.present()) return c.value();
    c.bind(value);
    added(key);
    return value;
  }
  // Sets key -> value, inserting or overwriting (flags cleared).
  void assign(std::uint64_t key, std::int32_t value) {
    Cell& c = make_cell(key);
    if (!c.present()) added(key);
    c.bind(value);
  }
  bool erase(std::uint64_t key) {
    Cell* c = find_cell(key);
    if (c == nullptr) return false;
    *c = Cell{};
    --size_;
    const std::size_t p = key >> kPageBits;
    if (--used_[p] == 0) [[unlikely]] release_page(p);
    return true;
  }

 private:
  // Keys are grouped in pages of 1,024 cells (4 KiB), allocated when a key of the page is first
  // inserted and released when the page's last key is erased, so a tier holding few of many ids
  // keeps only the pages it uses; up to kSparePages released pages are kept for reuse.
  static constexpr int kPageBits = 10;
  static constexpr std::size_t kSparePages = 16;
  static constexpr std::uint64_t kPageMask = (std::uint64_t{1} << kPageBits) - 1;
  struct Free {
    void operator()(Cell* p) const { std::free(p); }
  };
  Cell* page_of(std::uint64_t key) const {
    const std::uint64_t p = key >> kPageBits;
    return p < pages_.size() ? pages_[p].get() : nullptr;
  }
  // The key's cell, its page made if need be. The page is there for nearly every call: that
  // case is inlined, the rest (a new page, a larger page table, a bad key) is not.
  Cell& make_cell(std::uint64_t key) {
    const auto p = static_cast<std::size_t>(key >> kPageBits);
    if (p < pages_.size()) [[likely]] {
      if (Cell* page = pages_[p].get()) [[likely]] return page[key & kPageMask];
    }
    return make_page_cell(key);
  }
  // An empty page is all zero again: keep a few for the next new page (no zeroing).
  [[gnu::noinline]] void release_page(std::size_t p) {
    if (spare_.size() < kSparePages) spare_.push_back(std::move(pages_[p]));
    else pages_[p].reset();
  }
  [[gnu::noinline]] Cell& make_page_cell(std::uint64_t key) {
    KVSIM_ASSERT(key < (std::uint64_t{1} << 40), "a DenseIndex key is not a block id (too large)");
    const auto p = static_cast<std::size_t>(key >> kPageBits);
    if (p >= pages_.size()) {
      pages_.resize(std::max(p + 1, 2 * pages_.size()));
      used_.resize(pages_.size(), 0);
    }
    if (!pages_[p]) {
      if (!spare_.empty()) {
        pages_[p] = std::move(spare_.back());
        spare_.pop_back();
      } else {
        auto* page = static_cast<Cell*>(std::calloc(std::size_t{1} << kPageBits, sizeof(Cell)));
        if (page == nullptr) throw std::bad_alloc();
        pages_[p].reset(page);
      }
    }
    return pages_[p].get()[key & kPageMask];
  }
  void added(std::uint64_t key) {
    ++size_;
    ++used_[static_cast<std::size_t>(key >> kPageBits)];
  }

  std::vector<std::unique_ptr<Cell, Free>> pages_;
  std::vector<std::uint32_t> used_;  // keys present per page
  std::vector<std::unique_ptr<Cell, Free>> spare_;  // released pages, all zero
  std::size_t size_ = 0;
};

}  // namespace kvsim::engine
