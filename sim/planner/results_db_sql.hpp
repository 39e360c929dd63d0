#pragma once
// What the results database's source files share (private to sim/planner): the prepared
// statement wrapper, transactions, identifier quoting and table introspection, and the column
// lists the schema and the writers both derive from the summary and the sinks. Every SQL
// statement kvsim issues is in sim/planner/results_db*.cpp.
#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/io/results.hpp"
#include "sim/planner/results_db.hpp"

namespace kvsim::planner::sql {

// A prepared statement that finalizes itself. Errors are InputErrors naming the database file.
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
  // Binds the arguments to parameters 1, 2, ... in order.
  template <typename... Args>
  void bind_all(const Args&... args) {
    int i = 0;
    (bind(++i, args), ...);
  }
  void bind_value(int i, const DbValue& v) {
    switch (v.kind) {
      case DbValue::Kind::kNull:
        bind_null(i);
        break;
      case DbValue::Kind::kInt:
        bind(i, v.i);
        break;
      case DbValue::Kind::kReal:
        bind(i, v.d);
        break;
      case DbValue::Kind::kText:
        bind(i, v.text);
        break;
      case DbValue::Kind::kBlob:
        check(sqlite3_bind_blob(s_, i, v.text.data(), static_cast<int>(v.text.size()),
                                SQLITE_TRANSIENT));
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
  // A column of the current row with its storage class.
  DbValue value(int col) {
    DbValue v;
    switch (sqlite3_column_type(s_, col)) {
      case SQLITE_INTEGER:
        v.kind = DbValue::Kind::kInt;
        v.i = sqlite3_column_int64(s_, col);
        break;
      case SQLITE_FLOAT:
        v.kind = DbValue::Kind::kReal;
        v.d = sqlite3_column_double(s_, col);
        break;
      case SQLITE_TEXT:
        v.kind = DbValue::Kind::kText;
        v.text = text(col);
        break;
      case SQLITE_BLOB: {
        v.kind = DbValue::Kind::kBlob;
        const auto* p = static_cast<const char*>(sqlite3_column_blob(s_, col));
        if (p != nullptr) v.text.assign(p, static_cast<std::size_t>(sqlite3_column_bytes(s_, col)));
        break;
      }
      default:
        break;
    }
    return v;
  }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK)
      throw InputError(path_, 0, 0, std::string("results database: ") + sqlite3_errmsg(db_));
  }
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
  std::string path_;
};

inline void exec(sqlite3* db, const std::string& sql, const std::string& path) {
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

inline std::string quote_ident(const std::string& name) {
  std::string out = "\"";
  for (const char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

inline std::int64_t pragma_int(sqlite3* db, const std::string& pragma, const std::string& path) {
  Stmt s(db, "PRAGMA " + pragma, path);
  return s.step() ? s.int64(0) : 0;
}

// Column names and declared types of a table, in order; none when there is no such table.
inline std::vector<std::pair<std::string, std::string>> table_column_defs(sqlite3* db,
                                                                          const std::string& table,
                                                                          const std::string& path) {
  std::vector<std::pair<std::string, std::string>> out;
  Stmt s(db, "PRAGMA table_info(" + quote_ident(table) + ")", path);
  while (s.step()) out.emplace_back(s.text(1), s.text(2));
  return out;
}
inline std::vector<std::string> table_columns(sqlite3* db, const std::string& table,
                                              const std::string& path) {
  std::vector<std::string> out;
  for (auto& [name, type] : table_column_defs(db, table, path)) out.push_back(std::move(name));
  return out;
}

// (column, declared type) of cells: TEXT for text, NUMERIC otherwise (integers stay integers,
// reals stay reals). results_db.cpp.
std::vector<std::pair<std::string, std::string>> column_defs(const std::vector<Cell>& cells);
// Per-request columns, every key of io::write_requests_json: the first record's cells, and
// with `rows` every record's. results_db.cpp.
std::vector<Cell> request_cells_of(const std::vector<io::RequestRecord>& records,
                                   std::vector<std::vector<Cell>>* rows);
// Per-step columns: the time-series CSV header (io::TimeseriesCsvWriter::kHeader).
// results_db.cpp.
std::vector<std::string> timeseries_columns();

}  // namespace kvsim::planner::sql
