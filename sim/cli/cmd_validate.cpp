// kvsim validate: simulate the workload a replay measured and report measured against
// predicted (validation/src/report.hpp).
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/cli/command.hpp"
#include "sim/cluster/simulation.hpp"
#include "sim/core/error.hpp"
#include "sim/io/atomic_file.hpp"
#include "sim/workload/replayed_driver.hpp"
#include "validation/src/probe.hpp"
#include "validation/src/replay_db.hpp"
#include "validation/src/replay_file.hpp"
#include "validation/src/replayed_workload.hpp"
#include "validation/src/report.hpp"

namespace kvsim::cli {
namespace {

struct ValidateOptions {
  std::string measured;
  std::string scenario;
  std::string tolerance;
  std::string html;
  std::string json_out;
  std::string markdown_out;
  std::string format = "table";
  bool regenerate = false;
  std::string db;
  std::string noise_from;  // a kvsim probe file of the same machine
  double noise_k = 2;
};

int cmd_validate(const ValidateOptions& o, const CommonOptions& common) {
  auto tolerances = validation::parse_tolerances(o.tolerance);
  // Tolerances no tighter than the machine's run-to-run noise, measured by the probe's repeats.
  std::vector<std::string> noise_notes;
  if (!o.noise_from.empty()) {
    noise_notes = validation::widen_for_noise(
        tolerances, validation::probe_noise(validation::load_probe(o.noise_from)), o.noise_k);
  }
  const validation::ReplayRun run = validation::load_replay(o.measured);
  auto lo = load_options(common);
  // The replay's seed made its conversations and client streams: simulate with the same one.
  lo.overrides.push_back({"seed", std::to_string(run.seed)});
  const auto sc = scenario::load_scenario(o.scenario, lo);
  // By default the simulator is driven by the replayed requests themselves (same clients, order,
  // token counts and think times); --regenerate lets the scenario's client model generate them.
  std::vector<std::string> workload_notes;
  std::unique_ptr<workload::Driver> driver;
  if (!o.regenerate) {
    auto rebuilt = validation::rebuild_workload(run, sc);
    workload_notes = std::move(rebuilt.notes);
    driver = std::make_unique<workload::ReplayedDriver>(std::move(rebuilt.requests), rebuilt.mode,
                                                        std::vector<std::string>{});
  }
  cluster::Simulation sim(sc, std::move(driver));
  const auto predicted = sim.run();
  auto comparison = validation::compare(run, predicted.requests, tolerances);
  comparison.notes.insert(comparison.notes.end(), workload_notes.begin(), workload_notes.end());
  comparison.notes.insert(comparison.notes.end(), noise_notes.begin(), noise_notes.end());
  if (o.regenerate) {
    comparison.notes.push_back("predicted with the scenario's own client model (--regenerate)");
  }
  if (comparison.scenario_name.empty() || comparison.scenario_name != sc.name) {
    comparison.notes.push_back("replayed scenario '" + run.scenario_name + "', predicted with '" +
                               sc.name + "'");
    comparison.scenario_name = sc.name;
  }
  if (!o.html.empty()) {
    io::AtomicFile f(o.html);
    f.stream() << validation::comparison_html(comparison);
    f.commit();
  }
  if (!o.json_out.empty()) {
    io::AtomicFile f(o.json_out);
    f.stream() << validation::comparison_json(comparison);
    f.commit();
  }
  if (!o.markdown_out.empty()) {
    io::AtomicFile f(o.markdown_out);
    f.stream() << validation::comparison_markdown(comparison);
    f.commit();
  }
  if (!o.db.empty()) {
    const auto rows =
        validation::record_validation(o.db, run, sc, predicted.requests, predicted.info,
                                      o.regenerate ? "regenerated" : "replayed");
    std::cerr << "results database " << o.db << ": measured run " << rows.measured_run_key
              << (rows.measured_added ? " added" : " already there") << ", prediction "
              << rows.predicted_run_key << (rows.predicted_added ? " added" : " already there")
              << '\n';
  }
  std::cout << (o.format == "json" ? validation::comparison_json(comparison)
                                   : validation::comparison_table(comparison));
  return comparison.exceeded() ? kExitCheckFailed : 0;
}

Command add_validate(CLI::App& app, CommonOptions& common) {
  auto o = std::make_shared<ValidateOptions>();
  auto* cmd = app.add_subcommand(
      "validate",
      "Simulate a replayed workload and report measured against predicted; exit 1 when a "
      "tolerance is exceeded");
  cmd->add_option("--measured", o->measured, "Replay file written by kvsim replay")
      ->required()
      ->type_name("FILE");
  cmd->add_option("--scenario", o->scenario, "Scenario that predicts the deployment")
      ->required()
      ->type_name("FILE");
  cmd->add_option("--tolerance", o->tolerance,
                  "Bounds on |error|, e.g. ttft_mean=30%,tpot_p50=20%,cache_hit_rate=5 (points); "
                  "per request: ttft_request_median_abs_rel=30% (a maximum), ttft_request_corr=0.5 "
                  "(a minimum Pearson correlation), likewise tpot_, latency_")
      ->type_name("LIST");
  cmd->add_option("--noise-from", o->noise_from,
                  "A kvsim probe file of the same machine: each timing tolerance becomes at least K "
                  "x the run-to-run spread of the probe's repeats (stated in the report)")
      ->type_name("PROBE.json");
  cmd->add_option("--noise-k", o->noise_k, "K of --noise-from")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  cmd->add_flag("--regenerate", o->regenerate,
                "Let the scenario's client model generate the workload (same seed) instead of "
                "replaying the measured requests, order and token counts");
  cmd->add_option("--format", o->format, "Output on the terminal")
      ->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--html", o->html,
                  "Write an HTML report with CDF plots and per-request scatter plots to FILE")
      ->type_name("FILE");
  cmd->add_option("--json-out", o->json_out, "Write the comparison as JSON to FILE")
      ->type_name("FILE");
  cmd->add_option("--db", o->db,
                  "Record the measured run (unless there already) and the prediction in a results "
                  "database (docs/sweeps.md)")
      ->type_name("FILE");
  cmd->add_option("--markdown-out", o->markdown_out,
                  "Write the comparison as a Markdown table to FILE")
      ->type_name("FILE");
  add_common(cmd, common);
  return {cmd, [o, &common] { return cmd_validate(*o, common); }};
}

const CommandRegistrar validate_registrar(62, add_validate);

}  // namespace
}  // namespace kvsim::cli
