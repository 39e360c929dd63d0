#pragma once
// The sweep results database: one SQLite file (WAL journal, busy timeout) holding every run
// of every sweep written into it, keyed by run key (hash of the resolved scenario and seed).
// Tables: runs, summaries (one column per summary figure), requests and timeseries (optional
// per-run detail), schema_version; PRAGMA user_version holds the schema version and
// PRAGMA application_id marks the file as kvsim's. docs/sweeps.md documents the schema.
//
// Crash safety: a run is claimed ('running') in one transaction and its results are written,
// with status 'done', in another; a killed process leaves only 'running' rows, which the next
// sweep re-runs. Several processes may write one database at once (SQLite locking).
// Nothing is ever deleted. Thread-safe: calls are serialised inside.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "sim/io/results.hpp"
#include "sim/io/summary.hpp"

struct sqlite3;

namespace kvsim::planner {

inline constexpr int kSchemaVersion = 2;
// PRAGMA application_id of a kvsim results database: "kvsm" in ASCII.
inline constexpr std::int32_t kApplicationId = 0x6B76736D;

// What identifies a run and how it was made, written when it is claimed.
struct RunIdentity {
  std::string run_key;
  std::string sweep;
  std::int64_t run_index = 0;
  std::string base_scenario;   // the base scenario file
  std::string overrides_json;  // {"path": "value", ...} in application order
  std::string scenario_name;
  std::string scenario_yaml;  // resolved
  std::uint64_t seed = 0;
  // Schema 2: "simulated" (kvsim's prediction) or "measured" (kvsim replay against a live
  // server); for a prediction of a measured run (kvsim validate), that run's key.
  std::string source = "simulated";
  std::string measured_run_key;
};

enum class ClaimOutcome {
  kClaimed,   // ours to run
  kDone,      // already done: skip
  kFailed,    // failed before and retry_failed is off: skip
  kInFlight,  // 'running' in another live process: skip
};

struct ClaimPolicy {
  bool retry_failed = false;
  // Take over rows 'running' under another host's name (a process there may still be
  // running them). Rows of dead processes on this host are always taken over.
  bool rerun_running = false;
};

struct Claim {
  ClaimOutcome outcome = ClaimOutcome::kClaimed;
  std::int64_t run_id = 0;
  std::string owner;  // host:pid of the row's owner when kInFlight
};

struct MergeStats {
  std::int64_t added = 0;      // runs new to the output
  std::int64_t identical = 0;  // already there with the same content
  std::int64_t replaced = 0;   // a failed run replaced by a done one
  std::int64_t skipped = 0;    // 'running' rows (unfinished) and failed duplicates
};

class ResultsDb {
 public:
  enum class Mode { kCreate, kExisting };
  // Opens (kCreate: creating if missing) and checks the file is a kvsim database of a schema
  // this kvsim knows, migrating an older one. Throws InputError on anything else.
  ResultsDb(std::string path, Mode mode);
  ~ResultsDb();
  ResultsDb(const ResultsDb&) = delete;
  ResultsDb& operator=(const ResultsDb&) = delete;

  const std::string& path() const { return path_; }

  Claim claim(const RunIdentity& id, const ClaimPolicy& policy);
  // Writes a finished run in one transaction; false when the row is no longer ours (another
  // process took it over or finished it), in which case nothing is written.
  bool record_done(std::int64_t run_id, const io::Summary& summary, const io::RunInfo& info,
                   const std::vector<io::RequestRecord>* requests,
                   const std::vector<io::StepRecord>* steps);
  bool record_failed(std::int64_t run_id, const std::string& error);
  // Adds request rows to a run still 'running' and ours, in their own transaction, so that a
  // run measured over a long time keeps what it has if it is interrupted; `first_index` is the
  // request_index of requests[0]. `errors` (optional, one per request) fills the text column
  // `error` (empty: NULL). False when the row is not ours.
  bool append_requests(std::int64_t run_id, std::int64_t first_index,
                       const std::vector<io::RequestRecord>& requests,
                       const std::vector<std::string>* errors = nullptr);

  // Status of each given run key that has a row.
  std::map<std::string, std::string> statuses(const std::vector<std::string>& run_keys);

  // The numeric summary figures (summaries table, by column name; NULL as NaN) of each given run
  // key that is done; keys not done are absent.
  std::map<std::string, std::map<std::string, double>> done_summaries(
      const std::vector<std::string>& run_keys);

  // Copies the runs of another database into this one: new keys are added, a done run
  // replaces a failed one, identical done runs are kept once; a done run whose content
  // (scenario, seed or any summary value) differs is a conflict (InputError, nothing written).
  MergeStats merge_from(const std::string& other_path);

  sqlite3* handle() { return db_; }

 private:
  void open_and_migrate(Mode mode);
  void ensure_columns(const std::string& table,
                      const std::vector<std::pair<std::string, std::string>>& cols);

  std::string path_;
  sqlite3* db_ = nullptr;
  std::string host_;
  std::int64_t pid_ = 0;
  std::mutex mu_;
  std::map<std::string, std::set<std::string>> columns_;  // known columns per table
};

// The summary's figures as (column, value) pairs: every key of the summary JSON
// (io::write_summary_json), metric objects flattened as <metric>_<stat> (ttft_ms_p90).
struct Cell {
  enum class Kind { kNull, kInt, kReal, kText };
  std::string column;
  Kind kind = Kind::kNull;
  std::int64_t i = 0;
  double d = 0;
  std::string text;
};
std::vector<Cell> summary_cells(const io::Summary& summary, const io::RunInfo& info);

// ISO-8601 UTC time with milliseconds (metadata only; never part of a result).
std::string utc_now();

}  // namespace kvsim::planner
