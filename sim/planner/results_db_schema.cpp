// Schema creation, migrations and version checks of the results database (the schema is
// stated in results_db.hpp).
#include <array>
#include <filesystem>

#include "sim/core/error.hpp"
#include "sim/core/version.hpp"
#include "sim/io/summary.hpp"
#include "sim/planner/results_db.hpp"
#include "sim/planner/results_db_sql.hpp"

namespace kvsim::planner {
namespace {

using sql::column_defs;
using sql::exec;
using sql::pragma_int;
using sql::quote_ident;
using sql::Stmt;
using sql::WriteTxn;

// The summary columns of a run with every tier and link kind the simulator reports.
std::vector<Cell> template_summary_cells() {
  io::RunInfo info;
  info.scenario_name = "template";
  for (const char* k : {"host_dram", "local_nvme", "remote"})
    info.tiers.push_back(io::TierInfo{k, 0, 0, 0, 0, 0, 0, 0});
  for (const char* k : {"pcie", "nvme", "nic", "store"})
    info.links.push_back(io::LinkInfo{k, 0, 0, 0, 0});
  const io::Summary s = io::summarize({}, info, 0);
  return summary_cells(s, info);
}

std::vector<Cell> template_request_cells() {
  io::RequestRecord r;
  r.conversation_id = "template";
  return sql::request_cells_of({r}, nullptr);
}

std::string create_table_sql(const std::string& table, const std::string& head,
                             const std::vector<std::pair<std::string, std::string>>& cols,
                             const std::string& tail) {
  std::string sql = "CREATE TABLE " + table + " (" + head;
  for (const auto& [name, type] : cols) sql += ", " + quote_ident(name) + " " + type;
  return sql + tail + ")";
}

// Schema version 1. Migrations are applied in order inside one transaction; each later
// version appends a function here and states its change in results_db.hpp's schema block.
void migrate_to_1(sqlite3* db, const std::string& path) {
  exec(db,
       "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL, "
       "kvsim_version TEXT NOT NULL, description TEXT NOT NULL)",
       path);
  exec(db,
       "CREATE TABLE runs (id INTEGER PRIMARY KEY, run_key TEXT NOT NULL UNIQUE, sweep TEXT NOT "
       "NULL, "
       "run_index INTEGER NOT NULL, base_scenario TEXT NOT NULL, overrides TEXT NOT NULL, "
       "scenario_name TEXT NOT NULL, scenario_yaml TEXT NOT NULL, seed INTEGER NOT NULL, "
       "kvsim_version TEXT NOT NULL, status TEXT NOT NULL CHECK (status IN ('running', 'done', "
       "'failed')), "
       "error TEXT, started_at TEXT NOT NULL, ended_at TEXT, host TEXT NOT NULL, pid INTEGER NOT "
       "NULL, "
       "attempts INTEGER NOT NULL DEFAULT 1)",
       path);
  exec(db, "CREATE INDEX runs_by_sweep ON runs (sweep, run_index)", path);
  exec(db, "CREATE INDEX runs_by_status ON runs (status)", path);
  exec(db,
       create_table_sql("summaries", "run_id INTEGER PRIMARY KEY REFERENCES runs (id)",
                        column_defs(template_summary_cells()), ""),
       path);
  exec(db,
       create_table_sql(
           "requests",
           "run_id INTEGER NOT NULL REFERENCES runs (id), request_index INTEGER NOT NULL",
           column_defs(template_request_cells()), ", PRIMARY KEY (run_id, request_index)"),
       path);
  std::vector<std::pair<std::string, std::string>> ts;
  for (const auto& c : sql::timeseries_columns()) ts.emplace_back(c, "NUMERIC");
  exec(db,
       create_table_sql("timeseries",
                        "run_id INTEGER NOT NULL REFERENCES runs (id), step INTEGER NOT NULL", ts,
                        ", PRIMARY KEY (run_id, step)"),
       path);
  exec(db,
       "CREATE VIEW results AS SELECT runs.sweep AS sweep, runs.run_index AS run_index, "
       "runs.run_key AS run_key, "
       "runs.overrides AS overrides, summaries.* FROM runs JOIN summaries ON summaries.run_id = "
       "runs.id "
       "WHERE runs.status = 'done'",
       path);
}

// Schema version 2: measured runs (kvsim replay) beside simulated ones. Older rows are
// simulated; a prediction kvsim validate makes of a measured run names that run's key.
void migrate_to_2(sqlite3* db, const std::string& path) {
  exec(db,
       "ALTER TABLE runs ADD COLUMN source TEXT NOT NULL DEFAULT 'simulated' CHECK (source IN "
       "('simulated', 'measured'))",
       path);
  exec(db, "ALTER TABLE runs ADD COLUMN measured_run_key TEXT", path);
}

struct Migration {
  int version;
  const char* description;
  void (*apply)(sqlite3*, const std::string&);
};
constexpr std::array<Migration, 2> kMigrations = {
    Migration{1, "runs, summaries, requests, timeseries, results view", migrate_to_1},
    Migration{2, "runs.source (simulated | measured) and runs.measured_run_key", migrate_to_2}};

}  // namespace

void ResultsDb::open_and_migrate(Mode mode) {
  if (mode == Mode::kReadOnly) {
    open_read_only();
    return;
  }
  const bool existed = std::filesystem::exists(path_);
  if (mode == Mode::kExisting && !existed)
    throw InputError(path_, 0, 0, "no such results database");
  if (existed && std::filesystem::is_directory(path_))
    throw InputError(path_, 0, 0, "is a folder, not a results database");
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX |
                    (mode == Mode::kCreate ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2(path_.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    throw InputError(path_, 0, 0,
                     std::string("cannot open the results database: ") +
                         (db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory"));
  }
  sqlite3_busy_timeout(db_, 60000);
  // Reading the header tells a SQLite file from anything else.
  std::int64_t app_id = 0;
  std::int64_t user_version = 0;
  std::int64_t objects = 0;
  try {
    app_id = pragma_int(db_, "application_id", path_);
    user_version = pragma_int(db_, "user_version", path_);
    Stmt s(db_, "SELECT count(*) FROM sqlite_master", path_);
    if (s.step()) objects = s.int64(0);
  } catch (const InputError&) {
    throw InputError(path_, 0, 0, "not a kvsim results database (not a SQLite file)");
  }
  if (objects > 0 && app_id != kApplicationId) {
    throw InputError(
        path_, 0, 0,
        "not a kvsim results database (a SQLite file of something else); nothing was changed");
  }
  if (user_version > kSchemaVersion) {
    throw InputError(path_, 0, 0,
                     "results database schema version " + std::to_string(user_version) +
                         " is newer than this kvsim reads (" + std::to_string(kSchemaVersion) +
                         "); use a newer kvsim");
  }
  exec(db_, "PRAGMA journal_mode=WAL", path_);
  exec(db_, "PRAGMA synchronous=NORMAL", path_);
  exec(db_, "PRAGMA foreign_keys=ON", path_);
  if (user_version < kSchemaVersion) {
    WriteTxn txn(db_, path_);
    // Re-read under the write lock: another process may have migrated meanwhile.
    const std::int64_t current = pragma_int(db_, "user_version", path_);
    for (const auto& m : kMigrations) {
      if (m.version <= current) continue;
      m.apply(db_, path_);
      Stmt ins(db_,
               "INSERT INTO schema_version (version, applied_at, kvsim_version, description) "
               "VALUES (?, ?, ?, ?)",
               path_);
      ins.bind(1, std::int64_t{m.version});
      ins.bind(2, utc_now());
      ins.bind(3, std::string(kVersion));
      ins.bind(4, std::string(m.description));
      ins.step();
    }
    exec(db_, "PRAGMA application_id=" + std::to_string(kApplicationId), path_);
    exec(db_, "PRAGMA user_version=" + std::to_string(kSchemaVersion), path_);
    txn.commit();
  }
}

// Read-only: the file is only read, so a database of an older or hand-made layout opens as
// it is; whether it is kvsim's is told by its application_id alone.
void ResultsDb::open_read_only() {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path_, ec)) throw InputError(path_, 0, 0, "no such file");
  if (sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_FULLMUTEX, nullptr) !=
      SQLITE_OK) {
    throw InputError(
        path_, 0, 0,
        std::string("cannot open: ") + (db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory"));
  }
  // Reading the header tells a SQLite file from anything else (SQLITE_NOTADB).
  sqlite3_stmt* s = nullptr;
  int rc = sqlite3_prepare_v2(db_, "PRAGMA application_id", -1, &s, nullptr);
  std::int64_t app_id = 0;
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) app_id = sqlite3_column_int64(s, 0);
  }
  const std::string message = sqlite3_errmsg(db_);
  sqlite3_finalize(s);
  if (rc == SQLITE_NOTADB) {
    throw InputError(path_, 0, 0,
                     "not a kvsim results database: the file is not an SQLite database");
  }
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    throw InputError(path_, 0, 0, "cannot read the database: " + message);
  if (app_id != kApplicationId) {
    throw InputError(path_, 0, 0,
                     "not a kvsim results database: an SQLite database of another application "
                     "(application_id " +
                         std::to_string(app_id) +
                         "; `kvsim sweep` writes the databases this view opens)");
  }
}

void ResultsDb::ensure_columns(const std::string& table,
                               const std::vector<std::pair<std::string, std::string>>& cols) {
  auto& known = columns_[table];
  const auto missing = [&] {
    for (const auto& [name, type] : cols) {
      if (known.count(name) == 0) return true;
    }
    return false;
  };
  if (!missing()) return;
  known.clear();
  for (auto& name : sql::table_columns(db_, table, path_)) known.insert(std::move(name));
  for (const auto& [name, type] : cols) {
    if (known.count(name) != 0) continue;
    exec(db_, "ALTER TABLE " + quote_ident(table) + " ADD COLUMN " + quote_ident(name) + " " + type,
         path_);
    known.insert(name);
  }
}

}  // namespace kvsim::planner
