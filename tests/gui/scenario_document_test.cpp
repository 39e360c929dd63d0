// The scenario document: knob edits keep the file's comments (only the edited line changes) and
// mean what the equivalent --set override means; bad values are refused with the decoder's
// message; malformed YAML gives diagnostics with a line number instead of a scenario.
#include "gui/models/scenario_document.hpp"

#include <gtest/gtest.h>

#include <QSignalSpy>
#include <QStringList>
#include <QTemporaryDir>

#include "sim/scenario/scenario.hpp"

namespace kvsim::gui {
namespace {

const QString kExample =
    QStringLiteral(KVSIM_SOURCE_DIR "/scenarios/examples/rtx4090-llama3.1-8b-multiturn.yaml");

TEST(ScenarioDocument, KnobEditChangesOnlyItsLine) {
  ScenarioDocument doc;
  ASSERT_TRUE(doc.open(kExample));
  ASSERT_TRUE(doc.scenario().has_value());
  EXPECT_EQ(doc.scenario()->engine.max_num_seqs, 256);  // as the example file writes it
  const QStringList before = doc.text().split(QLatin1Char('\n'));
  ASSERT_TRUE(doc.set_value("engine.max_num_seqs", "128"));
  EXPECT_TRUE(doc.last_edit_in_place());
  EXPECT_TRUE(doc.modified());
  ASSERT_TRUE(doc.scenario().has_value());
  EXPECT_EQ(doc.scenario()->engine.max_num_seqs, 128);
  const QStringList after = doc.text().split(QLatin1Char('\n'));
  ASSERT_EQ(before.size(), after.size());
  int changed = 0;
  for (qsizetype i = 0; i < before.size(); ++i) {
    if (before[i] != after[i]) {
      ++changed;
      EXPECT_EQ(after[i].trimmed(), QStringLiteral("max_num_seqs: 128"));
    }
  }
  EXPECT_EQ(changed, 1);
}

TEST(ScenarioDocument, EditMeansWhatTheOverrideMeans) {
  ScenarioDocument doc;
  ASSERT_TRUE(doc.open(kExample));
  ASSERT_TRUE(doc.set_value("hardware.servers.0.gpu.memory", "48GiB"));  // a key beside `preset`
  const auto with_override = scenario::load_scenario(
      kExample.toStdString(), {{{"hardware.servers.0.gpu.memory", "48GiB"}}, "", "", ""});
  ASSERT_TRUE(doc.scenario().has_value());
  EXPECT_TRUE(scenario::scenario_differences(*doc.scenario(), with_override).empty());
  EXPECT_TRUE(doc.text().contains(QStringLiteral("gpu: {memory: 48GiB, preset: rtx4090}")));
}

TEST(ScenarioDocument, RefusesABadValueAndKeepsTheText) {
  ScenarioDocument doc;
  ASSERT_TRUE(doc.open(kExample));
  const QString before = doc.text();
  EXPECT_FALSE(doc.set_value("engine.max_num_seqs", "many"));
  EXPECT_TRUE(doc.last_error().contains(QStringLiteral("max_num_seqs")));
  EXPECT_EQ(doc.text(), before);
  EXPECT_FALSE(doc.modified());
}

TEST(ScenarioDocument, MalformedYamlGivesLocatedDiagnostics) {
  ScenarioDocument doc;
  QSignalSpy changed(&doc, &ScenarioDocument::scenarioChanged);
  doc.set_text(QStringLiteral("name: x\nengine: [unclosed\n"));
  EXPECT_FALSE(doc.scenario().has_value());
  ASSERT_FALSE(doc.diagnostics().empty());
  EXPECT_GE(doc.diagnostics().front().line, 2);  // the problem is on or after line 2
  EXPECT_EQ(changed.count(), 1);
}

TEST(ScenarioDocument, SaveWritesTheTextAndClearsModified) {
  QTemporaryDir dir;
  ScenarioDocument doc;
  ASSERT_TRUE(doc.open(kExample));
  ASSERT_TRUE(doc.set_value("workload.clients.num_clients", "4"));
  const QString out = dir.filePath(QStringLiteral("copy.yaml"));
  // Relative paths in the example (the fitted profile) no longer resolve from the temporary
  // folder, so the copy is checked as text, not decoded.
  ASSERT_TRUE(doc.save(out));
  EXPECT_FALSE(doc.modified());
  QFile f(out);
  ASSERT_TRUE(f.open(QIODevice::ReadOnly));
  EXPECT_TRUE(QString::fromUtf8(f.readAll()).contains(QStringLiteral("num_clients: 4 ")));
}

}  // namespace
}  // namespace kvsim::gui
