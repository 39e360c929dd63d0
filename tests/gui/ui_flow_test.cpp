// The window's user flows, offscreen: open the example, sweep a knob in the what-if view and see
// the charts drawn; change another knob in the form, sweep again and see the series change; run
// the tier variants and see KV held per tier and link utilisation over time; cancel a long run
// while it runs and see "cancelled" with nothing kept; open malformed YAML and a foreign
// database and see a clear message, without a crash.
#include <sqlite3.h>

#include <QAbstractItemModel>
#include <QAction>
#include <QChart>
#include <QChartView>
#include <QLabel>
#include <QLineSeries>
#include <QPlainTextEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "gui/app/editor_view.hpp"
#include "gui/app/main_window.hpp"
#include "gui/app/results_view.hpp"
#include "gui/app/run_view.hpp"
#include "gui/app/whatif_view.hpp"
#include "gui/models/diagnostics_model.hpp"
#include "gui/models/knob_model.hpp"
#include "gui/models/run_controller.hpp"
#include "gui/models/run_table_model.hpp"
#include "gui/models/scenario_document.hpp"
#include "gui/models/summary_model.hpp"

using kvsim::gui::KnobModel;
using kvsim::gui::MainWindow;

namespace {

const QString kExample =
    QStringLiteral(KVSIM_SOURCE_DIR "/scenarios/examples/rtx4090-llama3.1-8b-multiturn.yaml");

// The points of the series called `name` in a chart view.
QList<QPointF> series_points(QChartView* view, const QString& name) {
  for (QAbstractSeries* s : view->chart()->series()) {
    auto* line = qobject_cast<QLineSeries*>(s);
    if (line != nullptr && line->name() == name) return line->points();
  }
  return {};
}

}  // namespace

class UiFlowTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName(QStringLiteral("kvsim-test"));
    QSettings().clear();
  }

  void changeKnobRunAndSeeTheSeriesChange() {
    MainWindow w;
    w.show();
    QVERIFY(w.open_scenario(kExample));
    QVERIFY(w.message_bar()->isHidden());
    auto* whatif = w.whatif();
    QVERIFY(
        whatif->set_knob(QStringLiteral("workload.clients.num_clients"), QStringLiteral("2, 6")));
    QVERIFY(w.run_whatif());
    QTRY_VERIFY_WITH_TIMEOUT(!w.runner()->busy(), 120000);
    QCOMPARE(whatif->model()->rowCount(), 4);  // vram-only and dram at 2 and 6 clients
    QChartView* rps = whatif->findChild<QChartView*>(QStringLiteral("whatif_requests"));
    QVERIFY(rps != nullptr);
    const QList<QPointF> before = series_points(rps, QStringLiteral("vram-only"));
    QCOMPARE(before.size(), 2);
    QCOMPARE(before[0].x(), 2.0);
    QCOMPARE(before[1].x(), 6.0);
    QVERIFY(before[1].y() > before[0].y());  // more closed-loop clients, more requests per second
    // The TTFT p90 chart carries the SLO line.
    QChartView* ttft = whatif->findChild<QChartView*>(QStringLiteral("whatif_ttft_p90"));
    QCOMPARE(series_points(ttft, QStringLiteral("SLO")).size(), 2);

    // Change a knob in the form as a user would: edit the value cell of engine.max_num_seqs.
    KnobModel* knobs = w.editor()->knob_model();
    const int row = knobs->row_of("engine.max_num_seqs");
    QVERIFY(row >= 0);
    QVERIFY(knobs->setData(knobs->index(row, KnobModel::kValue), QStringLiteral("1")));
    QVERIFY(w.document()->text().contains(QStringLiteral("max_num_seqs: 1\n")));
    QVERIFY(w.editor()->text_edit()->toPlainText().contains(QStringLiteral("max_num_seqs: 1\n")));
    QVERIFY(w.run_whatif());
    QTRY_VERIFY_WITH_TIMEOUT(!w.runner()->busy(), 120000);
    const QList<QPointF> after = series_points(rps, QStringLiteral("vram-only"));
    QCOMPARE(after.size(), 2);
    // One sequence per step serialises the clients: 6 clients cannot go faster than 1 at a time,
    // so the 6-client throughput falls.
    QVERIFY2(after[1].y() < before[1].y(),
             qPrintable(QStringLiteral("%1 vs %2").arg(after[1].y()).arg(before[1].y())));

    // A single run (Ctrl+R) lands in the run view with its summary and charts.
    QVERIFY(w.run_scenario());
    QTRY_VERIFY_WITH_TIMEOUT(!w.runner()->busy(), 60000);
    QCOMPARE(w.run_view()->summary_model()->columnCount(), 1);
    QChartView* cdf = w.run_view()->findChild<QChartView*>(QStringLiteral("run_ttft_cdf"));
    QVERIFY(!cdf->chart()->series().isEmpty());
    QVERIFY(!qobject_cast<QLineSeries*>(cdf->chart()->series().front())->points().isEmpty());
    // The example has no offload tier: the GPU's KV only, no link traffic.
    QChartView* held = w.run_view()->findChild<QChartView*>(QStringLiteral("run_kv_held"));
    QChartView* links = w.run_view()->findChild<QChartView*>(QStringLiteral("run_links"));
    QVERIFY(held != nullptr && links != nullptr);
    QVERIFY(!series_points(held, QStringLiteral("gpu")).isEmpty());
    QVERIFY(links->chart()->series().isEmpty());

    // The tier variants side by side: the DRAM variant's offload line (dashed) fills up, and its
    // busiest link (PCIe, the only kind) carries the stores.
    QVERIFY(w.run_variants());
    QTRY_VERIFY_WITH_TIMEOUT(!w.runner()->busy(), 60000);
    QCOMPARE(w.run_view()->summary_model()->columnCount(), 2);
    const QList<QPointF> dram = series_points(held, QStringLiteral("dram offload"));
    QVERIFY(dram.size() > 10);
    double dram_max = 0;
    for (const QPointF& p : dram) dram_max = std::max(dram_max, p.y());
    QVERIFY(dram_max > 0.1);   // GB
    QVERIFY(dram_max <= 64 * 1.073741824 + 1e-9);  // at most the variant's 64 GiB
    const QList<QPointF> pcie = series_points(links, QStringLiteral("dram"));
    QVERIFY(!pcie.isEmpty());
    double pcie_max = 0;
    for (const QPointF& p : pcie) pcie_max = std::max(pcie_max, p.y());
    QVERIFY(pcie_max > 0.0);
    QVERIFY(pcie_max <= 100.0 + 1e-9);
    QVERIFY(!series_points(held, QStringLiteral("vram-only")).isEmpty());  // its GPUs
    QVERIFY(series_points(links, QStringLiteral("vram-only")).isEmpty());  // no KV traffic

    // Export of the view and the table.
    QTemporaryDir dir;
    QVERIFY(w.export_view(dir.filePath(QStringLiteral("run.png"))));
    QVERIFY(QFileInfo(dir.filePath(QStringLiteral("run.png"))).size() > 1000);
    QVERIFY(w.export_table(dir.filePath(QStringLiteral("summary.csv"))));
    QFile csv(dir.filePath(QStringLiteral("summary.csv")));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    QVERIFY(csv.readAll().contains("Requests/s (1/s)"));
  }

  void cancelDuringARunShowsCancelled() {
    MainWindow w;
    w.show();
    // The seed deployment as written: thousands of requests, far beyond the first progress report.
    QVERIFY(w.open_scenario(QStringLiteral(KVSIM_SOURCE_DIR "/scenarios/seed/4x4090-dram.yaml")));
    QSignalSpy in_run(w.runner(), &kvsim::gui::RunController::runProgress);
    QVERIFY(w.run_scenario());
    QVERIFY(in_run.wait(120000));  // the window's event loop runs while the worker simulates
    QAction* cancel = nullptr;
    for (QAction* a : w.findChildren<QAction*>()) {
      if (a->text() == QStringLiteral("&Cancel runs")) cancel = a;
    }
    QVERIFY(cancel != nullptr);
    cancel->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(!w.runner()->busy(), 60000);
    QCOMPARE(w.runner()->state(), kvsim::gui::RunController::State::kCancelled);
    QVERIFY(w.statusBar()->currentMessage().contains(QStringLiteral("Cancelled")));
    QCOMPARE(w.run_view()->runs_model()->rowCount(), 0);  // the partial run is not kept
  }

  void malformedYamlShowsAMessage() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("broken.yaml"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("name: broken\nengine:\n  max_num_seqs: [1, 2\n");
    f.close();
    MainWindow w;
    w.show();
    QVERIFY(!w.open_scenario(path));
    QVERIFY(w.message_bar()->isVisible());
    QVERIFY(w.message_bar()->text().contains(QStringLiteral("not a valid scenario")));
    QVERIFY(w.editor()->diagnostics_model()->rowCount() > 0);
    QVERIFY(w.editor()->diagnostics_model()->diagnostics().front().line >= 3);
    QVERIFY(!w.run_scenario());  // nothing to run, and no crash
    // A file that does not exist.
    QVERIFY(!w.open_scenario(dir.filePath(QStringLiteral("missing.yaml"))));
    QVERIFY(w.message_bar()->text().contains(QStringLiteral("missing.yaml")));
  }

  void foreignDatabaseShowsAMessage() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("foreign.db"));
    sqlite3* db = nullptr;
    QCOMPARE(sqlite3_open(path.toUtf8().constData(), &db), SQLITE_OK);
    QCOMPARE(
        sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1);", nullptr, nullptr, nullptr),
        SQLITE_OK);
    sqlite3_close(db);
    MainWindow w;
    w.show();
    QVERIFY(!w.open_results(path));
    QVERIFY(w.message_bar()->isVisible());
    QVERIFY(w.message_bar()->text().contains(QStringLiteral("not a kvsim results database")));
    QVERIFY(w.results()->status_label()->text().contains(
        QStringLiteral("not a kvsim results database")));
  }
};

QTEST_MAIN(UiFlowTest)
#include "ui_flow_test.moc"
