#pragma once
// Side-by-side comparison of several runs of one scenario (e.g. its KV-tier variants): one row
// per variant with the figures planners compare. Times in ms, rates per second.
#include <ostream>
#include <string>
#include <vector>

#include "sim/io/results.hpp"
#include "sim/io/summary.hpp"

namespace kvsim::io {

struct ComparisonRow {
  std::string variant;      // short name, e.g. "gpu-prefix-cache"
  std::string description;  // what the variant changes
  Summary summary;
  RunInfo info;
};

// A fixed-width table: variant, requests/s, output tokens/s, TTFT mean/p50/p90/p99,
// TPOT p50/p90, latency mean, GPU prefix-cache hit rate, tokens loaded from offload tiers, bytes
// read and written in the tiers, the busiest PCIe direction's mean utilization, preemptions;
// then each variant's ratios to the first for requests/s, mean TTFT and mean TPOT, and its tiers.
void write_comparison_table(std::ostream& os, const std::vector<ComparisonRow>& rows, const RunInfo& info);
// The same as a JSON array of objects (deterministic key order and number format).
void write_comparison_json(std::ostream& os, const std::vector<ComparisonRow>& rows);
// The same as CSV with a header row.
void write_comparison_csv(std::ostream& os, const std::vector<ComparisonRow>& rows);

}  // namespace kvsim::io
