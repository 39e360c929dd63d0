// The browser on a database written by the planner itself (kvsim::planner::ResultsDb, what
// `kvsim sweep` uses): a done run of the example shows its status and its summary figures,
// equal to the summary that was recorded.
#include <gtest/gtest.h>

#include <QTemporaryDir>

#include "gui/models/results_db_model.hpp"
#include "gui/models/run_data.hpp"
#include "gui/models/scenario_document.hpp"
#include "sim/planner/results_db.hpp"

namespace kvsim::gui {
namespace {

TEST(ResultsDbModel, ReadsADatabaseThePlannerWrote) {
  ScenarioDocument doc;
  ASSERT_TRUE(doc.open(
      QStringLiteral(KVSIM_SOURCE_DIR "/scenarios/examples/rtx4090-llama3.1-8b-multiturn.yaml")));
  const RunPtr run =
      run_job(single_job(doc.text().toStdString(), doc.display_name(), doc.load_options(), "x"));
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("sweep.db"));
  {
    planner::ResultsDb db(path.toStdString(), planner::ResultsDb::Mode::kCreate);
    planner::RunIdentity id;
    id.run_key = "key-1";
    id.sweep = "gui-test";
    id.base_scenario = "example.yaml";
    id.overrides_json = "{}";
    id.scenario_name = run->info.scenario_name;
    id.scenario_yaml = "name: x";
    const auto claim = db.claim(id, {});
    ASSERT_EQ(claim.outcome, planner::ClaimOutcome::kClaimed);
    ASSERT_TRUE(db.record_done(claim.run_id, run->summary, run->info, nullptr, nullptr));
  }
  ResultsDbModel m;
  m.open(path);
  ASSERT_EQ(m.rowCount(), 1);
  EXPECT_EQ(m.index(0, m.column_index(QStringLiteral("status"))).data().toString(),
            QStringLiteral("done"));
  EXPECT_EQ(m.index(0, m.column_index(QStringLiteral("sweep"))).data().toString(),
            QStringLiteral("gui-test"));
  const int rps = m.column_index(QStringLiteral("requests_per_sec"));
  ASSERT_GE(rps, 0);
  EXPECT_DOUBLE_EQ(m.index(0, rps).data(Qt::EditRole).toDouble(), run->summary.requests_per_sec);
  EXPECT_TRUE(m.numeric_columns().contains(QStringLiteral("requests_per_sec")));
  EXPECT_EQ(m.column_index(QStringLiteral("scenario_yaml")), -1);  // wide text left out
}

}  // namespace
}  // namespace kvsim::gui
