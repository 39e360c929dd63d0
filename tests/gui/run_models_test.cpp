// Runs in the background and the tables over them: a what-if sweep delivers every run through
// the controller, the run table gives each variant's points sorted by the knob, cancelling stops
// the batch and the run in progress (which is discarded, and the controller's state says
// cancelled), and the summary of a GUI run equals the command line's path (load, run,
// summarize) on the same scenario. Models pass QAbstractItemModelTester.
#include <gtest/gtest.h>

#include <cmath>

#include <QAbstractItemModelTester>
#include <QCoreApplication>
#include <QSignalSpy>
#include <QStandardItemModel>

#include "gui/models/csv_export.hpp"
#include "gui/models/run_controller.hpp"
#include "gui/models/run_table_model.hpp"
#include "gui/models/scenario_document.hpp"
#include "gui/models/summary_model.hpp"
#include "sim/io/summary.hpp"
#include "sim/cluster/simulation.hpp"

namespace kvsim::gui {
namespace {

const QString kExample =
    QStringLiteral(KVSIM_SOURCE_DIR "/scenarios/examples/rtx4090-llama3.1-8b-multiturn.yaml");

// Runs `jobs` and collects what arrives.
struct Batch {
  std::vector<RunPtr> runs;
  bool cancelled = false;
};
Batch run_all(std::vector<RunJob> jobs, bool cancel_at_once = false) {
  RunController c;
  Batch b;
  QObject::connect(&c, &RunController::runFinished,
                   [&b](const RunPtr& r, const QString&) { b.runs.push_back(r); });
  QSignalSpy done(&c, &RunController::batchFinished);
  EXPECT_TRUE(c.start(std::move(jobs), QStringLiteral("t")));
  EXPECT_FALSE(c.start({}, QStringLiteral("t")));  // one batch at a time
  if (cancel_at_once) c.cancel();
  EXPECT_TRUE(done.wait(120000));
  b.cancelled = done.front().at(0).toBool();
  return b;
}

TEST(RunController, SweepRunsEveryVariantAtEveryValue) {
  ScenarioDocument doc;
  ASSERT_TRUE(doc.open(kExample));
  auto jobs = sweep_jobs(doc.text().toStdString(), doc.display_name(), doc.load_options(),
                         *doc.scenario(), "workload.clients.num_clients", {"2", "8"});
  ASSERT_EQ(jobs.size(), 4U);  // 2 variants x 2 values
  const Batch b = run_all(std::move(jobs));
  EXPECT_FALSE(b.cancelled);
  ASSERT_EQ(b.runs.size(), 4U);
  RunTableModel model(false);
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  for (const auto& r : b.runs) model.add(r);
  EXPECT_EQ(model.variants(), (QStringList{QStringLiteral("vram-only"), QStringLiteral("dram")}));
  for (const QString& v : model.variants()) {
    const auto pts = model.points(v, Metric::kRequestsPerSec);
    ASSERT_EQ(pts.size(), 2U);
    EXPECT_EQ(pts[0].first, 2.0);
    EXPECT_EQ(pts[1].first, 8.0);
    // Closed-loop clients, one request each in flight: 2 clients leave the GPU mostly idle, so 8
    // clients complete more requests per second.
    EXPECT_GT(pts[1].second, pts[0].second) << v.toStdString();
  }
  EXPECT_EQ(model.nearest(QStringLiteral("dram"), 7.0)->job.knob_value, "8");
}

TEST(RunController, CancelStopsTheBatch) {
  ScenarioDocument doc;
  ASSERT_TRUE(doc.open(kExample));
  std::vector<RunJob> jobs;
  jobs.reserve(20);
  for (int i = 0; i < 20; ++i) {
    jobs.push_back(
        single_job(doc.text().toStdString(), doc.display_name(), doc.load_options(), "r"));
  }
  const Batch b = run_all(std::move(jobs), true);
  EXPECT_TRUE(b.cancelled);
  EXPECT_LT(b.runs.size(), 20U);
}

TEST(RunController, CancelStopsTheRunInProgress) {
  // The seed deployment with 4,000 conversations: far more than a Debug build simulates before
  // the first progress report. Cancel once the run has reported simulated time: the run stops
  // inside, nothing is delivered, and the state goes running -> cancelling -> cancelled.
  scenario::LoadOptions options;
  options.catalog_dir = KVSIM_SOURCE_DIR "/scenarios/catalog";
  options.overrides = {{"workload.generation.num_conversations", "4000"}};
  ScenarioDocument doc;
  ASSERT_TRUE(doc.open(QStringLiteral(KVSIM_SOURCE_DIR "/scenarios/seed/4x4090-dram.yaml")));
  RunController c;
  EXPECT_EQ(c.state(), RunController::State::kIdle);
  QSignalSpy in_run(&c, &RunController::runProgress);
  QSignalSpy finished(&c, &RunController::runFinished);
  QSignalSpy failed(&c, &RunController::runFailed);
  QSignalSpy progress(&c, &RunController::progress);
  QSignalSpy done(&c, &RunController::batchFinished);
  ASSERT_TRUE(c.start({single_job(doc.text().toStdString(), doc.display_name(),
                                  doc.load_options(options.overrides), "long")},
                      QStringLiteral("t")));
  EXPECT_EQ(c.state(), RunController::State::kRunning);
  ASSERT_TRUE(in_run.wait(120000));
  EXPECT_GT(in_run.front().at(1).toDouble(), 0.0);
  c.cancel();
  EXPECT_EQ(c.state(), RunController::State::kCancelling);
  EXPECT_TRUE(c.busy());
  ASSERT_TRUE(done.wait(60000));
  EXPECT_TRUE(done.front().at(0).toBool());  // cancelled
  EXPECT_EQ(c.state(), RunController::State::kCancelled);
  EXPECT_EQ(RunController::state_name(c.state()), QStringLiteral("cancelled"));
  EXPECT_FALSE(c.busy());
  QCoreApplication::processEvents();
  EXPECT_EQ(finished.count(), 0);  // the partial run is discarded
  EXPECT_EQ(failed.count(), 0);
  ASSERT_FALSE(progress.isEmpty());
  EXPECT_EQ(progress.back().at(0).toInt(), 0);  // no run completed
}

TEST(RunController, ABadJobIsReportedAndTheBatchGoesOn) {
  ScenarioDocument doc;
  ASSERT_TRUE(doc.open(kExample));
  RunJob bad = single_job("engine: [", "bad.yaml", {}, "bad");
  RunJob good =
      single_job(doc.text().toStdString(), doc.display_name(), doc.load_options(), "good");
  RunController c;
  QSignalSpy failed(&c, &RunController::runFailed);
  QSignalSpy finished(&c, &RunController::runFinished);
  QSignalSpy done(&c, &RunController::batchFinished);
  ASSERT_TRUE(c.start({bad, good}, QStringLiteral("t")));
  ASSERT_TRUE(done.wait(60000));
  EXPECT_EQ(failed.count(), 1);
  EXPECT_EQ(finished.count(), 1);
  EXPECT_TRUE(failed.front().at(1).toString().contains(QStringLiteral("bad.yaml")));
}

TEST(RunJob, SummaryEqualsTheCommandLinePath) {
  ScenarioDocument doc;
  ASSERT_TRUE(doc.open(kExample));
  const RunPtr r =
      run_job(single_job(doc.text().toStdString(), doc.display_name(), doc.load_options(), "x"));
  // The command line's path: load the file, run, summarize.
  const auto sc = scenario::load_scenario(kExample.toStdString());
  cluster::Simulation sim(sc);
  const auto result = sim.run();
  const auto s = io::summarize(result.requests, result.info);
  EXPECT_EQ(r->summary.num_requests, s.num_requests);
  EXPECT_EQ(r->summary.requests_per_sec, s.requests_per_sec);
  EXPECT_EQ(r->summary.ttft_ms.percentile(0.9), s.ttft_ms.percentile(0.9));
  // The CDF samples are the summary's samples.
  EXPECT_EQ(static_cast<std::int64_t>(r->ttft_ms.size()), s.ttft_ms.count);
  EXPECT_EQ(r->ttft_ms.front(), s.ttft_ms.min);
  EXPECT_EQ(r->ttft_ms.back(), s.ttft_ms.max);
  EXPECT_EQ(static_cast<std::int64_t>(r->steps.size()), result.info.engine_steps);
  // A usage sample every simulated second and one at the end.
  ASSERT_FALSE(r->usage.empty());
  EXPECT_EQ(r->usage.size(), static_cast<std::size_t>(std::ceil(result.info.simulated_seconds)));
  EXPECT_DOUBLE_EQ(r->usage.back().time_s, result.info.simulated_seconds);

  SummaryModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  model.set_runs({r, r});
  EXPECT_EQ(model.columnCount(), 2);
  int rps_row = -1;
  for (int i = 0; i < SummaryModel::figure_count(); ++i) {
    if (SummaryModel::figure_name(i) == QStringLiteral("Requests/s (1/s)")) rps_row = i;
  }
  ASSERT_GE(rps_row, 0);
  EXPECT_EQ(model.index(rps_row, 1).data(Qt::EditRole).toDouble(), s.requests_per_sec);

  RunTableModel runs(true);
  QAbstractItemModelTester tester2(&runs, QAbstractItemModelTester::FailureReportingMode::Fatal);
  QSignalSpy checked(&runs, &RunTableModel::checkedChanged);
  runs.add(r);
  runs.add(r, true);
  EXPECT_EQ(runs.checked_runs().size(), 1U);
  EXPECT_TRUE(runs.setData(runs.index(0, 0), Qt::Checked, Qt::CheckStateRole));
  EXPECT_EQ(runs.checked_runs().size(), 2U);
  EXPECT_EQ(checked.count(), 2);
}

TEST(CsvExport, QuotesCellsWithCommasAndQuotes) {
  QStandardItemModel m(2, 2);
  m.setHorizontalHeaderLabels({QStringLiteral("a"), QStringLiteral("b,c")});
  m.setItem(0, 0, new QStandardItem(QStringLiteral("1")));
  m.setItem(0, 1, new QStandardItem(QStringLiteral("say \"hi\"")));
  m.setItem(1, 0, new QStandardItem(QStringLiteral("2")));
  m.setItem(1, 1, new QStandardItem(QStringLiteral("x")));
  EXPECT_EQ(model_to_csv(m), QStringLiteral("a,\"b,c\"\n1,\"say \"\"hi\"\"\"\n2,x\n"));
}

}  // namespace
}  // namespace kvsim::gui
