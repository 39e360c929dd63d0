// DenseIndex against std::unordered_map: the same answers after any sequence of inserts,
// overwrites and erases, with flags kept per cell, for keys packed in a few pages (so pages
// fill, empty, go back and come again) and keys spread over many.
#include "sim/engine/dense_index.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_map>
#include <utility>

namespace kvsim::engine {
namespace {

void check_against_reference(std::uint64_t key_range, std::uint32_t seed) {
  DenseIndex index;
  std::unordered_map<std::uint64_t, std::pair<std::int32_t, std::uint32_t>> ref;  // value, flags
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::uint64_t> pick(0, key_range - 1);
  std::uniform_int_distribution<int> op(0, 9);
  for (int step = 0; step < 30000; ++step) {
    const std::uint64_t key = pick(rng);
    const auto value = static_cast<std::int32_t>(step % (DenseIndex::kMaxValue + 1));
    switch (op(rng)) {
      case 0:
      case 1:
      case 2: {  // insert if absent
        const std::int32_t held = index.try_emplace(key, value);
        const auto [it, inserted] = ref.try_emplace(key, std::make_pair(value, 0U));
        ASSERT_EQ(held, it->second.first) << "step " << step;
        break;
      }
      case 3:  // overwrite (flags cleared)
        index.assign(key, value);
        ref[key] = {value, 0U};
        break;
      case 4:
      case 5:
      case 6:  // erase
        ASSERT_EQ(index.erase(key), ref.erase(key) == 1) << "step " << step;
        break;
      case 7: {  // flags
        const auto it = ref.find(key);
        DenseIndex::Cell* c = index.find_cell(key);
        ASSERT_EQ(c != nullptr, it != ref.end()) << "step " << step;
        if (c == nullptr) break;
        const std::uint32_t f = static_cast<std::uint32_t>(step) & 3U;
        if (step % 2 == 0) {
          c->set_flags(f);
          it->second.second |= f;
        } else {
          c->clear_flags(f);
          it->second.second &= ~f;
        }
        break;
      }
      default: {  // find
        const auto it = ref.find(key);
        ASSERT_EQ(index.find(key), it == ref.end() ? DenseIndex::kNone : it->second.first) << "step " << step;
      }
    }
    ASSERT_EQ(index.size(), ref.size());
  }
  for (std::uint64_t key = 0; key < key_range + 2048; ++key) {
    const auto it = ref.find(key);
    const DenseIndex::Cell* c = index.find_cell(key);
    ASSERT_EQ(c != nullptr, it != ref.end()) << "key " << key;
    if (c == nullptr) continue;
    EXPECT_EQ(c->value(), it->second.first);
    EXPECT_EQ(c->flags(), it->second.second);
  }
}

// 3,000 keys over three pages: pages empty and are taken again all the time.
TEST(DenseIndex, MatchesUnorderedMapForKeysInFewPages) { check_against_reference(3000, 1); }

// 200,000 keys over ~200 pages, most cells empty.
TEST(DenseIndex, MatchesUnorderedMapForKeysSpreadOverManyPages) { check_against_reference(200000, 2); }

TEST(DenseIndex, TheLargestValueAndKeyZeroRoundTrip) {
  DenseIndex index;
  EXPECT_EQ(index.find(0), DenseIndex::kNone);
  index.try_emplace(0, DenseIndex::kMaxValue);
  index.find_cell(0)->set_flags(3);
  EXPECT_EQ(index.find(0), DenseIndex::kMaxValue);
  EXPECT_EQ(index.find_cell(0)->flags(), 3U);
  EXPECT_TRUE(index.erase(0));
  EXPECT_FALSE(index.contains(0));
  EXPECT_TRUE(index.empty());
}

}  // namespace
}  // namespace kvsim::engine
