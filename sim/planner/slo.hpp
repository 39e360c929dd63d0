#pragma once
// Service-level objectives on a run's summary:
// "ttft_p90<=2s,tpot_p90<=100ms,request_throughput>=1". A term names any summary metric under the
// names of the JSON/CSV summary (docs/results.md; metric objects flattened as in the CSV:
// ttft_ms_p90, latency_ms_mean, tpot_ms_count) or under the names vLLM's benchmarks print
// (ttft_p90, p90_ttft_ms, median_tpot_ms, request_throughput, output_throughput). Thresholds carry
// units where the metric has one: times (2s, 100ms) are converted to the metric's own unit (ms or
// s), byte counts take 24GiB, ratios 90% or 0.9; rates and counts are bare numbers. A metric whose
// name carries its unit (ttft_ms_p90) also takes a bare number in that unit; one whose name does
// not (ttft_p90) requires a unit.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/io/results.hpp"
#include "sim/io/summary.hpp"

namespace kvsim::planner {

// Every scalar of a summary by its flattened name (ttft_ms_p90, requests_per_sec,
// tier_host_dram_bytes_read, ...). NaN where the summary has no value (no samples).
using MetricValues = std::map<std::string, double>;

// The summary's figures as write_summary_csv names them (strings such as the scenario name left
// out).
MetricValues metric_values(const io::Summary& summary, const io::RunInfo& info);

// The metric names every run has (tier_* and link_* names depend on the scenario's tiers and
// links and are accepted when they match those patterns); for error messages and docs.
const std::vector<std::string>& base_metric_names();

enum class Comparison { kLessEqual, kLess, kGreaterEqual, kGreater };

// What a metric measures, for parsing a threshold's unit.
enum class MetricKind { kTimeMs, kTimeSec, kBytes, kRatio, kRate, kCount };

// The summary name of a metric written under either naming (ttft_p90 -> ttft_ms_p90,
// request_throughput -> requests_per_sec); throws InputError starting with `what` for an unknown
// one, naming the valid metrics and the closest.
std::string resolve_metric(const std::string& written, const std::string& what);

// What a metric (a summary name) measures.
MetricKind metric_kind(const std::string& metric);

struct SloTerm {
  std::string text;    // as written, e.g. "ttft_p90<=2s"
  std::string metric;  // the summary name, e.g. "ttft_ms_p90"
  Comparison op = Comparison::kLessEqual;
  double threshold = 0;  // in the metric's unit (ms for ttft_ms_p90)
  MetricKind kind = MetricKind::kCount;

  // An upper bound (<=, <): larger values are worse.
  bool upper_bound() const { return op == Comparison::kLessEqual || op == Comparison::kLess; }
  bool holds(double value) const;
  // Relative slack: (threshold - value) / |threshold| for an upper bound, (value - threshold) /
  // |threshold| for a lower bound (the absolute difference when the threshold is 0). Negative
  // when the term is missed; -infinity for a NaN value.
  double slack(double value) const;
};

struct Slo {
  std::vector<SloTerm> terms;
  std::string text() const;  // the terms joined by ','
};

// Parses a comma-separated list of terms; throws InputError (message starts with `what`, e.g.
// "--slo") naming the bad term and, for an unknown metric, the valid names and a suggestion.
Slo parse_slo(const std::string& text, const std::string& what = "--slo");

// One term checked against one set of metric values.
struct TermResult {
  const SloTerm* term = nullptr;
  double value = 0;
  bool pass = false;
  double slack = 0;
};

struct SloResult {
  std::vector<TermResult> terms;
  bool pass = true;
  // The index of the term with the least slack (the one that fails first as load grows);
  // -1 when there are no terms.
  int binding = -1;
};

// Throws InputError when a term's metric is not among `values` (listing the names that are).
SloResult evaluate(const Slo& slo, const MetricValues& values);

// A threshold or value in the metric's unit, for tables: "2000 ms", "1.5 /s", "90%".
std::string format_metric_value(MetricKind kind, double value);

}  // namespace kvsim::planner
