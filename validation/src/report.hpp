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
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/io/results.hpp"
#include "validation/src/replay_file.hpp"

namespace kvsim::validation {

// The successful, counted requests of a replay, as simulation records.
std::vector<io::RequestRecord> measured_records(const ReplayRun& run);

// "ttft_mean=30%,tpot_p50=20%,cache_hit_rate=5" -> {name: bound in percent (points for
// cache_hit_rate)}. Throws InputError for an unknown name or a bad number.
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

struct Comparison {
  std::string scenario_name;
  std::string url;
  std::string model;
  std::int64_t measured_failed = 0;
  std::vector<MetricComparison> rows;
  // Samples for the CDF plots: name -> (measured, predicted), each sorted ascending.
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> samples;
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
