// Timing-free LRU prefix-cache curves: checked by hand on a small trace, and against the LRU
// hit ratios published with the Mooncake FAST'25 conversation trace.
#include "kvsim/workload/cache_curve.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace kvsim::workload {
namespace {

TraceRequest req(std::vector<std::int64_t> ids, std::int64_t tokens) {
  TraceRequest r;
  r.hash_ids = std::move(ids);
  r.input_length = tokens;
  return r;
}

// Blocks of 10 tokens. Request 1 touches A B; request 2 touches C; request 3 asks for A B D.
// Before request 3, the LRU stack is [C, A, B] (most recent first; A was touched after B), so A
// has stack distance 1 and B distance 2: a cache of 2 blocks hits A only (10 tokens), a cache of
// 3 hits A and B (20 tokens). Token hit rate = hits / (20 + 10 + 30) prompt tokens.
TEST(CacheCurve, StackDistancesByHand) {
  const std::vector<TraceRequest> t = {req({1, 2}, 20), req({3}, 10), req({1, 2, 4}, 30)};
  const auto c = lru_cache_curve(t, 10, {1, 2, 3, 100});
  ASSERT_EQ(c.points.size(), 4u);
  EXPECT_DOUBLE_EQ(c.points[0].token_hit_rate, 0.0);
  EXPECT_DOUBLE_EQ(c.points[1].token_hit_rate, 10.0 / 60.0);
  EXPECT_DOUBLE_EQ(c.points[2].token_hit_rate, 20.0 / 60.0);
  EXPECT_DOUBLE_EQ(c.points[3].token_hit_rate, 20.0 / 60.0);
  EXPECT_DOUBLE_EQ(c.points[3].request_hit_rate, 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(c.infinite_token_hit_rate, 20.0 / 60.0);
  EXPECT_EQ(c.distinct_blocks, 4);
}

// A partial last block never hits: 25 tokens in blocks of 10 have 2 full blocks.
TEST(CacheCurve, PartialLastBlockNeverHits) {
  const std::vector<TraceRequest> t = {req({1, 2, 3}, 25), req({1, 2, 3}, 25)};
  const auto c = lru_cache_curve(t, 10, {100});
  EXPECT_DOUBLE_EQ(c.points[0].token_hit_rate, 20.0 / 50.0);
}

// The trace's own README: LRU token hit ratio of the Mooncake conversation trace at 1,000,
// 4,000, 16,000, 64,000 and 256,000 blocks of 512 tokens: 4.5, 8.7, 26.8, 36.6, 37.4 %; the
// infinite-cache ratio 37.4 %. Within half a percentage point.
TEST(CacheCurve, MatchesThePublishedMooncakeCurve) {
  const std::string file =
      std::string(KVSIM_SHARED_DATA_DIR) + "/traces/mooncake_fast25_conversation_trace.jsonl";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << "no trace at " << file;
  const auto trace = read_mooncake_trace(file, 512);
  const auto c = lru_cache_curve(trace, 512, {1000, 4000, 16000, 64000, 256000});
  const double published[] = {0.045, 0.087, 0.268, 0.366, 0.374};
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_NEAR(c.points[i].token_hit_rate, published[i], 0.005) << c.points[i].capacity_blocks;
  }
  EXPECT_NEAR(c.infinite_token_hit_rate, 0.374, 0.005);
}

}  // namespace
}  // namespace kvsim::workload
