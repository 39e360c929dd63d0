#pragma once
// Runs a sweep: resolves each run of the shard (base scenario + overrides + seed) into its
// scenario and run key, then simulates the runs not yet done on N worker threads, each with
// its own cluster::Simulation, and writes each finished run into the results database in its
// own transaction. Simulations share nothing (no globals), so the threads need no locking
// beyond the database's and the progress line's.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/planner/progress.hpp"
#include "sim/planner/results_db.hpp"
#include "sim/planner/shard.hpp"
#include "sim/planner/sweep_spec.hpp"
#include "sim/scenario/scenario.hpp"

namespace kvsim::planner {

struct SweepOptions {
  std::string db_path = "kvsim.db";
  int jobs = 0;  // worker threads; 0: std::thread::hardware_concurrency()
  Shard shard;
  ClaimPolicy policy;
  bool store_requests = false;
  bool store_timeseries = false;
  std::string catalog_dir;
  std::vector<scenario::Override> extra_overrides;  // --set on the command line, applied last
  bool fast_paths = true;  // scenario::LoadOptions::fast_paths of every run
};

// One run of the shard, resolved.
struct PlannedRun {
  SweepPoint point;
  RunIdentity id;
  scenario::Scenario scenario;
  double warmup_percent = 0;
  std::int64_t duplicate_of = -1;  // index of an earlier run with the same key, or -1
};

// One run of `file` as loaded with `overrides` (`loaded`), with the seed of `repetition` from
// `root_seed` (unset: the scenario's own seed) and the warmup drop (unset: the scenario's first
// warmup percentage), named by `sweep` and `index` in the database.
PlannedRun plan_run(const std::string& file, const scenario::Scenario& loaded,
                    const std::vector<scenario::Override>& overrides,
                    std::optional<std::uint64_t> root_seed, std::int64_t repetition,
                    std::optional<double> warmup_percent, const std::string& sweep,
                    std::int64_t index);

// Resolves the shard's runs in sweep order. A scenario that does not load (bad override path
// or value) is an InputError naming the run and its overrides: nothing is run.
std::vector<PlannedRun> plan_runs(const SweepSpec& spec, const SweepOptions& options);

// What happened to one run handed to execute_run.
struct RunOutcome {
  enum class Kind {
    kDoneBefore,    // done before: skipped
    kFailedBefore,  // failed before and not retried: skipped
    kInFlight,      // running in another live process: skipped
    kRanDone,       // simulated now and recorded
    kRanFailed,     // simulated now, failed (bad input found at run time), recorded
    kDiscarded,     // simulated now, but another process had taken the run over
  };
  Kind kind = Kind::kDoneBefore;
  std::string message;  // for kInFlight and kRanFailed
  // Simulated now (whether recorded or not).
  bool ran() const {
    return kind == Kind::kRanDone || kind == Kind::kRanFailed || kind == Kind::kDiscarded;
  }
};

struct SweepReport {
  std::int64_t sweep_runs = 0;      // runs in the whole sweep
  std::int64_t shard_runs = 0;      // runs in this shard
  std::int64_t duplicates = 0;      // runs whose key an earlier run of the shard has
  std::int64_t already_done = 0;    // skipped: done before
  std::int64_t skipped_failed = 0;  // skipped: failed before (retry with retry_failed)
  std::int64_t in_flight = 0;       // skipped: running in another live process
  std::int64_t ran_done = 0;
  std::int64_t ran_failed = 0;
  std::int64_t discarded = 0;         // finished, but another process had taken the run over
  std::vector<std::string> messages;  // failures and in-flight owners, one line each
  // Counts one outcome (and keeps its message).
  void count(const RunOutcome& outcome);
};

// Claims one run in `db`, simulates it when it is ours and records the result (or the failure).
// Database errors are thrown.
RunOutcome execute_run(ResultsDb& db, const PlannedRun& run, const SweepOptions& options);

// Runs the shard into options.db_path. `progress` may be null.
SweepReport run_sweep(const SweepSpec& spec, const std::vector<PlannedRun>& runs,
                      const SweepOptions& options, Progress* progress);

}  // namespace kvsim::planner
