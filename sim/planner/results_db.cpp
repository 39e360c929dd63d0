#include "sim/planner/results_db.hpp"

#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/core/error.hpp"
#include "sim/core/version.hpp"
#include "sim/io/sinks.hpp"

namespace kvsim::planner {
namespace {

using Json = nlohmann::ordered_json;

// A prepared statement that finalizes itself.
class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql, const std::string& path) : db_(db), path_(path) {
    if (sqlite3_prepare_v2(db, sql.c_str(), static_cast<int>(sql.size()), &s_, nullptr) !=
        SQLITE_OK) {
      throw InputError(
          path, 0, 0,
          std::string("results database: ") + sqlite3_errmsg(db) + " (in: " + sql + ")");
    }
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  sqlite3_stmt* get() { return s_; }

  void bind(int i, const std::string& v) {
    check(sqlite3_bind_text(s_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  }
  void bind(int i, std::int64_t v) { check(sqlite3_bind_int64(s_, i, v)); }
  void bind(int i, double v) { check(sqlite3_bind_double(s_, i, v)); }
  void bind_null(int i) { check(sqlite3_bind_null(s_, i)); }
  void bind_cell(int i, const Cell& c) {
    switch (c.kind) {
      case Cell::Kind::kNull:
        bind_null(i);
        break;
      case Cell::Kind::kInt:
        bind(i, c.i);
        break;
      case Cell::Kind::kReal:
        bind(i, c.d);
        break;
      case Cell::Kind::kText:
        bind(i, c.text);
        break;
    }
  }
  // True while a row is available.
  bool step() {
    const int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw InputError(path_, 0, 0, std::string("results database: ") + sqlite3_errmsg(db_));
  }
  void reset() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  std::int64_t int64(int col) { return sqlite3_column_int64(s_, col); }
  std::string text(int col) {
    const auto* p = sqlite3_column_text(s_, col);
    return p == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(p));
  }
  bool is_null(int col) { return sqlite3_column_type(s_, col) == SQLITE_NULL; }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK)
      throw InputError(path_, 0, 0, std::string("results database: ") + sqlite3_errmsg(db_));
  }
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
  std::string path_;
};

void exec(sqlite3* db, const std::string& sql, const std::string& path) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err != nullptr ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    throw InputError(path, 0, 0, "results database: " + msg);
  }
}

// A write transaction (BEGIN IMMEDIATE: takes the write lock at once, waiting up to the busy
// timeout); rolled back unless committed.
class WriteTxn {
 public:
  WriteTxn(sqlite3* db, const std::string& path) : db_(db), path_(path) {
    exec(db, "BEGIN IMMEDIATE", path);
  }
  ~WriteTxn() {
    if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  WriteTxn(const WriteTxn&) = delete;
  WriteTxn& operator=(const WriteTxn&) = delete;
  void commit() {
    exec(db_, "COMMIT", path_);
    done_ = true;
  }

 private:
  sqlite3* db_;
  std::string path_;
  bool done_ = false;
};

std::string quote_ident(const std::string& name) {
  std::string out = "\"";
  for (const char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

std::int64_t pragma_int(sqlite3* db, const std::string& pragma, const std::string& path) {
  Stmt s(db, "PRAGMA " + pragma, path);
  return s.step() ? s.int64(0) : 0;
}

// Flattens one JSON object into cells: nested objects become <key>_<sub>.
void flatten(const Json& obj, const std::string& prefix, std::vector<Cell>& out) {
  for (const auto& [key, value] : obj.items()) {
    std::string col = prefix;
    if (!col.empty()) col += '_';
    col += key;
    Cell c;
    c.column = col;
    if (value.is_object()) {
      flatten(value, col, out);
      continue;
    }
    if (value.is_null()) {
      c.kind = Cell::Kind::kNull;
    } else if (value.is_boolean()) {
      c.kind = Cell::Kind::kInt;
      c.i = value.get<bool>() ? 1 : 0;
    } else if (value.is_number_integer()) {
      c.kind = Cell::Kind::kInt;
      c.i = value.get<std::int64_t>();
    } else if (value.is_number()) {
      c.kind = Cell::Kind::kReal;
      c.d = value.get<double>();
    } else {
      c.kind = Cell::Kind::kText;
      c.text = value.is_string() ? value.get<std::string>() : value.dump();
    }
    out.push_back(std::move(c));
  }
}

// Declared type of a generated column: TEXT for text, NUMERIC otherwise (integers stay
// integers, reals stay reals).
std::string column_type(const Cell& c) { return c.kind == Cell::Kind::kText ? "TEXT" : "NUMERIC"; }

std::vector<std::pair<std::string, std::string>> column_defs(const std::vector<Cell>& cells) {
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(cells.size());
  for (const auto& c : cells) out.emplace_back(c.column, column_type(c));
  return out;
}

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

// Per-request columns: every key of io::write_requests_json.
std::vector<Cell> request_cells_of(const std::vector<io::RequestRecord>& records,
                                   std::vector<std::vector<Cell>>* rows) {
  std::ostringstream os;
  io::write_requests_json(os, records);
  const Json arr = Json::parse(os.str());
  std::vector<Cell> first;
  for (const auto& obj : arr) {
    std::vector<Cell> row;
    flatten(obj, "", row);
    if (first.empty()) first = row;
    if (rows != nullptr) rows->push_back(std::move(row));
  }
  return first;
}

std::vector<Cell> template_request_cells() {
  io::RequestRecord r;
  r.conversation_id = "template";
  return request_cells_of({r}, nullptr);
}

// Per-step columns: the time-series CSV header (io::TimeseriesCsvWriter::kHeader).
std::vector<std::string> timeseries_columns() {
  std::vector<std::string> cols;
  std::string cur;
  for (const char* p = io::TimeseriesCsvWriter::kHeader; *p != '\0'; ++p) {
    if (*p == ',') {
      cols.push_back(cur);
      cur.clear();
    } else {
      cur += *p;
    }
  }
  cols.push_back(cur);
  return cols;
}

std::string create_table_sql(const std::string& table, const std::string& head,
                             const std::vector<std::pair<std::string, std::string>>& cols,
                             const std::string& tail) {
  std::string sql = "CREATE TABLE " + table + " (" + head;
  for (const auto& [name, type] : cols) sql += ", " + quote_ident(name) + " " + type;
  return sql + tail + ")";
}

// Schema version 1. Migrations are applied in order inside one transaction; each later
// version appends a function here (docs/sweeps.md, "Schema versions and migrations").
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
  for (const auto& c : timeseries_columns()) ts.emplace_back(c, "NUMERIC");
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

std::string hostname() {
  std::array<char, 256> buf{};
  if (gethostname(buf.data(), buf.size() - 1) != 0) return "unknown";
  return std::string(buf.data());
}

bool pid_alive(std::int64_t pid) {
  if (pid <= 0) return false;
  if (kill(static_cast<pid_t>(pid), 0) == 0) return true;
  return errno == EPERM;
}

}  // namespace

std::string utc_now() {
  const auto now = std::chrono::system_clock::now();
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  std::array<char, 40> buf{};
  const auto n = std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%S", &tm);
  std::string out(buf.data(), n);
  std::array<char, 8> frac{};
  std::snprintf(frac.data(), frac.size(), ".%03dZ", static_cast<int>(ms % 1000));
  return out + frac.data();
}

std::vector<Cell> summary_cells(const io::Summary& summary, const io::RunInfo& info) {
  std::ostringstream os;
  io::write_summary_json(os, summary, info);
  Json j = Json::parse(os.str());
  j.erase("schema_version");  // the JSON document's shape, not a figure of the run
  std::vector<Cell> out;
  flatten(j, "", out);
  return out;
}

ResultsDb::ResultsDb(std::string path, Mode mode)
    : path_(std::move(path)), host_(hostname()), pid_(getpid()) {
  try {
    open_and_migrate(mode);
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

ResultsDb::~ResultsDb() { sqlite3_close(db_); }

void ResultsDb::open_and_migrate(Mode mode) {
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
  {
    Stmt s(db_, "PRAGMA table_info(" + quote_ident(table) + ")", path_);
    while (s.step()) known.insert(s.text(1));
  }
  for (const auto& [name, type] : cols) {
    if (known.count(name) != 0) continue;
    exec(db_, "ALTER TABLE " + quote_ident(table) + " ADD COLUMN " + quote_ident(name) + " " + type,
         path_);
    known.insert(name);
  }
}

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
  up.bind(1, utc_now());
  up.bind(2, host_);
  up.bind(3, pid_);
  up.bind(4, std::string(kVersion));
  up.bind(5, c.run_id);
  up.step();
  txn.commit();
  return c;
}

bool ResultsDb::record_done(std::int64_t run_id, const io::Summary& summary,
                            const io::RunInfo& info, const std::vector<io::RequestRecord>* requests,
                            const std::vector<io::StepRecord>* steps) {
  // Everything that can be computed outside the lock is.
  const std::vector<Cell> cells = summary_cells(summary, info);
  std::vector<std::vector<Cell>> request_rows;
  std::vector<Cell> request_cols;
  if (requests != nullptr && !requests->empty())
    request_cols = request_cells_of(*requests, &request_rows);
  std::string steps_csv;
  if (steps != nullptr && !steps->empty()) {
    std::ostringstream os;
    io::TimeseriesCsvWriter w(os);
    for (const auto& s : *steps) w.write(s);
    steps_csv = os.str();
  }

  const std::lock_guard<std::mutex> lock(mu_);
  WriteTxn txn(db_, path_);
  {
    Stmt up(db_,
            "UPDATE runs SET status = 'done', ended_at = ?, error = NULL WHERE id = ? AND status = "
            "'running' AND host = ? AND pid = ?",
            path_);
    up.bind(1, utc_now());
    up.bind(2, run_id);
    up.bind(3, host_);
    up.bind(4, pid_);
    up.step();
    if (sqlite3_changes(db_) != 1) return false;
  }
  ensure_columns("summaries", column_defs(cells));
  {
    std::string sql = "INSERT INTO summaries (run_id";
    std::string qs = "?";
    for (const auto& c : cells) {
      sql += ", " + quote_ident(c.column);
      qs += ", ?";
    }
    Stmt ins(db_, sql + ") VALUES (" + qs + ")", path_);
    ins.bind(1, run_id);
    for (std::size_t i = 0; i < cells.size(); ++i) ins.bind_cell(static_cast<int>(i) + 2, cells[i]);
    ins.step();
  }
  if (!request_rows.empty()) {
    ensure_columns("requests", column_defs(request_cols));
    std::string sql = "INSERT INTO requests (run_id, request_index";
    std::string qs = "?, ?";
    for (const auto& c : request_cols) {
      sql += ", " + quote_ident(c.column);
      qs += ", ?";
    }
    Stmt ins(db_, sql + ") VALUES (" + qs + ")", path_);
    for (std::size_t r = 0; r < request_rows.size(); ++r) {
      ins.reset();
      ins.bind(1, run_id);
      ins.bind(2, static_cast<std::int64_t>(r));
      for (std::size_t i = 0; i < request_rows[r].size() && i < request_cols.size(); ++i) {
        ins.bind_cell(static_cast<int>(i) + 3, request_rows[r][i]);
      }
      ins.step();
    }
  }
  if (!steps_csv.empty()) {
    const auto cols = timeseries_columns();
    std::string sql = "INSERT INTO timeseries (run_id, step";
    std::string qs = "?, ?";
    for (const auto& c : cols) {
      sql += ", " + quote_ident(c);
      qs += ", ?";
    }
    Stmt ins(db_, sql + ") VALUES (" + qs + ")", path_);
    std::istringstream in(steps_csv);
    std::string line;
    std::getline(in, line);  // header
    std::int64_t step = 0;
    while (std::getline(in, line)) {
      ins.reset();
      ins.bind(1, run_id);
      ins.bind(2, step++);
      std::size_t start = 0;
      for (std::size_t i = 0; i < cols.size(); ++i) {
        const std::size_t end = std::min(line.find(',', start), line.size());
        const std::string field = line.substr(start, end - start);
        start = end + 1;
        if (field.empty()) {
          ins.bind_null(static_cast<int>(i) + 3);
        } else if (field.find_first_of(".eE") == std::string::npos) {
          ins.bind(static_cast<int>(i) + 3, static_cast<std::int64_t>(std::stoll(field)));
        } else {
          ins.bind(static_cast<int>(i) + 3, std::stod(field));
        }
      }
      ins.step();
    }
  }
  txn.commit();
  return true;
}

bool ResultsDb::append_requests(std::int64_t run_id, std::int64_t first_index,
                                const std::vector<io::RequestRecord>& requests,
                                const std::vector<std::string>* errors) {
  if (requests.empty()) return true;
  std::vector<std::vector<Cell>> rows;
  std::vector<Cell> cols = request_cells_of(requests, &rows);
  if (errors != nullptr) {
    Cell e;
    e.column = "error";
    e.kind = Cell::Kind::kText;
    cols.push_back(e);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      Cell v = e;
      const std::string& text = r < errors->size() ? (*errors)[r] : std::string();
      v.kind = text.empty() ? Cell::Kind::kNull : Cell::Kind::kText;
      v.text = text;
      rows[r].push_back(v);
    }
  }
  const std::lock_guard<std::mutex> lock(mu_);
  WriteTxn txn(db_, path_);
  {
    Stmt q(db_, "SELECT count(*) FROM runs WHERE id = ? AND status = 'running' AND host = ? AND pid = ?",
           path_);
    q.bind(1, run_id);
    q.bind(2, host_);
    q.bind(3, pid_);
    if (!q.step() || q.int64(0) != 1) return false;
  }
  ensure_columns("requests", column_defs(cols));
  std::string sql = "INSERT INTO requests (run_id, request_index";
  std::string qs = "?, ?";
  for (const auto& c : cols) {
    sql += ", " + quote_ident(c.column);
    qs += ", ?";
  }
  Stmt ins(db_, sql + ") VALUES (" + qs + ")", path_);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    ins.reset();
    ins.bind(1, run_id);
    ins.bind(2, first_index + static_cast<std::int64_t>(r));
    for (std::size_t i = 0; i < rows[r].size() && i < cols.size(); ++i) {
      ins.bind_cell(static_cast<int>(i) + 3, rows[r][i]);
    }
    ins.step();
  }
  txn.commit();
  return true;
}

bool ResultsDb::record_failed(std::int64_t run_id, const std::string& error) {
  const std::lock_guard<std::mutex> lock(mu_);
  WriteTxn txn(db_, path_);
  Stmt up(db_,
          "UPDATE runs SET status = 'failed', ended_at = ?, error = ? WHERE id = ? AND status = "
          "'running' AND host = ? AND pid = ?",
          path_);
  up.bind(1, utc_now());
  up.bind(2, error);
  up.bind(3, run_id);
  up.bind(4, host_);
  up.bind(5, pid_);
  up.step();
  const bool ok = sqlite3_changes(db_) == 1;
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

std::map<std::string, std::map<std::string, double>> ResultsDb::done_summaries(
    const std::vector<std::string>& run_keys) {
  const std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, std::map<std::string, double>> out;
  Stmt q(db_,
         "SELECT summaries.* FROM runs JOIN summaries ON summaries.run_id = runs.id "
         "WHERE runs.run_key = ? AND runs.status = 'done'",
         path_);
  for (const auto& k : run_keys) {
    q.reset();
    q.bind(1, k);
    if (!q.step()) continue;
    auto& row = out[k];
    const int n = sqlite3_column_count(q.get());
    for (int c = 0; c < n; ++c) {
      const std::string name = sqlite3_column_name(q.get(), c);
      if (name == "run_id") continue;
      switch (sqlite3_column_type(q.get(), c)) {
        case SQLITE_INTEGER:
        case SQLITE_FLOAT:
          row[name] = sqlite3_column_double(q.get(), c);
          break;
        case SQLITE_NULL:
          row[name] = std::numeric_limits<double>::quiet_NaN();
          break;
        default:
          break;  // text (scenario name, version)
      }
    }
  }
  return out;
}

namespace {

// Column names of a table, in order.
std::vector<std::string> table_columns(sqlite3* db, const std::string& table,
                                       const std::string& path) {
  std::vector<std::string> out;
  Stmt s(db, "PRAGMA table_info(" + quote_ident(table) + ")", path);
  while (s.step()) out.push_back(s.text(1));
  return out;
}
std::vector<std::pair<std::string, std::string>> table_column_defs(sqlite3* db,
                                                                   const std::string& table,
                                                                   const std::string& path) {
  std::vector<std::pair<std::string, std::string>> out;
  Stmt s(db, "PRAGMA table_info(" + quote_ident(table) + ")", path);
  while (s.step()) out.emplace_back(s.text(1), s.text(2));
  return out;
}

// Copies the rows of `table` whose run_id is src_id from src into dest under dest_id.
void copy_children(sqlite3* src, const std::string& src_path, sqlite3* dest,
                   const std::string& dest_path, const std::string& table, std::int64_t src_id,
                   std::int64_t dest_id) {
  const auto cols = table_columns(src, table, src_path);
  std::string list;
  std::string qs;
  for (const auto& c : cols) {
    list += (list.empty() ? "" : ", ") + quote_ident(c);
    qs += qs.empty() ? "?" : ", ?";
  }
  Stmt q(src, "SELECT " + list + " FROM " + quote_ident(table) + " WHERE run_id = ?", src_path);
  q.bind(1, src_id);
  Stmt ins(dest, "INSERT INTO " + quote_ident(table) + " (" + list + ") VALUES (" + qs + ")",
           dest_path);
  while (q.step()) {
    ins.reset();
    for (std::size_t i = 0; i < cols.size(); ++i) {
      const int col = static_cast<int>(i);
      if (cols[i] == "run_id") {
        ins.bind(col + 1, dest_id);
      } else if (sqlite3_bind_value(ins.get(), col + 1, sqlite3_column_value(q.get(), col)) !=
                 SQLITE_OK) {
        throw InputError(dest_path, 0, 0, std::string("results database: ") + sqlite3_errmsg(dest));
      }
    }
    ins.step();
  }
}

// A value read back as text for comparing and for messages ("NULL" for null).
struct Value {
  int type = SQLITE_NULL;
  std::int64_t i = 0;
  double d = 0;
  std::string text;
  bool operator==(const Value& o) const {
    if (type != o.type) return false;
    if (type == SQLITE_INTEGER) return i == o.i;
    if (type == SQLITE_FLOAT) return d == o.d;
    return text == o.text;
  }
  std::string show() const {
    if (type == SQLITE_NULL) return "NULL";
    if (type == SQLITE_INTEGER) return std::to_string(i);
    if (type == SQLITE_FLOAT) {
      std::ostringstream os;
      os.precision(17);
      os << d;
      return os.str();
    }
    return "'" + text + "'";
  }
};

std::map<std::string, Value> row_values(sqlite3* db, const std::string& path,
                                        const std::string& sql, std::int64_t id) {
  std::map<std::string, Value> out;
  Stmt q(db, sql, path);
  q.bind(1, id);
  if (!q.step()) return out;
  const int n = sqlite3_column_count(q.get());
  for (int c = 0; c < n; ++c) {
    Value v;
    v.type = sqlite3_column_type(q.get(), c);
    if (v.type == SQLITE_INTEGER) v.i = sqlite3_column_int64(q.get(), c);
    if (v.type == SQLITE_FLOAT) v.d = sqlite3_column_double(q.get(), c);
    if (v.type == SQLITE_TEXT || v.type == SQLITE_BLOB) v.text = q.text(c);
    out[sqlite3_column_name(q.get(), c)] = v;
  }
  return out;
}

}  // namespace

MergeStats ResultsDb::merge_from(const std::string& other_path) {
  if (!std::filesystem::exists(other_path))
    throw InputError(other_path, 0, 0, "no such results database");
  sqlite3* src = nullptr;
  struct Closer {
    sqlite3*& db;
    ~Closer() { sqlite3_close(db); }
  } closer{src};
  if (sqlite3_open_v2(other_path.c_str(), &src, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    throw InputError(other_path, 0, 0, "cannot open the results database");
  }
  sqlite3_busy_timeout(src, 60000);
  std::int64_t app_id = 0;
  std::int64_t version = 0;
  try {
    app_id = pragma_int(src, "application_id", other_path);
    version = pragma_int(src, "user_version", other_path);
  } catch (const InputError&) {
    throw InputError(other_path, 0, 0, "not a kvsim results database (not a SQLite file)");
  }
  if (app_id != kApplicationId) throw InputError(other_path, 0, 0, "not a kvsim results database");
  if (version != kSchemaVersion) {
    throw InputError(
        other_path, 0, 0,
        "results database schema version " + std::to_string(version) +
            ", this kvsim merges version " + std::to_string(kSchemaVersion) +
            (version < kSchemaVersion ? " (open it with kvsim sweep to migrate it)" : ""));
  }

  const std::lock_guard<std::mutex> lock(mu_);
  WriteTxn txn(db_, path_);
  for (const char* table : {"summaries", "requests", "timeseries"}) {
    ensure_columns(table, table_column_defs(src, table, other_path));
  }
  MergeStats stats;
  const auto run_cols = table_columns(src, "runs", other_path);
  std::string list;
  for (const auto& c : run_cols) list += (list.empty() ? "" : ", ") + quote_ident(c);
  Stmt rows(src, "SELECT " + list + " FROM runs ORDER BY id", other_path);
  const auto col_index = [&](const std::string& name) {
    for (std::size_t i = 0; i < run_cols.size(); ++i) {
      if (run_cols[i] == name) return static_cast<int>(i);
    }
    throw InputError(other_path, 0, 0, "results database: runs has no column " + name);
  };
  const int c_id = col_index("id");
  const int c_key = col_index("run_key");
  const int c_status = col_index("status");
  const int c_yaml = col_index("scenario_yaml");
  const int c_seed = col_index("seed");
  const int c_name = col_index("scenario_name");

  // INSERT of a run row without its id, and UPDATE of an existing row to the source's content.
  std::string ins_cols;
  std::string ins_qs;
  std::string upd_set;
  for (const auto& c : run_cols) {
    if (c == "id") continue;
    ins_cols += (ins_cols.empty() ? "" : ", ") + quote_ident(c);
    ins_qs += ins_qs.empty() ? "?" : ", ?";
    upd_set += (upd_set.empty() ? "" : ", ") + quote_ident(c) + " = ?";
  }
  Stmt ins(db_, "INSERT INTO runs (" + ins_cols + ") VALUES (" + ins_qs + ")", path_);
  Stmt upd(db_, "UPDATE runs SET " + upd_set + " WHERE id = ?", path_);
  Stmt find(db_, "SELECT id, status, scenario_yaml, seed FROM runs WHERE run_key = ?", path_);
  const auto bind_row = [&](Stmt& st) {
    int k = 1;
    for (std::size_t i = 0; i < run_cols.size(); ++i) {
      if (run_cols[i] == "id") continue;
      sqlite3_bind_value(st.get(), k++, sqlite3_column_value(rows.get(), static_cast<int>(i)));
    }
    return k;
  };
  const auto copy_all = [&](std::int64_t src_id, std::int64_t dest_id) {
    for (const char* table : {"summaries", "requests", "timeseries"}) {
      copy_children(src, other_path, db_, path_, table, src_id, dest_id);
    }
  };

  while (rows.step()) {
    const std::string status = rows.text(c_status);
    const std::int64_t src_id = rows.int64(c_id);
    if (status == "running") {
      ++stats.skipped;
      continue;
    }
    find.reset();
    find.bind(1, rows.text(c_key));
    if (!find.step()) {
      ins.reset();
      bind_row(ins);
      ins.step();
      copy_all(src_id, sqlite3_last_insert_rowid(db_));
      ++stats.added;
      continue;
    }
    const std::int64_t dest_id = find.int64(0);
    const std::string dest_status = find.text(1);
    if (dest_status == "done" && status == "done") {
      const std::string where = "run " + rows.text(c_key).substr(0, 12) + " (" + rows.text(c_name) +
                                ", seed " + std::to_string(rows.int64(c_seed)) + ")";
      if (find.text(2) != rows.text(c_yaml) || find.int64(3) != rows.int64(c_seed)) {
        throw InputError(other_path, 0, 0,
                         "conflicts with " + path_ + " on " + where + ": different scenarios");
      }
      const auto a = row_values(db_, path_, "SELECT * FROM summaries WHERE run_id = ?", dest_id);
      const auto b =
          row_values(src, other_path, "SELECT * FROM summaries WHERE run_id = ?", src_id);
      std::set<std::string> names;
      for (const auto& [k, v] : a) names.insert(k);
      for (const auto& [k, v] : b) names.insert(k);
      for (const auto& n : names) {
        if (n == "run_id") continue;
        const auto ia = a.find(n);
        const auto ib = b.find(n);
        const Value va = ia == a.end() ? Value{} : ia->second;
        const Value vb = ib == b.end() ? Value{} : ib->second;
        if (!(va == vb)) {
          std::string msg = "conflicts with the merged databases on " + where;
          msg += ": " + n;
          msg += " is " + vb.show();
          msg += " here and " + va.show();
          msg += " there; nothing was written";
          throw InputError(other_path, 0, 0, msg);
        }
      }
      ++stats.identical;
      continue;
    }
    if (status == "done" && dest_status != "done") {
      // A failed or unfinished run is completed by a done one; its old detail rows are none.
      upd.reset();
      const int k = bind_row(upd);
      upd.bind(k, dest_id);
      upd.step();
      for (const char* table : {"summaries", "requests", "timeseries"}) {
        Stmt del_check(db_, "SELECT count(*) FROM " + quote_ident(table) + " WHERE run_id = ?",
                       path_);
        del_check.bind(1, dest_id);
        if (del_check.step() && del_check.int64(0) != 0) {
          throw InputError(path_, 0, 0,
                           "run " + rows.text(c_key) + " is not done but has " + table + " rows");
        }
      }
      copy_all(src_id, dest_id);
      ++stats.replaced;
      continue;
    }
    if (dest_status == "running") {
      upd.reset();
      const int k = bind_row(upd);
      upd.bind(k, dest_id);
      upd.step();
      ++stats.replaced;
      continue;
    }
    ++stats.skipped;
  }
  txn.commit();
  return stats;
}

}  // namespace kvsim::planner
