// Measured runs in the planner's results database: a replay against the fake server is found
// there with its requests, requests are committed as they end (an interrupted replay keeps
// them), kvsim validate's prediction names its measured run, and a schema-1 file migrates.
#include "validation/src/replay_db.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>

#include "sim/planner/results_db.hpp"
#include "tests/validation/fake_server.hpp"
#include "validation/src/replay.hpp"
#include "validation/src/report.hpp"

namespace kvsim::validation {
namespace {

using testing::FakeServer;

const std::string kScenario =
    std::string(KVSIM_TEST_DATA_DIR) + "/validation/data/small-multiturn.yaml";

std::string temp_db(const std::string& name) {
  const auto p = std::filesystem::temp_directory_path() /
                 ("kvsim-replay-db-" + std::to_string(::getpid()) + "-" + name);
  for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(p.string() + ext);
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
  if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0) != nullptr)
    v = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
  sqlite3_finalize(s);
  return v;
}

ReplayOptions options(const std::string& url) {
  ReplayOptions o;
  o.url = url;
  o.model = "fake-model";
  o.timeouts.first_token_s = 1.0;
  o.timeouts.idle_s = 1.0;
  o.timeouts.total_s = 20;
  o.retry.max_retries = 0;
  return o;
}

TEST(ReplayDb, AReplayIsFoundWithItsRequestsAndItsPrediction) {
  const auto sc = scenario::load_scenario(kScenario, {});
  FakeServer server({"--mode", "ok"});
  const std::string path = temp_db("replay.db");
  const std::string key = new_measured_run_key(sc, server.url(), "fake-model");
  ReplayRun run;
  {
    MeasuredRunWriter writer(path, sc, key);
    ReplayOptions o = options(server.url());
    std::int64_t seen = 0;
    o.on_record = [&](const ReplayRecord& r) {
      writer.add(r);
      ++seen;
      // Committed already: another connection sees the request while the replay runs.
      planner::ResultsDb reader(path, planner::ResultsDb::Mode::kExisting);
      EXPECT_EQ(query_int(reader.handle(), "SELECT count(*) FROM requests"), seen);
    };
    run = run_replay(sc, o);
    run.run_key = key;
    writer.finish(run);
  }
  ASSERT_GE(run.records.size(), 6U);
  planner::ResultsDb db(path, planner::ResultsDb::Mode::kExisting);
  EXPECT_EQ(query_text(db.handle(), "SELECT source FROM runs WHERE run_key = '" + key + "'"), "measured");
  EXPECT_EQ(query_text(db.handle(), "SELECT status FROM runs WHERE run_key = '" + key + "'"), "done");
  const std::string id = "(SELECT id FROM runs WHERE run_key = '" + key + "')";
  EXPECT_EQ(query_int(db.handle(), "SELECT count(*) FROM requests WHERE run_id = " + id),
            static_cast<std::int64_t>(run.records.size()));
  // The summary counts the successful requests, as the replay's own summary does.
  EXPECT_EQ(query_int(db.handle(), "SELECT ttft_ms_count FROM summaries WHERE run_id = " + id),
            static_cast<std::int64_t>(measured_records(run).size()));
  // Each measured request is there with the server's counts.
  std::int64_t cached = 0;
  for (const auto& r : run.records) cached += r.request.cached_tokens;
  EXPECT_EQ(query_int(db.handle(), "SELECT sum(cached_tokens) FROM requests WHERE run_id = " + id), cached);

  // kvsim validate: the measured run is there already, the prediction is added and names it.
  std::vector<io::RequestRecord> predicted(2);
  predicted[0].ttft_ms = 10;
  predicted[1].ttft_ms = 20;
  io::RunInfo info;
  info.scenario_name = sc.name;
  const auto rows = record_validation(path, run, sc, predicted, info, "replayed");
  EXPECT_FALSE(rows.measured_added);
  EXPECT_TRUE(rows.predicted_added);
  EXPECT_EQ(query_text(db.handle(), "SELECT measured_run_key FROM runs WHERE run_key = '" +
                                        rows.predicted_run_key + "'"),
            key);
  EXPECT_EQ(query_text(db.handle(), "SELECT source FROM runs WHERE run_key = '" +
                                        rows.predicted_run_key + "'"),
            "simulated");
  // The same prediction again adds nothing.
  EXPECT_FALSE(record_validation(path, run, sc, predicted, info, "replayed").predicted_added);
  // A database without the measured run gets it from the replay file, with its requests.
  const std::string fresh = temp_db("fresh.db");
  const auto added = record_validation(fresh, run, sc, predicted, info, "replayed");
  EXPECT_TRUE(added.measured_added);
  planner::ResultsDb f(fresh, planner::ResultsDb::Mode::kExisting);
  EXPECT_EQ(query_int(f.handle(), "SELECT count(*) FROM requests WHERE run_id = (SELECT id FROM runs "
                                  "WHERE source = 'measured')"),
            static_cast<std::int64_t>(run.records.size()));
}

TEST(ReplayDb, AnInterruptedReplayKeepsItsCommittedRequests) {
  // The process dies after two requests: no finish(). The requests are in the file, the run
  // is still 'running'.
  const auto sc = scenario::load_scenario(kScenario, {});
  const std::string path = temp_db("killed.db");
  {
    MeasuredRunWriter writer(path, sc, "measured-test");
    for (int i = 0; i < 2; ++i) {
      ReplayRecord r;
      r.request.ttft_ms = 5.0 + i;
      r.request.conversation_id = "CONV_ID_0";
      writer.add(r);
    }
  }
  planner::ResultsDb db(path, planner::ResultsDb::Mode::kExisting);
  EXPECT_EQ(query_text(db.handle(), "SELECT status FROM runs WHERE run_key = 'measured-test'"), "running");
  EXPECT_EQ(query_int(db.handle(), "SELECT count(*) FROM requests"), 2);
  EXPECT_EQ(query_int(db.handle(), "SELECT sum(ttft_ms) FROM requests"), 11);
}

TEST(ReplayDb, ASchemaOneDatabaseMigratesAndItsRunsAreSimulated) {
  const std::string path = temp_db("v1.db");
  {
    planner::ResultsDb db(path, planner::ResultsDb::Mode::kCreate);
    planner::RunIdentity id;
    id.run_key = "old-run";
    id.sweep = "s";
    id.overrides_json = "{}";
    ASSERT_EQ(db.claim(id, {}).outcome, planner::ClaimOutcome::kClaimed);
    // Back to the schema-1 layout, as a kvsim of that version left it.
    ASSERT_EQ(sqlite3_exec(db.handle(),
                           "ALTER TABLE runs DROP COLUMN measured_run_key; ALTER TABLE runs DROP "
                           "COLUMN source; DELETE FROM schema_version WHERE version = 2; PRAGMA "
                           "user_version = 1",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
  }
  planner::ResultsDb db(path, planner::ResultsDb::Mode::kExisting);
  EXPECT_EQ(query_int(db.handle(), "PRAGMA user_version"), 2);
  EXPECT_EQ(query_text(db.handle(), "SELECT source FROM runs WHERE run_key = 'old-run'"), "simulated");
  EXPECT_EQ(query_int(db.handle(), "SELECT count(*) FROM schema_version"), 2);
}

}  // namespace
}  // namespace kvsim::validation
