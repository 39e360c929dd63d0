// KV tiers outside the GPU: capacity, LRU order with vLLM's reverse touch, pinning, ARC.
#include "sim/engine/kv_tier.hpp"

#include <gtest/gtest.h>

#include "sim/core/rng.hpp"

namespace kvsim::engine {
namespace {

void store(KvTier& t, std::uint64_t h) {
  ASSERT_TRUE(t.begin_store(h));
  t.finish_store(h);
}

// A chunk is loadable only once its store finished; match() counts consecutive ready chunks.
TEST(KvTier, ChunkIsReadableOnlyAfterItsStoreFinished) {
  KvTier t("dram", 4, EvictionPolicy::kLru);
  ASSERT_TRUE(t.begin_store(1));
  const std::vector<std::uint64_t> chain{1, 2};
  EXPECT_EQ(t.match(chain, 0), 0);
  t.finish_store(1);
  EXPECT_EQ(t.match(chain, 0), 1);
  store(t, 2);
  EXPECT_EQ(t.match(chain, 0), 2);
  EXPECT_EQ(t.match(chain, 1), 1);
}

// LRU: with capacity 3, storing a 4th chunk evicts the least recently used one.
TEST(KvTier, LruEvictsLeastRecentlyUsed) {
  KvTier t("dram", 3, EvictionPolicy::kLru);
  store(t, 1);
  store(t, 2);
  store(t, 3);
  const std::vector<std::uint64_t> one{1};
  t.touch(one);  // 1 becomes most recent: order 2 3 1
  store(t, 4);   // evicts 2
  EXPECT_FALSE(t.contains(2));
  EXPECT_EQ(t.order(), (std::vector<std::uint64_t>{3, 1, 4}));
  EXPECT_EQ(t.stats().evictions, 1);
}

// vLLM's CPU LRU touches a request's blocks in reverse, so its first block ends most recently
// used and its tail is evicted first.
TEST(KvTier, TouchInReverseKeepsThePrefix) {
  KvTier t("dram", 3, EvictionPolicy::kLru);
  store(t, 10);
  store(t, 11);
  store(t, 12);
  const std::vector<std::uint64_t> chain{10, 11, 12};
  t.touch(chain);
  EXPECT_EQ(t.order(), (std::vector<std::uint64_t>{12, 11, 10}));
  store(t, 99);
  EXPECT_FALSE(t.contains(12));
  EXPECT_TRUE(t.contains(10));
}

// Pinned (being loaded) and in-flight (being stored) chunks are never evicted; with nothing
// evictable a store is dropped and the tier stays within capacity.
TEST(KvTier, PinnedAndInFlightChunksAreNotEvicted) {
  KvTier t("dram", 2, EvictionPolicy::kLru);
  store(t, 1);
  ASSERT_TRUE(t.begin_store(2));  // in flight
  t.pin(1);
  EXPECT_FALSE(t.begin_store(3));
  EXPECT_EQ(t.size(), 2);
  t.unpin(1);
  EXPECT_TRUE(t.begin_store(3));  // evicts 1
  EXPECT_FALSE(t.contains(1));
  EXPECT_EQ(t.stats().stores_dropped, 1);
}

// Memoized matches are invalidated by shrink_version(): a first pin on a chunk some memo watches
// always counts; a first pin on another chunk counts only while lookups may read this tier with
// others (the default), where it can shadow a chunk a memo found in a later tier.
TEST(KvTier, FirstPinsCountAsShrinksAsConfigured) {
  for (const bool all : {true, false}) {
    KvTier t("dram", 4, EvictionPolicy::kLru);
    if (!all) t.set_pins_shrink_all(false);
    store(t, 1);
    store(t, 2);
    std::int32_t e1 = -1;
    ASSERT_EQ(t.state(1, e1), 0);
    t.watch(e1);
    const auto s0 = t.shrink_version();
    t.pin(2);  // a chunk no memo watches
    EXPECT_EQ(t.shrink_version() != s0, all);
    const auto s1 = t.shrink_version();
    t.pin(2);  // not a first pin
    EXPECT_EQ(t.shrink_version(), s1);
    t.pin(1);  // watched
    EXPECT_GT(t.shrink_version(), s1);
  }
}

// ARC keeps frequently used chunks: a chunk hit twice (in T2) survives a scan of new chunks
// that would flush it from an LRU of the same size.
TEST(KvTier, ArcResistsScans) {
  for (const auto policy : {EvictionPolicy::kLru, EvictionPolicy::kArc}) {
    KvTier t("dram", 4, policy);
    store(t, 1);
    const std::vector<std::uint64_t> one{1};
    t.touch(one);  // frequent
    for (std::uint64_t h = 100; h < 106; ++h) store(t, h);  // a scan of 6 new chunks
    if (policy == EvictionPolicy::kArc) {
      EXPECT_TRUE(t.contains(1));
    } else {
      EXPECT_FALSE(t.contains(1));
    }
    t.check_invariants();
  }
}

// Property: random stores, loads and touches never exceed capacity or break the lists.
TEST(KvTier, RandomOperationsKeepInvariants) {
  for (const auto policy : {EvictionPolicy::kLru, EvictionPolicy::kArc}) {
    Rng rng(5);
    KvTier t("x", 16, policy);
    std::vector<std::uint64_t> pinned;
    for (int i = 0; i < 5000; ++i) {
      const auto h = static_cast<std::uint64_t>(rng.uniform_int(0, 60));
      const double u = rng.uniform01();
      if (u < 0.5) {
        if (t.begin_store(h)) t.finish_store(h);
      } else if (u < 0.7 && t.is_ready(h)) {
        t.pin(h);
        pinned.push_back(h);
      } else if (u < 0.85 && !pinned.empty()) {
        t.unpin(pinned.back());
        pinned.pop_back();
      } else {
        const std::vector<std::uint64_t> one{h};
        t.touch(one);
      }
      t.check_invariants();
      ASSERT_LE(t.size(), 16);
    }
  }
}

}  // namespace
}  // namespace kvsim::engine
