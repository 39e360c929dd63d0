// Dense block ids: one id per hash in use, ids reclaimed by mark and sweep, and every holder
// (block hash cache, tiers) listing the ids it holds so none is reclaimed while in use.
#include "sim/engine/block_ids.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/rng.hpp"
#include "sim/core/tokens.hpp"
#include "sim/engine/kv_tier.hpp"

namespace kvsim::engine {
namespace {

TEST(BlockIds, OneIdPerHashAndCollectFreesWhatIsNotMarked) {
  BlockIds ids;
  const std::uint64_t a = ids.intern(0xaaaa);
  const std::uint64_t b = ids.intern(0xbbbb);
  EXPECT_NE(a, b);
  EXPECT_EQ(ids.intern(0xaaaa), a);
  EXPECT_EQ(ids.hash_of(b), 0xbbbbU);
  ids.collect([&](auto mark) { mark(b); });  // a is held by no one
  EXPECT_FALSE(ids.bound(a));
  EXPECT_TRUE(ids.bound(b));
  EXPECT_EQ(ids.live(), 1U);
  const std::uint64_t c = ids.intern(0xcccc);
  EXPECT_EQ(c, a);  // the freed id names the next new hash
  EXPECT_EQ(ids.hash_of(c), 0xccccU);
  EXPECT_EQ(ids.intern(0xbbbb), b);  // b was kept
  const std::uint64_t a2 = ids.intern(0xaaaa);
  EXPECT_NE(a2, a);  // the old hash comes back under another id
  EXPECT_EQ(ids.hash_of(a2), 0xaaaaU);
  EXPECT_EQ(ids.capacity(), 3U);
}

// Ids below the first id are another namer's: handed out ids start there, and marks below it
// (held names) neither count nor disturb a collection.
TEST(BlockIds, IdsStartAtTheFirstIdAndCollectIgnoresIdsBelowIt) {
  BlockIds ids;
  ids.set_first_id(1000);
  const std::uint64_t a = ids.intern(0xaaaa);
  const std::uint64_t b = ids.intern(0xbbbb);
  EXPECT_EQ(a, 1000U);
  EXPECT_EQ(b, 1001U);
  EXPECT_EQ(ids.hash_of(b), 0xbbbbU);
  EXPECT_FALSE(ids.bound(999));
  ids.collect([&](auto mark) {
    mark(5);
    mark(999);
    mark(b);
  });
  EXPECT_FALSE(ids.bound(a));
  EXPECT_TRUE(ids.bound(b));
  EXPECT_EQ(ids.intern(0xcccc), a);  // the freed id names the next new hash
  EXPECT_EQ(ids.capacity(), 1002U);
  BlockIds used;
  used.intern(1);
  EXPECT_THROW(used.set_first_id(10), InternalError) << "only before the first intern";
}

// Conversations interleaved through a small cache (so some are dropped and come back), with
// collections between requests that mark only what the cache and the requests in flight hold:
// every id a request got names, as long as the request lives, the hash block_hashes() gives
// for that position. A cache that did not list its keys would see them reclaimed and handed to
// other hashes, and reuse them.
TEST(BlockIds, HashCacheKeysSurviveCollectionsAndNameTheirHashes) {
  BlockIds ids;
  Rng rng(3);
  BlockHashCache cache(16, 3);
  cache.set_interner(&ids);
  std::vector<TokenSequence> history(6);
  struct Held {
    std::vector<std::uint64_t> ids, hashes;
  };
  std::vector<Held> held;
  for (auto& h : history) append_tokens(h, content_id(ContentKind::kCommonPrefix, 1), 40);
  int collections = 0;
  for (int step = 0; step < 300; ++step) {
    const auto conv = static_cast<std::size_t>(rng.uniform_int(0, 5));
    TokenSequence& h = history[conv];
    append_tokens(h, content_id(ContentKind::kUserTurn, conv, static_cast<std::uint64_t>(step)), rng.uniform_int(1, 60));
    TokenSequence full = h;
    append_tokens(full, content_id(ContentKind::kAssistantTurn, conv, static_cast<std::uint64_t>(step)),
                  rng.uniform_int(1, 40));
    const std::int64_t key = rng.uniform01() < 0.2 ? -1 : static_cast<std::int64_t>(conv);
    Held r{cache.hashes(key, full), block_hashes(full, 16)};
    ASSERT_EQ(r.ids.size(), r.hashes.size());
    held.push_back(r);
    for (const Held& x : held) {
      for (std::size_t i = 0; i < x.ids.size(); ++i) ASSERT_EQ(ids.hash_of(x.ids[i]), x.hashes[i]) << "step " << step;
    }
    // Requests end in their own order.
    if (held.size() > 4) held.erase(held.begin() + rng.uniform_int(0, static_cast<std::int64_t>(held.size()) - 1));
    if (step % 7 == 0) {
      ids.collect([&](auto mark) {
        cache.for_each_key(mark);
        for (const Held& x : held) std::for_each(x.ids.begin(), x.ids.end(), mark);
      });
      ++collections;
    }
  }
  EXPECT_GT(collections, 40);
  // Dropped conversations and ended requests were reclaimed: fewer ids bound than handed out.
  EXPECT_LT(ids.live(), ids.capacity());
}

// A tier lists its resident chunks and, with ARC, its ghosts (a ghost hit must find its id);
// it may list more (the last keys of free entry slots), which only keeps ids bound longer.
TEST(BlockIds, TiersListResidentChunksAndGhosts) {
  KvTier tier("dram", 2, EvictionPolicy::kArc);
  auto store = [&](std::uint64_t k) {
    if (tier.begin_store(k)) tier.finish_store(k);
  };
  store(10);
  store(20);
  const std::vector<std::uint64_t> both{10, 20};
  tier.touch(both);  // both to T2; touch() leaves 10 most recent
  store(30);         // evicts T2's least recently used, 20, to the ghost list B2
  std::vector<std::uint64_t> listed;
  tier.for_each_key([&](std::uint64_t k) { listed.push_back(k); });
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(listed, (std::vector<std::uint64_t>{10, 20, 30}));
  EXPECT_FALSE(tier.contains(20));  // 20 is a ghost, not resident
  tier.check_invariants();
}

}  // namespace
}  // namespace kvsim::engine
