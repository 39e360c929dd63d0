// Tolerance parsing, the comparison's figures against hand calculations, the replay file's
// round trip, and text sized by the token estimate.
#include "validation/src/report.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/core/error.hpp"
#include "sim/workload/token_count.hpp"
#include "validation/src/replay_file.hpp"
#include "validation/src/text_maker.hpp"

namespace kvsim::validation {
namespace {

io::RequestRecord rec(double start, double ttft, double latency, std::int64_t prompt,
                      std::int64_t cached) {
  io::RequestRecord r;
  r.start_time_ms = start;
  r.ttft_ms = ttft;
  r.latency_ms = latency;
  r.tpot_ms = (latency - ttft) / 9.0;
  r.output_num_tokens = 10;
  r.prompt_tokens = prompt;
  r.cached_tokens = cached;
  r.input_num_tokens = prompt - 10;
  return r;
}

TEST(Tolerances, ParsesPercentsAndRejectsUnknownNames) {
  const auto t = parse_tolerances("ttft_mean=30%,tpot_p50=20,cache_hit_rate=5");
  EXPECT_DOUBLE_EQ(t.at("ttft_mean"), 30.0);
  EXPECT_DOUBLE_EQ(t.at("tpot_p50"), 20.0);
  EXPECT_DOUBLE_EQ(t.at("cache_hit_rate"), 5.0);
  EXPECT_THROW(parse_tolerances("ttft_mena=30%"), InputError);
  EXPECT_THROW(parse_tolerances("ttft_mean=abc"), InputError);
  EXPECT_THROW(parse_tolerances("ttft_mean"), InputError);
  EXPECT_TRUE(parse_tolerances("").empty());
}

TEST(Compare, FiguresErrorsAndTolerances) {
  // Measured: TTFT 100, 200, 300 ms, requests from t=0 to t=1000+... ; predicted: 110, 220, 330.
  ReplayRun run;
  run.scenario_name = "s";
  for (int i = 0; i < 3; ++i) {
    ReplayRecord r;
    r.request = rec(100.0 * i, 100.0 * (i + 1), 1000, 100, 50);
    run.records.push_back(r);
  }
  ReplayRecord failed;
  failed.error = "HTTP 500: x";
  run.records.push_back(failed);
  std::vector<io::RequestRecord> predicted;
  for (int i = 0; i < 3; ++i) predicted.push_back(rec(100.0 * i, 110.0 * (i + 1), 1000, 100, 40));

  const Comparison c = compare(run, predicted, parse_tolerances("ttft_mean=5%,cache_hit_rate=20"));
  const auto row = [&](const std::string& n) {
    for (const auto& r : c.rows) {
      if (r.name == n) return r;
    }
    ADD_FAILURE() << n;
    return MetricComparison{};
  };
  EXPECT_DOUBLE_EQ(row("ttft_mean").measured, 200.0);
  EXPECT_DOUBLE_EQ(row("ttft_mean").predicted, 220.0);
  EXPECT_NEAR(row("ttft_mean").error, 10.0, 1e-9);  // (220 - 200) / 200
  EXPECT_TRUE(row("ttft_mean").exceeded);           // 10% > 5%
  // p90 of {100, 200, 300}: h = 0.9 x 2 = 1.8 -> 200 + 0.8 x 100 = 280.
  EXPECT_NEAR(row("ttft_p90").measured, 280.0, 1e-9);
  // 3 requests between the first start (0) and the last end (200 + 1000 ms): 2.5 req/s.
  EXPECT_NEAR(row("requests_per_sec").measured, 2.5, 1e-12);
  // Hit rate 50% measured, 40% predicted: -10 points, within 20.
  EXPECT_NEAR(row("cache_hit_rate").error, -10.0, 1e-9);
  EXPECT_FALSE(row("cache_hit_rate").exceeded);
  EXPECT_DOUBLE_EQ(row("requests").measured, 3.0);  // the failed request is left out
  EXPECT_EQ(c.measured_failed, 1);
  EXPECT_TRUE(c.exceeded());
  const std::string html = comparison_html(c);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org"));  // no external assets
  EXPECT_NE(comparison_table(c).find("EXCEEDED"), std::string::npos);
}

TEST(ReplayFile, RoundTrip) {
  ReplayRun run;
  run.scenario_name = "s";
  run.seed = 3;
  run.url = "http://x";
  run.metrics_before["vllm:a"] = 1;
  ReplayRecord r;
  r.request = rec(1, 2, 30, 100, 48);
  r.request.conversation_id = "CONV_ID_2";
  r.request.client_id = 1;
  r.error = "timeout: \"quoted\"";
  r.submit_index = 4;
  r.usage_cached_tokens = 48;
  run.records.push_back(r);
  const ReplayRun back = read_replay_json(replay_json(run), "x.json");
  EXPECT_EQ(back.seed, 3U);
  EXPECT_EQ(back.metrics_before.at("vllm:a"), 1.0);
  ASSERT_EQ(back.records.size(), 1U);
  EXPECT_EQ(back.records[0].error, r.error);
  EXPECT_EQ(back.records[0].submit_index, 4);
  EXPECT_EQ(back.records[0].request.conversation_id, "CONV_ID_2");
  EXPECT_DOUBLE_EQ(back.records[0].request.latency_ms, 30.0);
  EXPECT_THROW(read_replay_json("{\"format\": \"other\"}", "x.json"), InputError);
  EXPECT_THROW(read_replay_json("[1,", "x.json"), InputError);
}

TEST(TextMaker, EstimateModeHitsTheCountAndRepeatsItself) {
  // Each lower-case word of at most 8 letters after a space counts one token in the estimate
  // (token_count.hpp), so N words are N tokens.
  EstimateTokenizer est;
  TextMaker maker(est);
  for (const std::int64_t n : {1, 2, 17, 500}) {
    const std::string& t = maker.segment_text(42, 0, n, false);
    EXPECT_EQ(workload::estimate_tokens(t), n) << t;
    EXPECT_EQ(workload::estimate_tokens(maker.segment_text(42, 0, n, true)), n);
  }
  TextMaker other(est);
  EXPECT_EQ(maker.segment_text(9, 5, 30, false), other.segment_text(9, 5, 30, false));
  EXPECT_NE(maker.segment_text(9, 5, 30, false), other.segment_text(10, 5, 30, false));
}

}  // namespace
}  // namespace kvsim::validation
