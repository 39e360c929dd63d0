#include "gui/app/whatif_view.hpp"

#include <QChartView>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <cmath>

#include "gui/app/chart_util.hpp"
#include "gui/models/knob_model.hpp"
#include "gui/models/run_controller.hpp"
#include "gui/models/run_table_model.hpp"
#include "gui/models/scenario_document.hpp"
#include "sim/core/error.hpp"

namespace kvsim::gui {
namespace {

const QString kTag = QStringLiteral("whatif");

constexpr Metric kChartMetrics[4] = {Metric::kRequestsPerSec, Metric::kTtftP50, Metric::kTtftP90,
                                     Metric::kTpotP50};
const char* const kChartNames[4] = {"whatif_requests", "whatif_ttft_p50", "whatif_ttft_p90",
                                    "whatif_tpot_p50"};
const char* const kChartTitles[4] = {"Requests per second", "Time to first token, median",
                                     "Time to first token, p90", "Time per output token, median"};

}  // namespace

WhatIfView::WhatIfView(ScenarioDocument* doc, KnobModel* knobs, RunController* runner,
                       QWidget* parent)
    : QWidget(parent),
      doc_(doc),
      knobs_(knobs),
      runner_(runner),
      model_(new RunTableModel(false, this)),
      knob_(new QComboBox(this)),
      values_(new QLineEdit(this)),
      slo_ttft_(new QDoubleSpinBox(this)),
      slo_tpot_(new QDoubleSpinBox(this)),
      run_(new QPushButton(QStringLiteral("Run sweep"), this)),
      cancel_(new QPushButton(QStringLiteral("Cancel"), this)),
      progress_(new QProgressBar(this)),
      status_(new QLabel(this)),
      charts_{},
      table_(new QTableView(this)) {
  knob_->setObjectName(QStringLiteral("whatif_knob"));
  knob_->setMinimumContentsLength(34);
  knob_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  values_->setObjectName(QStringLiteral("whatif_values"));
  values_->setToolTip(
      QStringLiteral("Values as 'a, b, c' (units allowed: 32GiB, 64GiB) or 'from:to:count'"));
  slo_ttft_->setRange(0, 1e6);
  slo_ttft_->setDecimals(0);
  slo_ttft_->setValue(500);
  slo_ttft_->setSuffix(QStringLiteral(" ms"));
  slo_tpot_->setRange(0, 1e4);
  slo_tpot_->setDecimals(1);
  slo_tpot_->setValue(50);
  slo_tpot_->setSuffix(QStringLiteral(" ms"));
  run_->setObjectName(QStringLiteral("whatif_run"));
  cancel_->setEnabled(false);
  progress_->setRange(0, 1);
  progress_->setValue(0);
  progress_->setTextVisible(true);
  status_->setWordWrap(true);
  status_->setObjectName(QStringLiteral("whatif_status"));

  auto* controls = new QHBoxLayout();
  controls->addWidget(new QLabel(QStringLiteral("Knob"), this));
  controls->addWidget(knob_, 3);
  controls->addWidget(new QLabel(QStringLiteral("Values"), this));
  controls->addWidget(values_, 2);
  controls->addWidget(new QLabel(QStringLiteral("SLO: TTFT p90"), this));
  controls->addWidget(slo_ttft_);
  controls->addWidget(new QLabel(QStringLiteral("TPOT p50"), this));
  controls->addWidget(slo_tpot_);
  controls->addWidget(run_);
  controls->addWidget(cancel_);
  controls->addWidget(progress_, 1);

  auto* grid_host = new QWidget(this);
  auto* grid = new QGridLayout(grid_host);
  grid->setContentsMargins(0, 0, 0, 0);
  grid->setSpacing(4);
  for (int i = 0; i < 4; ++i) {
    charts_[i] = make_chart_view(QString::fromUtf8(kChartTitles[i]), grid_host);
    charts_[i]->setObjectName(QString::fromUtf8(kChartNames[i]));
    grid->addWidget(charts_[i], i / 2, i % 2);
  }
  table_->setModel(model_);
  table_->verticalHeader()->hide();
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setColumnWidth(RunTableModel::kRun, 220);
  connect(table_, &QTableView::doubleClicked, this, [this](const QModelIndex& i) {
    if (auto r = model_->run(i.row())) emit openRun(r);
  });

  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(grid_host);
  split->addWidget(table_);
  split->setStretchFactor(0, 4);
  split->setStretchFactor(1, 1);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addLayout(controls);
  layout->addWidget(status_);
  layout->addWidget(split, 1);

  connect(knobs_, &QAbstractItemModel::modelReset, this, &WhatIfView::refill_knobs);
  connect(knob_, &QComboBox::currentIndexChanged, this, &WhatIfView::suggest_values);
  connect(run_, &QPushButton::clicked, this, &WhatIfView::start);
  connect(cancel_, &QPushButton::clicked, runner_, &RunController::cancel);
  connect(slo_ttft_, &QDoubleSpinBox::valueChanged, this, &WhatIfView::redraw);
  connect(slo_tpot_, &QDoubleSpinBox::valueChanged, this, &WhatIfView::redraw);
  connect(runner_, &RunController::runFinished, this, &WhatIfView::on_run);
  connect(runner_, &RunController::runFailed, this,
          [this](const QString& label, const QString& msg, const QString& tag) {
            if (tag == kTag)
              status_->setText(QStringLiteral("<span style='color:#b00020'>%1 failed: %2</span>")
                                   .arg(label, msg.toHtmlEscaped()));
          });
  connect(runner_, &RunController::progress, this, [this](int done, int total) {
    if (runner_->tag() != kTag) return;
    progress_->setRange(0, std::max(1, total));
    progress_->setValue(done);
  });
  connect(runner_, &RunController::batchFinished, this, [this](bool cancelled, const QString& tag) {
    run_->setEnabled(true);
    cancel_->setEnabled(false);
    if (tag == kTag && cancelled)
      status_->setText(QStringLiteral("Sweep cancelled; the finished runs are kept."));
  });
  refill_knobs();
  redraw();
}

void WhatIfView::refill_knobs() {
  const QString keep = knob_->currentData().toString();
  const QSignalBlocker block(knob_);
  knob_->clear();
  for (int r = 0; r < knobs_->rowCount(); ++r) {
    const QModelIndex i = knobs_->index(r, KnobModel::kKey);
    if (!i.data(KnobModel::kNumericRole).toBool() || !i.data(KnobModel::kCommonRole).toBool())
      continue;
    const QString path = i.data().toString();
    knob_->addItem(path, path);
  }
  int at = knob_->findData(keep);
  if (at < 0) at = knob_->findData(QStringLiteral("workload.clients.num_clients"));
  knob_->setCurrentIndex(std::max(0, at));
  if (keep.isEmpty() || knob_->currentData().toString() != keep) suggest_values();
}

void WhatIfView::suggest_values() {
  const int row = knobs_->row_of(knob_->currentData().toString().toStdString());
  if (row < 0) return;
  const Knob& k = knobs_->knobs()[static_cast<std::size_t>(row)];
  if (!k.number) return;
  const double v = *k.number;
  const auto kind = k.field->kind;
  const bool integer = kind == scenario::FieldKind::kInt || kind == scenario::FieldKind::kInt64 ||
                       kind == scenario::FieldKind::kUint64;
  QStringList vals;
  const auto unit = QString::fromUtf8(axis_unit(kind).name);
  for (double f : {0.25, 0.5, 1.0, 1.5, 2.0}) {
    double x = v * f;
    if (integer) x = std::max(1.0, std::round(x));
    const QString s =
        integer ? QString::number(static_cast<long long>(x)) : QString::number(x, 'g', 4);
    if (kind == scenario::FieldKind::kDouble && k.field->range.max && x > *k.field->range.max)
      continue;
    const QString text = unit.isEmpty() ? s : s + unit;
    if (!vals.contains(text)) vals << text;
  }
  values_->setText(vals.join(QStringLiteral(", ")));
}

bool WhatIfView::set_knob(const QString& path, const QString& values) {
  const int at = knob_->findData(path);
  if (at < 0) return false;
  knob_->setCurrentIndex(at);
  if (!values.isEmpty()) values_->setText(values);
  return true;
}

bool WhatIfView::start() {
  if (runner_->busy()) {
    status_->setText(QStringLiteral("Runs are in progress; wait or cancel them."));
    return false;
  }
  if (!doc_->scenario()) {
    status_->setText(
        QStringLiteral("<span style='color:#b00020'>The scenario has problems; fix them in the "
                       "editor first.</span>"));
    return false;
  }
  const std::string knob = knob_->currentData().toString().toStdString();
  const int row = knobs_->row_of(knob);
  if (row < 0) return false;
  const auto kind = knobs_->knobs()[static_cast<std::size_t>(row)].field->kind;
  const bool integer = kind == scenario::FieldKind::kInt || kind == scenario::FieldKind::kInt64;
  std::vector<RunJob> jobs;
  try {
    const auto values = parse_values(values_->text().toStdString(), integer);
    jobs = sweep_jobs(doc_->text().toStdString(), doc_->display_name(), doc_->load_options(),
                      *doc_->scenario(), knob, values);
  } catch (const InputError& e) {
    const std::string msg =
        e.diagnostics().empty() ? e.what() : e.diagnostics().front().to_string();
    status_->setText(QStringLiteral("<span style='color:#b00020'>%1</span>")
                         .arg(QString::fromStdString(msg).toHtmlEscaped()));
    return false;
  }
  sweep_knob_ = QString::fromStdString(knob);
  model_->clear();
  model_->set_knob(sweep_knob_.section(QLatin1Char('.'), -1));
  redraw();
  if (!runner_->start(std::move(jobs), kTag)) return false;
  run_->setEnabled(false);
  cancel_->setEnabled(true);
  status_->setText(QStringLiteral("Running %1 over the tier variants...").arg(sweep_knob_));
  return true;
}

void WhatIfView::on_run(const RunPtr& run, const QString& tag) {
  if (tag != kTag) return;
  model_->add(run);
  redraw();
  status_->setText(
      QStringLiteral("%1 runs of %2. Hover a point for its values; click it to open the run.")
          .arg(model_->rowCount())
          .arg(sweep_knob_));
}

void WhatIfView::redraw() {
  QString x_title = sweep_knob_.isEmpty() ? QStringLiteral("knob") : sweep_knob_;
  const int row = knobs_->row_of(sweep_knob_.toStdString());
  if (row >= 0) {
    const char* unit = axis_unit(knobs_->knobs()[static_cast<std::size_t>(row)].field->kind).name;
    if (*unit != '\0') x_title += QStringLiteral(" (%1)").arg(QString::fromUtf8(unit));
  }
  const QStringList variants = model_->variants();
  for (int c = 0; c < 4; ++c) {
    std::vector<LineData> lines;
    lines.reserve(static_cast<std::size_t>(variants.size()));
    for (int v = 0; v < variants.size(); ++v) {
      lines.push_back({variants[v], model_->points(variants[v], kChartMetrics[c]), series_color(v),
                       false, true});
    }
    set_lines(charts_[c], lines, x_title, metric_label(kChartMetrics[c]));
    if (c == 2) add_hline(charts_[c], slo_ttft_->value(), QStringLiteral("SLO"), QColor(180, 0, 0));
    if (c == 3) add_hline(charts_[c], slo_tpot_->value(), QStringLiteral("SLO"), QColor(180, 0, 0));
    for (QAbstractSeries* s : charts_[c]->chart()->series()) {
      auto* line = qobject_cast<QLineSeries*>(s);
      if (line == nullptr || line->name() == QStringLiteral("SLO")) continue;
      const QString variant = line->name();
      connect(line, &QLineSeries::clicked, this, [this, variant](const QPointF& p) {
        if (auto r = model_->nearest(variant, p.x())) emit openRun(r);
      });
    }
  }
}

}  // namespace kvsim::gui
