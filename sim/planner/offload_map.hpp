#pragma once
// Break-even maps (`kvsim map`): a scenario's KV-tier variants run over a grid of two axes of
// scenario values, and at every cell each variant's gain over the others.
//
// An axis is one or more terms varied together (zipped; all with the same number of points):
//   PATH=FROM:TO:COUNT       COUNT values evenly spaced from FROM to TO
//   PATH=FROM:TO:COUNT:log   COUNT values evenly spaced in log(value)
//   PATH=V1,V2,...           the values as listed
// FROM and TO may carry a unit (16GiB:256GiB, 10GB/s:50GB/s; the same unit at both ends); when
// both are written as integers every value is rounded to an integer (a range that rounds two
// points to the same integer is refused). PATH is any scenario path (`--set`'s), or `users`: the
// planner's load knob (plan.hpp: the benchmark's clients, with active conversations and the
// dataset scaled in proportion; a trace's rate in percent). A term written VARIANT:PATH=...
// applies to that variant only (dram:kv_offload.tiers.0.capacity=8GiB:256GiB:6:log varies the
// DRAM tier of the dram variant, which the other variants do not have).
//
// Each cell runs every variant with `seeds` seeds (repetition seeds of the scenario's, as a sweep
// makes them) through the sweep machinery (sweep.hpp): every run is a row of the results
// database keyed by its resolved scenario and seed, so a rerun finishes only the runs not done and
// shards split the runs over a cluster's tasks. The value of a variant at a cell is the mean of
// the metric over the seeds; with an SLO it is instead the most users that meet the SLO
// (capacity_search.hpp over the `users` knob, seeds aggregated as `aggregate` says).
//
// The gain of variant j over variant i at a cell is value_j / value_i for a metric where more is
// better (rates, counts, the most users) and value_i / value_j for one where less is better (times),
// so a gain of 2 always reads "twice as good".
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/planner/capacity_search.hpp"
#include "sim/planner/plan.hpp"
#include "sim/planner/progress.hpp"
#include "sim/planner/slo.hpp"
#include "sim/planner/sweep.hpp"
#include "sim/planner/variants.hpp"
#include "sim/scenario/scenario.hpp"

namespace kvsim::planner {

// One term of an axis as written, parsed.
struct AxisTerm {
  std::string text;     // as written
  std::string variant;  // the variant it applies to; empty: every variant
  std::string path;     // scenario path, or "users"
  std::vector<std::string> values;  // value text per point, with the unit
  std::vector<double> numbers;      // the number of each value (NaN where not numeric)
  bool log = false;                 // log-spaced range
};

// Parses one term; throws InputError whose message starts with `flag` (e.g. "--x").
AxisTerm parse_axis_term(const std::string& text, const std::string& flag);

// An axis: its zipped terms resolved into overrides per point.
struct MapAxis {
  std::string flag;                // "--x" or "--y"
  std::vector<AxisTerm> terms;  // the first one labels the axis
  std::size_t size() const { return terms.front().values.size(); }
  // The overrides of point i for a variant: those of every term that applies to it, in order
  // (a `users` term gives the knob's overrides).
  std::vector<scenario::Override> at(std::size_t i, const std::string& variant) const;
  // Every path the axis may set.
  std::vector<std::string> paths() const;
  LoadKnob knob;
  // The first term's path, with its variant when it names one ("dram:kv_offload.tiers.0.capacity").
  std::string name() const {
    const AxisTerm& t = terms.front();
    return t.variant.empty() ? t.path : t.variant + ":" + t.path;
  }
  const std::vector<std::string>& labels() const { return terms.front().values; }
  bool log() const { return terms.front().log; }
};

// Builds an axis from its terms; `users` terms become the knob's overrides (their values must be
// positive integers). Throws InputError naming `flag` on a bad term or terms of unequal length.
MapAxis make_map_axis(const std::vector<std::string>& terms, const std::string& flag,
                      const LoadKnob& knob);

struct MapOptions {
  std::string definition;  // the command line that defines the map (for the outputs; may be empty)
  std::string scenario_path;
  scenario::LoadOptions load;  // --set overrides and the catalog
  std::vector<std::string> x;  // the x axis' terms
  std::vector<std::string> y;  // the y axis' terms
  // Variants by name from default_variants() (empty: vram-only, dram and, when the hardware has a
  // network store, nvme-net), then the custom ones; the first is the baseline of the text report.
  std::vector<std::string> variant_names;
  std::vector<Variant> custom_variants;
  std::string metric = "requests_per_sec";  // any summary metric (slo.hpp's names)
  std::optional<Slo> slo;                   // set: the value is the most users meeting it
  Aggregate aggregate = Aggregate::kMean;   // how seeds combine under an SLO
  std::int64_t max_users = 1024;            // the SLO search does not go above it
  int seeds = 1;
  SweepOptions sweep;  // results database, jobs, shard, claim policy
  // Makes the progress display for this invocation's runs (grid) or searches (SLO); may be empty.
  std::function<std::unique_ptr<Progress>(std::int64_t total)> progress;
};

// One variant at one cell.
struct VariantCell {
  std::vector<std::string> run_keys;  // grid: one per seed; SLO: every run of the search
  std::vector<double> seed_values;    // grid: the metric per seed (done seeds only)
  MetricValues mean;                  // grid: every summary figure's mean over the seeds;
                                      // SLO: the aggregated figures at the most users
  bool complete = false;              // every run it needs is done
  double value = 0;                   // the metric's mean over seeds, or the most users
  double min = 0;                     // the metric's smallest and largest seed value (grid);
  double max = 0;                     //   with an SLO both equal value
  // SLO only:
  bool capped = false;      // still meeting the SLO at max_users
  std::string binding;      // the SLO term that fails first above the answer
  std::int64_t probes = 0;  // loads probed
};

struct MapCell {
  std::size_t ix = 0;
  std::size_t iy = 0;
  std::vector<VariantCell> variants;  // in MapResult::variants order
  bool complete() const;
};

struct MapResult {
  std::string definition;  // MapOptions::definition
  std::string scenario_name;
  std::string scenario_path;
  std::string db_path;
  MapAxis x;
  MapAxis y;
  std::vector<Variant> variants;
  std::string metric;  // the summary name; "max_users" with an SLO
  bool higher_is_better = true;
  std::optional<Slo> slo;
  std::string knob;  // the users knob's name (clients, rate_percent)
  int seeds = 1;
  std::vector<MapCell> cells;  // row-major: cells[iy * x.size() + ix]
  SweepReport report;          // what this invocation ran and skipped
  std::vector<std::string> messages;  // failures, runs in flight elsewhere

  const MapCell& cell(std::size_t ix, std::size_t iy) const { return cells[iy * x.size() + ix]; }
  std::int64_t missing_cells() const;
  // Gain of variant j over variant i at a cell (see above); NaN when either is incomplete or the
  // ratio is undefined (a zero value).
  double gain(const MapCell& c, std::size_t i, std::size_t j) const;
  // The gain of variant j over i for seed s alone (grid mode; NaN otherwise).
  double seed_gain(const MapCell& c, std::size_t i, std::size_t j, std::size_t s) const;
  // How many times better a value b is than a value a: b / a, or a / b when lower is better; NaN
  // when the divisor is not positive.
  double better_ratio(double a, double b) const;
};

// Plans the map, runs this shard's runs not yet done into the results database (the SLO mode runs
// this shard's cells' searches) and reads every cell's results back. A cell another shard has not
// finished is left incomplete.
MapResult run_map(const MapOptions& options);

}  // namespace kvsim::planner
