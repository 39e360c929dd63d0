#include "sim/io/svg_chart.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <sstream>

#include "sim/io/text_format.hpp"

namespace kvsim::io {
namespace {

// A colour-blind-safe palette (Okabe and Ito, 2008).
constexpr std::array<const char*, 8> kPalette = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                                 "#E69F00", "#56B4E9", "#F0E442", "#000000"};

// Plot area margins in pixels.
constexpr double kLeft = 70;
constexpr double kRight = 20;
constexpr double kTop = 40;
constexpr double kBottom = 80;

std::string num(double v) { return format_fixed(v, 1); }

struct Axis {
  std::vector<double> ticks;
  double lo = 0;
  double hi = 1;
  double step = 1;
};

Axis make_axis(double lo, double hi, int target) {
  Axis a;
  a.ticks = nice_ticks(lo, hi, target);
  a.lo = a.ticks.front();
  a.hi = a.ticks.back();
  a.step = a.ticks.size() > 1 ? a.ticks[1] - a.ticks[0] : 1;
  return a;
}

void open_svg(std::ostringstream& os, int width, int height, const std::string& title) {
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
     << "\" viewBox=\"0 0 " << width << ' ' << height
     << "\" font-family=\"sans-serif\" font-size=\"12\" role=\"img\">\n"
     << "<title>" << xml_escape(title) << "</title>\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
     << "<text x=\"" << num(width / 2.0)
     << "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">"
     << xml_escape(title) << "</text>\n";
}

// The y axis with its grid lines, ticks and label; returns the y pixel of a value.
void draw_y_axis(std::ostringstream& os, const Axis& y, double x0, double x1, double y0, double y1,
                 const std::string& label) {
  for (const double t : y.ticks) {
    const double py = y0 - (t - y.lo) / (y.hi - y.lo) * (y0 - y1);
    os << "<line x1=\"" << num(x0) << "\" y1=\"" << num(py) << "\" x2=\"" << num(x1) << "\" y2=\""
       << num(py) << "\" stroke=\"#dddddd\"/>\n"
       << "<text x=\"" << num(x0 - 6) << "\" y=\"" << num(py + 4) << "\" text-anchor=\"end\">"
       << tick_label(t, y.step) << "</text>\n";
  }
  os << "<line x1=\"" << num(x0) << "\" y1=\"" << num(y0) << "\" x2=\"" << num(x0) << "\" y2=\""
     << num(y1) << "\" stroke=\"#333333\"/>\n"
     << "<text transform=\"translate(16 " << num((y0 + y1) / 2)
     << ") rotate(-90)\" text-anchor=\"middle\">" << xml_escape(label) << "</text>\n";
}

void draw_threshold(std::ostringstream& os, const ChartLine& line, const Axis& y, double x0,
                    double x1, double y0, double y1) {
  const double py = y0 - (line.y - y.lo) / (y.hi - y.lo) * (y0 - y1);
  os << "<line x1=\"" << num(x0) << "\" y1=\"" << num(py) << "\" x2=\"" << num(x1) << "\" y2=\""
     << num(py) << "\" stroke=\"#C00000\" stroke-width=\"2\" stroke-dasharray=\"8 4\"/>\n"
     << "<text x=\"" << num(x1 - 4) << "\" y=\"" << num(py - 5)
     << "\" text-anchor=\"end\" fill=\"#C00000\">" << xml_escape(line.label) << "</text>\n";
}

}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {0, 1};
  if (lo > hi) std::swap(lo, hi);
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  target = std::max(1, target);
  const double raw = (hi - lo) / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag * 10;
  for (const double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * mag >= raw * (1 - 1e-9)) {
      step = m * mag;
      break;
    }
  }
  const double first = std::floor(lo / step + 1e-9) * step;
  std::vector<double> ticks;
  for (int i = 0;; ++i) {
    const double t = first + i * step;
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
    if (t >= hi - step * 1e-9) break;
  }
  return ticks;
}

std::string tick_label(double value, double step) {
  int decimals = 0;
  while (decimals < 3 && std::abs(step * std::pow(10.0, decimals) -
                                  std::round(step * std::pow(10.0, decimals))) > 1e-6) {
    ++decimals;
  }
  return format_fixed(value, decimals);
}

std::string xml_escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string render_line_chart(const LineChart& chart) {
  double xmin = std::numeric_limits<double>::infinity();
  double xmax = -xmin;
  double ymin = xmin;
  double ymax = -xmin;
  for (const auto& s : chart.series) {
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      xmin = std::min(xmin, x);
      xmax = std::max(xmax, x);
      ymin = std::min(ymin, y);
      ymax = std::max(ymax, y);
    }
  }
  if (!std::isfinite(xmin)) {
    xmin = 0;
    xmax = 1;
    ymin = 0;
    ymax = 1;
  }
  if (chart.threshold) {
    ymin = std::min(ymin, chart.threshold->y);
    ymax = std::max(ymax, chart.threshold->y);
  }
  if (chart.y_from_zero) ymin = std::min(ymin, 0.0);
  if (chart.y_max && *chart.y_max > ymin) ymax = std::min(ymax, *chart.y_max);
  const Axis xa = make_axis(xmin, xmax, 6);
  const Axis ya = make_axis(ymin, ymax, 5);
  const double x0 = kLeft;
  const double x1 = chart.width - kRight;
  const double y0 = chart.height - kBottom;
  const double y1 = kTop;
  auto px = [&](double x) { return x0 + (x - xa.lo) / (xa.hi - xa.lo) * (x1 - x0); };
  auto py = [&](double y) {
    return y0 - (std::min(y, ya.hi) - ya.lo) / (ya.hi - ya.lo) * (y0 - y1);
  };

  std::ostringstream os;
  open_svg(os, chart.width, chart.height, chart.title);
  draw_y_axis(os, ya, x0, x1, y0, y1, chart.y_label);
  for (const double t : xa.ticks) {
    os << "<line x1=\"" << num(px(t)) << "\" y1=\"" << num(y0) << "\" x2=\"" << num(px(t))
       << "\" y2=\"" << num(y0 + 5) << "\" stroke=\"#333333\"/>\n"
       << "<text x=\"" << num(px(t)) << "\" y=\"" << num(y0 + 18) << "\" text-anchor=\"middle\">"
       << tick_label(t, xa.step) << "</text>\n";
  }
  os << "<line x1=\"" << num(x0) << "\" y1=\"" << num(y0) << "\" x2=\"" << num(x1) << "\" y2=\""
     << num(y0) << "\" stroke=\"#333333\"/>\n"
     << "<text x=\"" << num((x0 + x1) / 2) << "\" y=\"" << num(y0 + 36)
     << "\" text-anchor=\"middle\">" << xml_escape(chart.x_label) << "</text>\n";
  if (chart.threshold) draw_threshold(os, *chart.threshold, ya, x0, x1, y0, y1);
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    const auto& s = chart.series[i];
    const char* colour = kPalette[i % kPalette.size()];
    std::string path;
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      path += (path.empty() ? "M" : " L") + num(px(x)) + " " + num(py(y));
    }
    if (!path.empty()) {
      os << "<path d=\"" << path << "\" fill=\"none\" stroke=\"" << colour
         << "\" stroke-width=\"2\"/>\n";
    }
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      const bool clipped = y > ya.hi;
      os << "<circle cx=\"" << num(px(x)) << "\" cy=\"" << num(py(y)) << "\" r=\""
         << (clipped ? "4" : "3") << "\" fill=\"" << (clipped ? "#ffffff" : colour)
         << "\" stroke=\"" << colour << "\"/>\n";
    }
  }
  // Legend below the x axis label, one row.
  double lx = x0;
  const double ly = chart.height - 18.0;
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    const char* colour = kPalette[i % kPalette.size()];
    os << "<rect x=\"" << num(lx) << "\" y=\"" << num(ly - 9)
       << "\" width=\"14\" height=\"10\" fill=\"" << colour << "\"/>\n<text x=\"" << num(lx + 18)
       << "\" y=\"" << num(ly) << "\">" << xml_escape(chart.series[i].name) << "</text>\n";
    lx += 40 + 7.0 * static_cast<double>(chart.series[i].name.size());
  }
  os << "</svg>\n";
  return os.str();
}

std::string render_bar_chart(const BarChart& chart) {
  double ymax = 0;
  for (const auto& [name, v] : chart.bars) {
    if (std::isfinite(v)) ymax = std::max(ymax, v);
  }
  if (chart.threshold) ymax = std::max(ymax, chart.threshold->y);
  if (ymax <= 0) ymax = 1;
  const Axis ya = make_axis(0, ymax, 5);
  const double x0 = kLeft;
  const double x1 = chart.width - kRight;
  const double y0 = chart.height - kBottom;
  const double y1 = kTop;
  auto py = [&](double y) { return y0 - (y - ya.lo) / (ya.hi - ya.lo) * (y0 - y1); };

  std::ostringstream os;
  open_svg(os, chart.width, chart.height, chart.title);
  draw_y_axis(os, ya, x0, x1, y0, y1, chart.y_label);
  os << "<line x1=\"" << num(x0) << "\" y1=\"" << num(y0) << "\" x2=\"" << num(x1) << "\" y2=\""
     << num(y0) << "\" stroke=\"#333333\"/>\n";
  const double slot = chart.bars.empty() ? 0 : (x1 - x0) / static_cast<double>(chart.bars.size());
  for (std::size_t i = 0; i < chart.bars.size(); ++i) {
    const auto& [name, v] = chart.bars[i];
    const double cx = x0 + slot * (static_cast<double>(i) + 0.5);
    if (std::isfinite(v)) {
      const double w = slot * 0.6;
      os << "<rect x=\"" << num(cx - w / 2) << "\" y=\"" << num(py(v)) << "\" width=\"" << num(w)
         << "\" height=\"" << num(y0 - py(v)) << "\" fill=\"" << kPalette[i % kPalette.size()]
         << "\"/>\n"
         << "<text x=\"" << num(cx) << "\" y=\"" << num(py(v) - 4) << "\" text-anchor=\"middle\">"
         << format_fixed(v, v < 10 ? 2 : 1) << "</text>\n";
    } else {
      os << "<text x=\"" << num(cx) << "\" y=\"" << num(y0 - 6)
         << "\" text-anchor=\"middle\">n/a</text>\n";
    }
    os << "<text x=\"" << num(cx) << "\" y=\"" << num(y0 + 18) << "\" text-anchor=\"middle\">"
       << xml_escape(name) << "</text>\n";
  }
  if (chart.threshold) draw_threshold(os, *chart.threshold, ya, x0, x1, y0, y1);
  os << "</svg>\n";
  return os.str();
}

}  // namespace kvsim::io
