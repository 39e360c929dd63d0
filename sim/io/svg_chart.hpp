#pragma once
// Small self-contained SVG charts for reports: a line chart (several series of (x, y) points,
// optional horizontal threshold line such as an SLO) and a bar chart (one value per category,
// optional threshold line). Axes carry labels with units and "nice" ticks (1, 2, 5 x 10^k
// steps); a legend names the series. The output is one <svg> element with inline styles, no
// scripts and no external references, so it can be embedded in an HTML page or saved as .svg.
// Numbers are formatted without the locale, so equal inputs give equal bytes.
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kvsim::io {

struct ChartSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y); drawn in the order given
};

struct ChartLine {
  double y = 0;
  std::string label;  // e.g. "SLO 2000 ms"
};

struct LineChart {
  std::string title;
  std::string x_label;  // with the unit, e.g. "clients"
  std::string y_label;  // with the unit, e.g. "TTFT p90 (ms)"
  std::vector<ChartSeries> series;
  std::optional<ChartLine> threshold;
  bool y_from_zero = true;  // the y axis starts at 0 (else at the data's minimum)
  // Top of the y axis when set: larger values are drawn on the top edge as open circles, so one
  // runaway series does not flatten the others.
  std::optional<double> y_max;
  int width = 640;
  int height = 360;
};

struct BarChart {
  std::string title;
  std::string y_label;
  std::vector<std::pair<std::string, double>> bars;  // category, value (non-finite: no bar)
  std::optional<ChartLine> threshold;
  int width = 640;
  int height = 360;
};

// Evenly spaced round tick values covering [lo, hi] with about `target` intervals: the step is
// 1, 2 or 5 x 10^k, the first tick <= lo and the last >= hi. lo == hi widens the range by one
// unit around it.
std::vector<double> nice_ticks(double lo, double hi, int target = 5);

// A tick label: the shortest of up to 3 decimals that the step needs ("0.5", "1200", "2.25").
std::string tick_label(double value, double step);

// Text made safe for XML content and attribute values.
std::string xml_escape(const std::string& text);

std::string render_line_chart(const LineChart& chart);
std::string render_bar_chart(const BarChart& chart);

}  // namespace kvsim::io
