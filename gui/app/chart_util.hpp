#pragma once
// Small helpers for Qt Charts: a chart view with titled axes (units in the titles), line series
// from (x, y) points with hover tooltips, readable fonts, and a consistent colour per series.
#include <QChartView>
#include <QColor>
#include <QLineSeries>
#include <QString>
#include <optional>
#include <utility>
#include <vector>

namespace kvsim::gui {

// The i-th colour of the palette (colour-blind friendly, Okabe-Ito).
QColor series_color(int i);

// A chart view with a title, a legend at the bottom and no axes yet.
QChartView* make_chart_view(const QString& title, QWidget* parent = nullptr);

// Replaces the chart's series and axes by line series (one per entry) over value axes titled
// `x_title` and `y_title`; each series shows its points and a tooltip with x and y on hover.
// `y_min` pins the y axis' lower bound (e.g. 0); the upper bounds fit the data with a margin.
struct LineData {
  QString name;
  std::vector<std::pair<double, double>> points;
  QColor color;
  bool dashed = false;
  bool markers = true;
};
void set_lines(QChartView* view, const std::vector<LineData>& lines, const QString& x_title,
               const QString& y_title, std::optional<double> y_min = 0.0,
               std::optional<double> y_max = std::nullopt);

// A horizontal reference line (e.g. an SLO) across the x range of the chart's current axes.
void add_hline(QChartView* view, double y, const QString& name, const QColor& color);

// A grouped bar chart: one bar set per entry of `sets` over `categories`.
struct BarSetData {
  QString name;
  std::vector<double> values;  // one per category
  QColor color;
};
void set_bars(QChartView* view, const QStringList& categories, const std::vector<BarSetData>& sets,
              const QString& y_title);

}  // namespace kvsim::gui
