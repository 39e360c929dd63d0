#include "sim/planner/map_report.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <sstream>
#include <utility>
#include <vector>

#include "sim/io/svg_chart.hpp"
#include "sim/io/text_format.hpp"

namespace kvsim::planner {
namespace {

using io::xml_escape;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The figures every cell reports beside the map's metric.
constexpr std::array<const char*, 7> kFigures = {"requests_per_sec", "ttft_ms_p50", "ttft_ms_p90",
                                                 "ttft_ms_p99",      "tpot_ms_p50", "tpot_ms_p90",
                                                 "tpot_ms_p99"};

double figure(const VariantCell& v, const std::string& name) {
  const auto it = v.mean.find(name);
  return it == v.mean.end() ? kNaN : it->second;
}

// The smallest and largest finite value (NaN, NaN when there is none).
std::pair<double, double> finite_range(const std::vector<double>& values) {
  double lo = kNaN;
  double hi = kNaN;
  for (const double v : values) {
    if (!std::isfinite(v)) continue;
    lo = std::isnan(lo) ? v : std::min(lo, v);
    hi = std::isnan(hi) ? v : std::max(hi, v);
  }
  return {lo, hi};
}

// How many gains are at or above `level`.
std::int64_t cells_at_least(const std::vector<double>& grid, double level) {
  return std::count_if(grid.begin(), grid.end(), [level](double g) { return g >= level; });
}

std::string gain_text(double g) { return std::isfinite(g) ? io::format_fixed(g, 2) : "-"; }

std::string level_text(double level) { return io::format_shortest(level) + "x"; }

io::Json axis_json(const MapAxis& a) {
  io::Json j = io::Json::object();
  j["name"] = a.name();
  io::Json terms = io::Json::array();
  for (const auto& t : a.terms) terms.push_back(t.text);
  j["terms"] = terms;
  j["log"] = a.log();
  j["values"] = a.labels();
  io::Json numbers = io::Json::array();
  for (const double n : a.terms.front().numbers) numbers.push_back(io::json_number_or_null(n));
  j["numbers"] = numbers;
  return j;
}

// Linear interpolation of the crossing of `level` between two corner values.
double crossing(double a, double b, double level) {
  if (a == b) return 0.5;
  return std::clamp((level - a) / (b - a), 0.0, 1.0);
}

std::string gain_colour(double g) {
  const MapRgb c = map_gain_colour(g);
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

std::string value_text(const MapResult& m, double v) {
  if (!std::isfinite(v)) return "-";
  if (m.slo) return io::format_fixed(v, 0);
  const double a = std::abs(v);
  return io::format_fixed(v, a >= 100 ? 0 : (a >= 10 ? 1 : (a >= 1 ? 2 : 3)));
}

std::string hover_text(const MapResult& m, const MapCell& c) {
  std::string t =
      m.x.name() + " = " + m.x.labels()[c.ix] + "\n" + m.y.name() + " = " + m.y.labels()[c.iy];
  for (std::size_t v = 0; v < m.variants.size(); ++v) {
    const VariantCell& vc = c.variants[v];
    t += "\n" + m.variants[v].name + ": ";
    if (!vc.complete) {
      t += "not run yet";
      continue;
    }
    t += value_text(m, vc.value) + " " + m.metric;
    if (!m.slo && m.seeds > 1)
      t += " (seeds " + value_text(m, vc.min) + " to " + value_text(m, vc.max) + ")";
    if (m.slo && vc.capped) t += " (capped)";
    t += "; " + io::format_fixed(figure(vc, "requests_per_sec"), 3) + " req/s, TTFT p90 " +
         io::format_fixed(figure(vc, "ttft_ms_p90"), 0) + " ms, TPOT p90 " +
         io::format_fixed(figure(vc, "tpot_ms_p90"), 1) + " ms";
  }
  for (const auto& [i, j] : map_pairs(m)) {
    t += "\n" + pair_name(m, i, j) + ": " + gain_text(m.gain(c, i, j)) + "x";
  }
  return t;
}

void write_heatmap(std::ostream& os, const MapResult& m, std::size_t i, std::size_t j) {
  const std::size_t nx = m.x.size();
  const std::size_t ny = m.y.size();
  const double cw = std::max(26.0, std::min(64.0, 720.0 / static_cast<double>(nx)));
  const double ch = std::max(20.0, std::min(40.0, 480.0 / static_cast<double>(ny)));
  const double left = 110;
  const double top = 16;
  const double bottom = 86;
  const double legend = 110;
  const double w = left + cw * static_cast<double>(nx) + legend;
  const double h = top + ch * static_cast<double>(ny) + bottom;
  const auto px = [&](double gx) { return left + (gx + 0.5) * cw; };
  const auto py = [&](double gy) { return top + (static_cast<double>(ny) - 0.5 - gy) * ch; };
  const auto fmt = [](double v) { return io::format_fixed(v, 1); };
  const auto grid = gain_grid(m, i, j);
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << fmt(w) << "\" height=\"" << fmt(h)
     << "\" viewBox=\"0 0 " << fmt(w) << " " << fmt(h) << "\" font-family=\"sans-serif\" "
     << "font-size=\"11\">\n";
  for (const auto& c : m.cells) {
    const double g = grid[c.iy * nx + c.ix];
    const double x = left + static_cast<double>(c.ix) * cw;
    const double y = top + static_cast<double>(ny - 1 - c.iy) * ch;
    os << "<g class=\"cell\"><title>" << xml_escape(hover_text(m, c)) << "</title><rect x=\""
       << fmt(x) << "\" y=\"" << fmt(y) << "\" width=\"" << fmt(cw) << "\" height=\"" << fmt(ch)
       << "\" fill=\"" << gain_colour(g) << "\" stroke=\"#fff\" stroke-width=\"0.5\"/>";
    if (cw >= 30) {
      os << "<text x=\"" << fmt(x + cw / 2) << "\" y=\"" << fmt(y + ch / 2 + 4)
         << "\" text-anchor=\"middle\" fill=\"" << (map_gain_dark(g) ? "#fff" : "#222") << "\">"
         << gain_text(g) << "</text>";
    }
    os << "</g>\n";
  }
  // Contours.
  static const std::array<const char*, 4> dash = {"2,3", "", "6,3", ""};
  static const std::array<double, 4> width = {2.0, 2.5, 2.5, 3.0};
  for (std::size_t l = 0; l < std::size(kMapContourLevels); ++l) {
    const double level = kMapContourLevels[l];
    const auto segs = contour_segments(grid, nx, ny, level, kMapContourTolerance);
    if (segs.empty()) continue;
    os << "<g class=\"contour\" stroke=\"#111\" stroke-width=\"" << fmt(width[l])
       << "\" fill=\"none\" stroke-linecap=\"round\"";
    if (dash[l][0] != '\0') os << " stroke-dasharray=\"" << dash[l] << "\"";
    os << "><title>" << level_text(level) << "</title><path d=\"";
    for (const auto& s : segs) {
      os << "M" << fmt(px(s.x0)) << " " << fmt(py(s.y0)) << "L" << fmt(px(s.x1)) << " "
         << fmt(py(s.y1));
    }
    os << "\"/></g>\n";
    // The label at the segment nearest the middle of the line's extent.
    const ContourSegment& mid = segs[segs.size() / 2];
    os << "<text x=\"" << fmt(px((mid.x0 + mid.x1) / 2)) << "\" y=\""
       << fmt(py((mid.y0 + mid.y1) / 2) - 3)
       << "\" font-weight=\"bold\" font-size=\"12\" fill=\"#111\" stroke=\"#fff\" "
          "stroke-width=\"3\" paint-order=\"stroke\" text-anchor=\"middle\">"
       << level_text(level) << "</text>\n";
  }
  // Axes.
  const std::size_t xstep = std::max<std::size_t>(1, (nx + 11) / 12);
  for (std::size_t ix = 0; ix < nx; ix += xstep) {
    const double x = px(static_cast<double>(ix));
    const double y = top + ch * static_cast<double>(ny) + 12;
    os << "<text x=\"" << fmt(x) << "\" y=\"" << fmt(y)
       << "\" text-anchor=\"end\" transform=\"rotate(-35 " << fmt(x) << " " << fmt(y) << ")\">"
       << xml_escape(m.x.labels()[ix]) << "</text>\n";
  }
  const std::size_t ystep = std::max<std::size_t>(1, (ny + 15) / 16);
  for (std::size_t iy = 0; iy < ny; iy += ystep) {
    os << "<text x=\"" << fmt(left - 6) << "\" y=\"" << fmt(py(static_cast<double>(iy)) + 4)
       << "\" text-anchor=\"end\">" << xml_escape(m.y.labels()[iy]) << "</text>\n";
  }
  os << "<text x=\"" << fmt(left + cw * static_cast<double>(nx) / 2) << "\" y=\"" << fmt(h - 8)
     << "\" text-anchor=\"middle\" font-size=\"12\">" << xml_escape(m.x.name())
     << (m.x.log() ? " (log scale)" : "") << "</text>\n";
  os << "<text x=\"14\" y=\"" << fmt(top + ch * static_cast<double>(ny) / 2)
     << "\" text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 14 "
     << fmt(top + ch * static_cast<double>(ny) / 2) << ")\">" << xml_escape(m.y.name())
     << (m.y.log() ? " (log scale)" : "") << "</text>\n";
  // Colour legend: 0.5x .. 4x on a log scale.
  const double lx = left + cw * static_cast<double>(nx) + 30;
  const double lh = std::min(240.0, ch * static_cast<double>(ny));
  for (int k = 0; k < 60; ++k) {
    const double t = 2.0 - 3.0 * (k + 0.5) / 60.0;
    os << "<rect x=\"" << fmt(lx) << "\" y=\"" << fmt(top + lh * k / 60.0)
       << "\" width=\"16\" height=\"" << fmt(lh / 60.0 + 0.5) << "\" fill=\""
       << gain_colour(std::exp2(t)) << "\"/>";
  }
  os << "\n";
  for (const double g : {0.5, 1.0, 2.0, 3.0, 4.0}) {
    const double y = top + lh * (2.0 - std::log2(g)) / 3.0;
    os << "<text x=\"" << fmt(lx + 20) << "\" y=\"" << fmt(y + 4) << "\">" << io::format_shortest(g)
       << "x</text>\n";
  }
  os << "</svg>\n";
}

}  // namespace

MapRgb map_gain_colour(double gain) {
  if (!std::isfinite(gain) || gain <= 0) return {217, 217, 217};
  const double t = std::clamp(std::log2(gain), -1.0, 2.0);
  struct Rgb {
    double r, g, b;
  };
  const Rgb white{247, 247, 247};
  const Rgb red{214, 96, 77};
  const std::array<Rgb, 3> blues = {Rgb{158, 202, 225}, Rgb{66, 146, 198}, Rgb{8, 69, 148}};
  Rgb lo = white;
  Rgb hi = red;
  double f = -t;
  if (t >= 0) {
    // 1x -> 2x: white -> light blue; 2x -> 3x -> 4x: darker blues (log2 3 ~ 1.585).
    const double k1 = 1.0;
    const double k2 = std::log2(3.0);
    if (t <= k1) {
      lo = white;
      hi = blues[0];
      f = t / k1;
    } else if (t <= k2) {
      lo = blues[0];
      hi = blues[1];
      f = (t - k1) / (k2 - k1);
    } else {
      lo = blues[1];
      hi = blues[2];
      f = (t - k2) / (2.0 - k2);
    }
  }
  const auto mix = [f](double a, double b) {
    return static_cast<int>(std::lround(a + (b - a) * f));
  };
  return {mix(lo.r, hi.r), mix(lo.g, hi.g), mix(lo.b, hi.b)};
}

bool map_gain_dark(double gain) { return std::isfinite(gain) && gain >= 2.6; }

std::vector<ContourSegment> contour_segments(const std::vector<double>& values, std::size_t nx,
                                             std::size_t ny, double level, double tolerance) {
  std::vector<ContourSegment> out;
  if (nx < 2 || ny < 2 || values.size() < nx * ny) return out;
  const auto at = [&](std::size_t k) {
    const double v = values[k];
    return std::abs(v - level) <= tolerance * std::abs(level) ? level : v;
  };
  for (std::size_t iy = 0; iy + 1 < ny; ++iy) {
    for (std::size_t ix = 0; ix + 1 < nx; ++ix) {
      // Corners counter-clockwise from (ix, iy): a, b = (ix+1, iy), c = (ix+1, iy+1), d.
      const double a = at(iy * nx + ix);
      const double b = at(iy * nx + ix + 1);
      const double c = at((iy + 1) * nx + ix + 1);
      const double d = at((iy + 1) * nx + ix);
      if (std::isnan(a) || std::isnan(b) || std::isnan(c) || std::isnan(d)) continue;
      const int code =
          (a >= level ? 1 : 0) | (b >= level ? 2 : 0) | (c >= level ? 4 : 0) | (d >= level ? 8 : 0);
      if (code == 0 || code == 15) continue;
      const double x = static_cast<double>(ix);
      const double y = static_cast<double>(iy);
      // Edge crossings: bottom (a-b), right (b-c), top (d-c), left (a-d).
      const std::array<std::pair<double, double>, 4> e = {
          std::pair{x + crossing(a, b, level), y}, std::pair{x + 1, y + crossing(b, c, level)},
          std::pair{x + crossing(d, c, level), y + 1}, std::pair{x, y + crossing(a, d, level)}};
      const auto seg = [&](int p, int q) {
        out.push_back({e[static_cast<std::size_t>(p)].first, e[static_cast<std::size_t>(p)].second,
                       e[static_cast<std::size_t>(q)].first,
                       e[static_cast<std::size_t>(q)].second});
      };
      const bool centre_above = (a + b + c + d) / 4 >= level;
      switch (code) {
        case 1:
        case 14:
          seg(3, 0);
          break;
        case 2:
        case 13:
          seg(0, 1);
          break;
        case 3:
        case 12:
          seg(3, 1);
          break;
        case 4:
        case 11:
          seg(1, 2);
          break;
        case 6:
        case 9:
          seg(0, 2);
          break;
        case 7:
        case 8:
          seg(3, 2);
          break;
        case 5:  // a and c above
          if (centre_above) {
            seg(3, 2);
            seg(0, 1);
          } else {
            seg(3, 0);
            seg(1, 2);
          }
          break;
        case 10:  // b and d above
          if (centre_above) {
            seg(3, 0);
            seg(1, 2);
          } else {
            seg(3, 2);
            seg(0, 1);
          }
          break;
        default:
          break;
      }
    }
  }
  return out;
}

std::vector<std::pair<std::size_t, std::size_t>> map_pairs(const MapResult& map) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t i = 0; i < map.variants.size(); ++i) {
    for (std::size_t j = i + 1; j < map.variants.size(); ++j) out.emplace_back(i, j);
  }
  return out;
}

std::vector<double> gain_grid(const MapResult& map, std::size_t i, std::size_t j) {
  std::vector<double> out(map.cells.size(), kNaN);
  for (std::size_t k = 0; k < map.cells.size(); ++k) out[k] = map.gain(map.cells[k], i, j);
  return out;
}

std::string pair_name(const MapResult& map, std::size_t i, std::size_t j) {
  return map.variants[j].name + " / " + map.variants[i].name;
}

io::Json map_json(const MapResult& m) {
  io::Json doc = io::json_document("map");
  doc["definition"] = m.definition;
  doc["scenario"] = m.scenario_name;
  doc["scenario_path"] = m.scenario_path;
  doc["db"] = m.db_path;
  doc["metric"] = m.metric;
  doc["higher_is_better"] = m.higher_is_better;
  doc["slo"] = m.slo ? io::Json(m.slo->text()) : io::Json(nullptr);
  doc["users_knob"] = m.knob;
  doc["seeds"] = m.seeds;
  doc["x"] = axis_json(m.x);
  doc["y"] = axis_json(m.y);
  io::Json variants = io::Json::array();
  for (const auto& v : m.variants) {
    io::Json o = io::Json::object();
    for (const auto& ov : v.overrides) o[ov.path] = ov.value;
    variants.push_back({{"name", v.name}, {"description", v.description}, {"overrides", o}});
  }
  doc["variants"] = variants;
  const auto pairs = map_pairs(m);
  io::Json pj = io::Json::array();
  for (const auto& [i, j] : pairs) {
    const auto grid = gain_grid(m, i, j);
    const auto [lo, hi] = finite_range(grid);
    io::Json at_least = io::Json::object();
    for (const double level : kMapContourLevels)
      at_least[level_text(level)] = cells_at_least(grid, level);
    pj.push_back({{"name", pair_name(m, i, j)},
                  {"numerator", m.variants[j].name},
                  {"denominator", m.variants[i].name},
                  {"min_gain", io::json_number_or_null(lo)},
                  {"max_gain", io::json_number_or_null(hi)},
                  {"cells_at_least", at_least}});
  }
  doc["pairs"] = pj;
  io::Json cells = io::Json::array();
  for (const auto& c : m.cells) {
    io::Json cj = io::Json::object();
    cj["ix"] = c.ix;
    cj["iy"] = c.iy;
    cj["x"] = m.x.labels()[c.ix];
    cj["y"] = m.y.labels()[c.iy];
    cj["complete"] = c.complete();
    io::Json vs = io::Json::object();
    for (std::size_t v = 0; v < m.variants.size(); ++v) {
      const VariantCell& vc = c.variants[v];
      io::Json o = io::Json::object();
      o["complete"] = vc.complete;
      o["value"] = vc.complete ? io::json_number_or_null(vc.value) : io::Json(nullptr);
      if (m.slo) {
        o["capped"] = vc.capped;
        o["binding"] = vc.binding;
        o["probes"] = vc.probes;
      } else {
        o["min"] = vc.complete ? io::json_number_or_null(vc.min) : io::Json(nullptr);
        o["max"] = vc.complete ? io::json_number_or_null(vc.max) : io::Json(nullptr);
        io::Json sv = io::Json::array();
        for (const double s : vc.seed_values) sv.push_back(io::json_number_or_null(s));
        o["seed_values"] = sv;
      }
      for (const char* f : kFigures) o[f] = io::json_number_or_null(figure(vc, f));
      o["run_keys"] = vc.run_keys;
      vs[m.variants[v].name] = o;
    }
    cj["variants"] = vs;
    io::Json gains = io::Json::object();
    for (const auto& [i, j] : pairs) {
      io::Json g = io::Json::object();
      g["gain"] = io::json_number_or_null(m.gain(c, i, j));
      if (!m.slo && m.seeds > 1) {
        std::vector<double> seed_gains;
        for (std::size_t s = 0; s < static_cast<std::size_t>(m.seeds); ++s)
          seed_gains.push_back(m.seed_gain(c, i, j, s));
        const auto [lo, hi] = finite_range(seed_gains);
        g["seed_min"] = io::json_number_or_null(lo);
        g["seed_max"] = io::json_number_or_null(hi);
      }
      gains[pair_name(m, i, j)] = g;
    }
    cj["gains"] = gains;
    cells.push_back(cj);
  }
  doc["cells"] = cells;
  doc["missing_cells"] = m.missing_cells();
  const SweepReport& r = m.report;
  doc["this_invocation"] = {{"runs_in_map", r.sweep_runs},        {"ran_done", r.ran_done},
                            {"ran_failed", r.ran_failed},         {"already_done", r.already_done},
                            {"skipped_failed", r.skipped_failed}, {"in_flight", r.in_flight},
                            {"duplicates", r.duplicates}};
  return doc;
}

void write_map_csv(std::ostream& os, const MapResult& m) {
  os << "ix,iy," << io::csv_field(m.x.name()) << "," << io::csv_field(m.y.name())
     << ",variant,complete," << io::csv_field(m.metric);
  if (m.slo) {
    os << ",capped,binding";
  } else {
    os << ",min,max";
  }
  os << ",gain_vs_" << io::csv_field(m.variants.front().name);
  for (const char* f : kFigures) os << "," << f;
  os << ",run_keys\n";
  for (const auto& c : m.cells) {
    for (std::size_t v = 0; v < m.variants.size(); ++v) {
      const VariantCell& vc = c.variants[v];
      os << c.ix << "," << c.iy << "," << io::csv_field(m.x.labels()[c.ix]) << ","
         << io::csv_field(m.y.labels()[c.iy]) << "," << io::csv_field(m.variants[v].name) << ","
         << (vc.complete ? "true" : "false") << ","
         << io::csv_number(vc.complete ? vc.value : kNaN);
      if (m.slo) {
        os << "," << (vc.capped ? "true" : "false") << "," << io::csv_field(vc.binding);
      } else {
        os << "," << io::csv_number(vc.complete ? vc.min : kNaN) << ","
           << io::csv_number(vc.complete ? vc.max : kNaN);
      }
      os << "," << io::csv_number(m.gain(c, 0, v));
      for (const char* f : kFigures) os << "," << io::csv_number(figure(vc, f));
      std::string keys;
      for (const auto& k : vc.run_keys) keys += (keys.empty() ? "" : " ") + k;
      os << "," << keys << "\n";
    }
  }
}

std::string format_map_text(const MapResult& m) {
  std::ostringstream os;
  os << "Map of " << m.scenario_name << ": " << m.metric;
  if (m.slo) os << " meeting " << m.slo->text() << " (users = " << m.knob << ")";
  os << ", " << m.seeds << " seed" << (m.seeds > 1 ? "s" : "") << " per cell; x = " << m.x.name()
     << ", y = " << m.y.name() << "\n";
  // Value tables per variant would be long; the gains are what a planner reads.
  std::size_t width = 8;
  for (const auto& l : m.x.labels()) width = std::max(width, l.size() + 1);
  std::size_t yw = m.y.name().size();
  for (const auto& l : m.y.labels()) yw = std::max(yw, l.size());
  for (const auto& [i, j] : map_pairs(m)) {
    os << "\n"
       << pair_name(m, i, j) << " (" << (m.higher_is_better ? "" : "inverse ") << "ratio of "
       << m.metric << ")\n";
    os << io::pad_right(m.y.name(), yw) << " |";
    for (const auto& l : m.x.labels()) os << io::pad_left(l, width);
    os << "\n" << std::string(yw + 2 + width * m.x.size(), '-') << "\n";
    for (std::size_t row = m.y.size(); row-- > 0;) {
      os << io::pad_left(m.y.labels()[row], yw) << " |";
      for (std::size_t ix = 0; ix < m.x.size(); ++ix)
        os << io::pad_left(gain_text(m.gain(m.cell(ix, row), i, j)), width);
      os << "\n";
    }
    os << io::pad_left("x: " + m.x.name(), yw + 2 + width * m.x.size()) << "\n";
    const auto grid = gain_grid(m, i, j);
    const auto [lo, hi] = finite_range(grid);
    os << "range " << gain_text(lo) << "x to " << gain_text(hi) << "x; cells at or above";
    for (const double level : kMapContourLevels)
      os << " " << level_text(level) << ": " << cells_at_least(grid, level);
    os << " of " << grid.size() << "\n";
  }
  const SweepReport& r = m.report;
  os << "\n"
     << (m.slo ? "searches" : "runs") << ": " << r.sweep_runs << " in the map; "
     << (m.slo ? "runs: " : "") << "ran " << r.ran_done << " done, " << r.ran_failed
     << " failed; skipped " << r.already_done << " already done";
  if (r.skipped_failed > 0) os << ", " << r.skipped_failed << " failed before";
  if (r.in_flight > 0) os << ", " << r.in_flight << " running elsewhere";
  os << "\n";
  if (m.missing_cells() > 0)
    os << m.missing_cells() << " of " << m.cells.size()
       << " cells are not complete: run the other shards (or rerun without --shard)\n";
  return os.str();
}

void write_map_html(std::ostream& os, const MapResult& m) {
  os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>kvsim map: "
     << xml_escape(m.scenario_name) << "</title>\n<style>\n"
     << "body{font-family:sans-serif;margin:24px;color:#222;max-width:1200px}\n"
     << "table{border-collapse:collapse;margin:12px 0}td,th{border:1px solid #bbb;padding:4px "
        "8px;text-align:right}th{background:#eee;text-align:left}\n"
     << "svg{border:1px solid #ddd;margin:8px 0}.cell:hover rect{stroke:#000;stroke-width:2}\n"
     << ".note{color:#555;font-size:13px}\n"
     << "</style>\n</head>\n<body>\n";
  os << "<h1>Break-even map: " << xml_escape(m.scenario_name) << "</h1>\n<p>";
  if (m.slo) {
    os << "Value: the most users (" << xml_escape(m.knob) << ") meeting <b>"
       << xml_escape(m.slo->text()) << "</b>";
  } else {
    os << "Value: <b>" << xml_escape(m.metric) << "</b>"
       << (m.higher_is_better ? "" : " (lower is better: gains are inverse ratios)");
  }
  os << "; " << m.seeds << " seed" << (m.seeds > 1 ? "s" : "") << " per cell (mean). x: <b>"
     << xml_escape(m.x.name()) << "</b>, y: <b>" << xml_escape(m.y.name())
     << "</b>. Each heatmap is one variant's gain over another; lines "
     << "mark 1x (dotted), 2x, 3x (dashed) and 4x, gains within 2 % of a level (one seed's noise) "
     << "counting as at it. Hover a cell for every variant's figures.</p>\n";
  os << "<table><tr><th>variant</th><th>what it is</th></tr>\n";
  for (const auto& v : m.variants) {
    os << "<tr><td style=\"text-align:left\">" << xml_escape(v.name)
       << "</td><td style=\"text-align:left\">" << xml_escape(v.description) << "</td></tr>\n";
  }
  os << "</table>\n";
  if (m.missing_cells() > 0)
    os << "<p class=\"note\">" << m.missing_cells() << " of " << m.cells.size()
       << " cells are not complete yet (grey).</p>\n";
  for (const auto& [i, j] : map_pairs(m)) {
    const auto grid = gain_grid(m, i, j);
    os << "<h2>" << xml_escape(pair_name(m, i, j)) << "</h2>\n<p class=\"note\">cells at or above";
    for (const double level : kMapContourLevels)
      os << " " << level_text(level) << ": " << cells_at_least(grid, level);
    os << " of " << grid.size() << "</p>\n";
    write_heatmap(os, m, i, j);
  }
  if (!m.definition.empty())
    os << "<p class=\"note\">Made by <code>" << xml_escape(m.definition) << "</code></p>\n";
  os << "<p class=\"note\">Written by kvsim map; the grid is in the JSON and CSV beside this page, "
        "every run in the results database "
     << xml_escape(m.db_path) << ".</p>\n</body>\n</html>\n";
}

}  // namespace kvsim::planner
