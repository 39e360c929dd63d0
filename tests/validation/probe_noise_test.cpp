// The run-to-run noise kvsim validate --noise-from reads from a probe's repeats, and the
// tolerances it widens with it; expected values computed by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "validation/src/probe.hpp"

namespace kvsim::validation {
namespace {

ProbePoint point(const std::string& kind, std::int64_t tokens, int batch, double ttft, double tpot) {
  return ProbePoint{.kind = kind,
                    .prompt_tokens = tokens,
                    .batch = batch,
                    .ttft_ms = ttft,
                    .tpot_ms = tpot,
                    .concurrent_tpot_ms = kind == "decode" ? tpot : -1};
}

// TTFT: cold 64 tokens at 90, 100, 110 ms (median 100: squared deviations 100, 0, 100; squared
// medians 3 x 10,000) and cached 64 tokens at 20, 20 (0, 0; 2 x 400); a single point (no
// repeat) does not count: sqrt(200 / 30,800). TPOT: decode batch 2 at 10 and 12 ms (median 11):
// sqrt((1 + 1) / (2 x 121)) = 1/11.
TEST(ProbeNoise, RmsDeviationFromEachPointsMedianOverRmsTime) {
  ProbeResult r;
  r.points = {point("cold_prefill", 64, 1, 90, 0),   point("cold_prefill", 64, 1, 100, 0),
              point("cold_prefill", 64, 1, 110, 0),  point("cached_prefix", 64, 1, 20, 0),
              point("cached_prefix", 64, 1, 20, 0),  point("cold_prefill", 512, 1, 400, 0),
              point("decode", 64, 2, 50, 10),        point("decode", 64, 2, 50, 12)};
  const ProbeNoise n = probe_noise(r);
  EXPECT_NEAR(n.ttft_spread, std::sqrt(200.0 / 30800.0), 1e-12);
  EXPECT_EQ(n.ttft_samples, 5);
  EXPECT_NEAR(n.tpot_spread, 1.0 / 11.0, 1e-12);
  EXPECT_EQ(n.tpot_samples, 2);
  // The decode points' TTFTs (50, 50) are not TTFT probes: adding a differing one changes
  // nothing.
  r.points.push_back(point("decode", 64, 2, 500, 11));
  EXPECT_NEAR(probe_noise(r).ttft_spread, std::sqrt(200.0 / 30800.0), 1e-12);
}

// Bounds widen to k x spread only where the noise exceeds them; tokens and the hit rate stay.
TEST(ProbeNoise, WidensOnlyTimingBoundsTighterThanTheNoise) {
  std::map<std::string, double> t = {{"ttft_mean", 20},         {"tpot_mean", 20},
                                     {"latency_mean", 20},      {"requests_per_sec", 10},
                                     {"input_tokens_mean", 5},  {"cache_hit_rate", 10}};
  ProbeNoise n;
  n.ttft_spread = 0.15;  // 2 x 15 % = 30 % > 20 %
  n.tpot_spread = 0.04;  // 2 x 4 % = 8 % < 20 %
  const auto lines = widen_for_noise(t, n, 2);
  EXPECT_DOUBLE_EQ(t["ttft_mean"], 30);
  EXPECT_DOUBLE_EQ(t["tpot_mean"], 20);
  EXPECT_DOUBLE_EQ(t["latency_mean"], 30);      // the larger spread, TTFT's
  EXPECT_DOUBLE_EQ(t["requests_per_sec"], 30);  // 30 > 10
  EXPECT_DOUBLE_EQ(t["input_tokens_mean"], 5);
  EXPECT_DOUBLE_EQ(t["cache_hit_rate"], 10);
  ASSERT_EQ(lines.size(), 4u);  // one per timing bound, saying why
  bool found = false;
  for (const auto& l : lines) {
    if (l.rfind("ttft_mean tolerance 30.0 % = max(20.0 %, 2 x 15.0 %", 0) == 0) found = true;
  }
  EXPECT_TRUE(found) << lines.front();
}

}  // namespace
}  // namespace kvsim::validation
