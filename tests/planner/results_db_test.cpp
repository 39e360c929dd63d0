// The results database: schema and its version, refusal of foreign or newer files, the
// claim / done / failed life of a run, crash recovery, two writing processes, and merging.
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
    EXPECT_EQ(query_int(db.handle(), "SELECT count(*) FROM schema_version"), kSchemaVersion);  // one per migration
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

}  // namespace
}  // namespace kvsim::planner
