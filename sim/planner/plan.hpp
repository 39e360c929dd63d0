#pragma once
// Capacity planning over a scenario's KV-tier variants: for each variant, the largest load that
// meets an SLO (capacity_search.hpp) with its binding SLO term and its cost
// (cost.hpp); or, with a target load, the cheapest hardware option that carries it. Every probe
// runs `seeds` Simulations with seeds scenario.seed + 0 .. seeds - 1, at most `jobs` at once,
// each on its own thread. Loads are integers in the unit the load knob names.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/io/json_writer.hpp"
#include "sim/planner/capacity_search.hpp"
#include "sim/planner/cost.hpp"
#include "sim/planner/slo.hpp"
#include "sim/planner/variants.hpp"
#include "sim/scenario/scenario.hpp"

namespace kvsim::planner {

// What "load" means for a scenario and how a load becomes overrides.
//  - multi-turn workloads: the benchmark's clients (-p). max_active_conversations (-k), the
//    generated dataset's num_conversations and max_num_requests scale with it in proportion to
//    the scenario's own values, so every client keeps the same share of conversations and the
//    run the same length per client (the benchmark splits -k as k // p per client).
//  - trace replay: the request rate in percent of the trace's own (100 = as recorded; the
//    trace's time_scale becomes time_scale x 100 / load).
//  - `path` (--load PATH): the integer scenario value at that dotted path, set as it is.
struct LoadKnob {
  std::string name;         // "clients", "rate_percent", or the path
  std::string description;  // for the report
  std::int64_t base = 1;    // the scenario's own load
  std::function<std::vector<scenario::Override>(std::int64_t load)> overrides;
};
LoadKnob make_load_knob(const scenario::Scenario& sc, const std::string& path = "");

// A deployment option for --target-load: the number of GPUs and the first KV tier's capacity.
struct HardwareOption {
  std::string name;  // "8 GPUs (2 x 4), 32 GiB DRAM/server"
  std::vector<scenario::Override> overrides;
};
// The ordered options for one variant scenario (one server group): GPU totals 1, 2, 4, ... up
// to max_gpus (GPUs per server as the scenario has them, more servers beyond that) crossed with
// the first KV tier's capacity (host_dram / local_nvme: 16 GiB .. 256 GiB per server within
// the host's DRAM; remote: 0.5 TB .. 8 TB). Throws InputError for several server groups.
std::vector<HardwareOption> hardware_options(const scenario::Scenario& variant, int max_gpus);

struct PlanOptions {
  std::string scenario_path;
  scenario::LoadOptions load;  // the user's --set overrides and catalog
  Slo slo;
  std::vector<Variant> variants;  // empty: default_variants()
  int seeds = 2;
  Aggregate aggregate = Aggregate::kMean;
  std::string load_path;                    // --load PATH; empty: the workload's knob
  std::int64_t start = 0;                   // first load probed; 0: the scenario's own load
  std::int64_t max_load = 1024;             // the search does not go above it
  std::optional<std::int64_t> target_load;  // find the cheapest hardware carrying this load
  int max_gpus = 16;                        // largest GPU count tried for --target-load
  int jobs = 1;                             // Simulations at once
  Prices prices;
  std::function<void(const std::string&)> progress;  // one line per finished probe (may be empty)
};

// One variant (max-load mode) or one variant's cheapest carrying option (target-load mode).
struct OptionResult {
  std::string variant;
  std::string description;
  std::string hardware;        // the hardware option (target-load mode; else as the scenario says)
  SearchResult search;         // max-load mode: every probe
  std::vector<Probe> options;  // target-load mode: a probe per hardware option tried, in order
  std::vector<std::string> option_names;
  bool feasible = false;  // max load >= 1, or an option carried the target load
  std::int64_t load = 0;  // the max load, or the target load
  Probe at_load;          // the aggregated probe at `load` (empty metrics when infeasible)
  std::string binding;    // the SLO term that fails first beyond the max load
  HardwareBill bill;
  CostBreakdown cost;
  double usd_per_m_tokens = 0;
  double users_per_usd_hour = 0;
};

struct PlanResult {
  std::string scenario_name;
  LoadKnob knob;
  Slo slo;
  int seeds = 0;
  Aggregate aggregate = Aggregate::kMean;
  std::optional<std::int64_t> target_load;
  std::vector<OptionResult> options;  // ranked: users per $/h (max-load mode) or $/h (target)
};

PlanResult run_plan(const PlanOptions& options);

// The ranked table: option, max load, binding constraint, req/s, TTFT p90, TPOT p90, $/h,
// $/M output tokens, users per $/h, then notes (monotonicity violations, capped searches).
std::string format_plan_table(const PlanResult& plan);

// The plan as a JSON document (docs/results.md): the question (scenario, SLO, load knob,
// seeds, aggregate, target load) and the ranked options with their answer (load, binding
// term, metrics and SLO verdict at that load), cost and every probe made.
io::Json plan_json(const PlanResult& plan);

}  // namespace kvsim::planner
