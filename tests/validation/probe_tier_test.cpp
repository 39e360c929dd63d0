// kvsim probe --offload against the fake server's emulated offload tier, and the fit that
// calibrate --measured makes of it: the fitted load rate and latency must be the emulation's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "models/fitted_model.hpp"
#include "sim/core/error.hpp"
#include "tests/validation/fake_server.hpp"
#include "validation/src/probe.hpp"

namespace kvsim::validation {
namespace {

using testing::FakeServer;

// How far an ordinary least-squares line y = a + b x through the points can move when each y
// moves by at most `noise`: sum |c_i| x noise for the intercept, sum |d_i| x noise for the slope,
// where a = sum c_i y_i and b = sum d_i y_i (the fit is linear in y).
struct LineBounds {
  double intercept = 0;
  double slope = 0;
};
LineBounds ols_bounds(const std::vector<double>& x, double noise) {
  const auto n = static_cast<double>(x.size());
  double sx = 0, sxx = 0;
  for (const double v : x) {
    sx += v;
    sxx += v * v;
  }
  const double det = n * sxx - sx * sx;
  LineBounds b;
  for (const double v : x) {
    b.intercept += std::abs((sxx - v * sx) / det) * noise;
    b.slope += std::abs((n * v - sx) / det) * noise;
  }
  return b;
}

TEST(ProbeTier, FitsTheEmulatedTiersRateAndLatency) {
  // The fake server loads a prefix found only in its tier at 4 GB/s after 3 ms, with 128 KiB of
  // KV per token (Llama-3.1-8B); the GPU hit costs neither.
  constexpr double kRate = 4e9, kLatencyMs = 3, kKvBytes = 131072;
  FakeServer server({"--tier-bytes-per-s", "4e9", "--tier-latency-ms", "3", "--kv-bytes-per-token",
                     "131072", "--prefill-us", "1", "--ttft-ms", "2"});
  ProbeOptions o;
  o.url = server.url();
  o.model = "fake-model";
  o.timeouts.first_token_s = 30;
  // Long prompts so the tier's share of TTFT (33 to 201 ms) stands well above the scheduling
  // noise of a machine at rest (well under a millisecond).
  o.prompt_tokens = {1024, 3072, 6144};
  o.batch_sizes = {1};
  o.decode_contexts = {64};
  o.decode_tokens = 4;
  // Three repeats: the fit takes the median at each length, so one request delayed by the
  // machine's other work does not move it.
  o.repeats = 3;
  o.offload = true;
  const ProbeResult r = run_probe(o);
  ASSERT_TRUE(r.errors.empty()) << r.errors.front();
  EXPECT_EQ(r.tier_eviction, "reset_prefix_cache");
  ASSERT_TRUE(has_tier_points(r));
  for (const auto& p : r.points) {
    // After the reset the whole prefix (whole blocks) comes back from the tier.
    if (p.kind == "tier_hit") {
      EXPECT_GE(p.cached_tokens, p.prompt_tokens - 32);
    }
  }
  const TierFit fit = fit_tier(r, kKvBytes);
  ASSERT_EQ(fit.points.size(), 3U);

  // The emulation's own accounting: the server adds exactly 3 ms + bytes / 4 GB/s to a tier
  // hit's TTFT, so whatever else a point's measured extra holds is the machine's scheduling
  // noise (a busy machine delays the server's and the client's threads). The fitted line may
  // move by what that noise explains and by 0.5 ms and 2 % more (rounding of the server's sleep
  // and of the cached-token counts), never by more.
  std::vector<double> bytes;
  double noise_ms = 0;
  for (const auto& p : fit.points) {
    const double intended_ms = kLatencyMs + p.bytes / kRate * 1e3;
    noise_ms = std::max(noise_ms, std::abs(p.measured_extra_ms - intended_ms));
    bytes.push_back(p.bytes);
  }
  const LineBounds moved = ols_bounds(bytes, noise_ms);
  RecordProperty("noise_ms", std::to_string(noise_ms));
  EXPECT_NEAR(fit.latency_us / 1e3, kLatencyMs, 0.5 + moved.intercept) << "noise " << noise_ms << " ms";
  EXPECT_NEAR(1e3 / fit.bytes_per_s, 1e3 / kRate, 0.02 * 1e3 / kRate + moved.slope)
      << "noise " << noise_ms << " ms";
  // The residual of a least-squares line is never larger than the noise that moved the points.
  EXPECT_LE(fit.rms_error_ms, noise_ms + 1e-9);
}

// The bounds above are honest: exact points moved by a known noise move the fit by no more.
TEST(ProbeTier, NoiseBoundsHoldForKnownNoise) {
  ProbeResult r;
  const std::int64_t lengths[] = {1000, 3000, 6000};
  const double noise[] = {4.0, -4.0, 4.0};
  std::vector<double> bytes;
  for (std::size_t i = 0; i < 3; ++i) {
    const std::int64_t n = lengths[i];
    const double extra_ms = 2.0 + static_cast<double>(n) * 65536.0 / 8e9 * 1e3;
    r.points.push_back({"cached_prefix", n, n + 10, n, 1, 1, 4.0, 0});
    r.points.push_back({"tier_hit", n, n + 10, n, 1, 1, 4.0 + extra_ms + noise[i], 0});
    bytes.push_back(static_cast<double>(n) * 65536.0);
  }
  const TierFit fit = fit_tier(r, 65536);
  const LineBounds moved = ols_bounds(bytes, 4.0);
  EXPECT_GT(std::abs(fit.latency_us / 1e3 - 2.0), 0.5);  // the noise did move it
  EXPECT_LE(std::abs(fit.latency_us / 1e3 - 2.0), moved.intercept + 1e-9);
  EXPECT_LE(std::abs(1e3 / fit.bytes_per_s - 1e3 / 8e9), moved.slope + 1e-18);
}

// One repeat delayed by 50 ms (a loaded machine) leaves the median, and so the fit, exact: the
// points of ExactPointsGiveTheRateAndTravelInTheProfile, three repeats, one of them late.
TEST(ProbeTier, OneLateRepeatDoesNotMoveTheFit) {
  ProbeResult r;
  for (const std::int64_t n : {1000, 3000}) {
    const double extra_ms = 2.0 + static_cast<double>(n) * 65536.0 / 8e9 * 1e3;
    for (int rep = 0; rep < 3; ++rep) {
      const double late_gpu = (rep == 1 && n == 1000) ? 50.0 : 0.0;
      const double late_tier = (rep == 2 && n == 3000) ? 50.0 : 0.0;
      r.points.push_back({"cached_prefix", n, n + 10, n, 1, 1, 4.0 + late_gpu, 0});
      r.points.push_back({"tier_hit", n, n + 10, n, 1, 1, 4.0 + extra_ms + late_tier, 0});
    }
  }
  const TierFit fit = fit_tier(r, 65536);
  ASSERT_EQ(fit.points.size(), 2U);
  EXPECT_NEAR(fit.bytes_per_s, 8e9, 1e-6 * 8e9);
  EXPECT_NEAR(fit.latency_us, 2000.0, 1e-6);
}

TEST(ProbeTier, TooFewLengthsIsAnInputError) {
  ProbeResult r;
  r.points.push_back({"cached_prefix", 256, 260, 256, 1, 1, 5.0, 0});
  r.points.push_back({"tier_hit", 256, 260, 256, 1, 1, 9.0, 0});
  EXPECT_THROW(fit_tier(r, 131072), InputError);
}

// The fit on exact points, and its way into the deployment's profile (what calibrate --measured
// writes): tier hits of 1,000 and 3,000 reused tokens at 65,536 KV bytes per token (65.536 MB
// and 196.608 MB) that take 2 ms + bytes / 8 GB/s more than the GPU hit, i.e. 10.192 ms and
// 26.576 ms, give back 8 GB/s and 2,000 us, and the profile's offload_tier reads them back.
TEST(ProbeTier, ExactPointsGiveTheRateAndTravelInTheProfile) {
  ProbeResult r;
  r.model = "m";
  for (const std::int64_t n : {1000, 3000}) {
    const double extra_ms = 2.0 + static_cast<double>(n) * 65536.0 / 8e9 * 1e3;
    r.points.push_back({"cached_prefix", n, n + 10, n, 1, 1, 4.0, 0});
    r.points.push_back({"tier_hit", n, n + 10, n, 1, 1, 4.0 + extra_ms, 0});
  }
  const TierFit fit = fit_tier(r, 65536);
  EXPECT_NEAR(fit.bytes_per_s, 8e9, 1e-6 * 8e9);
  EXPECT_NEAR(fit.latency_us, 2000.0, 1e-6);
  EXPECT_NEAR(fit.rms_error_ms, 0.0, 1e-9);

  auto c = probe_coefficients(ProbeFit{}, r, 8, "probe.json");
  c.offload_tier = models::MeasuredTier{fit.bytes_per_s, fit.latency_us};
  const auto back = models::read_fitted_yaml(models::write_fitted_yaml(c), "fit.yaml");
  ASSERT_TRUE(back.offload_tier.has_value());
  EXPECT_EQ(back.offload_tier->load_bytes_per_s, fit.bytes_per_s);
  EXPECT_EQ(back.offload_tier->latency_us, fit.latency_us);
}

// probe --offload's tier_hit_busy points against a server whose loads wait until at most one
// other request runs (--tier-gate 1), and one whose loads never wait: with k = 1, 2, 3 others
// decoding 64 tokens (1 ms each), the gated server's hit comes after the first of them ends
// when k >= 2, and fit_load_gate reads prepare_max_running 1; the other server's hits come in
// a few milliseconds at every k: -1.
TEST(ProbeTier, BusyTierHitsShowWhetherLoadsWaitForTheOthers) {
  for (const int gate : {1, -1}) {
    FakeServer server({"--tier-bytes-per-s", "4e9", "--tier-latency-ms", "1",
                       "--kv-bytes-per-token", "131072", "--prefill-us", "1", "--ttft-ms", "2",
                       "--token-ms", "1", "--tier-gate", std::to_string(gate)});
    ProbeOptions o;
    o.url = server.url();
    o.model = "fake-model";
    o.timeouts.first_token_s = 30;
    o.prompt_tokens = {256, 512};
    o.batch_sizes = {1, 4};
    o.decode_contexts = {64};
    o.decode_tokens = 4;
    o.repeats = 1;
    o.offload = true;
    const ProbeResult r = run_probe(o);
    ASSERT_TRUE(r.errors.empty()) << r.errors.front();
    ASSERT_TRUE(has_busy_tier_points(r));
    int busy = 0;
    for (const auto& p : r.points) {
      if (p.kind != "tier_hit_busy") continue;
      ++busy;
      EXPECT_EQ(p.prompt_tokens, 256);
      EXPECT_GE(p.cached_tokens, 256 - 32);  // loaded from the tier
      EXPECT_GT(p.others_done_ms, 0);
    }
    EXPECT_EQ(busy, 3);
    const LoadGate g = fit_load_gate(r);
    ASSERT_EQ(g.rows.size(), 3U);
    for (const auto& row : g.rows) {
      EXPECT_EQ(row.points, 1);
      EXPECT_EQ(row.waited, gate >= 0 && row.others > gate ? 1 : 0)
          << "k " << row.others << ", gate " << gate;
    }
    EXPECT_EQ(g.prepare_max_running, gate);
    // The points travel through the probe file.
    const ProbeResult back = [&] {
      const std::string path = ::testing::TempDir() + "probe_busy.json";
      FILE* f = std::fopen(path.c_str(), "w");
      const std::string text = probe_json(r);
      std::fwrite(text.data(), 1, text.size(), f);
      std::fclose(f);
      return load_probe(path);
    }();
    EXPECT_EQ(fit_load_gate(back).prepare_max_running, gate);
  }
}

// The rule on made-up points: the majority of a k's repeats decides, the smallest k whose loads
// waited sets the gate, and points whose prefix was not loaded (cached below half the prompt)
// or that lack the others' end do not count.
TEST(ProbeTier, LoadGateFromPoints) {
  const auto point = [](int batch, double ttft, double done, std::int64_t cached) {
    ProbePoint p{"tier_hit_busy", 64, 80, cached, batch, 1, ttft, 0};
    p.others_done_ms = done;
    return p;
  };
  ProbeResult r;
  r.points = {point(2, 10, 300, 64),  point(2, 310, 300, 64), point(2, 12, 300, 64),  // k 1: 1 of 3
              point(3, 400, 390, 64), point(3, 395, 390, 64), point(3, 20, 390, 64),  // k 2: 2 of 3
              point(4, 900, 800, 10), point(4, 900, -1, 64)};  // k 3: none usable
  const LoadGate g = fit_load_gate(r);
  ASSERT_EQ(g.rows.size(), 2U);
  EXPECT_EQ(g.rows[0].others, 1);
  EXPECT_EQ(g.rows[0].waited, 1);
  EXPECT_EQ(g.rows[1].others, 2);
  EXPECT_EQ(g.rows[1].waited, 2);
  EXPECT_EQ(g.prepare_max_running, 1);
  EXPECT_DOUBLE_EQ(g.rows[1].median_ttft_ms, 395);
  r.points.erase(r.points.begin() + 3, r.points.begin() + 6);
  EXPECT_EQ(fit_load_gate(r).prepare_max_running, -1);  // no k with a majority that waited
}

// Loads whose extra TTFT does not grow with their size (a fixed cost above the noise): no
// positive rate fits, so the fit holds the slope at zero, takes the mean extra as the latency,
// and gives the slowest rate the points allow, the largest load's bytes over their rms
// deviation from that mean. Extras 11, 7, 9 ms at 1, 2, 3 MB: mean 9 ms, rms deviation
// sqrt(8 / 3) ms, rate 3 MB / 1.633 ms.
TEST(ProbeTier, AFlatTierGivesItsLatencyAndTheSlowestRateThePointsAllow) {
  ProbeResult r;
  const double extras[] = {11, 7, 9};
  for (int i = 0; i < 3; ++i) {
    const std::int64_t n = 1000 * (i + 1);
    r.points.push_back({"cached_prefix", n, n + 10, n, 1, 1, 4.0, 0});
    r.points.push_back({"tier_hit", n, n + 10, n, 1, 1, 4.0 + extras[i], 0});
  }
  const TierFit fit = fit_tier(r, 1000);
  EXPECT_FALSE(fit.rate_resolved);
  EXPECT_NEAR(fit.latency_us, 9000, 1e-6);
  EXPECT_NEAR(fit.bytes_per_s, 3e6 / (std::sqrt(8.0 / 3.0) * 1e-3), 1e-3);
  for (const auto& p : fit.points) EXPECT_NEAR(p.fitted_extra_ms, 9.0, 1e-9);
  // Loads no slower than a GPU hit are an error still.
  for (auto& p : r.points) {
    if (p.kind == "tier_hit") p.ttft_ms = 3.0;
  }
  EXPECT_THROW(fit_tier(r, 1000), InputError);
}

}  // namespace
}  // namespace kvsim::validation
