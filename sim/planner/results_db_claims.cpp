// Claims of runs by the processes of a sharded or parallel sweep: a run is claimed
// ('running', owned by host:pid), marked failed, or taken over from a dead process.
#include <signal.h>

#include <cerrno>
#include <cstdint>

#include "sim/core/error.hpp"
#include "sim/core/version.hpp"
#include "sim/planner/results_db.hpp"
#include "sim/planner/results_db_sql.hpp"

namespace kvsim::planner {
namespace {

bool pid_alive(std::int64_t pid) {
  if (pid <= 0) return false;
  if (kill(static_cast<pid_t>(pid), 0) == 0) return true;
  return errno == EPERM;
}

}  // namespace

using sql::Stmt;
using sql::WriteTxn;

Claim ResultsDb::claim(const RunIdentity& id, const ClaimPolicy& policy) {
  if (id.seed > static_cast<std::uint64_t>(INT64_MAX)) {
    throw InputError(
        id.base_scenario, 0, 0,
        "seed " + std::to_string(id.seed) + " does not fit the results database (below 2^63)");
  }
  const std::lock_guard<std::mutex> lock(mu_);
  WriteTxn txn(db_, path_);
  Stmt q(db_, "SELECT id, status, host, pid FROM runs WHERE run_key = ?", path_);
  q.bind(1, id.run_key);
  Claim c;
  if (!q.step()) {
    Stmt ins(db_,
             "INSERT INTO runs (run_key, sweep, run_index, base_scenario, overrides, "
             "scenario_name, scenario_yaml, "
             "seed, kvsim_version, status, started_at, host, pid, source, measured_run_key) VALUES "
             "(?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?)",
             path_);
    ins.bind(1, id.run_key);
    ins.bind(2, id.sweep);
    ins.bind(3, id.run_index);
    ins.bind(4, id.base_scenario);
    ins.bind(5, id.overrides_json);
    ins.bind(6, id.scenario_name);
    ins.bind(7, id.scenario_yaml);
    ins.bind(8, static_cast<std::int64_t>(id.seed));
    ins.bind(9, std::string(kVersion));
    ins.bind(10, utc_now());
    ins.bind(11, host_);
    ins.bind(12, pid_);
    ins.bind(13, id.source);
    if (id.measured_run_key.empty()) {
      ins.bind_null(14);
    } else {
      ins.bind(14, id.measured_run_key);
    }
    ins.step();
    c.run_id = sqlite3_last_insert_rowid(db_);
    txn.commit();
    return c;
  }
  c.run_id = q.int64(0);
  const std::string status = q.text(1);
  const std::string host = q.text(2);
  const std::int64_t pid = q.int64(3);
  if (status == "done") {
    c.outcome = ClaimOutcome::kDone;
    return c;
  }
  if (status == "failed" && !policy.retry_failed) {
    c.outcome = ClaimOutcome::kFailed;
    return c;
  }
  if (status == "running") {
    const bool ours = host == host_ && pid == pid_;
    const bool dead_here = host == host_ && !pid_alive(pid);
    if (ours || (!dead_here && !(host != host_ && policy.rerun_running))) {
      c.outcome = ClaimOutcome::kInFlight;
      c.owner = host + ":" + std::to_string(pid);
      return c;
    }
  }
  Stmt up(db_,
          "UPDATE runs SET status = 'running', error = NULL, started_at = ?, ended_at = NULL, host "
          "= ?, pid = ?, "
          "kvsim_version = ?, attempts = attempts + 1 WHERE id = ?",
          path_);
  up.bind_all(utc_now(), host_, pid_, std::string(kVersion), c.run_id);
  up.step();
  txn.commit();
  return c;
}

bool ResultsDb::end_run(std::int64_t run_id, const std::string& status, const std::string* error) {
  Stmt up(db_,
          "UPDATE runs SET status = ?, ended_at = ?, error = ? WHERE id = ? AND status = "
          "'running' AND host = ? AND pid = ?",
          path_);
  up.bind_all(status, utc_now(), error == nullptr ? std::string() : *error, run_id, host_, pid_);
  if (error == nullptr) up.bind_null(3);
  up.step();
  return sqlite3_changes(db_) == 1;
}

bool ResultsDb::record_failed(std::int64_t run_id, const std::string& error) {
  const std::lock_guard<std::mutex> lock(mu_);
  WriteTxn txn(db_, path_);
  const bool ok = end_run(run_id, "failed", &error);
  txn.commit();
  return ok;
}

std::map<std::string, std::string> ResultsDb::statuses(const std::vector<std::string>& run_keys) {
  const std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, std::string> out;
  Stmt q(db_, "SELECT status FROM runs WHERE run_key = ?", path_);
  for (const auto& k : run_keys) {
    q.reset();
    q.bind(1, k);
    if (q.step()) out[k] = q.text(0);
  }
  return out;
}

}  // namespace kvsim::planner
