#include "sim/engine/kv_cache_manager.hpp"

#include <gtest/gtest.h>

#include "tests/engine/test_support.hpp"

namespace kvsim::engine {
namespace {

using testing::make_request;

// Only full blocks are cached: a 40-token prompt computed in one go caches 2 blocks of 16,
// and a second request with the same 40 tokens hits those 32 tokens.
TEST(KvCacheManager, OnlyFullBlocksAreCachedAndHit) {
  KvCacheManager kv(64, 16, true, 4096);
  Request a = make_request(1, 40, 1, 9);
  ASSERT_TRUE(kv.allocate_slots(a, 40, 0, {}));
  EXPECT_EQ(a.blocks.size(), 3u);  // ceil(40/16)
  EXPECT_EQ(a.num_cached_blocks, 2);
  Request b = make_request(2, 40, 1, 9);
  std::vector<BlockId> hits;
  EXPECT_EQ(kv.find_longest_cache_hit(b, hits), 32);
}

// max_cache_hit_length = num_tokens - 1: a block-aligned, fully cached 32-token prompt hits
// only 16 tokens, so its whole last block is recomputed.
TEST(KvCacheManager, FullyCachedAlignedPromptRecomputesLastBlock) {
  KvCacheManager kv(64, 16, true, 4096);
  Request a = make_request(1, 32, 1, 5);
  ASSERT_TRUE(kv.allocate_slots(a, 32, 0, {}));
  Request b = make_request(2, 32, 1, 5);
  std::vector<BlockId> hits;
  EXPECT_EQ(kv.find_longest_cache_hit(b, hits), 16);
}

// Hits are touched (shared, ref_cnt 2) and only the missing blocks are newly allocated.
TEST(KvCacheManager, HitsAreSharedNotCopied) {
  KvCacheManager kv(64, 16, true, 4096);
  Request a = make_request(1, 48, 1, 5);
  ASSERT_TRUE(kv.allocate_slots(a, 48, 0, {}));
  const auto free_before = kv.pool().num_free_blocks();
  Request b = make_request(2, 48, 1, 5);
  std::vector<BlockId> hits;
  const auto hit_tokens = kv.find_longest_cache_hit(b, hits);
  ASSERT_EQ(hit_tokens, 32);
  ASSERT_TRUE(kv.allocate_slots(b, 16, hit_tokens, hits));
  EXPECT_EQ(kv.pool().ref_cnt(a.blocks[0]), 2);
  EXPECT_EQ(b.blocks[0], a.blocks[0]);
  EXPECT_EQ(kv.pool().num_free_blocks(), free_before - 1);
}

// Allocation fails without side effects when the free queue is short.
TEST(KvCacheManager, AllocationFailureChangesNothing) {
  KvCacheManager kv(4, 16, true, 4096);  // 3 usable blocks
  Request a = make_request(1, 64, 1, 5);
  EXPECT_FALSE(kv.allocate_slots(a, 64, 0, {}));
  EXPECT_TRUE(a.blocks.empty());
  EXPECT_EQ(kv.pool().num_free_blocks(), 3);
}

// free() releases in reverse order, so the request's last block is the first to be evicted.
TEST(KvCacheManager, FreeInReverseOrderEvictsTailFirst) {
  KvCacheManager kv(4, 16, true, 4096);
  Request a = make_request(1, 48, 1, 5);
  ASSERT_TRUE(kv.allocate_slots(a, 48, 0, {}));
  const auto blocks = a.blocks;
  kv.free(a);
  EXPECT_EQ(kv.pool().free_queue_order(), (std::vector<BlockId>{blocks[2], blocks[1], blocks[0]}));
}

// Generated tokens' full blocks are cached too: a 10-token prompt that has generated 6 tokens
// and schedules its next decode caches block 0 once 16 tokens are computed.
TEST(KvCacheManager, GeneratedTokensFullBlocksAreCached) {
  KvCacheManager kv(64, 16, true, 4096);
  Request a = make_request(1, 10, 20, 5);
  ASSERT_TRUE(kv.allocate_slots(a, 10, 0, {}));
  a.num_computed = 10;
  EXPECT_EQ(a.num_cached_blocks, 0);
  a.generated = 6;  // num_tokens = 16; 15 computed, the 16th is computed now
  a.num_computed = 15;
  ASSERT_TRUE(kv.allocate_slots(a, 1, 0, {}));
  EXPECT_EQ(a.num_cached_blocks, 1);
  EXPECT_TRUE(kv.pool().is_cached(a.blocks[0]));
}

}  // namespace
}  // namespace kvsim::engine
