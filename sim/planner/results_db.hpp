#pragma once
// The sweep results database: one SQLite file (WAL journal, busy timeout) holding every run
// of every sweep written into it, keyed by run key (hash of the resolved scenario and seed).
// This class is the only code that reads or writes it: the planner (sweeps, maps, merge), the
// validation (kvsim replay / validate) and the GUI's results browser (ResultsDb::runs) all go
// through it. The SQL lives in results_db*.cpp: results_db_schema.cpp (creation, migrations,
// version checks), results_db_claims.cpp (claims and statuses), results_db.cpp (opening, writes
// of results), results_db_query.cpp (reads), results_db_merge.cpp (merge of databases).
//
// Crash safety: a run is claimed ('running') in one transaction and its results are written,
// with status 'done', in another; a killed process leaves only 'running' rows, which the next
// sweep re-runs. Several processes may write one database at once (SQLite locking).
// Nothing is ever deleted. Thread-safe: calls are serialised inside.
//
// Schema (version kSchemaVersion = 2). PRAGMA application_id is kApplicationId ("kvsm"),
// PRAGMA user_version the schema version.
//
//   runs: one row per run key.
//     id                INTEGER PRIMARY KEY  local id (differs between databases; join on it,
//                                            compare on run_key)
//     run_key           TEXT UNIQUE          SHA-256 of the resolved scenario YAML and seed
//                                            (run_key.hpp); measured-... / predicted-... for
//                                            validation rows (validation/src/replay_db.hpp)
//     sweep             TEXT                 the sweep that ran it first (replay, validate for
//                                            validation rows)
//     run_index         INTEGER              its index in that sweep's expansion
//     base_scenario     TEXT                 the base scenario file
//     overrides         TEXT                 JSON object of the overrides applied,
//                                            {"path": "value", ...} in order
//     scenario_name     TEXT                 the scenario's name
//     scenario_yaml     TEXT                 the resolved scenario, every field
//     seed              INTEGER              the run's root seed
//     kvsim_version     TEXT                 the kvsim that ran it
//     status            TEXT                 'running', 'done' or 'failed'
//     error             TEXT                 why it failed, else NULL
//     started_at        TEXT                 UTC, ISO 8601 with milliseconds (metadata only)
//     ended_at          TEXT                 likewise; NULL while running
//     host, pid         TEXT, INTEGER        the process that claimed it last
//     attempts          INTEGER              how many times it was claimed
//     source            TEXT                 'simulated' or 'measured' (kvsim replay); schema 2
//     measured_run_key  TEXT                 for a prediction of a measured run (kvsim
//                                            validate), that run's key, else NULL; schema 2
//   summaries: one row per done run: run_id (= runs.id) and one column per figure of the
//     summary (summary_cells: every key of the summary JSON, metric objects flattened as
//     <metric>_<stat>, tier_<kind>_<figure>, link_<kind>_<figure>); NULL where a run has no
//     such tier or the figure is undefined. Text columns are TEXT, the others NUMERIC. A kvsim
//     with new figures adds their columns as it writes them (ALTER TABLE ... ADD COLUMN).
//   requests (optional detail): run_id, request_index (completion order) and every key of the
//     request JSON (io::write_requests_json); a measured run's rows also carry `error` (NULL
//     when the request succeeded).
//   timeseries (optional detail): run_id, step and the columns of the time-series CSV
//     (io::TimeseriesCsvWriter::kHeader).
//   results: a view of the done runs joined with their summaries, with sweep, run_index,
//     run_key and overrides in front of the summary columns.
//   schema_version: one row per migration applied (version, applied_at, kvsim_version,
//     description).
//
// Migrations only add (tables, columns, indexes, views); opening an older file for writing
// applies them in one transaction. A file of a newer schema is refused.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
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

// One value read from the database, with its SQLite storage class.
struct DbValue {
  enum class Kind { kNull, kInt, kReal, kText, kBlob };
  Kind kind = Kind::kNull;
  std::int64_t i = 0;  // kInt
  double d = 0;        // kReal
  std::string text;    // kText; a blob's bytes
  bool operator==(const DbValue&) const = default;
};

// A condition on one column of ResultsDb::runs' result (a runs or a summaries column).
struct RunFilter {
  enum class Op {
    kEq,        // equal (NULL value: the cell is NULL)
    kNe,        // not equal (NULL value: the cell is not NULL)
    kLt,        // below
    kLe,        // at most
    kGt,        // above
    kGe,        // at least
    kContains,  // the cell as text contains value.text (case-sensitive)
  };
  std::string column;
  Op op = Op::kEq;
  DbValue value;  // compared as SQLite compares: numbers with numbers, text with text
};

// What ResultsDb::runs reads. Every field is optional: a default query reads every run.
struct RunQuery {
  std::vector<RunFilter> filters;  // all must hold; a comparison with a NULL cell fails
  std::string sort_column;         // empty: the order the runs were first written
  bool descending = false;         // NULL sorts first ascending, last descending
  std::int64_t limit = -1;         // at most this many rows; negative: all
  // Only runs with these keys (any number; keys not in the database match nothing, an empty
  // list matches no run); absent: every run.
  std::optional<std::vector<std::string>> run_keys;
  std::set<std::string> omit_columns;  // left out of the result (wide text: scenario_yaml)
};

// One row per run: the runs table's columns as the file has them, then the summary columns
// that the runs table has not (run_id left out); NULL summary cells for runs not done.
struct RunTable {
  std::vector<std::string> columns;
  std::vector<std::vector<DbValue>> rows;  // each as long as columns
  // Index of a column, -1 if absent.
  int column_index(const std::string& name) const;
};

class ResultsDb {
 public:
  // kCreate: opens for writing, creating the file if missing; kExisting: opens an existing file
  // for writing; both check that it is a kvsim database of a schema this kvsim knows and
  // migrate an older one. kReadOnly: opens an existing file read-only, checks only
  // PRAGMA application_id and never writes (no migration, no journal change), for browsing
  // with runs() whatever layout the file has. Throws InputError naming the file on anything
  // else.
  enum class Mode { kCreate, kExisting, kReadOnly };
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

  // The runs that `query` selects with their summaries, for browsing (the GUI's results
  // table). Throws InputError naming the file when the file has no runs table, a filter or the
  // sort names a column it does not have, or run keys are given and runs has no run_key column.
  RunTable runs(const RunQuery& query);

  // Copies the runs of another database into this one: new keys are added, a done run
  // replaces a failed one, identical done runs are kept once; a done run whose content
  // (scenario, seed or any summary value) differs is a conflict (InputError, nothing written).
  MergeStats merge_from(const std::string& other_path);

  sqlite3* handle() { return db_; }

 private:
  void open_and_migrate(Mode mode);
  void open_read_only();
  // Ends a run that is 'running' and ours with `status` ('done' or 'failed') and `error` (NULL
  // when null); false when the row is not ours. Inside the caller's transaction and lock.
  bool end_run(std::int64_t run_id, const std::string& status, const std::string* error);
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
// (io::write_summary_json), metric objects flattened as <metric>_<stat> (ttft_ms_p90). Never a
// blob.
struct Cell : DbValue {
  std::string column;
};
std::vector<Cell> summary_cells(const io::Summary& summary, const io::RunInfo& info);

// ISO-8601 UTC time with milliseconds (metadata only; never part of a result).
std::string utc_now();

}  // namespace kvsim::planner
