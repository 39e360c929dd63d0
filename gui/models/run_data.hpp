#pragma once
// One finished simulation as the GUI keeps it: what was run (label, tier variant, knob value),
// the run's summary and figures, per-request samples for the CDFs, the per-step series and the
// usage samples (KV held per tier, link utilisation) every simulated second.
// Times in ms or s as the names say; rates per second; bytes.
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "sim/io/results.hpp"
#include "sim/io/summary.hpp"
#include "sim/planner/variants.hpp"
#include "sim/scenario/scenario.hpp"

namespace kvsim::gui {

// What to run: the scenario text (decoded in the worker) with overrides on top.
struct RunJob {
  std::string label;       // shown in lists and legends: "dram, num_clients=8"
  std::string variant;     // tier variant name ("" for the scenario as written)
  std::string knob_path;   // the what-if knob ("" for none)
  std::string knob_value;  // as typed
  double knob_number = 0;  // the knob in display units (x axis)
  std::string text;        // scenario YAML
  std::string display_name;
  scenario::LoadOptions options;
};

struct RunData {
  RunJob job;
  io::Summary summary;
  io::RunInfo info;
  std::vector<double> ttft_ms;        // kept samples (counted, after warmup), sorted ascending
  std::vector<double> tpot_ms;        // idem, requests with more than one output token
  std::vector<io::StepRecord> steps;  // every engine step of every server, in time order
  std::vector<io::UsageSample> usage;  // every kUsageIntervalS of simulated time, and at the end
};

// The usage sampler's interval in the GUI's runs (simulated seconds).
inline constexpr double kUsageIntervalS = 1.0;

using RunPtr = std::shared_ptr<const RunData>;

// Runs one job on the calling thread; throws InputError when the scenario does not decode or
// cannot run, and cluster::RunCancelled when `stop` is requested during the run (checked every
// few thousand events). `on_progress` (optional) sees the simulated time every usage sample.
RunPtr run_job(const RunJob& job, std::stop_token stop = {},
               const std::function<void(double simulated_s)>& on_progress = {});

// A tier variant of a scenario: a name and the overrides that make it.
using TierVariant = planner::Variant;

// The planner's KV-tier variants (planner::default_variants, as `kvsim compare` runs them)
// without the no-reuse baseline: the GPU's prefix cache alone, native offloading to 64 GiB of
// host DRAM per server, and the network NVMe store (8 TB) when the hardware has one and every
// server a NIC.
std::vector<TierVariant> tier_variants(const scenario::Scenario& sc);

// The usage samples as chart lines of at most `max_points` points. KV held: GPU and offload
// tiers in GB (1e9 bytes), by kind, the GPU first; every n-th sample and the last. Links: per
// link kind the busier direction's utilisation in percent, each point the interval-weighted
// mean of a group of n consecutive samples, at the group's last time.
struct UsageLine {
  std::string name;  // "gpu", "host_dram", ...; "pcie", "nic", ...
  std::vector<std::pair<double, double>> points;  // (simulated s, value)
};
std::vector<UsageLine> tier_usage_lines(const std::vector<io::UsageSample>& usage,
                                        std::size_t max_points = 500);
std::vector<UsageLine> link_usage_lines(const std::vector<io::UsageSample>& usage,
                                        std::size_t max_points = 500);

// Empirical CDF of sorted samples as (value, fraction <= value) steps, at most `max_points`
// (evenly spaced in rank; the last sample always kept).
std::vector<std::pair<double, double>> cdf_points(const std::vector<double>& sorted,
                                                  std::size_t max_points = 400);

// Every n-th step so that at most `max_points` remain (the last kept).
std::vector<io::StepRecord> thin_steps(const std::vector<io::StepRecord>& steps,
                                       std::size_t max_points = 1500);

// The queues and GPU KV usage of all engines over time: at each step, the sums of the latest
// running and waiting counts of every engine and the mean of their latest KV usage (fraction),
// thinned to at most `max_points` steps (the last kept).
struct QueuePoint {
  double time_s = 0;
  int running = 0;
  int waiting = 0;
  double kv_usage = 0;
};
std::vector<QueuePoint> queue_series(const std::vector<io::StepRecord>& steps,
                                     std::size_t max_points = 1500);

// Values of a what-if range: "2, 4, 8" or "2:16:4" (from:to:count, evenly spaced, integers
// rounded when `integer`). Throws InputError on anything else.
std::vector<std::string> parse_values(const std::string& text, bool integer);

}  // namespace kvsim::gui

namespace kvsim::gui {

// The scenario as written, as one job.
RunJob single_job(const std::string& text, const std::string& display_name,
                  const scenario::LoadOptions& options, const std::string& label);

// A what-if sweep: every tier variant of `sc` (tier_variants) at every value of `knob`, variants
// outer. Each value is checked by decoding the scenario with it; throws InputError naming the
// first value the decoder rejects.
std::vector<RunJob> sweep_jobs(const std::string& text, const std::string& display_name,
                               const scenario::LoadOptions& options, const scenario::Scenario& sc,
                               const std::string& knob, const std::vector<std::string>& values);

}  // namespace kvsim::gui
