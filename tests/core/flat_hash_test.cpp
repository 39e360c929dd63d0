// FlatHashMap against std::unordered_map: the same answers after any sequence of inserts,
// overwrites and erases, for keys that are well mixed (block hashes) and for keys that are not
// (small integers, multiples of 2^32, keys equal in their low or high halves), so the probe
// runs and the backward-shift deletion are exercised with long clusters.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

#include "sim/core/flat_hash.hpp"

namespace kvsim {
namespace {

void check_against_reference(const std::vector<std::uint64_t>& pool, std::uint32_t seed) {
  FlatHashMap map;
  std::unordered_map<std::uint64_t, std::int32_t> ref;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::size_t> pick(0, pool.size() - 1);
  std::uniform_int_distribution<int> op(0, 9);
  for (int step = 0; step < 20000; ++step) {
    const std::uint64_t key = pool[pick(rng)];
    const auto value = static_cast<std::int32_t>(step);
    switch (op(rng)) {
      case 0:
      case 1:
      case 2: {  // insert if absent
        const std::int32_t held = map.try_emplace(key, value);
        const auto [it, inserted] = ref.try_emplace(key, value);
        ASSERT_EQ(held, it->second) << "step " << step;
        break;
      }
      case 3:  // overwrite
        map.assign(key, value);
        ref[key] = value;
        break;
      case 4:
      case 5:
      case 6:  // erase
        ASSERT_EQ(map.erase(key), ref.erase(key) == 1) << "step " << step;
        break;
      default: {  // find
        const auto it = ref.find(key);
        ASSERT_EQ(map.find(key), it == ref.end() ? FlatHashMap::kNone : it->second) << "step " << step;
      }
    }
    ASSERT_EQ(map.size(), ref.size());
  }
  // Every key of the pool answers as the reference does at the end.
  for (const std::uint64_t key : pool) {
    const auto it = ref.find(key);
    EXPECT_EQ(map.find(key), it == ref.end() ? FlatHashMap::kNone : it->second);
    EXPECT_EQ(map.contains(key), it != ref.end());
  }
}

TEST(FlatHashMap, MatchesUnorderedMapForMixedKeys) {
  std::mt19937_64 rng(7);
  std::vector<std::uint64_t> pool(3000);
  for (auto& k : pool) k = rng();
  check_against_reference(pool, 1);
}

TEST(FlatHashMap, MatchesUnorderedMapForStructuredKeys) {
  std::vector<std::uint64_t> pool;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    pool.push_back(i);                  // small integers (0 included)
    pool.push_back(i << 32);            // equal low halves
    pool.push_back((i << 48) | 0xFFFF); // equal but for the top bits
  }
  check_against_reference(pool, 2);
}

TEST(FlatHashMap, CellFlagsTravelWithTheirKeyThroughErases) {
  // aux is the owner's: it must stay with its key when a deletion shifts cells back.
  FlatHashMap map;
  for (std::uint64_t k = 1; k <= 2000; ++k) {
    map.try_emplace(k, static_cast<std::int32_t>(k));
    map.find_cell(k)->aux = static_cast<std::uint32_t>(k * 3);
  }
  for (std::uint64_t k = 1; k <= 2000; k += 2) ASSERT_TRUE(map.erase(k));
  for (std::uint64_t k = 2; k <= 2000; k += 2) {
    const FlatHashMap::Cell* c = map.find_cell(k);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->value, static_cast<std::int32_t>(k));
    EXPECT_EQ(c->aux, static_cast<std::uint32_t>(k * 3));
  }
  EXPECT_EQ(map.size(), 1000U);
}

}  // namespace
}  // namespace kvsim
