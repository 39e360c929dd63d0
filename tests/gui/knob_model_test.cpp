// The knob form: rows generated from the decoder's field tables, values as the resolved YAML
// writes them, edits go through the document; passes QAbstractItemModelTester.
#include "gui/models/knob_model.hpp"

#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QSignalSpy>

#include "gui/models/diagnostics_model.hpp"
#include "gui/models/scenario_document.hpp"
#include "sim/scenario/tables.hpp"

namespace kvsim::gui {
namespace {

const QString kExample =
    QStringLiteral(KVSIM_SOURCE_DIR "/scenarios/examples/rtx4090-llama3.1-8b-multiturn.yaml");

QString value_of(const KnobModel& m, const std::string& path) {
  const int row = m.row_of(path);
  return row < 0 ? QString() : m.index(row, KnobModel::kValue).data().toString();
}

TEST(KnobModel, PassesTheModelTesterAndShowsTheFileValues) {
  ScenarioDocument doc;
  ASSERT_TRUE(doc.open(kExample));
  KnobModel model(&doc);
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  // Values the example file writes.
  EXPECT_EQ(value_of(model, "workload.clients.num_clients"), QStringLiteral("8"));
  EXPECT_EQ(value_of(model, "engine.max_num_seqs"), QStringLiteral("256"));
  EXPECT_EQ(value_of(model, "engine.scheduling_policy"), QStringLiteral("fcfs"));
  EXPECT_EQ(value_of(model, "hardware.servers.0.count"), QStringLiteral("1"));
  EXPECT_TRUE(model.index(model.row_of("workload.clients.num_clients"), 0)
                  .data(KnobModel::kCommonRole)
                  .toBool());
  EXPECT_TRUE(
      model.index(model.row_of("engine.max_num_seqs"), 0).data(KnobModel::kNumericRole).toBool());
  // Name, description and output are not knobs.
  EXPECT_EQ(model.row_of("name"), -1);
  EXPECT_EQ(model.row_of("output.format"), -1);
}

TEST(KnobModel, HasARowForEveryScalarKeyOfTheEngineTable) {
  ScenarioDocument doc;
  ASSERT_TRUE(doc.open(kExample));
  KnobModel model(&doc);
  int scalar_keys = 0;
  for (const auto& f : scenario::engine_table().fields) {
    if (!scenario::is_scalar_kind(f.kind)) continue;
    ++scalar_keys;
    EXPECT_GE(model.row_of("engine." + f.key), 0) << f.key;
  }
  EXPECT_GT(scalar_keys, 5);
}

TEST(KnobModel, EnumKeysOfferTheirNames) {
  ScenarioDocument doc;
  ASSERT_TRUE(doc.open(kExample));
  KnobModel model(&doc);
  const QStringList names = model.index(model.row_of("engine.scheduling_policy"), KnobModel::kValue)
                                .data(KnobModel::kChoicesRole)
                                .toStringList();
  EXPECT_TRUE(names.contains(QStringLiteral("fcfs")));
  EXPECT_TRUE(names.contains(QStringLiteral("priority")));
}

TEST(KnobModel, EditingAValueChangesTheDocument) {
  ScenarioDocument doc;
  ASSERT_TRUE(doc.open(kExample));
  KnobModel model(&doc);
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  QSignalSpy rejected(&model, &KnobModel::editRejected);
  const QModelIndex v =
      model.index(model.row_of("workload.clients.num_clients"), KnobModel::kValue);
  ASSERT_TRUE(model.setData(v, QStringLiteral("4")));
  EXPECT_EQ(value_of(model, "workload.clients.num_clients"), QStringLiteral("4"));
  EXPECT_EQ(doc.scenario()->workload.clients.num_clients, 4);
  EXPECT_FALSE(model.setData(v, QStringLiteral("-3")));  // clients must be at least 1
  EXPECT_EQ(rejected.count(), 1);
  EXPECT_EQ(value_of(model, "workload.clients.num_clients"), QStringLiteral("4"));
}

TEST(KnobModel, KeepsTheLastGoodFormWhileTheTextIsBroken) {
  ScenarioDocument doc;
  ASSERT_TRUE(doc.open(kExample));
  KnobModel model(&doc);
  const int rows = model.rowCount();
  doc.set_text(QStringLiteral("engine: [unclosed\n"));
  EXPECT_EQ(model.rowCount(), rows);
}

TEST(DiagnosticsModel, ListsEachProblemWithItsLine) {
  DiagnosticsModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  model.set_diagnostics({Diagnostic{"f.yaml", 3, 7, "engine.max_num_seqs", "must be >= 1"},
                         Diagnostic{"f.yaml", 9, 1, "workload", "unknown key"}});
  ASSERT_EQ(model.rowCount(), 2);
  EXPECT_EQ(model.index(0, DiagnosticsModel::kLine).data().toInt(), 3);
  EXPECT_EQ(model.index(0, DiagnosticsModel::kColumn).data().toInt(), 7);
  EXPECT_EQ(model.index(1, DiagnosticsModel::kMessage).data().toString(),
            QStringLiteral("unknown key"));
}

TEST(AxisUnit, ScalesBaseUnitsToDisplayUnits) {
  EXPECT_EQ(axis_unit(scenario::FieldKind::kBytes).scale, 1073741824.0);  // GiB
  EXPECT_EQ(axis_unit(scenario::FieldKind::kTime).scale, 1e6);            // ns per ms
  EXPECT_EQ(axis_unit(scenario::FieldKind::kInt).scale, 1.0);
}

}  // namespace
}  // namespace kvsim::gui
