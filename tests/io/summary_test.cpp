#include "sim/io/summary.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sim/core/error.hpp"

namespace kvsim::io {
namespace {

RequestRecord rec(std::uint64_t id, double start_ms, double latency_ms, std::int64_t out_tokens,
                  bool counted = true) {
  RequestRecord r;
  r.request_id = id;
  r.start_time_ms = start_ms;
  r.latency_ms = latency_ms;
  r.ttft_ms = latency_ms / 10.0;
  r.output_num_tokens = out_tokens;
  r.counted = counted;
  return r;
}

// Four samples, given out of order. Sorted by start: (0, +1500), (1000, +2500), (2000, +1000),
// (3000, +4000). runtime = end of the last-started (3000 + 4000) - first start (0) = 7 s;
// 4 requests / 7 s; output tokens 10 + 20 + 30 + 40 = 100 over 7 s.
TEST(Summary, RuntimeAndRatesFromHandMadeRecords) {
  const std::vector<RequestRecord> records{rec(3, 2000, 1000, 30), rec(1, 0, 1500, 10),
                                           rec(4, 3000, 4000, 40), rec(2, 1000, 2500, 20)};
  const Summary s = summarize(records, RunInfo{});
  EXPECT_EQ(s.num_samples, 4);
  EXPECT_EQ(s.warmup_samples, 0);
  EXPECT_EQ(s.num_requests, 4);
  EXPECT_DOUBLE_EQ(s.runtime_sec, 7.0);
  EXPECT_DOUBLE_EQ(s.requests_per_sec, 4.0 / 7.0);
  EXPECT_DOUBLE_EQ(s.output_tokens_per_sec, 100.0 / 7.0);
  // ttft = latency / 10: 150, 250, 100, 400 -> mean 225, min 100, max 400.
  EXPECT_EQ(s.ttft_ms.count, 4);
  EXPECT_DOUBLE_EQ(s.ttft_ms.mean, 225.0);
  EXPECT_DOUBLE_EQ(s.ttft_ms.min, 100.0);
  EXPECT_DOUBLE_EQ(s.ttft_ms.max, 400.0);
  // Output tokens 10..40: median 25; chunks are one fewer per request: median 24.
  EXPECT_DOUBLE_EQ(s.output_num_tokens.percentile(0.5), 25.0);
  EXPECT_DOUBLE_EQ(s.output_num_chunks.percentile(0.5), 24.0);
  EXPECT_FALSE(s.has_warmup_step);
  EXPECT_EQ(s.table_percentiles, (std::vector<double>{0.25, 0.5, 0.75, 0.9}));
}

// 25% warmup of 4 samples drops int(0.25 * 4) = 1, the earliest: runtime = 7000 - 1000 ms = 6 s,
// 3 requests / 6 s = 0.5/s, 90 output tokens / 6 s = 15/s.
TEST(Summary, WarmupDropsTheEarliestSamples) {
  const std::vector<RequestRecord> records{rec(3, 2000, 1000, 30), rec(1, 0, 1500, 10),
                                           rec(4, 3000, 4000, 40), rec(2, 1000, 2500, 20)};
  const Summary s = summarize(records, RunInfo{}, 25.0);
  EXPECT_EQ(s.num_samples, 4);
  EXPECT_EQ(s.warmup_samples, 1);
  EXPECT_EQ(s.num_requests, 3);
  EXPECT_DOUBLE_EQ(s.runtime_sec, 6.0);
  EXPECT_DOUBLE_EQ(s.requests_per_sec, 0.5);
  EXPECT_DOUBLE_EQ(s.output_tokens_per_sec, 15.0);
  EXPECT_EQ(s.ttft_ms.count, 3);
  EXPECT_DOUBLE_EQ(s.ttft_ms.min, 100.0);  // the 150 ms sample was dropped
}

// The drop count truncates: int(0.5 * 3) = 1 and int(0.1 * 9) = 0.
TEST(Summary, WarmupCountTruncates) {
  std::vector<RequestRecord> three;
  for (std::uint64_t i = 0; i < 3; ++i)
    three.push_back(rec(i, 100.0 * static_cast<double>(i), 50, 1));
  EXPECT_EQ(summarize(three, RunInfo{}, 50.0).warmup_samples, 1);
  std::vector<RequestRecord> nine;
  for (std::uint64_t i = 0; i < 9; ++i)
    nine.push_back(rec(i, 100.0 * static_cast<double>(i), 50, 1));
  EXPECT_EQ(summarize(nine, RunInfo{}, 10.0).warmup_samples, 0);
}

// The benchmark takes the end of the sample that started last, not the latest end: starts 0
// and 100 ms with latencies 5000 and 100 ms give (100 + 100 - 0) / 1000 = 0.2 s.
TEST(Summary, RuntimeUsesTheLastStartedSample) {
  const std::vector<RequestRecord> records{rec(1, 0, 5000, 1), rec(2, 100, 100, 1)};
  EXPECT_DOUBLE_EQ(summarize(records, RunInfo{}).runtime_sec, 0.2);
}

// Equal start times are ordered by request id whatever the input order: the last sample is
// id 2 (latency 100 ms), so runtime = 0.1 s either way.
TEST(Summary, TiesAreOrderedByRequestId) {
  const std::vector<RequestRecord> a{rec(2, 0, 100, 1), rec(1, 0, 300, 1)};
  const std::vector<RequestRecord> b{rec(1, 0, 300, 1), rec(2, 0, 100, 1)};
  EXPECT_DOUBLE_EQ(summarize(a, RunInfo{}).runtime_sec, 0.1);
  EXPECT_DOUBLE_EQ(summarize(b, RunInfo{}).runtime_sec, 0.1);
}

// Records not counted (the warmup step) stay out of the statistics and give the warmup
// runtime: first start 0, latest end max(0 + 500, 100 + 700) = 800 ms -> 0.8 s.
TEST(Summary, UncountedRecordsGiveTheWarmupStep) {
  const std::vector<RequestRecord> records{rec(1, 0, 500, 5, false), rec(2, 100, 700, 5, false),
                                           rec(3, 1000, 2000, 10), rec(4, 1500, 1500, 30)};
  const Summary s = summarize(records, RunInfo{});
  EXPECT_EQ(s.num_samples, 2);
  EXPECT_EQ(s.num_requests, 2);
  EXPECT_DOUBLE_EQ(s.runtime_sec, 2.0);  // (1500 + 1500 - 1000) / 1000
  EXPECT_DOUBLE_EQ(s.output_tokens_per_sec, 20.0);
  EXPECT_TRUE(s.has_warmup_step);
  EXPECT_DOUBLE_EQ(s.warmup_runtime_sec, 0.8);
  EXPECT_DOUBLE_EQ(s.total_runtime_incl_warmup_sec, 2.8);
}

// The column set follows the count before the warmup drop, as in process_statistics:
// 100 samples with 50% warmup keep 50 but still show 99%.
TEST(Summary, TablePercentilesFollowTheSampleCountBeforeWarmup) {
  std::vector<RequestRecord> records;
  for (std::uint64_t i = 0; i < 100; ++i)
    records.push_back(rec(i, 10.0 * static_cast<double>(i), 5, 1));
  const Summary s = summarize(records, RunInfo{}, 50.0);
  EXPECT_EQ(s.num_requests, 50);
  EXPECT_EQ(s.table_percentiles, (std::vector<double>{0.25, 0.5, 0.75, 0.9, 0.99}));
}

// Engine figures come from RunInfo; the hit rate is hits / queries, 0 without queries.
TEST(Summary, RunInfoFigures) {
  RunInfo info;
  info.prefix_cache_queries = 120;
  info.prefix_cache_hits = 30;
  info.preemptions = 7;
  info.failed_requests = 2;
  info.gpu_kv_cache_tokens = 31232;
  info.num_gpu_blocks = 1952;
  info.max_concurrency = 3.8125;
  info.engine_steps = 999;
  info.simulated_seconds = 12.5;
  const std::vector<RequestRecord> records{rec(1, 0, 100, 1)};
  const Summary s = summarize(records, info);
  EXPECT_DOUBLE_EQ(s.prefix_cache_hit_rate, 0.25);
  EXPECT_EQ(s.preemptions, 7);
  EXPECT_EQ(s.failed_requests, 2);
  EXPECT_EQ(s.gpu_kv_cache_tokens, 31232);
  EXPECT_EQ(s.num_gpu_blocks, 1952);
  EXPECT_EQ(s.max_concurrency, 3.8125);
  EXPECT_EQ(s.engine_steps, 999);
  EXPECT_EQ(s.simulated_seconds, 12.5);
  EXPECT_EQ(summarize(records, RunInfo{}).prefix_cache_hit_rate, 0.0);
}

// No counted samples: zero requests and undefined (NaN) rates.
TEST(Summary, NoSamples) {
  const Summary s = summarize({}, RunInfo{});
  EXPECT_EQ(s.num_requests, 0);
  EXPECT_TRUE(std::isnan(s.runtime_sec));
  EXPECT_TRUE(std::isnan(s.requests_per_sec));
  EXPECT_EQ(s.ttft_ms.count, 0);
}

// The benchmark accepts warmup percentages in [0, 100).
TEST(Summary, RejectsWarmupOutsideRange) {
  const std::vector<RequestRecord> records{rec(1, 0, 100, 1)};
  EXPECT_THROW(summarize(records, RunInfo{}, 100.0), InputError);
  EXPECT_THROW(summarize(records, RunInfo{}, -1.0), InputError);
  EXPECT_THROW(summarize(records, RunInfo{}, std::nan("")), InputError);
  EXPECT_NO_THROW(summarize(records, RunInfo{}, 99.0));
}

}  // namespace
}  // namespace kvsim::io
