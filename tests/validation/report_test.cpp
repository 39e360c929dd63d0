// Tolerance parsing, the comparison's figures against hand calculations, the replay file's
// round trip, and text sized by the token estimate.
#include "validation/src/report.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

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

// A counted record of one (conversation, turn) with the given times and output tokens.
io::RequestRecord keyed_rec(const std::string& conv, int turn, double ttft, double tpot,
                            double latency, std::int64_t out = 10) {
  io::RequestRecord r = rec(0, ttft, latency, 100, 0);
  r.conversation_id = conv;
  r.input_num_turns = turn;
  r.tpot_ms = tpot;
  r.output_num_tokens = out;
  return r;
}

const PerRequestFigures& figures_of(const PerRequest& pr, const std::string& name) {
  for (const auto& f : pr.figures) {
    if (f.name == name) return f;
  }
  ADD_FAILURE() << name;
  return pr.figures.front();
}

TEST(PerRequest, Correlations) {
  // Perfectly linear: 1; reversed: -1.
  EXPECT_DOUBLE_EQ(*pearson_correlation({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(*pearson_correlation({1, 2, 3, 4}, {40, 30, 20, 10}), -1.0);
  EXPECT_DOUBLE_EQ(*spearman_correlation({1, 2, 3, 4}, {1, 8, 27, 64}), 1.0);
  // x = 1, 2, 3; y = 1, 3, 2: deviations (-1, 0, 1) and (-1, 1, 0): sum of products 1, sums of
  // squares 2 and 2 -> 1 / 2.
  EXPECT_NEAR(*pearson_correlation({1, 2, 3}, {1, 3, 2}), 0.5, 1e-12);
  // x = 1, 2, 3, 4; y = 2, 1, 4, 3: deviations (-1.5, -0.5, 0.5, 1.5) and (-0.5, -1.5, 1.5, 0.5):
  // products 0.75 + 0.75 + 0.75 + 0.75 = 3, sums of squares 5 and 5 -> 0.6.
  EXPECT_NEAR(*pearson_correlation({1, 2, 3, 4}, {2, 1, 4, 3}), 0.6, 1e-12);
  // Spearman with a tie: y = 10, 20, 20, 40 ranks 1, 2.5, 2.5, 4 against x ranks 1, 2, 3, 4:
  // deviations of y's ranks (-1.5, 0, 0, 1.5), of x's (-1.5, -0.5, 0.5, 1.5): products 4.5,
  // squares 4.5 and 5 -> 4.5 / sqrt(22.5) = 0.948683...
  EXPECT_NEAR(*spearman_correlation({1, 2, 3, 4}, {10, 20, 20, 40}), 4.5 / std::sqrt(22.5), 1e-12);
  // Undefined: fewer than 2 values, or no variance on a side.
  EXPECT_FALSE(pearson_correlation({1}, {2}).has_value());
  EXPECT_FALSE(pearson_correlation({}, {}).has_value());
  EXPECT_FALSE(pearson_correlation({1, 2, 3}, {5, 5, 5}).has_value());
  EXPECT_FALSE(spearman_correlation({4, 4}, {1, 2}).has_value());
}

TEST(PerRequest, PairsByConversationAndTurnAndNamesTheRest) {
  const std::vector<io::RequestRecord> measured = {
      keyed_rec("a", 1, 100, 10, 200), keyed_rec("a", 2, 200, 20, 400),
      keyed_rec("b", 1, 300, 30, 600), keyed_rec("b", 1, 999, 99, 999),  // duplicate key
      keyed_rec("c", 1, 400, 40, 800),                                   // no predicted twin
  };
  io::RequestRecord warmup = keyed_rec("w", 1, 1, 1, 1);
  warmup.counted = false;
  const std::vector<io::RequestRecord> predicted = {
      keyed_rec("b", 1, 330, 30, 540), keyed_rec("a", 2, 180, 25, 400),
      keyed_rec("a", 1, 120, 10, 200), keyed_rec("d", 3, 1, 1, 1),  // no measured twin
      keyed_rec("e", 1, 1, 1, 1),      warmup,                      // warmup: not compared
  };
  std::vector<std::string> notes;
  const PerRequest pr = compare_per_request(measured, predicted, {}, notes);
  ASSERT_EQ(pr.pairs.size(), 3U);
  EXPECT_EQ(pr.pairs[0].conversation_id, "a");
  EXPECT_EQ(pr.pairs[0].turn, 1);
  EXPECT_DOUBLE_EQ(pr.pairs[0].predicted.ttft_ms, 120.0);
  EXPECT_EQ(pr.pairs[2].conversation_id, "b");
  EXPECT_DOUBLE_EQ(pr.pairs[2].measured.ttft_ms, 300.0);  // the first of the duplicates
  EXPECT_EQ(pr.measured_unpaired, 1);
  EXPECT_EQ(pr.predicted_unpaired, 2);
  EXPECT_EQ(pr.measured_duplicates, 1);
  EXPECT_EQ(pr.predicted_duplicates, 0);
  const auto has_note = [&](const std::string& text) {
    for (const auto& n : notes) {
      if (n.find(text) != std::string::npos) return true;
    }
    ADD_FAILURE() << "no note with '" << text << "'";
    return false;
  };
  has_note("1 measured request has no predicted twin");
  has_note("c turn 1");
  has_note("2 predicted requests have no measured twin");
  has_note("d turn 3, e turn 1");
  has_note("1 measured request repeats");
  has_note("b turn 1");

  // TTFT pairs (100, 120), (200, 180), (300, 330): absolute errors 20, 20, 30 -> median 20;
  // relative 20%, -10%, 10% -> |rel| median 10%, signed mean (20 - 10 + 10) / 3 = 6.67%.
  const auto& ttft = figures_of(pr, "ttft");
  EXPECT_EQ(ttft.n, 3);
  EXPECT_NEAR(*ttft.median_abs_error_ms, 20.0, 1e-9);
  EXPECT_NEAR(*ttft.median_abs_rel_error_percent, 10.0, 1e-9);
  EXPECT_NEAR(*ttft.mean_rel_error_percent, 20.0 / 3.0, 1e-9);
  // Measured deviations (-100, 0, 100), predicted (120, 180, 330) mean 210: (-90, -30, 120):
  // products 9000 + 0 + 12000 = 21000; squares 20000 and 8100 + 900 + 14400 = 23400.
  EXPECT_NEAR(*ttft.pearson, 21000.0 / std::sqrt(20000.0 * 23400.0), 1e-12);
  EXPECT_NEAR(*ttft.spearman, 1.0, 1e-12);  // same order on both sides
  // Latency (200, 200), (400, 400), (600, 540): absolute errors 0, 0, 60 -> median 0.
  EXPECT_NEAR(*figures_of(pr, "latency").median_abs_error_ms, 0.0, 1e-12);
  EXPECT_NEAR(*figures_of(pr, "latency").median_abs_rel_error_percent, 0.0, 1e-12);
}

TEST(PerRequest, UndefinedFiguresAreNullAndDash) {
  // One pair with TTFT: no correlation; TPOT over a single output token: no pair at all.
  const std::vector<io::RequestRecord> measured = {keyed_rec("a", 1, 100, 0, 100, 1)};
  const std::vector<io::RequestRecord> predicted = {keyed_rec("a", 1, 150, 0, 150, 1)};
  std::vector<std::string> notes;
  const PerRequest pr = compare_per_request(measured, predicted, {}, notes);
  EXPECT_TRUE(notes.empty());
  const auto& ttft = figures_of(pr, "ttft");
  EXPECT_EQ(ttft.n, 1);
  EXPECT_FALSE(ttft.pearson.has_value());
  EXPECT_FALSE(ttft.spearman.has_value());
  EXPECT_NEAR(*ttft.median_abs_error_ms, 50.0, 1e-12);
  EXPECT_NEAR(*ttft.median_abs_rel_error_percent, 50.0, 1e-12);
  const auto& tpot = figures_of(pr, "tpot");
  EXPECT_EQ(tpot.n, 0);
  EXPECT_FALSE(tpot.median_abs_error_ms.has_value());
  EXPECT_FALSE(tpot.mean_rel_error_percent.has_value());

  Comparison c;
  c.per_request = pr;
  const std::string table = comparison_table(c);
  EXPECT_NE(table.find("per request (1 pairs)"), std::string::npos) << table;
  // tpot_ms: 0 pairs, every figure a dash.
  EXPECT_NE(
      table.find("tpot_ms           0        -        -            -             -             -"),
      std::string::npos)
      << table;
  EXPECT_EQ(table.find("nan"), std::string::npos);
  const std::string json = comparison_json(c);
  EXPECT_NE(json.find("\"pearson\": null"), std::string::npos) << json;
  EXPECT_EQ(json.find("NaN"), std::string::npos);
  EXPECT_EQ(json.find("nan"), std::string::npos);
  // The pair's TPOT (one output token) is null too.
  EXPECT_NE(json.find("\"measured_tpot_ms\": null"), std::string::npos) << json;
  EXPECT_NE(comparison_markdown(c).find("| tpot | 0 | - | - | - | - | - |"), std::string::npos)
      << comparison_markdown(c);
}

TEST(PerRequest, CorrelationAndRelativeErrorTolerances) {
  EXPECT_DOUBLE_EQ(parse_tolerances("ttft_request_corr=0.5").at("ttft_request_corr"), 0.5);
  EXPECT_DOUBLE_EQ(
      parse_tolerances("latency_request_median_abs_rel=30%").at("latency_request_median_abs_rel"),
      30.0);
  EXPECT_THROW(parse_tolerances("ttft_request_corr=1.5"), InputError);
  EXPECT_THROW(parse_tolerances("ttft_request_corr=50%"), InputError);
  EXPECT_THROW(parse_tolerances("tpot_request_median_abs_rel=-3"), InputError);
  EXPECT_THROW(parse_tolerances("ttft_request_cor=0.5"), InputError);
  try {
    parse_tolerances("ttft_request_corr=2");
    ADD_FAILURE() << "no throw";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("from -1 to 1"), std::string::npos) << e.what();
  }

  // TTFT reversed against the measured order: Pearson -1.
  ReplayRun run;
  std::vector<io::RequestRecord> predicted;
  for (int i = 0; i < 3; ++i) {
    ReplayRecord r;
    r.request = keyed_rec("c", i + 1, 100.0 * (i + 1), 10, 1000);
    run.records.push_back(r);
    predicted.push_back(keyed_rec("c", i + 1, 100.0 * (3 - i), 10, 1000));
  }
  const Comparison fails = compare(run, predicted, parse_tolerances("ttft_request_corr=0.5"));
  EXPECT_NEAR(*figures_of(fails.per_request, "ttft").pearson, -1.0, 1e-12);
  EXPECT_TRUE(figures_of(fails.per_request, "ttft").exceeded);
  EXPECT_TRUE(fails.exceeded());
  EXPECT_NE(comparison_table(fails).find("EXCEEDED"), std::string::npos);
  EXPECT_NE(comparison_table(fails).find("FAIL: 1 tolerance(s) exceeded"), std::string::npos);
  const Comparison passes = compare(run, predicted, parse_tolerances("ttft_request_corr=-1"));
  EXPECT_FALSE(passes.exceeded());
  // TTFT relative errors 200%, 0%, -66.7%: median |rel| 66.7%, within 70, beyond 60.
  EXPECT_FALSE(
      compare(run, predicted, parse_tolerances("ttft_request_median_abs_rel=70")).exceeded());
  EXPECT_TRUE(
      compare(run, predicted, parse_tolerances("ttft_request_median_abs_rel=60%")).exceeded());
  // TPOT: no variance on either side, so its correlation is undefined: a bound on it fails.
  EXPECT_TRUE(compare(run, predicted, parse_tolerances("tpot_request_corr=0")).exceeded());
}

TEST(PerRequest, JsonHtmlAndMarkdownShowThePairs) {
  ReplayRun run;
  std::vector<io::RequestRecord> predicted;
  for (int i = 0; i < 3; ++i) {
    ReplayRecord r;
    r.request = keyed_rec("conv<" + std::to_string(i) + ">", 1, 100.0 * (i + 1), 10, 1000);
    r.request.cached_tokens = 7;
    run.records.push_back(r);
    // TTFT errors 5, 50, 20 ms: the HTML lists conv<1> first, then conv<2>, then conv<0>.
    predicted.push_back(keyed_rec("conv<" + std::to_string(i) + ">", 1,
                                  100.0 * (i + 1) + (i == 1   ? 50
                                                     : i == 2 ? 20
                                                              : 5),
                                  12, 900));
  }
  const Comparison c = compare(run, predicted, {});
  const std::string json = comparison_json(c);
  for (const char* key : {"\"per_request\"",
                          "\"pairs_count\": 3",
                          "\"measured_unpaired\": 0",
                          "\"ttft\"",
                          "\"tpot\"",
                          "\"latency\"",
                          "\"pearson\"",
                          "\"spearman\"",
                          "\"median_abs_error_ms\"",
                          "\"median_abs_rel_error_percent\"",
                          "\"mean_rel_error_percent\"",
                          "\"pairs\"",
                          "\"conversation_id\"",
                          "\"turn\"",
                          "\"measured_ttft_ms\"",
                          "\"predicted_ttft_ms\"",
                          "\"measured_tpot_ms\"",
                          "\"predicted_tpot_ms\"",
                          "\"measured_latency_ms\"",
                          "\"predicted_latency_ms\"",
                          "\"measured_cached_tokens\": 7",
                          "\"predicted_cached_tokens\": 0"}) {
    EXPECT_NE(json.find(key), std::string::npos) << key;
  }
  const std::string html = comparison_html(c);
  EXPECT_NE(html.find("Per request (3 pairs)"), std::string::npos);
  EXPECT_NE(html.find("<circle"), std::string::npos);
  EXPECT_NE(html.find("predicted TTFT (ms)"), std::string::npos);
  EXPECT_NE(html.find("measured TTFT (ms)"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  const auto at = [&](const std::string& s) { return html.find(s); };
  EXPECT_LT(at("<td>conv&lt;1&gt;</td>"), at("<td>conv&lt;2&gt;</td>"));
  EXPECT_LT(at("<td>conv&lt;2&gt;</td>"), at("<td>conv&lt;0&gt;</td>"));
  EXPECT_NE(at("<td>conv&lt;0&gt;</td>"), std::string::npos);
  const std::string md = comparison_markdown(c);
  EXPECT_NE(md.find("Per request (3 pairs)"), std::string::npos);
  EXPECT_NE(md.find("| ttft | 3 |"), std::string::npos) << md;
  EXPECT_NE(comparison_table(c).find("ttft_ms           3"), std::string::npos)
      << comparison_table(c);
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
