#pragma once
// Regression gates: a plan file lists scenarios (each with optional --set overrides) and SLOs;
// run_check runs every scenario (in parallel, each its own Simulation) and checks every SLO term
// on its summary. write_junit gives one JUnit testcase per scenario x SLO term, for CI systems.
//
// Plan file (paths relative to the plan file):
//   name: regression
//   seeds: 1                       # optional: seeds per scenario, metrics averaged over them
//   slo: "ttft_p90<=2s"            # optional: the default SLO of entries without their own
//   scenarios:
//     - name: example              # optional: default the file's stem
//       file: ../examples/rtx4090-llama3.1-8b-multiturn.yaml
//       set: [engine.max_num_seqs=128]   # optional
//       slo: "ttft_p90<=1s,request_throughput>=2"
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "sim/io/json_writer.hpp"
#include "sim/planner/slo.hpp"
#include "sim/scenario/scenario.hpp"

namespace kvsim::planner {

struct PlanEntry {
  std::string name;
  std::string file;  // resolved against the plan file's folder
  std::vector<scenario::Override> overrides;
  Slo slo;
};

struct PlanFile {
  std::string name;
  std::string path;
  int seeds = 1;
  std::vector<PlanEntry> entries;
};

// Reads and validates a plan file (every entry's scenario is loaded once, so a bad scenario is
// reported before anything runs); throws InputError with file:line:col.
PlanFile load_plan_file(const std::string& path, const scenario::LoadOptions& base = {});

struct EntryResult {
  const PlanEntry* entry = nullptr;
  SloResult slo;
  MetricValues metrics;
};

struct CheckResult {
  std::vector<EntryResult> entries;  // in the plan's order
  int terms = 0;
  int failures = 0;
  bool pass() const { return failures == 0; }
};

// Runs every entry, at most `jobs` Simulations at once. `base` carries the catalog and any
// extra --set overrides applied before each entry's own. `progress` (optional) gets one line
// per finished entry.
CheckResult run_check(const PlanFile& plan, const scenario::LoadOptions& base, int jobs,
                      const std::function<void(const std::string&)>& progress = {});

// "PASS example ttft_ms_p90 = 410 ms (<= 1000 ms)" lines and a closing count.
std::string format_check(const CheckResult& result);

// One SLO term's verdict as JSON: term (as written), metric, op, threshold and value (in the
// metric's unit, null when NaN), pass, slack (relative; null when the value is NaN).
io::Json term_result_json(const TermResult& t);

// The check as a JSON document (docs/results.md): the plan's name and file, pass, counts, and
// per scenario its file, pass, and every term's verdict.
io::Json check_json(const PlanFile& plan, const CheckResult& result);

// JUnit XML: <testsuites> with one <testsuite> named after the plan and one <testcase> per
// scenario x SLO term (classname = plan.scenario, name = the term), <failure> when missed.
void write_junit(std::ostream& os, const PlanFile& plan, const CheckResult& result);

}  // namespace kvsim::planner
