// SLO expressions: parsing (names, aliases, units), evaluation, and the metric names of a summary.
#include "sim/planner/slo.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/io/stats.hpp"

namespace kvsim::planner {
namespace {

TEST(Slo, ParsesTheIssueExampleWithUnitsConvertedToTheMetricsUnit) {
  // ttft_p90 is the summary's ttft_ms_p90 (ms): 2s = 2000 ms; 100ms stays 100; a rate is bare.
  const Slo slo = parse_slo("ttft_p90<=2s,tpot_p90<=100ms,request_throughput>=1");
  ASSERT_EQ(slo.terms.size(), 3U);
  EXPECT_EQ(slo.terms[0].metric, "ttft_ms_p90");
  EXPECT_DOUBLE_EQ(slo.terms[0].threshold, 2000.0);
  EXPECT_EQ(slo.terms[0].op, Comparison::kLessEqual);
  EXPECT_EQ(slo.terms[1].metric, "tpot_ms_p90");
  EXPECT_DOUBLE_EQ(slo.terms[1].threshold, 100.0);
  EXPECT_EQ(slo.terms[2].metric, "requests_per_sec");
  EXPECT_EQ(slo.terms[2].op, Comparison::kGreaterEqual);
  EXPECT_DOUBLE_EQ(slo.terms[2].threshold, 1.0);
  EXPECT_EQ(slo.text(), "ttft_p90<=2s,tpot_p90<=100ms,request_throughput>=1");
}

TEST(Slo, AcceptsVllmResultKeysAndSummaryNames) {
  // vllm/benchmarks/serve.py keys: p90_ttft_ms, median_tpot_ms, mean_e2el_ms; the name states
  // its unit, so a bare number is in ms.
  const Slo slo =
      parse_slo("p90_ttft_ms<=500, median_tpot_ms < 40, mean_e2el_ms<=1.5s, latency_ms_p99<=9000");
  ASSERT_EQ(slo.terms.size(), 4U);
  EXPECT_EQ(slo.terms[0].metric, "ttft_ms_p90");
  EXPECT_DOUBLE_EQ(slo.terms[0].threshold, 500.0);
  EXPECT_EQ(slo.terms[1].metric, "tpot_ms_p50");
  EXPECT_EQ(slo.terms[1].op, Comparison::kLess);
  EXPECT_EQ(slo.terms[2].metric, "latency_ms_mean");
  EXPECT_DOUBLE_EQ(slo.terms[2].threshold, 1500.0);
  EXPECT_EQ(slo.terms[3].metric, "latency_ms_p99");
}

TEST(Slo, RatiosBytesSecondsAndRates) {
  const Slo slo = parse_slo(
      "prefix_cache_hit_rate>=50%,tier_host_dram_bytes_read<=1GiB,runtime_sec>=120s,output_"
      "throughput>500tok/s,"
      "preemptions<=0");
  ASSERT_EQ(slo.terms.size(), 5U);
  EXPECT_DOUBLE_EQ(slo.terms[0].threshold, 0.5);
  EXPECT_DOUBLE_EQ(slo.terms[1].threshold, 1073741824.0);
  EXPECT_DOUBLE_EQ(slo.terms[2].threshold, 120.0);  // runtime_sec is in seconds
  EXPECT_EQ(slo.terms[3].metric, "output_tokens_per_sec");
  EXPECT_EQ(slo.terms[3].op, Comparison::kGreater);
  EXPECT_DOUBLE_EQ(slo.terms[3].threshold, 500.0);
  EXPECT_EQ(slo.terms[4].metric, "preemptions");
}

std::string error_of(const std::string& text) {
  try {
    parse_slo(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Slo, ErrorsNameTheTermAndTheValidMetrics) {
  const std::string unknown = error_of("tfft_p90<=2s");
  EXPECT_NE(unknown.find("--slo 'tfft_p90<=2s'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("unknown metric"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("did you mean 'ttft_p90'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("requests_per_sec"), std::string::npos)
      << unknown;  // the valid names are listed
  // A time without a unit is ambiguous when the name does not say ms.
  EXPECT_NE(error_of("ttft_p90<=2").find("give a unit"), std::string::npos);
  EXPECT_NE(error_of("ttft_p90=2s").find("no comparison"), std::string::npos);
  EXPECT_NE(error_of("ttft_p90<=2parsecs").find("ttft_p90<=2parsecs"), std::string::npos);
  EXPECT_NE(error_of("ttft_p90<=").find("no value"), std::string::npos);
  EXPECT_NE(error_of("ttft_p90<=2s,,tpot_p90<=1s").find("empty term"), std::string::npos);
  EXPECT_NE(error_of("preemptions<=few").find("expected a number"), std::string::npos);
  EXPECT_NE(error_of("").find("empty term"), std::string::npos);
}

TEST(Slo, EvaluateChecksEveryTermAndNamesTheBindingOne) {
  const Slo slo = parse_slo("ttft_p90<=2s,tpot_p90<=100ms,request_throughput>=1");
  // Slack: TTFT (2000-1500)/2000 = 0.25; TPOT (100-90)/100 = 0.1; rate (1.2-1)/1 = 0.2.
  MetricValues v = {{"ttft_ms_p90", 1500}, {"tpot_ms_p90", 90}, {"requests_per_sec", 1.2}};
  SloResult r = evaluate(slo, v);
  EXPECT_TRUE(r.pass);
  EXPECT_EQ(r.binding, 1);
  EXPECT_DOUBLE_EQ(r.terms[0].slack, 0.25);
  EXPECT_NEAR(r.terms[2].slack, 0.2, 1e-12);
  // TTFT 2600 ms misses by 30 %; the rate by 50 %: the rate binds.
  v = {{"ttft_ms_p90", 2600}, {"tpot_ms_p90", 90}, {"requests_per_sec", 0.5}};
  r = evaluate(slo, v);
  EXPECT_FALSE(r.pass);
  EXPECT_FALSE(r.terms[0].pass);
  EXPECT_TRUE(r.terms[1].pass);
  EXPECT_FALSE(r.terms[2].pass);
  EXPECT_EQ(r.binding, 2);
  // Equal to the threshold meets <= and >=, not < or >.
  EXPECT_TRUE(parse_slo("preemptions<=3").terms[0].holds(3));
  EXPECT_FALSE(parse_slo("preemptions<3").terms[0].holds(3));
  EXPECT_FALSE(parse_slo("preemptions>3").terms[0].holds(3));
  // No samples (NaN) never meets an SLO.
  EXPECT_FALSE(parse_slo("ttft_p90<=2s").terms[0].holds(std::numeric_limits<double>::quiet_NaN()));
}

TEST(Slo, EvaluateRejectsAMetricTheRunDoesNotHave) {
  const Slo slo = parse_slo("tier_remote_bytes_read<=1GB");
  try {
    evaluate(slo, {{"requests_per_sec", 1}});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no metric 'tier_remote_bytes_read'"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("requests_per_sec"), std::string::npos);
  }
}

TEST(Slo, MetricValuesFlattenTheSummaryAsTheCsvDoes) {
  // Ten TTFTs 100..1000 ms: pandas' linear percentile p90 sits at index 0.9 x 9 = 8.1, so
  // 900 + 0.1 x 100 = 910 ms; the mean is 550.
  io::Summary s;
  std::vector<double> ttft;
  for (int i = 1; i <= 10; ++i) ttft.push_back(100.0 * i);
  s.ttft_ms = io::describe(ttft, io::kAllPercentiles);
  s.requests_per_sec = 2.5;
  s.preemptions = 7;
  io::RunInfo info;
  const MetricValues v = metric_values(s, info);
  EXPECT_DOUBLE_EQ(v.at("ttft_ms_p90"), 910.0);
  EXPECT_DOUBLE_EQ(v.at("ttft_ms_mean"), 550.0);
  EXPECT_DOUBLE_EQ(v.at("ttft_ms_count"), 10.0);
  EXPECT_DOUBLE_EQ(v.at("requests_per_sec"), 2.5);
  EXPECT_DOUBLE_EQ(v.at("preemptions"), 7.0);
  EXPECT_EQ(v.count("scenario"), 0U);            // text fields are not metrics
  EXPECT_TRUE(std::isnan(v.at("tpot_ms_p90")));  // no TPOT samples
  // Every base metric name is accepted by the parser.
  for (const auto& name : base_metric_names()) {
    EXPECT_NO_THROW(parse_slo(name + "<=1e30")) << name;
  }
}

}  // namespace
}  // namespace kvsim::planner
