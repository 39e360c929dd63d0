// Opening a results database and writing the results of runs (summaries, requests, time
// series); the cells those writes and the schema derive from the summary and the sinks.
#include "sim/planner/results_db.hpp"

#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/core/error.hpp"
#include "sim/io/sinks.hpp"
#include "sim/planner/results_db_sql.hpp"

namespace kvsim::planner {
namespace {

using Json = nlohmann::ordered_json;
using sql::column_defs;
using sql::quote_ident;
using sql::request_cells_of;
using sql::Stmt;
using sql::timeseries_columns;
using sql::WriteTxn;

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

std::string hostname() {
  std::array<char, 256> buf{};
  if (gethostname(buf.data(), buf.size() - 1) != 0) return "unknown";
  return std::string(buf.data());
}

// Declared type of a generated column: TEXT for text, NUMERIC otherwise (integers stay
// integers, reals stay reals).
std::string column_type(const Cell& c) { return c.kind == Cell::Kind::kText ? "TEXT" : "NUMERIC"; }

}  // namespace

namespace sql {

std::vector<std::pair<std::string, std::string>> column_defs(const std::vector<Cell>& cells) {
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(cells.size());
  for (const auto& c : cells) out.emplace_back(c.column, column_type(c));
  return out;
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

}  // namespace sql

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
  if (!end_run(run_id, "done", nullptr)) return false;
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
    for (std::size_t i = 0; i < cells.size(); ++i)
      ins.bind_value(static_cast<int>(i) + 2, cells[i]);
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
        ins.bind_value(static_cast<int>(i) + 3, request_rows[r][i]);
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
    Stmt q(db_,
           "SELECT count(*) FROM runs WHERE id = ? AND status = 'running' AND host = ? AND pid = ?",
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
      ins.bind_value(static_cast<int>(i) + 3, rows[r][i]);
    }
    ins.step();
  }
  txn.commit();
  return true;
}

}  // namespace kvsim::planner
