#include "validation/src/replay_db.hpp"

#include <unistd.h>

#include "sim/core/error.hpp"
#include "sim/core/version.hpp"
#include "sim/io/summary.hpp"
#include "sim/planner/results_db.hpp"
#include "sim/planner/run_key.hpp"
#include "validation/src/report.hpp"

namespace kvsim::validation {
namespace {

planner::RunIdentity identity(const scenario::Scenario& sc, const std::string& key,
                              const std::string& sweep, std::uint64_t seed) {
  planner::RunIdentity id;
  id.run_key = key;
  id.sweep = sweep;
  id.run_index = 0;
  id.base_scenario = sc.source_file;
  id.overrides_json = "{}";
  id.scenario_name = sc.name;
  id.scenario_yaml = sc.resolved_yaml;
  id.seed = seed;
  return id;
}

io::RunInfo measured_info(const ReplayRun& run) {
  io::RunInfo info;
  info.scenario_name = run.scenario_name;
  info.kvsim_version = run.kvsim_version.empty() ? std::string(kVersion) : run.kvsim_version;
  info.seed = run.seed;
  info.header_lines = run.header_lines;
  return info;
}

void write_measured(planner::ResultsDb& db, std::int64_t run_id, const ReplayRun& run) {
  std::vector<io::RequestRecord> requests;
  std::vector<std::string> errors;
  for (const ReplayRecord& r : run.records) {
    requests.push_back(r.request);
    errors.push_back(r.error);
  }
  if (!db.append_requests(run_id, 0, requests, &errors))
    throw InputError(db.path(), 0, 0, "the measured run's row was taken over by another process");
  const auto good = measured_records(run);
  if (!db.record_done(run_id, io::summarize(good, measured_info(run)), measured_info(run), nullptr,
                      nullptr)) {
    throw InputError(db.path(), 0, 0, "the measured run's row was taken over by another process");
  }
}

}  // namespace

std::string new_measured_run_key(const scenario::Scenario& sc, const std::string& url,
                                 const std::string& model) {
  return "measured-" + planner::sha256_hex(sc.resolved_yaml + "\n# url: " + url + "\n# model: " +
                                           model + "\n# started: " + planner::utc_now() +
                                           "\n# pid: " + std::to_string(getpid()) + "\n");
}

MeasuredRunWriter::MeasuredRunWriter(const std::string& db_path, const scenario::Scenario& sc,
                                     const std::string& run_key)
    : db_(std::make_unique<planner::ResultsDb>(db_path, planner::ResultsDb::Mode::kCreate)) {
  planner::RunIdentity id = identity(sc, run_key, "replay", sc.seed);
  id.source = "measured";
  const planner::Claim c = db_->claim(id, planner::ClaimPolicy{});
  if (c.outcome != planner::ClaimOutcome::kClaimed)
    throw InputError(db_path, 0, 0, "run key " + run_key + " is already in the database");
  run_id_ = c.run_id;
}

MeasuredRunWriter::~MeasuredRunWriter() = default;

void MeasuredRunWriter::add(const ReplayRecord& record) {
  const std::vector<std::string> error{record.error};
  if (!db_->append_requests(run_id_, written_, {record.request}, &error))
    throw InputError(db_->path(), 0, 0, "the measured run's row was taken over by another process");
  ++written_;
}

void MeasuredRunWriter::finish(const ReplayRun& run) {
  const auto good = measured_records(run);
  if (!db_->record_done(run_id_, io::summarize(good, measured_info(run)), measured_info(run),
                        nullptr, nullptr)) {
    throw InputError(db_->path(), 0, 0, "the measured run's row was taken over by another process");
  }
}

ValidationRows record_validation(const std::string& db_path, const ReplayRun& run,
                                 const scenario::Scenario& sc,
                                 const std::vector<io::RequestRecord>& predicted,
                                 const io::RunInfo& info, const std::string& workload) {
  planner::ResultsDb db(db_path, planner::ResultsDb::Mode::kCreate);
  ValidationRows out;
  out.measured_run_key = !run.run_key.empty()
                             ? run.run_key
                             : "measured-" + planner::sha256_hex(replay_json(run));
  {
    planner::RunIdentity id = identity(sc, out.measured_run_key, "replay", run.seed);
    id.scenario_name = run.scenario_name;
    id.source = "measured";
    const planner::Claim c = db.claim(id, planner::ClaimPolicy{});
    if (c.outcome == planner::ClaimOutcome::kClaimed) {
      write_measured(db, c.run_id, run);
      out.measured_added = true;
    }
  }
  out.predicted_run_key =
      "predicted-" + planner::sha256_hex(out.measured_run_key + "\n" + sc.resolved_yaml +
                                         "\n# seed: " + std::to_string(sc.seed) +
                                         "\n# workload: " + workload + "\n");
  planner::RunIdentity id = identity(sc, out.predicted_run_key, "validate", sc.seed);
  id.measured_run_key = out.measured_run_key;
  const planner::Claim c = db.claim(id, planner::ClaimPolicy{true, false});
  if (c.outcome == planner::ClaimOutcome::kClaimed) {
    if (!db.record_done(c.run_id, io::summarize(predicted, info), info, &predicted, nullptr))
      throw InputError(db_path, 0, 0, "the prediction's row was taken over by another process");
    out.predicted_added = true;
  }
  return out;
}

}  // namespace kvsim::validation
