#include "sim/planner/sweep.hpp"

#include <exception>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "sim/core/error.hpp"
#include "sim/io/summary.hpp"
#include "sim/planner/parallel.hpp"
#include "sim/planner/run_key.hpp"
#include "sim/cluster/simulation.hpp"

namespace kvsim::planner {
namespace {

std::string describe_point(const SweepSpec& spec, const SweepPoint& p) {
  std::string s = "run " + std::to_string(p.index) + " (" + spec.scenarios[p.scenario].file;
  for (const auto& o : p.overrides) s += ", " + o.path + "=" + o.value;
  if (spec.repetitions > 1) s += ", repetition " + std::to_string(p.repetition);
  return s + ")";
}

}  // namespace

PlannedRun plan_run(const std::string& file, const scenario::Scenario& loaded,
                    const std::vector<scenario::Override>& overrides,
                    std::optional<std::uint64_t> root_seed, std::int64_t repetition,
                    std::optional<double> warmup_percent, const std::string& sweep,
                    std::int64_t index) {
  PlannedRun run;
  run.scenario = loaded;
  const std::uint64_t root = root_seed ? *root_seed : loaded.seed;
  const std::uint64_t seed = repetition_seed(root, static_cast<std::uint64_t>(repetition));
  if (seed != run.scenario.seed) {
    run.scenario.seed = seed;
    run.scenario.resolved_yaml = scenario::emit_scenario_yaml(run.scenario);
  }
  if (warmup_percent) {
    run.warmup_percent = *warmup_percent;
  } else if (!run.scenario.workload.warmup_percentages.empty()) {
    run.warmup_percent = run.scenario.workload.warmup_percentages.front();
  }
  nlohmann::ordered_json ov = nlohmann::ordered_json::object();
  for (const auto& o : overrides) ov[o.path] = o.value;
  run.id.run_key = run_key(run.scenario.resolved_yaml, seed);
  run.id.sweep = sweep;
  run.id.run_index = index;
  run.id.base_scenario = file;
  run.id.overrides_json = ov.dump();
  run.id.scenario_name = run.scenario.name;
  run.id.scenario_yaml = run.scenario.resolved_yaml;
  run.id.seed = seed;
  run.point.index = index;
  run.point.overrides = overrides;
  run.point.repetition = repetition;
  return run;
}

std::vector<PlannedRun> plan_runs(const SweepSpec& spec, const SweepOptions& options) {
  std::vector<PlannedRun> out;
  std::map<std::string, std::int64_t> first_of_key;
  // Loads once per distinct (scenario, overrides); repetitions only change the seed.
  const scenario::Scenario* last = nullptr;
  std::size_t last_scenario = 0;
  std::vector<scenario::Override> last_overrides;
  scenario::Scenario loaded;
  for (auto& point : expand(spec)) {
    if (!options.shard.holds(point.index)) continue;
    scenario::LoadOptions lo;
    lo.overrides = point.overrides;
    lo.overrides.insert(lo.overrides.end(), options.extra_overrides.begin(),
                        options.extra_overrides.end());
    lo.catalog_dir = options.catalog_dir;
    lo.fast_paths = options.fast_paths;
    const bool same = last != nullptr && last_scenario == point.scenario &&
                      last_overrides.size() == lo.overrides.size() &&
                      std::equal(lo.overrides.begin(), lo.overrides.end(), last_overrides.begin(),
                                 [](const scenario::Override& a, const scenario::Override& b) {
                                   return a.path == b.path && a.value == b.value;
                                 });
    if (!same) {
      try {
        loaded = scenario::load_scenario(spec.scenarios[point.scenario].file, lo);
      } catch (const InputError& e) {
        std::vector<Diagnostic> ds = e.diagnostics();
        ds.push_back(Diagnostic{spec.source_file, 0, 0, "", "in " + describe_point(spec, point)});
        throw InputError(std::move(ds));
      }
      last = &loaded;
      last_scenario = point.scenario;
      last_overrides = lo.overrides;
    }
    PlannedRun run = plan_run(spec.scenarios[point.scenario].file, loaded, lo.overrides, spec.seed,
                              point.repetition,
                              spec.warmup_set ? std::optional<double>(spec.warmup_percent)
                                              : std::nullopt,
                              spec.name, point.index);
    const auto [it, inserted] = first_of_key.emplace(run.id.run_key, point.index);
    if (!inserted) run.duplicate_of = it->second;
    run.point = std::move(point);
    out.push_back(std::move(run));
  }
  return out;
}

void SweepReport::count(const RunOutcome& o) {
  switch (o.kind) {
    case RunOutcome::Kind::kDoneBefore:
      ++already_done;
      break;
    case RunOutcome::Kind::kFailedBefore:
      ++skipped_failed;
      break;
    case RunOutcome::Kind::kInFlight:
      ++in_flight;
      break;
    case RunOutcome::Kind::kRanDone:
      ++ran_done;
      break;
    case RunOutcome::Kind::kRanFailed:
      ++ran_failed;
      break;
    case RunOutcome::Kind::kDiscarded:
      ++discarded;
      break;
  }
  if (!o.message.empty()) messages.push_back(o.message);
}

RunOutcome execute_run(ResultsDb& db, const PlannedRun& run, const SweepOptions& options) {
  RunOutcome out;
  const Claim c = db.claim(run.id, options.policy);
  if (c.outcome == ClaimOutcome::kDone) {
    out.kind = RunOutcome::Kind::kDoneBefore;
    return out;
  }
  if (c.outcome == ClaimOutcome::kFailed) {
    out.kind = RunOutcome::Kind::kFailedBefore;
    return out;
  }
  if (c.outcome == ClaimOutcome::kInFlight) {
    out.kind = RunOutcome::Kind::kInFlight;
    out.message = "run " + std::to_string(run.point.index) + " is running in " + c.owner;
    return out;
  }
  std::string error;
  std::optional<cluster::RunResult> result;
  std::optional<io::Summary> summary;
  std::vector<io::StepRecord> steps;
  try {
    cluster::Simulation sim(run.scenario);
    cluster::StepCallback on_step;
    if (options.store_timeseries)
      on_step = [&steps](const io::StepRecord& r) { steps.push_back(r); };
    result = sim.run(on_step);
    summary = io::summarize(result->requests, result->info, run.warmup_percent);
  } catch (const InputError& e) {
    error = e.what();
  } catch (const InternalError& e) {
    error = std::string("internal error: ") + e.what();
  }
  // Database errors from here on reach the caller.
  bool recorded = false;
  if (error.empty()) {
    recorded = db.record_done(c.run_id, *summary, result->info,
                              options.store_requests ? &result->requests : nullptr,
                              options.store_timeseries ? &steps : nullptr);
    out.kind = recorded ? RunOutcome::Kind::kRanDone : RunOutcome::Kind::kDiscarded;
  } else {
    recorded = db.record_failed(c.run_id, error);
    out.kind = recorded ? RunOutcome::Kind::kRanFailed : RunOutcome::Kind::kDiscarded;
    if (recorded) out.message = "run " + std::to_string(run.point.index) + " failed: " + error;
  }
  return out;
}

SweepReport run_sweep(const SweepSpec& spec, const std::vector<PlannedRun>& runs,
                      const SweepOptions& options, Progress* progress) {
  SweepReport report;
  report.sweep_runs = count_points(spec);
  report.shard_runs = static_cast<std::int64_t>(runs.size());
  ResultsDb db(options.db_path, ResultsDb::Mode::kCreate);

  std::mutex report_mu;
  // A database error stops handing out runs; the ones in flight finish (parallel_for).
  const auto finish = [progress] {
    if (progress != nullptr) progress->finish();
  };
  try {
    parallel_for(runs.size(), options.jobs, [&](std::size_t i) {
      const PlannedRun& run = runs[i];
      bool ran = false;
      bool failed = false;
      if (run.duplicate_of >= 0) {
        const std::lock_guard<std::mutex> lock(report_mu);
        ++report.duplicates;
      } else {
        const RunOutcome o = execute_run(db, run, options);
        ran = o.ran();
        failed = o.kind == RunOutcome::Kind::kRanFailed;
        const std::lock_guard<std::mutex> lock(report_mu);
        report.count(o);
      }
      if (progress != nullptr) progress->advance(ran, failed);
    });
  } catch (...) {
    finish();
    throw;
  }
  finish();
  return report;
}

}  // namespace kvsim::planner
