#include "kvsim/planner/sweep.hpp"

#include <atomic>
#include <exception>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "kvsim/core/error.hpp"
#include "kvsim/io/summary.hpp"
#include "kvsim/planner/run_key.hpp"
#include "kvsim/scenario/simulation.hpp"

namespace kvsim::planner {
namespace {

std::string describe_point(const SweepSpec& spec, const SweepPoint& p) {
  std::string s = "run " + std::to_string(p.index) + " (" + spec.scenarios[p.scenario].file;
  for (const auto& o : p.overrides) s += ", " + o.path + "=" + o.value;
  if (spec.repetitions > 1) s += ", repetition " + std::to_string(p.repetition);
  return s + ")";
}

}  // namespace

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
    PlannedRun run;
    run.scenario = loaded;
    const std::uint64_t root = spec.seed ? *spec.seed : loaded.seed;
    const std::uint64_t seed = repetition_seed(root, static_cast<std::uint64_t>(point.repetition));
    if (seed != run.scenario.seed) {
      run.scenario.seed = seed;
      run.scenario.resolved_yaml = scenario::emit_scenario_yaml(run.scenario);
    }
    if (spec.warmup_set) {
      run.warmup_percent = spec.warmup_percent;
    } else if (!run.scenario.workload.warmup_percentages.empty()) {
      run.warmup_percent = run.scenario.workload.warmup_percentages.front();
    }
    nlohmann::ordered_json ov = nlohmann::ordered_json::object();
    for (const auto& o : lo.overrides) ov[o.path] = o.value;
    run.id.run_key = run_key(run.scenario.resolved_yaml, seed);
    run.id.sweep = spec.name;
    run.id.run_index = point.index;
    run.id.base_scenario = spec.scenarios[point.scenario].file;
    run.id.overrides_json = ov.dump();
    run.id.scenario_name = run.scenario.name;
    run.id.scenario_yaml = run.scenario.resolved_yaml;
    run.id.seed = seed;
    const auto [it, inserted] = first_of_key.emplace(run.id.run_key, point.index);
    if (!inserted) run.duplicate_of = it->second;
    run.point = std::move(point);
    out.push_back(std::move(run));
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
  std::atomic<std::size_t> next{0};
  std::exception_ptr fatal;
  const auto worker = [&] {
    while (true) {
      const std::size_t i = next.fetch_add(1);
      if (i >= runs.size()) return;
      const PlannedRun& run = runs[i];
      bool ran = false;
      bool failed = false;
      try {
        if (run.duplicate_of >= 0) {
          const std::lock_guard<std::mutex> lock(report_mu);
          ++report.duplicates;
        } else {
          const Claim c = db.claim(run.id, options.policy);
          if (c.outcome == ClaimOutcome::kDone) {
            const std::lock_guard<std::mutex> lock(report_mu);
            ++report.already_done;
          } else if (c.outcome == ClaimOutcome::kFailed) {
            const std::lock_guard<std::mutex> lock(report_mu);
            ++report.skipped_failed;
          } else if (c.outcome == ClaimOutcome::kInFlight) {
            const std::lock_guard<std::mutex> lock(report_mu);
            ++report.in_flight;
            report.messages.push_back("run " + std::to_string(run.point.index) + " is running in " +
                                      c.owner);
          } else {
            ran = true;
            std::string error;
            bool recorded = false;
            std::optional<scenario::RunResult> result;
            std::optional<io::Summary> summary;
            std::vector<io::StepRecord> steps;
            try {
              scenario::Simulation sim(run.scenario);
              scenario::StepCallback on_step;
              if (options.store_timeseries)
                on_step = [&steps](const io::StepRecord& r) { steps.push_back(r); };
              result = sim.run(on_step);
              summary = io::summarize(result->requests, result->info, run.warmup_percent);
            } catch (const InputError& e) {
              error = e.what();
            } catch (const InternalError& e) {
              error = std::string("internal error: ") + e.what();
            }
            // Database errors from here on are fatal to the sweep (caught below).
            if (error.empty()) {
              recorded = db.record_done(c.run_id, *summary, result->info,
                                        options.store_requests ? &result->requests : nullptr,
                                        options.store_timeseries ? &steps : nullptr);
            } else {
              failed = true;
              recorded = db.record_failed(c.run_id, error);
            }
            const std::lock_guard<std::mutex> lock(report_mu);
            if (!recorded) {
              ++report.discarded;
            } else if (failed) {
              ++report.ran_failed;
              report.messages.push_back("run " + std::to_string(run.point.index) +
                                        " failed: " + error);
            } else {
              ++report.ran_done;
            }
          }
        }
      } catch (...) {
        // A database error: stop handing out runs; the ones in flight finish.
        const std::lock_guard<std::mutex> lock(report_mu);
        if (!fatal) fatal = std::current_exception();
        next.store(runs.size());
        return;
      }
      if (progress != nullptr) progress->advance(ran, failed);
    }
  };
  int jobs =
      options.jobs > 0 ? options.jobs : static_cast<int>(std::thread::hardware_concurrency());
  jobs = std::max(1, std::min<int>(jobs, static_cast<int>(std::max<std::size_t>(runs.size(), 1))));
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(jobs));
  for (int t = 0; t < jobs; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  if (progress != nullptr) progress->finish();
  if (fatal) std::rethrow_exception(fatal);
  return report;
}

}  // namespace kvsim::planner
