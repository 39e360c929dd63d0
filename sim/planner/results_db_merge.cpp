// Merge of results databases (kvsim merge): runs are copied by run key with their detail rows;
// a done run whose content differs between the databases is a conflict.
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "sim/core/error.hpp"
#include "sim/planner/results_db.hpp"
#include "sim/planner/results_db_sql.hpp"

namespace kvsim::planner {
namespace {

using sql::pragma_int;
using sql::quote_ident;
using sql::Stmt;
using sql::table_column_defs;
using sql::table_columns;
using sql::WriteTxn;

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

// A value as merge messages show it ("NULL" for null, text in quotes).
std::string show(const DbValue& v) {
  switch (v.kind) {
    case DbValue::Kind::kNull:
      return "NULL";
    case DbValue::Kind::kInt:
      return std::to_string(v.i);
    case DbValue::Kind::kReal: {
      std::ostringstream os;
      os.precision(17);
      os << v.d;
      return os.str();
    }
    default:
      return "'" + v.text + "'";
  }
}

// The row of `sql` (one parameter: a run id) by column name.
std::map<std::string, DbValue> row_values(sqlite3* db, const std::string& path,
                                          const std::string& sql, std::int64_t id) {
  std::map<std::string, DbValue> out;
  Stmt q(db, sql, path);
  q.bind(1, id);
  if (!q.step()) return out;
  const int n = sqlite3_column_count(q.get());
  for (int c = 0; c < n; ++c) out[sqlite3_column_name(q.get(), c)] = q.value(c);
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
        const DbValue va = ia == a.end() ? DbValue{} : ia->second;
        const DbValue vb = ib == b.end() ? DbValue{} : ib->second;
        if (!(va == vb)) {
          std::string msg = "conflicts with the merged databases on " + where;
          msg += ": " + n;
          msg += " is " + show(vb);
          msg += " here and " + show(va);
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
