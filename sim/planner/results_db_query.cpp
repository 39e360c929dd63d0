// Reads of the results database: the runs with their summaries as a table (the GUI's results
// browser) and the summaries of done runs (maps, capacity searches).
#include <algorithm>
#include <array>
#include <limits>
#include <nlohmann/json.hpp>

#include "sim/planner/results_db.hpp"
#include "sim/planner/results_db_sql.hpp"

namespace kvsim::planner {

using sql::quote_ident;
using sql::Stmt;

int RunTable::column_index(const std::string& name) const {
  const auto it = std::find(columns.begin(), columns.end(), name);
  return it == columns.end() ? -1 : static_cast<int>(it - columns.begin());
}

namespace {

// The SQL of each comparison, by RunFilter::Op (kContains is a function call instead).
constexpr std::array<const char*, 7> kComparisons = {" = ?", " != ?", " < ?", " <= ?",
                                                     " > ?", " >= ?", ""};

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

RunTable ResultsDb::runs(const RunQuery& query) {
  const std::lock_guard<std::mutex> lock(mu_);
  const auto run_cols = sql::table_columns(db_, "runs", path_);
  if (run_cols.empty())
    throw InputError(path_, 0, 0, "not a kvsim results database: it has no runs table");
  const auto sum_cols = sql::table_columns(db_, "summaries", path_);
  // The runs' id as summaries.run_id refers to it (a runs table of its own run_id column in
  // hand-made layouts); without summaries.run_id there is nothing to join.
  const std::string id_col = contains(run_cols, "run_id") ? "run_id" : "id";
  const bool join = contains(sum_cols, "run_id");

  // Every column a filter or the sort may name, as an SQL expression; the selected ones.
  std::map<std::string, std::string> expr;
  RunTable out;
  std::string select;
  const auto add = [&](const std::string& column, const char* table) {
    const std::string e = std::string(table) + "." + quote_ident(column);
    expr.emplace(column, e);
    if (query.omit_columns.count(column) != 0) return;
    select += (select.empty() ? "" : ", ") + e;
    out.columns.push_back(column);
  };
  for (const auto& c : run_cols) add(c, "r");
  if (join) {
    for (const auto& c : sum_cols) {
      if (c != "run_id" && expr.count(c) == 0) add(c, "s");
    }
  }
  const auto column = [&](const std::string& name, const char* what) {
    const auto it = expr.find(name);
    if (it == expr.end()) {
      throw InputError(path_, 0, 0,
                       std::string("cannot ") + what + ": the database has no column " + name);
    }
    return it->second;
  };

  std::string sql = "SELECT " + (select.empty() ? std::string("r.rowid") : select) + " FROM runs r";
  if (join) sql += " LEFT JOIN summaries s ON s.run_id = r." + quote_ident(id_col);
  std::vector<std::string> where;
  std::vector<DbValue> params;
  for (const auto& f : query.filters) {
    const std::string e = column(f.column, "filter");
    if (f.value.kind == DbValue::Kind::kNull) {
      if (f.op != RunFilter::Op::kEq && f.op != RunFilter::Op::kNe) {
        throw InputError(path_, 0, 0,
                         "cannot filter: " + f.column + " can only be equal or not to NULL");
      }
      where.push_back(e + (f.op == RunFilter::Op::kEq ? " IS NULL" : " IS NOT NULL"));
    } else if (f.op == RunFilter::Op::kContains) {
      where.push_back("instr(CAST(" + e + " AS TEXT), ?) > 0");
      params.push_back(f.value);
    } else {
      where.push_back(e + kComparisons.at(static_cast<std::size_t>(f.op)));
      params.push_back(f.value);
    }
  }
  if (query.run_keys) {
    if (!contains(run_cols, "run_key"))
      throw InputError(path_, 0, 0,
                       "cannot filter by run key: the runs table has no run_key column");
    // One parameter, a JSON array, however many keys: a list of `?` would stop at SQLite's
    // limit on bound parameters (SQLITE_LIMIT_VARIABLE_NUMBER).
    DbValue keys;
    keys.kind = DbValue::Kind::kText;
    keys.text = nlohmann::json(*query.run_keys)
                    .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    where.emplace_back("r.\"run_key\" IN (SELECT value FROM json_each(?))");
    params.push_back(std::move(keys));
  }
  for (std::size_t i = 0; i < where.size(); ++i) sql += (i == 0 ? " WHERE " : " AND ") + where[i];
  sql += " ORDER BY ";
  if (!query.sort_column.empty())
    sql += column(query.sort_column, "sort") + (query.descending ? " DESC, " : " ASC, ");
  sql += "r.rowid";
  if (query.limit >= 0) {
    sql += " LIMIT ?";
    DbValue limit;
    limit.kind = DbValue::Kind::kInt;
    limit.i = query.limit;
    params.push_back(limit);
  }

  Stmt q(db_, sql, path_);
  for (std::size_t i = 0; i < params.size(); ++i) q.bind_value(static_cast<int>(i) + 1, params[i]);
  while (q.step()) {
    std::vector<DbValue> row;
    row.reserve(out.columns.size());
    for (std::size_t c = 0; c < out.columns.size(); ++c)
      row.push_back(q.value(static_cast<int>(c)));
    out.rows.push_back(std::move(row));
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

}  // namespace kvsim::planner
