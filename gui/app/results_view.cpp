#include "gui/app/results_view.hpp"

#include <QChartView>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

#include "gui/app/chart_util.hpp"
#include "gui/models/results_db_model.hpp"
#include "sim/core/error.hpp"

namespace kvsim::gui {

ResultsView::ResultsView(QWidget* parent)
    : QWidget(parent),
      model_(new ResultsDbModel(this)),
      proxy_(new QSortFilterProxyModel(this)),
      table_(new QTableView(this)),
      filter_(new QLineEdit(this)),
      x_(new QComboBox(this)),
      y_(new QComboBox(this)),
      status_(new QLabel(
          QStringLiteral(
              "Open a results database written by `kvsim sweep` (File > Open results database)."),
          this)),
      show_all_(new QPushButton(QStringLiteral("Show all runs"), this)),
      chart_(make_chart_view(QStringLiteral("Runs"), this)) {
  proxy_->setSourceModel(model_);
  proxy_->setFilterKeyColumn(-1);
  proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  proxy_->setSortRole(Qt::EditRole);
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->verticalHeader()->hide();
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  filter_->setPlaceholderText(QStringLiteral("Filter rows (any column contains)"));
  filter_->setClearButtonEnabled(true);
  status_->setObjectName(QStringLiteral("results_status"));
  status_->setWordWrap(true);
  chart_->setObjectName(QStringLiteral("results_chart"));
  show_all_->setObjectName(QStringLiteral("results_show_all"));
  show_all_->hide();
  connect(show_all_, &QPushButton::clicked, this, [this] {
    if (!model_->path().isEmpty()) open(model_->path());
  });
  connect(filter_, &QLineEdit::textChanged, this, [this](const QString& t) {
    proxy_->setFilterFixedString(t);
    redraw();
  });
  connect(x_, &QComboBox::currentIndexChanged, this, &ResultsView::redraw);
  connect(y_, &QComboBox::currentIndexChanged, this, &ResultsView::redraw);

  auto* bar = new QHBoxLayout();
  bar->addWidget(filter_, 2);
  bar->addWidget(new QLabel(QStringLiteral("Chart x"), this));
  bar->addWidget(x_, 1);
  bar->addWidget(new QLabel(QStringLiteral("y"), this));
  bar->addWidget(y_, 1);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(table_);
  split->addWidget(chart_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  auto* head = new QHBoxLayout();
  head->addWidget(status_, 1);
  head->addWidget(show_all_);
  layout->addLayout(head);
  layout->addLayout(bar);
  layout->addWidget(split, 1);
}

bool ResultsView::open(const QString& path, const QStringList& run_keys) {
  try {
    model_->open(path, run_keys);
  } catch (const InputError& e) {
    const std::string msg =
        e.diagnostics().empty() ? e.what() : e.diagnostics().front().to_string();
    status_->setText(QStringLiteral("<span style='color:#b00020'>Cannot open %1</span>")
                         .arg(QString::fromStdString(msg).toHtmlEscaped()));
    return false;
  }
  if (run_keys.isEmpty()) {
    status_->setText(QStringLiteral("%1: %2 runs").arg(path).arg(model_->rowCount()));
  } else {
    status_->setText(
        QStringLiteral("%1: the runs of a map cell (%2 of its %3 run keys are in the database)")
            .arg(path)
            .arg(model_->rowCount())
            .arg(run_keys.size()));
  }
  show_all_->setVisible(!run_keys.isEmpty());
  const QSignalBlocker bx(x_);
  const QSignalBlocker by(y_);
  x_->clear();
  y_->clear();
  const QStringList numeric = model_->numeric_columns();
  x_->addItems(numeric);
  y_->addItems(numeric);
  for (const char* name : {"ttft_ms_p90", "requests_per_sec"}) {
    if (numeric.contains(QString::fromUtf8(name))) y_->setCurrentText(QString::fromUtf8(name));
  }
  if (numeric.contains(QStringLiteral("run_index")))
    x_->setCurrentText(QStringLiteral("run_index"));
  redraw();
  return true;
}

void ResultsView::redraw() {
  const int xc = model_->column_index(x_->currentText());
  const int yc = model_->column_index(y_->currentText());
  std::vector<LineData> lines;
  if (xc >= 0 && yc >= 0) {
    LineData d{QStringLiteral("runs shown"), {}, series_color(0), false, true};
    for (int r = 0; r < proxy_->rowCount(); ++r) {
      const QModelIndex src = proxy_->mapToSource(proxy_->index(r, 0));
      const QVariant x = model_->index(src.row(), xc).data(Qt::EditRole);
      const QVariant y = model_->index(src.row(), yc).data(Qt::EditRole);
      if (!x.isNull() && !y.isNull()) d.points.emplace_back(x.toDouble(), y.toDouble());
    }
    std::sort(d.points.begin(), d.points.end());
    lines.push_back(std::move(d));
  }
  set_lines(chart_, lines, x_->currentText(), y_->currentText(), std::nullopt);
}

}  // namespace kvsim::gui
