#pragma once
// Measured against predicted: the figures `kvsim validate` compares, their errors and the
// tolerances, as a table, JSON and an HTML page with overlaid CDF plots (inline SVG).
//
// Figures (over the successful, counted requests; percentiles by numpy's linear method as the
// benchmark computes them, sim/io/stats.hpp):
//   ttft_ms, tpot_ms, latency_ms: mean, p50, p90, p99
//   requests_per_sec: requests / (last end - first start), the benchmark's runtime_sec
//   cache_hit_rate: sum cached_tokens / sum prompt_tokens (measured: usage.prompt_tokens_details.
//     cached_tokens; predicted: the simulated prefix-cache hits at first scheduling)
//   requests, input_num_tokens_mean, prompt_tokens_mean, output_num_tokens_mean: the workload
//     check (same requests, same token counts)
// Error: (predicted - measured) / measured, in percent; for cache_hit_rate the difference in
// percentage points. A tolerance bounds |error|.
//
// Per request: the same request measured and predicted. Requests are paired by
// (conversation_id, input_num_turns) over the counted, successful requests of each side; a key on
// one side only, or repeated on a side (the first is paired), is counted and named in a note. For
// TTFT, TPOT (pairs where both sides have more than one output token) and latency, with m_i the
// measured and p_i the predicted value of pair i, n pairs:
//   pearson   = sum (m_i - mean m)(p_i - mean p) / sqrt(sum (m_i - mean m)^2 sum (p_i - mean p)^2)
//   spearman  = pearson of the ranks of m and of p (1 = smallest; tied values share the average
//               of the ranks they span)
//   median_abs_error_ms          = median |p_i - m_i|
//   median_abs_rel_error_percent = median 100 |p_i - m_i| / m_i   (pairs with m_i > 0)
//   mean_rel_error_percent       = mean 100 (p_i - m_i) / m_i     (signed; pairs with m_i > 0)
// Medians are p50 by the same linear method as the percentiles above. A figure that is not
// defined (no pairs; for a correlation fewer than 2 pairs or no variance on a side) is null in
// JSON and "-" in the table. Tolerances on them: <q>_request_median_abs_rel bounds the median
// absolute relative error (percent); <q>_request_corr is a minimum Pearson correlation, exceeded
// when the correlation is below it or undefined (q: ttft, tpot, latency).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/io/results.hpp"
#include "validation/src/replay_file.hpp"

namespace kvsim::validation {

// The successful, counted requests of a replay, as simulation records.
std::vector<io::RequestRecord> measured_records(const ReplayRun& run);

// "ttft_mean=30%,tpot_p50=20%,cache_hit_rate=5,ttft_request_corr=0.5" -> {name: bound in percent
// (points for cache_hit_rate; a correlation from -1 to 1 for *_request_corr)}. Throws InputError
// for an unknown name or a bad number.
std::map<std::string, double> parse_tolerances(const std::string& text);
// The names parse_tolerances accepts.
std::vector<std::string> comparable_metrics();

struct MetricComparison {
  std::string name;  // e.g. ttft_p90
  double measured = 0;
  double predicted = 0;
  double error = 0;  // percent (relative), or points for cache_hit_rate
  bool points = false;
  std::optional<double> tolerance;
  bool exceeded = false;
};

// One paired request: the same (conversation, turn) measured and predicted.
struct RequestPair {
  std::string conversation_id;
  int turn = 0;  // input_num_turns
  io::RequestRecord measured;
  io::RequestRecord predicted;
};

// The per-request figures of one quantity (ttft, tpot, latency); empty optionals are undefined.
struct PerRequestFigures {
  std::string name;    // ttft, tpot, latency
  std::int64_t n = 0;  // pairs the figures are over
  std::optional<double> pearson;
  std::optional<double> spearman;
  std::optional<double> median_abs_error_ms;
  std::optional<double> median_abs_rel_error_percent;
  std::optional<double> mean_rel_error_percent;
  std::optional<double> tolerance_median_abs_rel;  // percent, a maximum
  std::optional<double> tolerance_corr;            // a minimum Pearson correlation
  bool exceeded = false;
};

struct PerRequest {
  std::vector<RequestPair> pairs;          // in measured order
  std::vector<PerRequestFigures> figures;  // ttft, tpot, latency
  std::int64_t measured_unpaired = 0;      // measured keys with no predicted twin
  std::int64_t predicted_unpaired = 0;     // predicted keys with no measured twin
  std::int64_t measured_duplicates = 0;    // repeats of a key on the measured side
  std::int64_t predicted_duplicates = 0;
};

// Pearson and Spearman correlations of x and y (same length); nullopt when undefined.
std::optional<double> pearson_correlation(const std::vector<double>& x,
                                          const std::vector<double>& y);
std::optional<double> spearman_correlation(const std::vector<double>& x,
                                           const std::vector<double>& y);

// Pairs the counted measured and predicted records by (conversation_id, input_num_turns) and
// computes the per-request figures; what could not be paired goes to notes.
PerRequest compare_per_request(const std::vector<io::RequestRecord>& measured,
                               const std::vector<io::RequestRecord>& predicted,
                               const std::map<std::string, double>& tolerances,
                               std::vector<std::string>& notes);

struct Comparison {
  std::string scenario_name;
  std::string url;
  std::string model;
  std::int64_t measured_failed = 0;
  std::vector<MetricComparison> rows;
  // Samples for the CDF plots: name -> (measured, predicted), each sorted ascending.
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> samples;
  PerRequest per_request;
  std::vector<std::string> notes;
  bool exceeded() const;
};

Comparison compare(const ReplayRun& measured, const std::vector<io::RequestRecord>& predicted,
                   const std::map<std::string, double>& tolerances);

std::string comparison_table(const Comparison& c);
std::string comparison_json(const Comparison& c);
std::string comparison_html(const Comparison& c);
// A Markdown table (for docs/validation.md).
std::string comparison_markdown(const Comparison& c);

// The end-of-replay summary: requests, errors grouped by message, and the measured figures.
std::string replay_summary_text(const ReplayRun& run);

}  // namespace kvsim::validation
