#pragma once
// The largest integer load that meets an SLO, found by probing a function of the load that is
// noisy but assumed monotone (more load never helps latency): exponential bracketing from a
// starting load (doubling up while the SLO holds, halving down while it does not), then integer
// bisection between the last load that passed and the first that failed. Each probe stands for
// several seeds whose metrics are aggregated first (aggregate_seeds), which is what makes the
// search robust to simulation noise. After the bisection, a load a quarter above the first failure
// and one a quarter below the answer are probed too, and every probe is checked against the
// answer: a pass above the first failure or a failure at or below the answer is reported as a
// monotonicity violation (the answer is kept; the caller warns).
// Loads are counts (clients, percent of a trace's rate, ...): whatever the caller's knob means.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/planner/slo.hpp"

namespace kvsim::planner {

// How the seeds of one probe combine: the mean of each metric over the seeds, or for each SLO
// term its worst value (largest for an upper bound, smallest for a lower bound; other metrics
// still the mean).
enum class Aggregate { kMean, kWorst };

// One probed load: the aggregated metrics and the SLO verdict on them.
struct Probe {
  std::int64_t load = 0;
  MetricValues metrics;
  SloResult slo;
  bool pass() const { return slo.pass; }
};

// Metric values of several seeds at one load combined as `how` says (a metric missing or NaN in
// any seed is NaN), with the SLO evaluated on the result.
Probe aggregate_seeds(std::int64_t load, const std::vector<MetricValues>& seeds, const Slo& slo,
                      Aggregate how);

struct SearchOptions {
  std::int64_t start = 1;           // first load probed (clamped to [min_load, max_load])
  std::int64_t min_load = 1;        // smallest load worth probing; below it the answer is "none"
  std::int64_t max_load = 1 << 20;  // the search stops doubling here
  // After bisection, probe a load a quarter above the first failure and one a quarter below the
  // answer (when not probed yet) to check monotonicity around the bracket.
  bool verify = true;
};

struct SearchResult {
  // The largest load that passed with the next one failing; 0 when even min_load fails.
  std::int64_t max_load = 0;
  bool capped = false;          // max_load reached and still passing: the true answer may be higher
  std::int64_t first_fail = 0;  // the smallest failing load probed above max_load (0: none)
  std::vector<Probe> probes;    // every probe, in the order made
  // Probes that contradict monotonicity (a pass above first_fail, a failure below max_load).
  std::vector<std::int64_t> violations;
  // The probe at max_load and at first_fail (nullptr when there is none).
  const Probe* at_max() const;
  const Probe* at_first_fail() const;
};

using ProbeFn = std::function<Probe(std::int64_t load)>;

// Runs the search, calling `probe` once per distinct load (probes are remembered).
SearchResult find_max_load(const ProbeFn& probe, const SearchOptions& options);

}  // namespace kvsim::planner
