// Sweeps end to end through the library: every run lands in the database once, a second
// sweep skips them, a run's stored summary equals a direct run of its scenario, and shards
// merged equal the whole sweep.
#include "sim/planner/sweep.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "sim/core/error.hpp"
#include "sim/io/summary.hpp"
#include "sim/planner/results_db.hpp"
#include "sim/planner/run_key.hpp"
#include "sim/cluster/simulation.hpp"

namespace kvsim::planner {
namespace {

namespace fs = std::filesystem;

const std::string kSweep = std::string(KVSIM_SOURCE_DIR) + "/tests/planner/data/tiny-sweep.yaml";

std::string temp_path(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("kvsim_sweep_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path p = dir / name;
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(p.string() + suffix);
  return p.string();
}

double query_double(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr), SQLITE_OK) << sql;
  double v = std::nan("");
  if (sqlite3_step(s) == SQLITE_ROW) v = sqlite3_column_double(s, 0);
  sqlite3_finalize(s);
  return v;
}

std::string query_keys(sqlite3* db) {
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, "SELECT run_key || ':' || status FROM runs ORDER BY run_key", -1,
                               &s, nullptr),
            SQLITE_OK);
  std::string out;
  while (sqlite3_step(s) == SQLITE_ROW)
    out += std::string(reinterpret_cast<const char*>(sqlite3_column_text(s, 0))) + "\n";
  sqlite3_finalize(s);
  return out;
}

TEST(Sweep, RunsEveryRunOnceAndResumes) {
  const auto spec = load_sweep(kSweep);
  SweepOptions o;
  o.db_path = temp_path("tiny.db");
  o.jobs = 2;
  const auto runs = plan_runs(spec, o);
  ASSERT_EQ(runs.size(), 8U);  // 2 loads x 2 batch limits x 2 seeds
  const auto first = run_sweep(spec, runs, o, nullptr);
  EXPECT_EQ(first.ran_done, 8);
  EXPECT_EQ(first.ran_failed, 0);
  const auto second = run_sweep(spec, runs, o, nullptr);
  EXPECT_EQ(second.ran_done, 0);
  EXPECT_EQ(second.already_done, 8);

  ResultsDb db(o.db_path, ResultsDb::Mode::kExisting);
  EXPECT_EQ(query_double(db.handle(), "SELECT count(*) FROM runs WHERE status = 'done'"), 8);
  EXPECT_EQ(query_double(db.handle(), "SELECT count(*) FROM summaries"), 8);

  // Run 3 is num_clients 1, max_num_seqs 256, repetition 1: its seed derives from the example's
  // seed 0, and its stored figures are those of running that scenario directly.
  scenario::LoadOptions lo;
  lo.overrides = {
      {"workload.generation.num_conversations", "4"},
      {"workload.generation.prompt_input.num_turns", "{distribution: uniform, min: 2, max: 3}"},
      {"workload.clients.num_clients", "1"},
      {"workload.clients.max_active_conversations", "2"},
      {"engine.max_num_seqs", "256"},
      {"seed", std::to_string(repetition_seed(0, 1))}};
  const auto sc = scenario::load_scenario(
      std::string(KVSIM_SOURCE_DIR) + "/scenarios/examples/rtx4090-llama3.1-8b-multiturn.yaml", lo);
  EXPECT_EQ(runs[3].id.run_key, run_key(sc.resolved_yaml, sc.seed));
  cluster::Simulation sim(sc);
  const auto result = sim.run();
  const auto summary = io::summarize(result.requests, result.info, 0);
  const std::string where =
      " FROM summaries JOIN runs ON runs.id = summaries.run_id WHERE runs.run_index = 3";
  EXPECT_EQ(query_double(db.handle(), "SELECT ttft_ms_p90" + where),
            summary.ttft_ms.percentile(0.9));
  EXPECT_EQ(query_double(db.handle(), "SELECT num_requests" + where),
            static_cast<double>(summary.num_requests));
  EXPECT_EQ(query_double(db.handle(), "SELECT runs.seed" + where),
            static_cast<double>(repetition_seed(0, 1)));
}

TEST(Sweep, ShardsMergedEqualTheWholeSweep) {
  const auto spec = load_sweep(kSweep);
  SweepOptions whole;
  whole.db_path = temp_path("whole.db");
  whole.jobs = 2;
  run_sweep(spec, plan_runs(spec, whole), whole, nullptr);
  const auto merged_path = temp_path("merged.db");
  ResultsDb merged(merged_path, ResultsDb::Mode::kCreate);
  std::int64_t total = 0;
  for (std::int64_t k = 0; k < 3; ++k) {
    SweepOptions o;
    o.db_path = temp_path("shard" + std::to_string(k) + ".db");
    o.jobs = 1;
    o.shard = Shard{k, 3, "test"};
    const auto runs = plan_runs(spec, o);
    for (const auto& r : runs) EXPECT_EQ(r.point.index % 3, k);
    total += static_cast<std::int64_t>(runs.size());
    run_sweep(spec, runs, o, nullptr);
    merged.merge_from(o.db_path);
  }
  EXPECT_EQ(total, 8);
  ResultsDb w(whole.db_path, ResultsDb::Mode::kExisting);
  EXPECT_EQ(query_keys(merged.handle()), query_keys(w.handle()));
  // Merging the whole sweep in finds every run identical (same summaries to the bit).
  const auto stats = merged.merge_from(whole.db_path);
  EXPECT_EQ(stats.identical, 8);
  EXPECT_EQ(stats.added, 0);
}

TEST(Sweep, ABadOverrideStopsBeforeAnyRun) {
  auto spec = load_sweep(kSweep);
  spec.set.push_back({"engine.max_num_seqz", "3"});
  SweepOptions o;
  o.db_path = temp_path("bad.db");
  EXPECT_THROW(plan_runs(spec, o), InputError);
  EXPECT_FALSE(fs::exists(o.db_path));
}

}  // namespace
}  // namespace kvsim::planner
