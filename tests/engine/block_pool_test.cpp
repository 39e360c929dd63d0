#include "sim/engine/block_pool.hpp"

#include <gtest/gtest.h>

namespace kvsim::engine {
namespace {

// vLLM BlockPool.__init__: every block starts in the free queue in id order and block 0 is
// popped as the null block, so a pool of N blocks has N-1 usable ones and hands out 1, 2, ...
TEST(BlockPool, NullBlockIsReservedAndFreeQueueStartsInIdOrder) {
  BlockPool pool(5, true);
  EXPECT_EQ(pool.num_free_blocks(), 4);
  EXPECT_EQ(pool.free_queue_order(), (std::vector<BlockId>{1, 2, 3, 4}));
  std::vector<BlockId> got;
  pool.get_new_blocks(2, got);
  EXPECT_EQ(got, (std::vector<BlockId>{1, 2}));
  EXPECT_DOUBLE_EQ(pool.usage(), 0.5);
}

// free_blocks appends blocks reaching ref_cnt 0 to the tail in the order given; the head is
// evicted first (LRU).
TEST(BlockPool, FreedBlocksGoToTheTailInTheGivenOrder) {
  BlockPool pool(5, true);
  std::vector<BlockId> got;
  pool.get_new_blocks(3, got);  // 1 2 3; queue: 4
  pool.free_block(3);
  pool.free_block(2);
  pool.free_block(1);
  EXPECT_EQ(pool.free_queue_order(), (std::vector<BlockId>{4, 3, 2, 1}));
}

// A freed cached block keeps its hash and can be hit (touch takes it out of the free queue);
// the hash is dropped only when the block is handed out again.
TEST(BlockPool, FreedCachedBlockStaysHitableUntilReallocated) {
  BlockPool pool(3, true);  // usable: 1, 2
  std::vector<BlockId> got;
  pool.get_new_blocks(1, got);
  pool.cache_block(got[0], 0xabc);
  pool.free_block(got[0]);
  EXPECT_EQ(pool.lookup(0xabc), got[0]);
  pool.touch(got[0]);
  EXPECT_FALSE(pool.in_free_queue(got[0]));
  EXPECT_EQ(pool.ref_cnt(got[0]), 1);
  pool.free_block(got[0]);
  // Queue is now [2, 1]: two allocations take 2 and then 1, evicting 1's hash.
  std::vector<BlockId> more;
  pool.get_new_blocks(2, more);
  EXPECT_EQ(more, (std::vector<BlockId>{2, 1}));
  EXPECT_EQ(pool.lookup(0xabc), kNoBlock);
  EXPECT_EQ(pool.evictions(), 1);
}

// Duplicated blocks are allowed: two blocks with one hash; evicting the first leaves the second.
TEST(BlockPool, DuplicateHashesSurviveEvictionOfOneCopy) {
  BlockPool pool(4, true);
  std::vector<BlockId> got;
  pool.get_new_blocks(2, got);
  pool.cache_block(got[0], 7);
  pool.cache_block(got[1], 7);
  EXPECT_EQ(pool.lookup(7), got[0]);
  pool.free_block(got[0]);
  std::vector<BlockId> more;
  pool.get_new_blocks(2, more);  // 3, then got[0] (evicted)
  EXPECT_EQ(pool.lookup(7), got[1]);
}

// With prefix caching disabled nothing is ever found.
TEST(BlockPool, CachingDisabledNeverHits) {
  BlockPool pool(3, false);
  std::vector<BlockId> got;
  pool.get_new_blocks(1, got);
  pool.cache_block(got[0], 1);
  EXPECT_EQ(pool.lookup(1), kNoBlock);
}

}  // namespace
}  // namespace kvsim::engine
