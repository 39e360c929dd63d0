// The results database: schema and its version, refusal of foreign or newer files, the
// claim / done / failed life of a run, crash recovery, two writing processes, merging, and the
// read API (ResultsDb::runs: filters, sort, limit, run keys).
#include "sim/planner/results_db.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "sim/core/error.hpp"
#include "sim/io/sinks.hpp"

namespace kvsim::planner {
namespace {

namespace fs = std::filesystem;

std::string temp_path(const std::string& name) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("kvsim_results_db_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path p = dir / name;
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(p.string() + suffix);
  return p.string();
}

std::int64_t query_int(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr), SQLITE_OK) << sql;
  std::int64_t v = -1;
  if (sqlite3_step(s) == SQLITE_ROW) v = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  return v;
}

std::string query_text(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr), SQLITE_OK) << sql;
  std::string v;
  if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0) != nullptr) {
    v = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
  }
  sqlite3_finalize(s);
  return v;
}

RunIdentity identity(const std::string& key, std::int64_t index = 0) {
  RunIdentity id;
  id.run_key = key;
  id.sweep = "test";
  id.run_index = index;
  id.base_scenario = "base.yaml";
  id.overrides_json = "{}";
  id.scenario_name = "name";
  id.scenario_yaml = "name: name\n";
  id.seed = 3;
  return id;
}

// A summary of two requests with the given first-token times.
io::Summary summary_of(double ttft_a, double ttft_b, io::RunInfo& info) {
  std::vector<io::RequestRecord> recs(2);
  recs[0].ttft_ms = ttft_a;
  recs[0].latency_ms = 100;
  recs[0].output_num_tokens = 10;
  recs[1].ttft_ms = ttft_b;
  recs[1].start_time_ms = 5;
  recs[1].latency_ms = 100;
  recs[1].output_num_tokens = 10;
  info.scenario_name = "name";
  info.seed = 3;
  return io::summarize(recs, info, 0);
}

void record(ResultsDb& db, const std::string& key, double ttft) {
  const Claim c = db.claim(identity(key), {});
  ASSERT_EQ(c.outcome, ClaimOutcome::kClaimed);
  io::RunInfo info;
  const auto s = summary_of(ttft, 2 * ttft, info);
  ASSERT_TRUE(db.record_done(c.run_id, s, info, nullptr, nullptr));
}

TEST(ResultsDb, CreatesTheVersionedSchema) {
  const auto path = temp_path("schema.db");
  {
    ResultsDb db(path, ResultsDb::Mode::kCreate);
    EXPECT_EQ(query_int(db.handle(), "PRAGMA user_version"), kSchemaVersion);
    EXPECT_EQ(query_int(db.handle(), "PRAGMA application_id"), kApplicationId);
    EXPECT_EQ(query_text(db.handle(), "PRAGMA journal_mode"), "wal");
    EXPECT_EQ(query_int(db.handle(), "SELECT count(*) FROM schema_version"),
              kSchemaVersion);  // one per migration
  }
  ResultsDb again(path, ResultsDb::Mode::kExisting);  // no second migration
  EXPECT_EQ(query_int(again.handle(), "SELECT count(*) FROM schema_version"), kSchemaVersion);
}

TEST(ResultsDb, SummaryColumnsHoldEveryKeyOfTheCsvSink) {
  // The CSV sink flattens the summary the same way; with every tier and link kind present,
  // each of its header keys must be a column of `summaries`.
  const auto path = temp_path("columns.db");
  ResultsDb db(path, ResultsDb::Mode::kCreate);
  io::RunInfo info;
  for (const char* k : {"host_dram", "local_nvme", "remote"})
    info.tiers.push_back(io::TierInfo{k, 1, 2, 3, 4, 5, 6, 7});
  for (const char* k : {"pcie", "nvme", "nic", "store"})
    info.links.push_back(io::LinkInfo{k, 1, 2, 0.5, 0.25});
  const auto s = summary_of(1, 2, info);
  std::ostringstream csv;
  io::write_summary_csv(csv, s, info);
  std::string header = csv.str().substr(0, csv.str().find('\n'));
  std::set<std::string> columns;
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db.handle(), "PRAGMA table_info(summaries)", -1, &st, nullptr),
            SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW)
    columns.insert(reinterpret_cast<const char*>(sqlite3_column_text(st, 1)));
  sqlite3_finalize(st);
  std::stringstream keys(header);
  std::string key;
  int n = 0;
  while (std::getline(keys, key, ',')) {
    EXPECT_EQ(columns.count(key), 1U) << key;
    ++n;
  }
  EXPECT_GT(n, 100);
  // And a run's row holds the values: ttft p50 of {1, 2} is 1.5.
  const Claim c = db.claim(identity("k"), {});
  ASSERT_TRUE(db.record_done(c.run_id, s, info, nullptr, nullptr));
  EXPECT_EQ(query_text(db.handle(), "SELECT ttft_ms_p50 FROM summaries"), "1.5");
  EXPECT_EQ(query_int(db.handle(), "SELECT tier_remote_evictions FROM summaries"), 6);
  EXPECT_EQ(query_text(db.handle(), "SELECT status FROM runs"), "done");
}

TEST(ResultsDb, RefusesFilesThatAreNotKvsimDatabasesAndLeavesThemAlone) {
  const auto text = temp_path("notes.db");
  { std::ofstream(text) << "these are my notes, not a database\n"; }
  EXPECT_THROW(ResultsDb(text, ResultsDb::Mode::kCreate), InputError);
  std::ifstream in(text);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "these are my notes, not a database");

  const auto other = temp_path("other.db");
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(other.c_str(), &raw), SQLITE_OK);
  sqlite3_exec(raw, "CREATE TABLE mine (x); INSERT INTO mine VALUES (1)", nullptr, nullptr,
               nullptr);
  sqlite3_close(raw);
  try {
    ResultsDb db(other, ResultsDb::Mode::kCreate);
    FAIL() << "opened a foreign database";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not a kvsim results database"), std::string::npos);
  }
  ASSERT_EQ(sqlite3_open(other.c_str(), &raw), SQLITE_OK);
  EXPECT_EQ(query_int(raw, "SELECT count(*) FROM sqlite_master"), 1);
  EXPECT_EQ(query_int(raw, "SELECT x FROM mine"), 1);
  sqlite3_close(raw);

  EXPECT_THROW(ResultsDb(temp_path("absent.db"), ResultsDb::Mode::kExisting), InputError);
}

TEST(ResultsDb, RefusesANewerSchema) {
  const auto path = temp_path("newer.db");
  { ResultsDb db(path, ResultsDb::Mode::kCreate); }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  sqlite3_exec(raw, "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
  sqlite3_close(raw);
  try {
    ResultsDb db(path, ResultsDb::Mode::kExisting);
    FAIL() << "opened a newer schema";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos);
  }
}

TEST(ResultsDb, ClaimDoneFailedAndRetry) {
  const auto path = temp_path("claims.db");
  ResultsDb db(path, ResultsDb::Mode::kCreate);
  const Claim a = db.claim(identity("a"), {});
  EXPECT_EQ(a.outcome, ClaimOutcome::kClaimed);
  // Claimed by this very process: in flight.
  EXPECT_EQ(db.claim(identity("a"), {}).outcome, ClaimOutcome::kInFlight);
  io::RunInfo info;
  const auto s = summary_of(1, 2, info);
  EXPECT_TRUE(db.record_done(a.run_id, s, info, nullptr, nullptr));
  EXPECT_FALSE(db.record_done(a.run_id, s, info, nullptr, nullptr));  // written once only
  EXPECT_EQ(db.claim(identity("a"), {}).outcome, ClaimOutcome::kDone);

  const Claim b = db.claim(identity("b"), {});
  EXPECT_TRUE(db.record_failed(b.run_id, "boom"));
  EXPECT_EQ(db.claim(identity("b"), {}).outcome, ClaimOutcome::kFailed);
  EXPECT_EQ(db.claim(identity("b"), ClaimPolicy{true, false}).outcome, ClaimOutcome::kClaimed);
  EXPECT_EQ(query_int(db.handle(), "SELECT attempts FROM runs WHERE run_key = 'b'"), 2);
  EXPECT_EQ(query_int(db.handle(), "SELECT count(*) FROM summaries"), 1);
  EXPECT_EQ(query_int(db.handle(), "SELECT count(*) FROM runs"), 2);
}

TEST(ResultsDb, RunsOfADeadProcessAreTakenOver) {
  // A row left 'running' by a process that no longer exists (as after kill -9) is re-run.
  const auto path = temp_path("dead.db");
  const pid_t child = fork();
  if (child == 0) {
    {
      ResultsDb db(path, ResultsDb::Mode::kCreate);
      db.claim(identity("x"), {});
    }
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  ResultsDb db(path, ResultsDb::Mode::kExisting);
  EXPECT_EQ(query_text(db.handle(), "SELECT status FROM runs WHERE run_key = 'x'"), "running");
  const Claim c = db.claim(identity("x"), {});
  EXPECT_EQ(c.outcome, ClaimOutcome::kClaimed);
  EXPECT_EQ(query_int(db.handle(), "SELECT attempts FROM runs WHERE run_key = 'x'"), 2);
  EXPECT_EQ(query_int(db.handle(), "SELECT pid FROM runs WHERE run_key = 'x'"), getpid());
}

TEST(ResultsDb, TwoProcessesWritingOneDatabase) {
  // Two processes claim the same 60 keys at once; each key is done exactly once and the file
  // passes SQLite's integrity check.
  const auto path = temp_path("two.db");
  { ResultsDb db(path, ResultsDb::Mode::kCreate); }
  pid_t kids[2];
  for (auto& kid : kids) {
    kid = fork();
    if (kid == 0) {
      int rc = 0;
      try {
        ResultsDb db(path, ResultsDb::Mode::kExisting);
        io::RunInfo info;
        const auto s = summary_of(1, 2, info);
        for (int k = 0; k < 60; ++k) {
          const Claim c = db.claim(identity("key" + std::to_string(k), k), {});
          if (c.outcome == ClaimOutcome::kClaimed &&
              !db.record_done(c.run_id, s, info, nullptr, nullptr))
            rc = 2;
        }
      } catch (...) {
        rc = 1;
      }
      _exit(rc);
    }
  }
  for (const auto kid : kids) {
    int status = 0;
    waitpid(kid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  ResultsDb db(path, ResultsDb::Mode::kExisting);
  EXPECT_EQ(query_text(db.handle(), "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(query_int(db.handle(), "SELECT count(*) FROM runs WHERE status = 'done'"), 60);
  EXPECT_EQ(query_int(db.handle(), "SELECT count(*) FROM summaries"), 60);
  EXPECT_EQ(query_int(db.handle(), "SELECT max(attempts) FROM runs"), 1);
}

TEST(ResultsDb, MergeDedupesByKeyAndRefusesConflicts) {
  const auto a = temp_path("a.db");
  const auto b = temp_path("b.db");
  const auto c = temp_path("c.db");
  {
    ResultsDb da(a, ResultsDb::Mode::kCreate);
    record(da, "one", 1);
    record(da, "two", 2);
    ResultsDb db(b, ResultsDb::Mode::kCreate);
    record(db, "two", 2);
    record(db, "three", 3);
    const Claim f = db.claim(identity("four"), {});
    db.record_failed(f.run_id, "failed");
    ResultsDb dc(c, ResultsDb::Mode::kCreate);
    record(dc, "two", 2.5);  // same key, different result
    record(dc, "four", 4);   // completes the failed run
  }
  const auto out = temp_path("out.db");
  ResultsDb merged(out, ResultsDb::Mode::kCreate);
  const auto s1 = merged.merge_from(a);
  EXPECT_EQ(s1.added, 2);
  const auto s2 = merged.merge_from(b);
  EXPECT_EQ(s2.added, 2);  // three, four (failed)
  EXPECT_EQ(s2.identical, 1);
  EXPECT_EQ(query_int(merged.handle(), "SELECT count(*) FROM runs"), 4);
  EXPECT_EQ(query_int(merged.handle(), "SELECT count(*) FROM summaries"), 3);
  EXPECT_EQ(query_text(merged.handle(),
                       "SELECT ttft_ms_max FROM summaries JOIN runs ON runs.id = run_id WHERE "
                       "run_key = 'three'"),
            "6");
  try {
    merged.merge_from(c);
    FAIL() << "merged a conflict";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("ttft_ms"), std::string::npos) << e.what();
  }
  // The failed merge wrote nothing: 'four' is still failed, 'two' still 2.
  EXPECT_EQ(query_text(merged.handle(), "SELECT status FROM runs WHERE run_key = 'four'"),
            "failed");
  EXPECT_EQ(query_int(merged.handle(), "SELECT count(*) FROM summaries"), 3);
}

TEST(ResultsDb, MergeCompletesAFailedRun) {
  const auto a = temp_path("fa.db");
  const auto b = temp_path("fb.db");
  {
    ResultsDb da(a, ResultsDb::Mode::kCreate);
    const Claim f = da.claim(identity("r"), {});
    da.record_failed(f.run_id, "failed");
    ResultsDb db(b, ResultsDb::Mode::kCreate);
    record(db, "r", 7);
  }
  ResultsDb merged(temp_path("fout.db"), ResultsDb::Mode::kCreate);
  merged.merge_from(a);
  const auto s = merged.merge_from(b);
  EXPECT_EQ(s.replaced, 1);
  EXPECT_EQ(query_text(merged.handle(), "SELECT status FROM runs WHERE run_key = 'r'"), "done");
  EXPECT_EQ(query_int(merged.handle(), "SELECT ttft_ms_min FROM summaries"), 7);
}

// The read API (ResultsDb::runs) on runs the test writes: three done runs with first-token
// times 30, 10 and 20 ms (written in that order) and a failed one.
void write_runs(const std::string& path) {
  ResultsDb db(path, ResultsDb::Mode::kCreate);
  record(db, "a", 30);
  record(db, "b", 10);
  record(db, "it's", 20);
  const Claim f = db.claim(identity("f", 3), {});
  ASSERT_TRUE(db.record_failed(f.run_id, "boom"));
}

// The values of one column, run keys and text as they are, numbers as text ("NULL" for null).
std::vector<std::string> column_of(const RunTable& t, const std::string& column) {
  const int c = t.column_index(column);
  EXPECT_GE(c, 0) << column;
  std::vector<std::string> out;
  if (c < 0) return out;
  for (const auto& row : t.rows) {
    const DbValue& v = row[static_cast<std::size_t>(c)];
    switch (v.kind) {
      case DbValue::Kind::kNull:
        out.emplace_back("NULL");
        break;
      case DbValue::Kind::kInt:
        out.push_back(std::to_string(v.i));
        break;
      case DbValue::Kind::kReal: {
        std::ostringstream os;
        os << v.d;
        out.push_back(os.str());
        break;
      }
      default:
        out.push_back(v.text);
    }
  }
  return out;
}

using Keys = std::vector<std::string>;

std::string runs_error(const std::string& path, const RunQuery& q) {
  try {
    ResultsDb(path, ResultsDb::Mode::kReadOnly).runs(q);
  } catch (const InputError& e) {
    return e.diagnostics().front().to_string();
  }
  return "";
}

TEST(ResultsDbRuns, ReadsBackWhatThePlannerWrote) {
  const auto path = temp_path("runs_read.db");
  write_runs(path);
  ResultsDb db(path, ResultsDb::Mode::kReadOnly);
  const RunTable t = db.runs({});
  ASSERT_EQ(t.rows.size(), 4U);
  for (const auto& row : t.rows) EXPECT_EQ(row.size(), t.columns.size());
  EXPECT_EQ(column_of(t, "run_key"), (Keys{"a", "b", "it's", "f"}));  // the order written
  EXPECT_EQ(column_of(t, "status"), (Keys{"done", "done", "done", "failed"}));
  EXPECT_EQ(column_of(t, "error"), (Keys{"NULL", "NULL", "NULL", "boom"}));
  EXPECT_EQ(column_of(t, "seed"), (Keys{"3", "3", "3", "3"}));
  // Summary figures follow the runs' columns; a run that is not done has none.
  EXPECT_GT(t.column_index("ttft_ms_min"), t.column_index("measured_run_key"));
  EXPECT_EQ(t.column_index("run_id"), -1);
  EXPECT_EQ(column_of(t, "ttft_ms_min"), (Keys{"30", "10", "20", "NULL"}));
  EXPECT_EQ(column_of(t, "ttft_ms_max"), (Keys{"60", "20", "40", "NULL"}));
  io::RunInfo info;
  const io::Summary s = summary_of(30, 60, info);
  const DbValue rps = t.rows[0][static_cast<std::size_t>(t.column_index("requests_per_sec"))];
  ASSERT_EQ(rps.kind, DbValue::Kind::kReal);
  EXPECT_EQ(rps.d, s.requests_per_sec);
  EXPECT_EQ(column_of(t, "scenario_yaml")[0], "name: name\n");

  RunQuery narrow;
  narrow.omit_columns = {"scenario_yaml", "host"};
  const RunTable n = db.runs(narrow);
  EXPECT_EQ(n.column_index("scenario_yaml"), -1);
  EXPECT_EQ(n.column_index("host"), -1);
  EXPECT_EQ(n.columns.size(), t.columns.size() - 2);
  EXPECT_EQ(column_of(n, "ttft_ms_min"), (Keys{"30", "10", "20", "NULL"}));
}

TEST(ResultsDbRuns, FiltersSortsAndLimits) {
  const auto path = temp_path("runs_filter.db");
  write_runs(path);
  ResultsDb db(path, ResultsDb::Mode::kReadOnly);
  const auto keys = [&](const RunQuery& q) { return column_of(db.runs(q), "run_key"); };
  const auto text = [](const char* s) {
    DbValue v;
    v.kind = DbValue::Kind::kText;
    v.text = s;
    return v;
  };
  const auto number = [](std::int64_t x) {
    DbValue v;
    v.kind = DbValue::Kind::kInt;
    v.i = x;
    return v;
  };
  RunQuery q;
  q.filters = {{"status", RunFilter::Op::kEq, text("done")}};
  EXPECT_EQ(keys(q), (Keys{"a", "b", "it's"}));
  q.filters = {{"ttft_ms_min", RunFilter::Op::kGe, number(20)}};
  EXPECT_EQ(keys(q), (Keys{"a", "it's"}));
  q.filters = {{"ttft_ms_min", RunFilter::Op::kLt, number(20)}};
  EXPECT_EQ(keys(q), (Keys{"b"}));
  q.filters = {{"ttft_ms_max", RunFilter::Op::kLe, number(40)},
               {"ttft_ms_max", RunFilter::Op::kGt, number(20)}};
  EXPECT_EQ(keys(q), (Keys{"it's"}));
  q.filters = {{"run_key", RunFilter::Op::kNe, text("a")}};
  EXPECT_EQ(keys(q), (Keys{"b", "it's", "f"}));
  q.filters = {{"run_key", RunFilter::Op::kContains, text("'")}};  // bound, not spliced
  EXPECT_EQ(keys(q), (Keys{"it's"}));
  q.filters = {{"ttft_ms_min", RunFilter::Op::kEq, DbValue{}}};
  EXPECT_EQ(keys(q), (Keys{"f"}));
  q.filters = {{"ttft_ms_min", RunFilter::Op::kNe, DbValue{}}};
  EXPECT_EQ(keys(q), (Keys{"a", "b", "it's"}));

  q.filters.clear();
  q.sort_column = "ttft_ms_min";
  EXPECT_EQ(keys(q), (Keys{"f", "b", "it's", "a"}));  // NULL first
  q.descending = true;
  EXPECT_EQ(keys(q), (Keys{"a", "it's", "b", "f"}));
  q.limit = 2;
  EXPECT_EQ(keys(q), (Keys{"a", "it's"}));
  q.limit = 0;
  EXPECT_TRUE(keys(q).empty());
  q.limit = -1;
  q.sort_column = "status";  // ties keep the order written
  q.descending = false;
  EXPECT_EQ(keys(q), (Keys{"a", "b", "it's", "f"}));
  q.filters = {{"status", RunFilter::Op::kEq, text("done")}};
  q.sort_column = "ttft_ms_max";
  q.limit = 1;
  EXPECT_EQ(keys(q), (Keys{"b"}));

  // A column the file does not have is an error naming the file and the column.
  RunQuery bad;
  bad.sort_column = "no_such";
  std::string e = runs_error(path, bad);
  EXPECT_NE(e.find(path), std::string::npos) << e;
  EXPECT_NE(e.find("no column no_such"), std::string::npos) << e;
  bad.sort_column.clear();
  bad.filters = {{"nope", RunFilter::Op::kEq, number(1)}};
  e = runs_error(path, bad);
  EXPECT_NE(e.find("no column nope"), std::string::npos) << e;
  bad.filters = {{"ttft_ms_min", RunFilter::Op::kLt, DbValue{}}};
  EXPECT_NE(runs_error(path, bad).find("NULL"), std::string::npos);
}

TEST(ResultsDbRuns, KeepsTheRunsOfTheGivenKeys) {
  const auto path = temp_path("runs_keys.db");
  write_runs(path);
  ResultsDb db(path, ResultsDb::Mode::kReadOnly);
  const auto keys = [&](const RunQuery& q) { return column_of(db.runs(q), "run_key"); };
  RunQuery q;
  q.run_keys = Keys{"it's", "b", "unknown"};
  EXPECT_EQ(keys(q), (Keys{"b", "it's"}));  // the order written, not the list's
  q.sort_column = "ttft_ms_min";
  q.descending = true;
  EXPECT_EQ(keys(q), (Keys{"it's", "b"}));
  q.run_keys = Keys{};  // no keys: no runs
  EXPECT_TRUE(keys(q).empty());
  q.run_keys.reset();  // no key filter: every run
  EXPECT_EQ(keys(q).size(), 4U);

  // More keys than SQLite binds parameters in one statement: the connection's limit is lowered
  // from its default (32766) so that the list stays small.
  sqlite3_limit(db.handle(), SQLITE_LIMIT_VARIABLE_NUMBER, 50);
  const int limit = sqlite3_limit(db.handle(), SQLITE_LIMIT_VARIABLE_NUMBER, -1);
  ASSERT_EQ(limit, 50);
  Keys many;
  for (int i = 0; i <= limit; ++i) many.push_back("missing-" + std::to_string(i));
  many.emplace_back("f");
  many.emplace_back("a");
  ASSERT_GT(many.size(), static_cast<std::size_t>(limit));
  q.run_keys = many;
  q.sort_column.clear();
  EXPECT_EQ(keys(q), (Keys{"a", "f"}));
}

TEST(ResultsDbRuns, ReadOnlyOpenNamesWhatTheFileIsAndChangesNothing) {
  const auto error = [](const std::string& path) {
    try {
      ResultsDb db(path, ResultsDb::Mode::kReadOnly);
    } catch (const InputError& e) {
      return e.diagnostics().front().to_string();
    }
    return std::string();
  };
  const auto missing = temp_path("ro_missing.db");
  EXPECT_NE(error(missing).find("no such file"), std::string::npos);
  const auto text = temp_path("ro_text.db");
  std::ofstream(text) << std::string(4096, 'x');
  const std::string e = error(text);
  EXPECT_NE(e.find(text), std::string::npos) << e;
  EXPECT_NE(e.find("not an SQLite database"), std::string::npos) << e;

  const auto other = temp_path("ro_other.db");
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(other.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE runs(id INTEGER)", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  EXPECT_NE(error(other).find("another application"), std::string::npos);

  // A kvsim file of an older, hand-made layout is read as it is: no migration.
  const auto old = temp_path("ro_old.db");
  ASSERT_EQ(sqlite3_open(old.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw,
                         "PRAGMA application_id = 1802924909; CREATE TABLE runs(run_id INTEGER, "
                         "run_key TEXT); INSERT INTO runs VALUES (7, 'k');",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  {
    ResultsDb db(old, ResultsDb::Mode::kReadOnly);
    const RunTable t = db.runs({});
    EXPECT_EQ(t.columns, (Keys{"run_id", "run_key"}));
    EXPECT_EQ(column_of(t, "run_id"), (Keys{"7"}));
  }
  ASSERT_EQ(sqlite3_open(old.c_str(), &raw), SQLITE_OK);
  EXPECT_EQ(query_int(raw, "PRAGMA user_version"), 0);
  EXPECT_EQ(query_int(raw, "SELECT count(*) FROM sqlite_master"), 1);
  sqlite3_close(raw);
}

}  // namespace
}  // namespace kvsim::planner
