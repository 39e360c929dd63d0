// Trace statistics checked by hand on small traces.
#include "sim/analysis/trace_stats.hpp"

#include <gtest/gtest.h>

namespace kvsim::analysis {
namespace {

workload::TraceRequest req(double ms, std::vector<std::int64_t> ids, std::int64_t in, std::int64_t out = 5) {
  workload::TraceRequest r;
  r.timestamp_ms = ms;
  r.hash_ids = std::move(ids);
  r.input_length = in;
  r.output_length = out;
  return r;
}

// Nearest rank: for 1..10, p50 is the 5th value, p90 the 9th, p99 the 10th.
TEST(TraceStats, NearestRankQuantiles) {
  std::vector<double> v = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
  const auto q = quantiles(v);
  EXPECT_EQ(q.count, 10);
  EXPECT_DOUBLE_EQ(q.mean, 5.5);
  EXPECT_DOUBLE_EQ(q.p50, 5);
  EXPECT_DOUBLE_EQ(q.p90, 9);
  EXPECT_DOUBLE_EQ(q.p99, 10);
  EXPECT_DOUBLE_EQ(q.min, 1);
  EXPECT_DOUBLE_EQ(q.max, 10);
}

// Blocks of 10 tokens.
//   t=0 s    A B      (20 tokens)
//   t=30 s   C        (10)
//   t=70 s   A B D    (25: D partial) -> extends the first prompt (A B, 2 full blocks): a
//                                       continuation;
//                                       A reused at distance 2 (B, C since), B at 2 (C, A... no:
//                                       uses first to last: before request 3 the order of last
//                                       uses is A(0) B(1) C(2); A has B and C after it: 2; then A
//                                       is used, so B has C and A after it: 2), both 70 s later.
//   t=130 s  C        (10) -> C reused at distance 3 (A, B, D since), 100 s after; it repeats a
//                              one-block prompt: not a continuation (2-block floor).
// Ideal hit: 0 + 0 + min(20, 25) + 10 = 30 of 65 tokens. Rate buckets of 60 s: [0, 60) has 2
// requests, [60, 120) 1, [120, 180) 1.
TEST(TraceStats, ByHand) {
  workload::Trace t;
  t.format = "mooncake";
  t.hash_block_tokens = 10;
  t.requests = {req(0, {1, 2}, 20), req(30000, {3}, 10), req(70000, {1, 2, 4}, 25), req(130000, {3}, 10)};
  const auto s = trace_stats(t, 60);
  EXPECT_EQ(s.requests, 4);
  EXPECT_DOUBLE_EQ(s.span_s, 130);
  ASSERT_EQ(s.rate.size(), 3u);
  EXPECT_EQ(s.rate[0].requests, 2);
  EXPECT_EQ(s.rate[1].requests, 1);
  EXPECT_EQ(s.rate[2].requests, 1);
  EXPECT_DOUBLE_EQ(s.peak_bucket_rate, 2.0 / 60.0);
  EXPECT_EQ(s.continuations, 1);
  EXPECT_EQ(s.block_uses, 7);
  EXPECT_EQ(s.distinct_blocks, 4);
  EXPECT_EQ(s.reuse_distance_blocks.count, 3);
  EXPECT_DOUBLE_EQ(s.reuse_distance_blocks.min, 2);
  EXPECT_DOUBLE_EQ(s.reuse_distance_blocks.max, 3);
  EXPECT_DOUBLE_EQ(s.reuse_time_s.min, 70);
  EXPECT_DOUBLE_EQ(s.reuse_time_s.max, 100);
  EXPECT_DOUBLE_EQ(s.ideal_token_hit_rate, 30.0 / 65.0);
  EXPECT_DOUBLE_EQ(s.ideal_request_hit_rate, (20.0 / 25.0 + 1.0) / 4.0);
  EXPECT_FALSE(s.has_conversations);
}

// Conversation structure where the format carries it: two conversations of 3 and 1 turns; the
// turn gaps are 5 s and 7 s.
TEST(TraceStats, Conversations) {
  workload::Trace t;
  t.format = "bailian";
  t.requests = {req(0, {}, 10), req(1000, {}, 10), req(5000, {}, 20), req(12000, {}, 30)};
  t.requests[0].conversation = 1;
  t.requests[1].conversation = 2;
  t.requests[2].conversation = 1;
  t.requests[2].parent = 0;
  t.requests[3].conversation = 1;
  t.requests[3].parent = 2;
  const auto s = trace_stats(t, 60);
  EXPECT_TRUE(s.has_conversations);
  EXPECT_EQ(s.conversations, 2);
  EXPECT_DOUBLE_EQ(s.turns_per_conversation.max, 3);
  EXPECT_DOUBLE_EQ(s.turns_per_conversation.min, 1);
  EXPECT_EQ(s.turn_gap_s.count, 2);
  EXPECT_DOUBLE_EQ(s.turn_gap_s.min, 5);
  EXPECT_DOUBLE_EQ(s.turn_gap_s.max, 7);
  EXPECT_EQ(s.block_uses, 0);  // no prefix information
}

}  // namespace
}  // namespace kvsim::analysis

namespace kvsim::analysis {
namespace {

// The rate series is bounded by the limit on its buckets, not sized by the span: two requests
// 1e8 s apart with 60 s buckets give 1-2-5 buckets wide enough for at most 10,000 of them, and
// the two requests land in the first and the last.
TEST(TraceStats, RateSeriesOfAHugeSpanWidensItsBuckets) {
  workload::Trace t;
  t.format = "mooncake";
  t.requests = {req(0, {}, 10), req(1e11, {}, 10)};
  const auto s = trace_stats(t, 60);
  EXPECT_EQ(s.bucket_widened_from_s, 60);
  EXPECT_DOUBLE_EQ(s.bucket_s, 20000);  // 1e8 s / 9,999 = 10,001 s, the next 1-2-5 step up
  ASSERT_LE(s.rate.size(), 10000u);
  EXPECT_EQ(s.rate.front().requests, 1);
  EXPECT_EQ(s.rate.back().requests, 1);
  // A span that fits keeps the bucket asked for.
  t.requests = {req(0, {}, 10), req(600000, {}, 10)};
  EXPECT_EQ(trace_stats(t, 60).bucket_widened_from_s, 0);
}

}  // namespace
}  // namespace kvsim::analysis
