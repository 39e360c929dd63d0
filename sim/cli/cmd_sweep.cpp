// kvsim sweep: expand a sweep file into runs, run them in parallel (or only this shard's) and
// write each into the SQLite results database; re-running skips what is done.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "sim/cli/command.hpp"
#include "sim/planner/progress.hpp"
#include "sim/planner/results_db.hpp"
#include "sim/planner/shard.hpp"
#include "sim/planner/sweep.hpp"
#include "sim/planner/sweep_spec.hpp"

namespace kvsim::cli {
namespace {

struct SweepCliOptions {
  std::string sweep_file;
  std::string db = "kvsim.db";
  int jobs = 0;
  std::optional<std::string> shard;
  std::optional<std::int64_t> shard_count;
  bool dry_run = false;
  bool retry_failed = false;
  bool rerun_running = false;
  bool store_requests = false;
  bool store_timeseries = false;
  std::string progress = "auto";
};

int dry_run(const planner::SweepSpec& spec, const std::vector<planner::PlannedRun>& runs,
            const planner::SweepOptions& so) {
  std::map<std::string, std::string> status;
  if (std::filesystem::exists(so.db_path)) {
    planner::ResultsDb db(so.db_path, planner::ResultsDb::Mode::kExisting);
    std::vector<std::string> keys;
    keys.reserve(runs.size());
    for (const auto& r : runs) keys.push_back(r.id.run_key);
    status = db.statuses(keys);
  }
  std::cout << "index  run_key       status   seed  scenario  overrides\n";
  std::int64_t todo = 0;
  for (const auto& r : runs) {
    const auto it = status.find(r.id.run_key);
    std::string st = it == status.end() ? "new" : it->second;
    if (r.duplicate_of >= 0) st = "dup-of-" + std::to_string(r.duplicate_of);
    if (st == "new" || st == "running") ++todo;
    std::cout << r.point.index << "  " << r.id.run_key.substr(0, 12) << "  " << st << "  "
              << r.id.seed << "  " << r.id.base_scenario << "  " << r.id.overrides_json << '\n';
  }
  std::cout << "sweep " << spec.name << ": " << runs.size() << " of " << planner::count_points(spec)
            << " runs in " << so.shard.source << " (" << so.shard.index << "/" << so.shard.count
            << "); " << todo << " to run into " << so.db_path << '\n';
  return 0;
}

int cmd_sweep(const SweepCliOptions& o, const CommonOptions& co) {
  const auto spec = planner::load_sweep(o.sweep_file);
  planner::SweepOptions so;
  so.db_path = o.db;
  so.jobs = o.jobs;
  so.shard = planner::resolve_shard(o.shard, o.shard_count,
                                    [](const char* name) { return std::getenv(name); });
  so.policy.retry_failed = o.retry_failed;
  so.policy.rerun_running = o.rerun_running;
  so.store_requests = o.store_requests;
  so.store_timeseries = o.store_timeseries;
  so.catalog_dir = co.catalog_dir;
  so.fast_paths = co.fast_paths;
  for (const auto& s : co.sets) so.extra_overrides.push_back(scenario::parse_override(s));
  const auto runs = planner::plan_runs(spec, so);
  if (o.dry_run) return dry_run(spec, runs, so);

  const bool tty = isatty(fileno(stderr)) != 0;
  std::unique_ptr<planner::Progress> progress;
  if (o.progress != "none") {
    const bool bar = o.progress == "bar" || (o.progress == "auto" && tty);
    progress =
        std::make_unique<planner::Progress>(std::cerr, bar, static_cast<std::int64_t>(runs.size()));
  }
  const auto report = planner::run_sweep(spec, runs, so, progress.get());
  for (const auto& m : report.messages) std::cerr << "kvsim sweep: " << m << '\n';
  std::cout << "sweep " << spec.name << " into " << so.db_path << ": " << report.shard_runs
            << " of " << report.sweep_runs << " runs";
  if (so.shard.count > 1)
    std::cout << " (shard " << so.shard.index << "/" << so.shard.count << ", " << so.shard.source
              << ")";
  std::cout << "; ran " << report.ran_done << " done, " << report.ran_failed << " failed; skipped "
            << report.already_done << " already done, " << report.skipped_failed
            << " failed before, " << report.in_flight << " running elsewhere, " << report.duplicates
            << " duplicates";
  if (report.discarded > 0) std::cout << "; " << report.discarded << " finished elsewhere first";
  std::cout << '\n';
  if (report.in_flight > 0) {
    std::cerr << "kvsim sweep: " << report.in_flight
              << " runs are marked running by other processes; re-run when they end (or with "
                 "--rerun-running if "
                 "they died on another host)\n";
  }
  if (report.skipped_failed > 0)
    std::cerr << "kvsim sweep: retry failed runs with --retry-failed\n";
  return report.ran_failed + report.skipped_failed > 0 ? kExitCheckFailed : 0;
}

Command add_sweep(CLI::App& app, CommonOptions& common) {
  auto o = std::make_shared<SweepCliOptions>();
  auto* cmd = app.add_subcommand(
      "sweep", "Run a sweep of scenarios into a SQLite results database (resumable)");
  cmd->add_option("sweep", o->sweep_file, "Sweep YAML file (docs/sweeps.md)")
      ->required()
      ->type_name("FILE");
  cmd->add_option("-j,--jobs", o->jobs, "Runs in parallel (default: the number of cores)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--db", o->db, "Results database (created if missing; default kvsim.db)")
      ->type_name("FILE");
  cmd->add_option(
         "--shard", o->shard,
         "Run only shard K of N (K from 0): the runs whose index mod N is K. Default: from "
         "SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX, else the whole sweep")
      ->type_name("K/N");
  cmd->add_option(
         "--shard-count", o->shard_count,
         "Number of shards when the index comes from the environment (Kubernetes: the Job's "
         "completions; also KVSIM_SHARD_COUNT)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  cmd->add_flag("--dry-run", o->dry_run,
                "List the runs (index, key, status in the database) without running");
  cmd->add_flag("--retry-failed", o->retry_failed, "Run again the runs that failed before");
  cmd->add_flag(
      "--rerun-running", o->rerun_running,
      "Take over runs left 'running' by processes on other hosts (those on this host that died are "
      "always re-run)");
  cmd->add_flag("--store-requests", o->store_requests,
                "Also store every request record (requests table)");
  cmd->add_flag("--store-timeseries", o->store_timeseries,
                "Also store every engine step (timeseries table)");
  cmd->add_option("--progress", o->progress,
                  "Progress display: auto (a bar on a terminal, lines otherwise), bar, lines, none")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}));
  add_common(cmd, common);
  return {cmd, [o, &common] { return cmd_sweep(*o, common); }};
}

const CommandRegistrar registrar(41, add_sweep);

}  // namespace
}  // namespace kvsim::cli
