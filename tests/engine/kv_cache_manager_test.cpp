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

// Sequence slots (an engine of n context sequences, llama.cpp's server): with 2 sequences,
// three prompts run one after another leave only the last two cached; the first one, whose
// sequence the third erased, is not found again, although the pool has room for all three
// (vLLM's block cache, n = 0, finds it).
TEST(KvCacheManager, SequenceSlotsKeepAtMostThatManyPrompts) {
  for (const int sequences : {0, 2}) {
    KvCacheManager kv(256, 16, true, 4096);
    kv.set_prefix_cache_sequences(sequences);
    for (std::uint64_t stream = 1; stream <= 3; ++stream) {
      Request r = make_request(stream, 48, 1, stream);
      ASSERT_TRUE(kv.allocate_slots(r, 48, 0, {}));
      kv.free(r);
    }
    std::vector<BlockId> hits;
    const Request first_again = make_request(4, 64, 1, 1);  // continues stream 1's prompt
    const Request second_again = make_request(5, 64, 1, 2);
    EXPECT_EQ(kv.find_longest_cache_hit(first_again, hits), sequences == 0 ? 48 : 0) << sequences;
    EXPECT_EQ(kv.find_longest_cache_hit(second_again, hits), 48) << sequences;
    if (sequences > 0) {
      EXPECT_EQ(kv.idle_sequences(), 2u);
    }
  }
}

// A request that continues an idle sequence only in part takes that sequence and erases the
// rest of it: the sequence's blocks beyond the common prefix are no longer hit-able.
TEST(KvCacheManager, ContinuingPartOfASequenceErasesItsTail) {
  KvCacheManager kv(256, 16, true, 4096);
  kv.set_prefix_cache_sequences(2);
  Request a = make_request(1, 80, 1, 7);  // 5 full blocks
  ASSERT_TRUE(kv.allocate_slots(a, 80, 0, {}));
  kv.free(a);
  Request b = make_request(2, 40, 1, 7);  // shares a's first 2 blocks
  std::vector<BlockId> hits;
  ASSERT_EQ(kv.find_longest_cache_hit(b, hits), 32);
  ASSERT_TRUE(kv.allocate_slots(b, 8, 32, hits));
  EXPECT_EQ(kv.idle_sequences(), 0u);
  const Request c = make_request(3, 96, 1, 7);
  EXPECT_EQ(kv.find_longest_cache_hit(c, hits), 32);  // a's blocks 2..4 were erased
  // b's finish leaves its sequence idle again.
  kv.free(b);
  EXPECT_EQ(kv.idle_sequences(), 1u);
}

}  // namespace
}  // namespace kvsim::engine
