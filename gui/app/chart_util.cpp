#include "gui/app/chart_util.hpp"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QCursor>
#include <QPen>
#include <QToolTip>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <limits>

namespace kvsim::gui {
namespace {

void style_axis(QAbstractAxis* axis, const QString& title) {
  QFont f = axis->labelsFont();
  f.setPointSizeF(9);
  axis->setLabelsFont(f);
  QFont t = axis->titleFont();
  t.setPointSizeF(9.5);
  t.setBold(false);
  axis->setTitleFont(t);
  axis->setTitleText(title);
}

void clear_chart(QChart* chart) {
  chart->removeAllSeries();
  for (QAbstractAxis* a : chart->axes()) {
    chart->removeAxis(a);
    delete a;
  }
}

// A "nice" upper bound: 1, 2, 2.5 or 5 times a power of ten at or above v.
double nice_ceiling(double v) {
  if (!(v > 0)) return 1.0;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * p >= v) return m * p;
  }
  return 10.0 * p;
}

// Plain numbers on axes (no exponents below a million): whole numbers for wide ranges.
QString label_format(double lo, double hi) {
  const double span = std::max(std::abs(lo), std::abs(hi));
  if (span >= 1e6) return QStringLiteral("%.3g");
  if (span >= 100) return QStringLiteral("%.0f");
  return QStringLiteral("%.4g");
}

}  // namespace

QColor series_color(int i) {
  static const QColor palette[] = {QColor(0, 114, 178),   QColor(213, 94, 0),  QColor(0, 158, 115),
                                   QColor(204, 121, 167), QColor(230, 159, 0), QColor(86, 180, 233),
                                   QColor(0, 0, 0),       QColor(240, 228, 66)};
  const int n = static_cast<int>(sizeof(palette) / sizeof(palette[0]));
  return palette[((i % n) + n) % n];
}

QChartView* make_chart_view(const QString& title, QWidget* parent) {
  auto* chart = new QChart();
  chart->setTitle(title);
  QFont tf = chart->titleFont();
  tf.setPointSizeF(10.5);
  tf.setBold(true);
  chart->setTitleFont(tf);
  chart->legend()->setAlignment(Qt::AlignBottom);
  QFont lf = chart->legend()->font();
  lf.setPointSizeF(9);
  chart->legend()->setFont(lf);
  chart->setMargins(QMargins(4, 4, 4, 4));
  chart->setBackgroundRoundness(0);
  auto* view = new QChartView(chart, parent);
  view->setRenderHint(QPainter::Antialiasing);
  view->setMinimumSize(260, 200);
  return view;
}

void set_lines(QChartView* view, const std::vector<LineData>& lines, const QString& x_title,
               const QString& y_title, std::optional<double> y_min, std::optional<double> y_max) {
  QChart* chart = view->chart();
  clear_chart(chart);
  auto* ax = new QValueAxis();
  auto* ay = new QValueAxis();
  style_axis(ax, x_title);
  style_axis(ay, y_title);
  chart->addAxis(ax, Qt::AlignBottom);
  chart->addAxis(ay, Qt::AlignLeft);
  double x0 = std::numeric_limits<double>::infinity();
  double x1 = -x0;
  double y0 = x0;
  double y1 = -x0;
  for (const auto& l : lines) {
    auto* s = new QLineSeries();
    s->setName(l.name);
    QPen pen(l.color);
    pen.setWidthF(2.0);
    if (l.dashed) pen.setStyle(Qt::DashLine);
    s->setPen(pen);
    s->setPointsVisible(l.markers);
    for (const auto& [x, y] : l.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      s->append(x, y);
      x0 = std::min(x0, x);
      x1 = std::max(x1, x);
      y0 = std::min(y0, y);
      y1 = std::max(y1, y);
    }
    chart->addSeries(s);
    s->attachAxis(ax);
    s->attachAxis(ay);
    const QString name = l.name;
    QObject::connect(
        s, &QLineSeries::hovered, view, [name, x_title, y_title](const QPointF& p, bool state) {
          if (!state) {
            QToolTip::hideText();
            return;
          }
          QToolTip::showText(QCursor::pos(), QStringLiteral("%1\n%2: %3\n%4: %5")
                                                 .arg(name, x_title, QString::number(p.x(), 'g', 5),
                                                      y_title, QString::number(p.y(), 'g', 5)));
        });
  }
  if (!std::isfinite(x0)) {
    x0 = 0;
    x1 = 1;
    y0 = 0;
    y1 = 1;
  }
  if (x1 <= x0) {
    const double pad = x0 == 0 ? 1.0 : std::abs(x0) * 0.1;
    x0 -= pad;
    x1 += pad;
  }
  ax->setRange(x0, x1);
  const double lo = y_min ? std::min(*y_min, y0) : y0;
  const double hi = y_max ? *y_max : nice_ceiling(y1 * 1.05);
  ay->setRange(lo, hi > lo ? hi : lo + 1.0);
  ax->applyNiceNumbers();
  if (!y_max) ay->applyNiceNumbers();
  ax->setLabelFormat(label_format(ax->min(), ax->max()));
  ay->setLabelFormat(label_format(ay->min(), ay->max()));
}

void add_hline(QChartView* view, double y, const QString& name, const QColor& color) {
  QChart* chart = view->chart();
  const auto hx = chart->axes(Qt::Horizontal);
  const auto vy = chart->axes(Qt::Vertical);
  if (hx.isEmpty() || vy.isEmpty()) return;
  auto* ax = qobject_cast<QValueAxis*>(hx.front());
  auto* ay = qobject_cast<QValueAxis*>(vy.front());
  if (ax == nullptr || ay == nullptr) return;
  auto* s = new QLineSeries();
  s->setName(name);
  QPen pen(color);
  pen.setWidthF(1.5);
  pen.setStyle(Qt::DashLine);
  s->setPen(pen);
  s->append(ax->min(), y);
  s->append(ax->max(), y);
  chart->addSeries(s);
  s->attachAxis(ax);
  s->attachAxis(ay);
  if (y > 0.9 * ay->max()) ay->setMax(nice_ceiling(y * 1.15));
}

void set_bars(QChartView* view, const QStringList& categories, const std::vector<BarSetData>& sets,
              const QString& y_title) {
  QChart* chart = view->chart();
  clear_chart(chart);
  auto* series = new QBarSeries();
  double top = 0;
  for (const auto& d : sets) {
    auto* set = new QBarSet(d.name);
    set->setColor(d.color);
    set->setBorderColor(d.color);
    for (double v : d.values) {
      *set << v;
      top = std::max(top, v);
    }
    series->append(set);
  }
  chart->addSeries(series);
  auto* ax = new QBarCategoryAxis();
  ax->append(categories);
  style_axis(ax, QString());
  auto* ay = new QValueAxis();
  style_axis(ay, y_title);
  ay->setRange(0, nice_ceiling(top * 1.05));
  ay->applyNiceNumbers();
  ay->setLabelFormat(label_format(0, ay->max()));
  chart->addAxis(ax, Qt::AlignBottom);
  chart->addAxis(ay, Qt::AlignLeft);
  series->attachAxis(ax);
  series->attachAxis(ay);
  QObject::connect(series, &QBarSeries::hovered, view,
                   [categories, y_title](bool state, int index, QBarSet* set) {
                     if (!state) {
                       QToolTip::hideText();
                       return;
                     }
                     QToolTip::showText(QCursor::pos(),
                                        QStringLiteral("%1, %2\n%3: %4")
                                            .arg(set->label(), categories.value(index), y_title,
                                                 QString::number(set->at(index), 'g', 6)));
                   });
}

}  // namespace kvsim::gui
