// The probe's decode points: TPOT read while every request of a batch decodes, and the compute
// fit calibrate --measured makes of them. An engine that prefills the batch's requests one after
// another makes the first request's decode wait for the others' prefills; that wait is prefill
// time, which the fitted model already charges to prefill steps, so it must not count as decode.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "validation/src/probe.hpp"

namespace kvsim::validation {
namespace {

ChatResult stream_at(const std::vector<double>& ms) {
  ChatResult c;
  for (const double t : ms) c.chunk_times.push_back(static_cast<SimTime>(t * 1e6));
  c.content_chunks = static_cast<std::int64_t>(ms.size());
  c.completion_tokens = c.content_chunks;
  c.first_token = c.chunk_times.front();
  c.last_token = c.chunk_times.back();
  return c;
}

// Request A's first token at 100 ms; B's prefill holds the engine until 300 ms, when both get a
// token; from then on a step of 10 ms gives each a token. Each answers 16 tokens.
struct StaggeredPair {
  ChatResult a, b;
  StaggeredPair() {
    std::vector<double> ta{100}, tb;
    for (int i = 0; i < 15; ++i) ta.push_back(300 + 10.0 * i);
    for (int i = 0; i < 16; ++i) tb.push_back(300 + 10.0 * i);
    a = stream_at(ta);
    b = stream_at(tb);
  }
};

TEST(ProbeDecode, ConcurrentTpotLeavesOutTheWaitForAnotherPrefill) {
  const StaggeredPair p;
  // Over the whole request A waited 200 ms for B's prefill: (440 - 100) / 15 = 22.7 ms.
  EXPECT_GT(to_ms(p.a.last_token - p.a.first_token) / 15.0, 20.0);
  const std::vector<double> t = concurrent_tpot_ms({&p.a, &p.b});
  ASSERT_EQ(t.size(), 2U);
  EXPECT_NEAR(t[0], 10.0, 1e-9);
  EXPECT_NEAR(t[1], 10.0, 1e-9);
}

TEST(ProbeDecode, ChunksOfSeveralTokensCountEachToken) {
  StaggeredPair p;
  p.a.completion_tokens = 2 * p.a.content_chunks;  // two tokens per chunk
  const std::vector<double> t = concurrent_tpot_ms({&p.a, &p.b});
  EXPECT_NEAR(t[0], 5.0, 1e-9);
  EXPECT_NEAR(t[1], 10.0, 1e-9);
}

TEST(ProbeDecode, NoCommonDecodingIsZeroNotTheWholeRequest) {
  // A finishes (190 ms) before B's first token (300 ms): never two decoding.
  std::vector<double> ta, tb;
  for (int i = 0; i < 10; ++i) ta.push_back(100 + 10.0 * i);
  for (int i = 0; i < 10; ++i) tb.push_back(300 + 10.0 * i);
  const ChatResult a = stream_at(ta), b = stream_at(tb);
  const std::vector<double> t = concurrent_tpot_ms({&a, &b});
  EXPECT_EQ(t[0], 0.0);
  EXPECT_EQ(t[1], 0.0);
  // Alone, a request's window is its whole decode.
  EXPECT_NEAR(concurrent_tpot_ms({&a}).front(), 10.0, 1e-9);
  ChatResult empty;
  EXPECT_EQ(concurrent_tpot_ms({&a, &empty}).front(), 0.0);
}

// Points made exactly by the probe's step model (probe.hpp) with s = 5 ms, t = 200 us per token,
// q = 0.01 us, d = 1 us per token of context, u per sequence of a step; the decode points'
// whole-request TPOT is inflated as a staggered batch's would be, their concurrent TPOT is exact.
ProbeResult exact_probe(bool legacy, double u = 0) {
  constexpr double s = 5000, t = 200, q = 0.01, d = 1;
  ProbeResult r;
  r.decode_tokens = 16;
  for (const std::int64_t len : {64, 256, 512, 1024}) {
    const double l = static_cast<double>(len);
    ProbePoint p;
    p.kind = "cold_prefill";
    p.prompt_tokens = len;
    p.server_prompt_tokens = len;
    p.cached_tokens = 0;
    p.ttft_ms = (s + t * l + q * l * (l + 1) / 2 + u) / 1e3;
    r.points.push_back(p);
  }
  for (const int b : {1, 2, 4}) {
    for (const std::int64_t ctx : {64, 768}) {
      const double c = static_cast<double>(ctx) + 8;
      ProbePoint p;
      p.kind = "decode";
      p.prompt_tokens = ctx;
      p.server_prompt_tokens = ctx;
      p.batch = b;
      p.output_tokens = 16;
      const double exact_ms = (s + t * b + d * b * c + u * b) / 1e3;
      p.concurrent_tpot_ms = legacy ? -1 : exact_ms;
      p.tpot_ms = b == 1 || legacy ? exact_ms : exact_ms * 2.5;
      r.points.push_back(p);
    }
  }
  return r;
}

TEST(ProbeDecode, TheFitTakesTheConcurrentTpot) {
  const ProbeFit fit = fit_probe(exact_probe(false));
  EXPECT_NEAR(fit.s_us, 5000, 5);
  EXPECT_NEAR(fit.t_us, 200, 0.5);
  EXPECT_NEAR(fit.d_us, 1, 0.01);
  // A file without concurrent_tpot_ms falls back to the whole request's TPOT.
  const ProbeFit legacy = fit_probe(exact_probe(true));
  EXPECT_NEAR(legacy.d_us, 1, 0.01);
}

// A cost per sequence of a step (u: sampling, the server's per-token work) is told apart from
// the per-token compute t by the decode points at batch sizes 1, 2 and 4 (prefill steps have one
// sequence), and becomes the profile's per-sequence term c1.
TEST(ProbeDecode, ThePerSequenceCostIsFittedApartFromThePerTokenOne) {
  const ProbeFit fit = fit_probe(exact_probe(false, 1500));
  EXPECT_NEAR(fit.s_us, 5000, 5);
  EXPECT_NEAR(fit.t_us, 200, 0.5);
  EXPECT_NEAR(fit.d_us, 1, 0.01);
  EXPECT_NEAR(fit.u_us, 1500, 5);
  EXPECT_NEAR(fit_probe(exact_probe(false)).u_us, 0, 5);
  const auto c = probe_coefficients(fit, exact_probe(false, 1500), 8, "probe.json");
  ASSERT_EQ(c.per_sequence_us.size(), 2u);
  EXPECT_EQ(c.per_sequence_us[0], 0);
  EXPECT_NEAR(c.per_sequence_us[1], 1500, 5);
}

// Three repeats, one of them late at every point (a loaded machine only adds time): the fit takes
// the median of each point, so it stays exact.
TEST(ProbeDecode, OneLateRepeatDoesNotMoveTheFit) {
  ProbeResult r = exact_probe(false);
  const std::size_t n = r.points.size();
  for (int rep = 0; rep < 2; ++rep) {
    for (std::size_t i = 0; i < n; ++i) {
      ProbePoint p = r.points[i];
      if (rep == 1) {
        p.ttft_ms *= 1.5;
        p.concurrent_tpot_ms *= 1.5;
      }
      r.points.push_back(p);
    }
  }
  const ProbeFit fit = fit_probe(r);
  EXPECT_NEAR(fit.s_us, 5000, 5);
  EXPECT_NEAR(fit.t_us, 200, 0.5);
  EXPECT_NEAR(fit.d_us, 1, 0.01);
  EXPECT_EQ(fit.residuals.size(), n);  // one row per point, not per repeat
}

TEST(ProbeDecode, ConcurrentTpotTravelsThroughTheProbeFile) {
  ProbeResult r = exact_probe(false);
  r.points[4].concurrent_tpot_ms = 0;  // measured, no common window
  r.points[5].concurrent_tpot_ms = -1;  // not measured
  const std::string path = ::testing::TempDir() + "/probe_decode_test.json";
  std::ofstream(path) << probe_json(r);
  const ProbeResult back = load_probe(path);
  std::remove(path.c_str());
  ASSERT_EQ(back.points.size(), r.points.size());
  for (std::size_t i = 0; i < r.points.size(); ++i)
    EXPECT_EQ(back.points[i].concurrent_tpot_ms, r.points[i].concurrent_tpot_ms) << i;
}

}  // namespace
}  // namespace kvsim::validation
