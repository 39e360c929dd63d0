#include "gui/app/main_window.hpp"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QPainter>
#include <QProgressBar>
#include <QRegularExpression>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>
#ifdef KVSIM_GUI_HAVE_SVG
#include <QSvgGenerator>
#endif

#include "gui/app/editor_view.hpp"
#include "gui/app/map_view.hpp"
#include "gui/app/results_view.hpp"
#include "gui/app/run_view.hpp"
#include "gui/app/whatif_view.hpp"
#include "gui/models/csv_export.hpp"
#include "gui/models/knob_model.hpp"
#include "gui/models/map_data.hpp"
#include "gui/models/results_db_model.hpp"
#include "gui/models/run_controller.hpp"
#include "gui/models/run_table_model.hpp"
#include "gui/models/scenario_document.hpp"
#include "gui/models/summary_model.hpp"

namespace kvsim::gui {
namespace {

const QString kSingleTag = QStringLiteral("single");
const QString kCompareTag = QStringLiteral("compare");

// Writes `w` as PNG, or as SVG when the path ends in .svg (and the build has Qt Svg).
bool render_widget(QWidget* w, const QString& path, const QString& title) {
  if (path.endsWith(QStringLiteral(".svg"), Qt::CaseInsensitive)) {
#ifdef KVSIM_GUI_HAVE_SVG
    QSvgGenerator gen;
    gen.setFileName(path);
    gen.setSize(w->size());
    gen.setViewBox(QRect(QPoint(0, 0), w->size()));
    gen.setTitle(title);
    QPainter painter;
    if (!painter.begin(&gen)) return false;
    w->render(&painter);
    return painter.end();
#else
    (void)title;
    return false;
#endif
  }
  return w->grab().save(path, "PNG");
}
constexpr int kMaxRecent = 8;

}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      doc_(new ScenarioDocument(this)),
      runner_(new RunController(this)),
      tabs_(new QTabWidget(this)),
      editor_(new EditorView(doc_, this)),
      whatif_(new WhatIfView(doc_, editor_->knob_model(), runner_, this)),
      map_(new MapView(this)),
      run_view_(new RunView(this)),
      results_(new ResultsView(this)),
      message_(new QLabel(this)),
      progress_(new QProgressBar(this)) {
  tabs_->addTab(editor_, QStringLiteral("Scenario"));
  tabs_->addTab(whatif_, QStringLiteral("What-if"));
  tabs_->addTab(map_, QStringLiteral("Map"));
  tabs_->addTab(run_view_, QStringLiteral("Run detail"));
  tabs_->addTab(results_, QStringLiteral("Results database"));
  message_->setObjectName(QStringLiteral("message_bar"));
  message_->setWordWrap(true);
  message_->setMargin(6);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  message_->hide();
  auto* central = new QWidget(this);
  auto* layout = new QVBoxLayout(central);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  layout->addWidget(message_);
  layout->addWidget(tabs_, 1);
  setCentralWidget(central);
  progress_->setMaximumWidth(220);
  progress_->setRange(0, 1);
  progress_->setValue(0);
  progress_->hide();
  statusBar()->addPermanentWidget(progress_);
  resize(1440, 900);
  build_menus();

  connect(doc_, &ScenarioDocument::modifiedChanged, this, &MainWindow::update_title);
  connect(runner_, &RunController::progress, this, [this](int done, int total) {
    progress_->setRange(0, std::max(1, total));
    progress_->setValue(done);
    progress_->show();
  });
  connect(runner_, &RunController::runFinished, this,
          [this](const RunPtr& run, const QString& tag) {
            if (tag == kSingleTag || tag == kCompareTag) {
              run_view_->add_run(
                  run, tag == kSingleTag ? RunView::Show::kAlone : RunView::Show::kBeside);
              tabs_->setCurrentWidget(run_view_);
            } else {
              run_view_->add_run(run, RunView::Show::kNo);
            }
          });
  connect(runner_, &RunController::runFailed, this,
          [this](const QString& label, const QString& msg, const QString&) {
            show_message(QStringLiteral("Run %1 failed: %2").arg(label, msg), true);
          });
  connect(runner_, &RunController::runProgress, this,
          [this](int run, double simulated_s, const QString&) {
            statusBar()->showMessage(QStringLiteral("Run %1 of %2: %3 s simulated")
                                         .arg(run + 1)
                                         .arg(progress_->maximum())
                                         .arg(simulated_s, 0, 'f', 0));
          });
  connect(runner_, &RunController::stateChanged, this, [this](RunController::State s) {
    if (s == RunController::State::kCancelling) {
      statusBar()->showMessage(QStringLiteral("Cancelling..."));
    }
  });
  connect(runner_, &RunController::batchFinished, this, [this](bool cancelled, const QString&) {
    statusBar()->showMessage(
        cancelled ? QStringLiteral("Cancelled: the run in progress was stopped and discarded")
                  : QStringLiteral("Runs finished"),
        cancelled ? 8000 : 5000);
  });
  connect(map_, &MapView::openRequested, this, &MainWindow::open_map_dialog);
  connect(map_, &MapView::openRuns, this,
          [this](const QString& db, const QStringList& keys) { open_results(db, keys); });
  connect(whatif_, &WhatIfView::openRun, this, [this](const RunPtr& run) {
    run_view_->open_run(run);
    tabs_->setCurrentWidget(run_view_);
  });
  update_title();
}

void MainWindow::build_menus() {
  QMenu* file = menuBar()->addMenu(QStringLiteral("&File"));
  QAction* open =
      file->addAction(QStringLiteral("&Open scenario..."), this, &MainWindow::open_dialog);
  open->setShortcut(QKeySequence::Open);
  recent_menu_ = file->addMenu(QStringLiteral("Open &recent"));
  fill_recent_menu();
  QAction* save = file->addAction(QStringLiteral("&Save"), this, &MainWindow::save);
  save->setShortcut(QKeySequence::Save);
  QAction* save_as =
      file->addAction(QStringLiteral("Save &as..."), this, &MainWindow::save_as_dialog);
  save_as->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+S")));
  file->addSeparator();
  QAction* db = file->addAction(QStringLiteral("Open results &database..."), this,
                                &MainWindow::open_results_dialog);
  db->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+O")));
  QAction* map =
      file->addAction(QStringLiteral("Open &map..."), this, &MainWindow::open_map_dialog);
  map->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+M")));
  file->addSeparator();
  QAction* ev = file->addAction(QStringLiteral("&Export view as PNG/SVG..."), this,
                                &MainWindow::export_view_dialog);
  ev->setShortcut(QKeySequence(QStringLiteral("Ctrl+E")));
  file->addAction(QStringLiteral("Export &table as CSV..."), this,
                  &MainWindow::export_table_dialog);
  file->addSeparator();
  QAction* quit = file->addAction(QStringLiteral("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);

  QMenu* run = menuBar()->addMenu(QStringLiteral("&Run"));
  QAction* r = run->addAction(QStringLiteral("&Run scenario"), this, [this] { run_scenario(); });
  r->setShortcut(QKeySequence(QStringLiteral("Ctrl+R")));
  QAction* w = run->addAction(QStringLiteral("Run &what-if sweep"), this, [this] { run_whatif(); });
  w->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+R")));
  run->addAction(QStringLiteral("Compare &tier variants"), this, [this] { run_variants(); });
  QAction* c = run->addAction(QStringLiteral("&Cancel runs"), runner_, &RunController::cancel);
  c->setShortcut(QKeySequence(QStringLiteral("Ctrl+.")));

  QMenu* view = menuBar()->addMenu(QStringLiteral("&View"));
  const char* names[] = {"&Scenario", "&What-if", "&Map", "Run &detail", "Results &database"};
  for (int i = 0; i < 5; ++i) {
    QAction* a = view->addAction(QString::fromUtf8(names[i]), this,
                                 [this, i] { tabs_->setCurrentIndex(i); });
    a->setShortcut(QKeySequence(QStringLiteral("Ctrl+%1").arg(i + 1)));
  }
}

void MainWindow::show_message(const QString& text, bool error) {
  if (text.isEmpty()) {
    message_->hide();
    return;
  }
  message_->setStyleSheet(
      error ? QStringLiteral("background:#fde7e9;color:#8a0010;border-bottom:1px solid #e0a0a8;")
            : QStringLiteral("background:#e8f4ea;color:#155724;border-bottom:1px solid #a8d5b1;"));
  message_->setText(text);
  message_->show();
}

bool MainWindow::open_scenario(const QString& path) {
  if (!doc_->open(path)) {
    show_message(doc_->last_error(), true);
    return false;
  }
  remember_recent(path);
  update_title();
  tabs_->setCurrentWidget(editor_);
  if (!doc_->scenario()) {
    // After the layout, so the line can be centred in the text view.
    QTimer::singleShot(0, editor_, [this] { editor_->jump_to_diagnostic(0); });
    const auto& d = doc_->diagnostics();
    show_message(QStringLiteral(
                     "%1 is not a valid scenario (%2 problem(s)); the editor marks them. First: %3")
                     .arg(QFileInfo(path).fileName())
                     .arg(d.size())
                     .arg(d.empty() ? QString() : QString::fromStdString(d.front().to_string())),
                 true);
    return false;
  }
  show_message({}, false);
  return true;
}

bool MainWindow::open_results(const QString& path, const QStringList& run_keys) {
  tabs_->setCurrentWidget(results_);
  const bool ok = results_->open(path, run_keys);
  if (!ok) {
    show_message(
        results_->status_label()->text().remove(QRegularExpression(QStringLiteral("<[^>]*>"))),
        true);
  } else {
    show_message({}, false);
  }
  return ok;
}

bool MainWindow::open_map(const QString& path) {
  tabs_->setCurrentWidget(map_);
  if (!map_->open(path)) {
    show_message(map_->last_error(), true);
    return false;
  }
  show_message({}, false);
  return true;
}

bool MainWindow::run_scenario() {
  if (!doc_->scenario()) {
    show_message(QStringLiteral("The scenario has problems; the editor lists them."), true);
    return false;
  }
  if (runner_->busy()) {
    statusBar()->showMessage(QStringLiteral("Runs are in progress"), 3000);
    return false;
  }
  ++single_runs_;
  const std::string label = doc_->scenario()->name + " #" + std::to_string(single_runs_);
  return runner_->start(
      {single_job(doc_->text().toStdString(), doc_->display_name(), doc_->load_options(), label)},
      kSingleTag);
}

bool MainWindow::run_variants() {
  if (!doc_->scenario()) {
    show_message(QStringLiteral("The scenario has problems; the editor lists them."), true);
    return false;
  }
  if (runner_->busy()) return false;
  std::vector<RunJob> jobs;
  for (const auto& v : tier_variants(*doc_->scenario())) {
    RunJob job = single_job(doc_->text().toStdString(), doc_->display_name(),
                            doc_->load_options(v.overrides), v.name);
    job.variant = v.name;
    jobs.push_back(std::move(job));
  }
  for (int r = 0; r < run_view_->runs_model()->rowCount(); ++r)
    run_view_->runs_model()->set_checked(r, false);
  return runner_->start(std::move(jobs), kCompareTag);
}

bool MainWindow::run_whatif() {
  tabs_->setCurrentWidget(whatif_);
  return whatif_->start();
}

bool MainWindow::set_view(const QString& name) {
  const QStringList names{QStringLiteral("editor"), QStringLiteral("whatif"), QStringLiteral("map"),
                          QStringLiteral("run"), QStringLiteral("results")};
  const auto i = names.indexOf(name);
  if (i < 0) return false;
  tabs_->setCurrentIndex(static_cast<int>(i));
  return true;
}

bool MainWindow::export_view(const QString& path) {
  if (!render_widget(tabs_->currentWidget(), path, tabs_->tabText(tabs_->currentIndex()))) {
    show_message(QStringLiteral("Could not write %1 (SVG needs a build with Qt Svg)").arg(path),
                 true);
    return false;
  }
  return true;
}

bool MainWindow::screenshot(const QString& path) {
  return render_widget(this, path, windowTitle());
}

bool MainWindow::export_table(const QString& path) {
  QString csv;
  QWidget* w = tabs_->currentWidget();
  if (w == editor_) csv = model_to_csv(*editor_->knob_model());
  if (w == whatif_) csv = model_to_csv(*whatif_->model());
  if (w == map_) csv = model_to_csv(*map_->cell_model());
  if (w == run_view_) csv = model_to_csv(*run_view_->summary_model(), true);
  if (w == results_) csv = model_to_csv(*results_->filtered());
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
    show_message(QStringLiteral("Cannot write %1: %2").arg(path, f.errorString()), true);
    return false;
  }
  f.write(csv.toUtf8());
  return true;
}

void MainWindow::open_dialog() {
  const QString path =
      QFileDialog::getOpenFileName(this, QStringLiteral("Open scenario"), QString(),
                                   QStringLiteral("Scenario YAML (*.yaml *.yml);;All files (*)"));
  if (!path.isEmpty()) open_scenario(path);
}

void MainWindow::save() {
  if (doc_->path().isEmpty()) {
    save_as_dialog();
    return;
  }
  if (!doc_->save(doc_->path())) {
    show_message(doc_->last_error(), true);
    return;
  }
  statusBar()->showMessage(QStringLiteral("Saved %1").arg(doc_->path()), 4000);
  update_title();
}

void MainWindow::save_as_dialog() {
  const QString path =
      QFileDialog::getSaveFileName(this, QStringLiteral("Save scenario"), doc_->path(),
                                   QStringLiteral("Scenario YAML (*.yaml *.yml)"));
  if (path.isEmpty()) return;
  if (!doc_->save(path)) {
    show_message(doc_->last_error(), true);
    return;
  }
  remember_recent(path);
  update_title();
}

void MainWindow::open_results_dialog() {
  const QString path = QFileDialog::getOpenFileName(
      this, QStringLiteral("Open results database"), QString(),
      QStringLiteral("Results database (*.db *.sqlite);;All files (*)"));
  if (!path.isEmpty()) open_results(path);
}

void MainWindow::open_map_dialog() {
  const QString path = QFileDialog::getOpenFileName(
      this, QStringLiteral("Open map"), QString(),
      QStringLiteral("Map from kvsim map (map.json *.json);;All files (*)"));
  if (!path.isEmpty()) open_map(path);
}

void MainWindow::export_view_dialog() {
  const QString path =
      QFileDialog::getSaveFileName(this, QStringLiteral("Export view"), QString(),
                                   QStringLiteral("PNG image (*.png);;SVG drawing (*.svg)"));
  if (!path.isEmpty() && !export_view(path))
    show_message(QStringLiteral("Could not write %1").arg(path), true);
}

void MainWindow::export_table_dialog() {
  const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Export table"), QString(),
                                                    QStringLiteral("CSV (*.csv)"));
  if (!path.isEmpty()) export_table(path);
}

void MainWindow::remember_recent(const QString& path) {
  QSettings settings;
  QStringList recent = settings.value(QStringLiteral("recent_files")).toStringList();
  const QString abs = QFileInfo(path).absoluteFilePath();
  recent.removeAll(abs);
  recent.prepend(abs);
  while (recent.size() > kMaxRecent) recent.removeLast();
  settings.setValue(QStringLiteral("recent_files"), recent);
  fill_recent_menu();
}

void MainWindow::fill_recent_menu() {
  if (recent_menu_ == nullptr) return;
  recent_menu_->clear();
  const QStringList recent = QSettings().value(QStringLiteral("recent_files")).toStringList();
  for (const QString& p : recent) {
    recent_menu_->addAction(p, this, [this, p] { open_scenario(p); });
  }
  recent_menu_->setEnabled(!recent.isEmpty());
}

void MainWindow::update_title() {
  const QString name =
      doc_->path().isEmpty() ? QStringLiteral("untitled") : QFileInfo(doc_->path()).fileName();
  setWindowTitle(QStringLiteral("%1%2 - kvsim")
                     .arg(name, doc_->modified() ? QStringLiteral(" *") : QString()));
}

void MainWindow::closeEvent(QCloseEvent* event) {
  runner_->cancel();
  event->accept();
}

}  // namespace kvsim::gui
