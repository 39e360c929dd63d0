#include "validation/src/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <sstream>

#include "sim/core/error.hpp"
#include "sim/io/json_writer.hpp"
#include "sim/io/stats.hpp"

namespace kvsim::validation {
namespace {

std::string fixed(double v, int digits = 2) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string pad(const std::string& s, std::size_t w, bool left = false) {
  if (s.size() >= w) return s;
  return left ? s + std::string(w - s.size(), ' ') : std::string(w - s.size(), ' ') + s;
}

struct Figures {
  std::vector<double> ttft, tpot, latency;
  double rps = 0;
  double hit_rate = 0;
  double requests = 0;
  double input_tokens = 0, prompt_tokens = 0, output_tokens = 0;
};

double mean(const std::vector<double>& v) {
  if (v.empty()) return std::nan("");
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double pct(const std::vector<double>& sorted, double q) {
  return sorted.empty() ? std::nan("") : io::percentile_linear(sorted, q);
}

Figures figures(const std::vector<io::RequestRecord>& records) {
  Figures f;
  double first = 0, last = 0;
  double cached = 0, prompt = 0, in = 0, out = 0;
  bool any = false;
  for (const io::RequestRecord& r : records) {
    if (!r.counted) continue;
    f.ttft.push_back(r.ttft_ms);
    f.tpot.push_back(r.tpot_ms);
    f.latency.push_back(r.latency_ms);
    first = any ? std::min(first, r.start_time_ms) : r.start_time_ms;
    last = any ? std::max(last, r.start_time_ms + r.latency_ms) : r.start_time_ms + r.latency_ms;
    any = true;
    cached += static_cast<double>(r.cached_tokens);
    prompt += static_cast<double>(r.prompt_tokens);
    in += static_cast<double>(r.input_num_tokens);
    out += static_cast<double>(r.output_num_tokens);
  }
  for (auto* v : {&f.ttft, &f.tpot, &f.latency}) std::sort(v->begin(), v->end());
  const auto n = static_cast<double>(f.ttft.size());
  f.requests = n;
  f.rps = any && last > first ? n / ((last - first) / 1000.0) : std::nan("");
  f.hit_rate = prompt > 0 ? 100.0 * cached / prompt : std::nan("");
  f.input_tokens = n > 0 ? in / n : std::nan("");
  f.prompt_tokens = n > 0 ? prompt / n : std::nan("");
  f.output_tokens = n > 0 ? out / n : std::nan("");
  return f;
}

struct Row {
  std::string name;
  double measured;
  double predicted;
  bool points;
};

std::vector<Row> rows_of(const Figures& m, const Figures& p) {
  std::vector<Row> rows;
  const auto add_dist = [&](const std::string& base, const std::vector<double>& a,
                            const std::vector<double>& b) {
    rows.push_back({base + "_mean", mean(a), mean(b), false});
    rows.push_back({base + "_p50", pct(a, 0.5), pct(b, 0.5), false});
    rows.push_back({base + "_p90", pct(a, 0.9), pct(b, 0.9), false});
    rows.push_back({base + "_p99", pct(a, 0.99), pct(b, 0.99), false});
  };
  add_dist("ttft", m.ttft, p.ttft);
  add_dist("tpot", m.tpot, p.tpot);
  add_dist("latency", m.latency, p.latency);
  rows.push_back({"requests_per_sec", m.rps, p.rps, false});
  rows.push_back({"cache_hit_rate", m.hit_rate, p.hit_rate, true});
  rows.push_back({"requests", m.requests, p.requests, false});
  rows.push_back({"input_tokens_mean", m.input_tokens, p.input_tokens, false});
  rows.push_back({"prompt_tokens_mean", m.prompt_tokens, p.prompt_tokens, false});
  rows.push_back({"output_tokens_mean", m.output_tokens, p.output_tokens, false});
  return rows;
}

std::string unit_of(const std::string& name) {
  if (name.rfind("ttft", 0) == 0 || name.rfind("tpot", 0) == 0 || name.rfind("latency", 0) == 0)
    return "ms";
  if (name == "requests_per_sec") return "req/s";
  if (name == "cache_hit_rate") return "%";
  if (name == "requests") return "";
  return "tokens";
}

std::string svg_cdf(const std::string& title, const std::vector<double>& a,
                    const std::vector<double>& b) {
  constexpr double kW = 460, kH = 280, kL = 56, kR = 16, kT = 28, kB = 40;
  double xmax = 0;
  for (const auto* v : {&a, &b}) {
    if (!v->empty()) xmax = std::max(xmax, v->back());
  }
  if (xmax <= 0) xmax = 1;
  const double pw = kW - kL - kR, ph = kH - kT - kB;
  const auto x = [&](double v) { return kL + pw * v / xmax; };
  const auto y = [&](double f) { return kT + ph * (1 - f); };
  std::ostringstream os;
  os << "<svg xmlns='http://www.w3.org/2000/svg' width='" << kW << "' height='" << kH
     << "' viewBox='0 0 " << kW << ' ' << kH << "' font-family='sans-serif' font-size='11'>\n";
  os << "<rect width='100%' height='100%' fill='white'/>\n";
  os << "<text x='" << kW / 2 << "' y='16' text-anchor='middle' font-size='13'>" << title
     << " CDF</text>\n";
  for (int i = 0; i <= 4; ++i) {
    const double f = i / 4.0;
    const double xv = xmax * f;
    os << "<line x1='" << kL << "' x2='" << kL + pw << "' y1='" << y(f) << "' y2='" << y(f)
       << "' stroke='#ddd'/>\n";
    os << "<text x='" << kL - 4 << "' y='" << y(f) + 4 << "' text-anchor='end'>" << fixed(f, 2)
       << "</text>\n";
    os << "<line x1='" << x(xv) << "' x2='" << x(xv) << "' y1='" << kT << "' y2='" << kT + ph
       << "' stroke='#eee'/>\n";
    os << "<text x='" << x(xv) << "' y='" << kT + ph + 14 << "' text-anchor='middle'>"
       << fixed(xv, xmax < 10 ? 2 : 0) << "</text>\n";
  }
  os << "<text x='" << kL + pw / 2 << "' y='" << kH - 6 << "' text-anchor='middle'>" << title
     << " (ms)</text>\n";
  os << "<rect x='" << kL << "' y='" << kT << "' width='" << pw << "' height='" << ph
     << "' fill='none' stroke='#444'/>\n";
  const auto line = [&](const std::vector<double>& v, const char* color, const char* dash) {
    if (v.empty()) return;
    os << "<polyline fill='none' stroke='" << color << "' stroke-width='2' stroke-dasharray='"
       << dash << "' points='" << x(0) << ',' << y(0);
    const auto n = static_cast<double>(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      os << ' ' << x(v[i]) << ',' << y(static_cast<double>(i) / n) << ' ' << x(v[i]) << ','
         << y(static_cast<double>(i + 1) / n);
    }
    os << "'/>\n";
  };
  line(a, "#1f77b4", "none");
  line(b, "#ff7f0e", "6 3");
  os << "<line x1='" << kL + pw - 150 << "' x2='" << kL + pw - 128 << "' y1='" << kT + ph - 30
     << "' y2='" << kT + ph - 30 << "' stroke='#1f77b4' stroke-width='2'/><text x='"
     << kL + pw - 124 << "' y='" << kT + ph - 26 << "'>measured (" << a.size() << ")</text>\n";
  os << "<line x1='" << kL + pw - 150 << "' x2='" << kL + pw - 128 << "' y1='" << kT + ph - 14
     << "' y2='" << kT + ph - 14
     << "' stroke='#ff7f0e' stroke-width='2' stroke-dasharray='6 3'/><text x='" << kL + pw - 124
     << "' y='" << kT + ph - 10 << "'>predicted (" << b.size() << ")</text>\n";
  os << "</svg>\n";
  return os.str();
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

// The quantities compared per request, and the suffixes of their tolerance names.
constexpr const char* kPerRequestQuantities[] = {"ttft", "tpot", "latency"};
constexpr const char* kMedianAbsRelSuffix = "_request_median_abs_rel";
constexpr const char* kCorrSuffix = "_request_corr";

std::optional<double> finite_or_none(double v) {
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

// Ranks 1..n of v; tied values share the average of the ranks they span.
std::vector<double> average_ranks(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> ranks(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    // Ranks i+1 .. j+1 (1-based) share their average.
    const double r = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (std::size_t k = i; k <= j; ++k) ranks[order[k]] = r;
    i = j + 1;
  }
  return ranks;
}

using RequestKey = std::pair<std::string, int>;  // (conversation_id, input_num_turns)

// The counted records of one side by key: the first record of each key, the keys in record order,
// and the keys seen again.
struct Keyed {
  std::map<RequestKey, const io::RequestRecord*> first;
  std::vector<RequestKey> order;
  std::vector<RequestKey> duplicates;
};

Keyed keyed(const std::vector<io::RequestRecord>& records) {
  Keyed k;
  for (const io::RequestRecord& r : records) {
    if (!r.counted) continue;
    RequestKey key{r.conversation_id, r.input_num_turns};
    if (k.first.emplace(key, &r).second) {
      k.order.push_back(std::move(key));
    } else {
      k.duplicates.push_back(std::move(key));
    }
  }
  return k;
}

// "3 measured requests have" / "1 measured request has".
std::string count_of(std::size_t n, const std::string& what) {
  return std::to_string(n) + " " + what + (n == 1 ? " has" : "s have");
}

// The first few keys, "conversation turn N", for a note.
std::string key_list(const std::vector<RequestKey>& keys) {
  constexpr std::size_t kShown = 5;
  std::string s;
  for (std::size_t i = 0; i < keys.size() && i < kShown; ++i) {
    s += (i == 0 ? "" : ", ") + keys[i].first + " turn " + std::to_string(keys[i].second);
  }
  if (keys.size() > kShown) s += " and " + std::to_string(keys.size() - kShown) + " more";
  return s;
}

// Measured and predicted values of one quantity over the pairs; TPOT only where both sides have
// more than one output token (a single token has no inter-token gap).
std::pair<std::vector<double>, std::vector<double>> quantity_values(
    const std::vector<RequestPair>& pairs, const std::string& name) {
  std::pair<std::vector<double>, std::vector<double>> out;
  for (const RequestPair& r : pairs) {
    if (name == "tpot" && (r.measured.output_num_tokens <= 1 || r.predicted.output_num_tokens <= 1))
      continue;
    const auto value = [&](const io::RequestRecord& x) {
      return name == "ttft" ? x.ttft_ms : name == "tpot" ? x.tpot_ms : x.latency_ms;
    };
    out.first.push_back(value(r.measured));
    out.second.push_back(value(r.predicted));
  }
  return out;
}

PerRequestFigures per_request_figures(const std::string& name, const std::vector<double>& m,
                                      const std::vector<double>& p,
                                      const std::map<std::string, double>& tolerances) {
  PerRequestFigures f;
  f.name = name;
  f.n = static_cast<std::int64_t>(m.size());
  f.pearson = pearson_correlation(m, p);
  f.spearman = spearman_correlation(m, p);
  std::vector<double> abs_err, abs_rel, rel;
  for (std::size_t i = 0; i < m.size(); ++i) {
    abs_err.push_back(std::fabs(p[i] - m[i]));
    if (m[i] > 0) {
      rel.push_back(100.0 * (p[i] - m[i]) / m[i]);
      abs_rel.push_back(std::fabs(rel.back()));
    }
  }
  std::sort(abs_err.begin(), abs_err.end());
  std::sort(abs_rel.begin(), abs_rel.end());
  f.median_abs_error_ms = finite_or_none(pct(abs_err, 0.5));
  f.median_abs_rel_error_percent = finite_or_none(pct(abs_rel, 0.5));
  f.mean_rel_error_percent = finite_or_none(mean(rel));
  // An undefined figure under a tolerance counts as exceeded: nothing shows it is within.
  if (const auto it = tolerances.find(name + kMedianAbsRelSuffix); it != tolerances.end()) {
    f.tolerance_median_abs_rel = it->second;
    f.exceeded |=
        !(f.median_abs_rel_error_percent && *f.median_abs_rel_error_percent <= it->second);
  }
  if (const auto it = tolerances.find(name + kCorrSuffix); it != tolerances.end()) {
    f.tolerance_corr = it->second;
    f.exceeded |= !(f.pearson && *f.pearson >= it->second);
  }
  return f;
}

// A per-request figure for the table, Markdown and HTML: "-" when undefined.
std::string figure_text(const std::optional<double>& v, int digits, const char* unit = "") {
  return v ? fixed(*v, digits) + unit : std::string("-");
}

std::string signed_percent(const std::optional<double>& v) {
  if (!v) return "-";
  return (*v > 0 ? "+" : "") + fixed(*v, 1) + "%";
}

std::string per_request_tolerance_text(const PerRequestFigures& f) {
  std::string s;
  if (f.tolerance_corr) s += "corr>=" + fixed(*f.tolerance_corr, 2);
  if (f.tolerance_median_abs_rel) {
    s += (s.empty() ? "" : " ") + std::string("|rel|<=") + fixed(*f.tolerance_median_abs_rel, 1) +
         "%";
  }
  return s.empty() ? "-" : s;
}

io::Json optional_json(const std::optional<double>& v) {
  return v ? io::json_number_or_null(*v) : io::Json();
}

// TPOT of a request with more than one output token; nullopt otherwise (no inter-token gap).
std::optional<double> tpot_of(const io::RequestRecord& r) {
  return r.output_num_tokens > 1 ? std::optional<double>(r.tpot_ms) : std::nullopt;
}

// Predicted (y) against measured (x) of one quantity, both axes on one scale from 0 so the
// y = x line (a perfect prediction) is the diagonal.
std::string svg_scatter(const std::string& title, const std::vector<double>& measured,
                        const std::vector<double>& predicted) {
  constexpr double kSize = 300, kLeft = 60, kBottom = 44, kTop = 28, kRight = 14;
  double top = 0;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    top = std::max({top, measured[i], predicted[i]});
  }
  if (top <= 0) top = 1;
  const double side = kSize - kTop - kBottom;
  const auto px = [&](double v) { return kLeft + side * v / top; };
  const auto py = [&](double v) { return kTop + side * (1 - v / top); };
  std::ostringstream os;
  const double width = kLeft + side + kRight;
  os << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='" << kSize
     << "' font-family='sans-serif' font-size='11'>\n<rect width='100%' height='100%' "
        "fill='white'/>\n<text x='"
     << width / 2 << "' y='16' text-anchor='middle' font-size='13'>" << title
     << " per request</text>\n";
  for (int t = 0; t <= 4; ++t) {
    const double v = top * t / 4.0;
    const std::string label = fixed(v, top < 10 ? 2 : 0);
    os << "<text x='" << px(v) << "' y='" << kTop + side + 14 << "' text-anchor='middle'>" << label
       << "</text><text x='" << kLeft - 4 << "' y='" << py(v) + 4 << "' text-anchor='end'>" << label
       << "</text>\n";
  }
  os << "<rect x='" << kLeft << "' y='" << kTop << "' width='" << side << "' height='" << side
     << "' fill='none' stroke='#444'/>\n<line x1='" << px(0) << "' y1='" << py(0) << "' x2='"
     << px(top) << "' y2='" << py(top) << "' stroke='#999' stroke-dasharray='4 3'/>\n";
  for (std::size_t i = 0; i < measured.size(); ++i) {
    os << "<circle cx='" << px(measured[i]) << "' cy='" << py(predicted[i])
       << "' r='2.5' fill='#1f77b4' fill-opacity='0.6'/>\n";
  }
  os << "<text x='" << kLeft + side / 2 << "' y='" << kSize - 8
     << "' text-anchor='middle'>measured " << title
     << " (ms)</text>\n<text transform='translate(14 " << kTop + side / 2
     << ") rotate(-90)' text-anchor='middle'>predicted " << title << " (ms)</text>\n</svg>\n";
  return os.str();
}

}  // namespace

std::vector<io::RequestRecord> measured_records(const ReplayRun& run) {
  std::vector<io::RequestRecord> out;
  for (const ReplayRecord& r : run.records) {
    if (r.error.empty()) out.push_back(r.request);
  }
  return out;
}

std::vector<std::string> comparable_metrics() {
  std::vector<std::string> names;
  for (const Row& r : rows_of(Figures{}, Figures{})) names.push_back(r.name);
  for (const char* q : kPerRequestQuantities) {
    names.push_back(std::string(q) + kMedianAbsRelSuffix);
    names.push_back(std::string(q) + kCorrSuffix);
  }
  return names;
}

std::map<std::string, double> parse_tolerances(const std::string& text) {
  std::map<std::string, double> out;
  const std::vector<std::string> valid = comparable_metrics();
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos)
      throw InputError("", 0, 0, "--tolerance: '" + item + "' is not NAME=VALUE");
    const std::string name = item.substr(0, eq);
    std::string value = item.substr(eq + 1);
    if (std::find(valid.begin(), valid.end(), name) == valid.end()) {
      std::string list;
      for (const auto& v : valid) list += (list.empty() ? "" : ", ") + v;
      std::string msg = "--tolerance: unknown metric '" + name + "' (valid: ";
      msg += list;
      msg += ")";
      throw InputError("", 0, 0, msg);
    }
    const bool corr = name.ends_with(kCorrSuffix);
    if (!corr && !value.empty() && value.back() == '%') value.pop_back();
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    const bool number = !value.empty() && end == value.c_str() + value.size() && std::isfinite(v);
    if (corr && !(number && v >= -1 && v <= 1)) {
      throw InputError("", 0, 0,
                       "--tolerance: '" + item +
                           "': the bound must be a correlation from -1 to 1 (a minimum, no %)");
    }
    if (!corr && !(number && v >= 0)) {
      throw InputError("", 0, 0,
                       "--tolerance: '" + item + "': the bound must be a number >= 0 (percent)");
    }
    out[name] = v;
  }
  return out;
}

bool Comparison::exceeded() const {
  return std::any_of(rows.begin(), rows.end(),
                     [](const MetricComparison& r) { return r.exceeded; }) ||
         std::any_of(per_request.figures.begin(), per_request.figures.end(),
                     [](const PerRequestFigures& f) { return f.exceeded; });
}

std::optional<double> pearson_correlation(const std::vector<double>& x,
                                          const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) return std::nullopt;
  const double mx = mean(x), my = mean(y);
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (!(sxx > 0) || !(syy > 0)) return std::nullopt;
  // Rounding can put a perfect correlation a hair outside [-1, 1].
  return std::clamp(sxy / std::sqrt(sxx * syy), -1.0, 1.0);
}

std::optional<double> spearman_correlation(const std::vector<double>& x,
                                           const std::vector<double>& y) {
  if (x.size() != y.size()) return std::nullopt;
  return pearson_correlation(average_ranks(x), average_ranks(y));
}

PerRequest compare_per_request(const std::vector<io::RequestRecord>& measured,
                               const std::vector<io::RequestRecord>& predicted,
                               const std::map<std::string, double>& tolerances,
                               std::vector<std::string>& notes) {
  PerRequest out;
  const Keyed m = keyed(measured);
  const Keyed p = keyed(predicted);
  out.measured_duplicates = static_cast<std::int64_t>(m.duplicates.size());
  out.predicted_duplicates = static_cast<std::int64_t>(p.duplicates.size());
  std::vector<RequestKey> measured_only, predicted_only;
  for (const RequestKey& k : m.order) {
    const auto it = p.first.find(k);
    if (it == p.first.end()) {
      measured_only.push_back(k);
      continue;
    }
    out.pairs.push_back({k.first, k.second, *m.first.at(k), *it->second});
  }
  for (const RequestKey& k : p.order) {
    if (!m.first.contains(k)) predicted_only.push_back(k);
  }
  out.measured_unpaired = static_cast<std::int64_t>(measured_only.size());
  out.predicted_unpaired = static_cast<std::int64_t>(predicted_only.size());
  if (!measured_only.empty()) {
    notes.push_back(count_of(measured_only.size(), "measured request") + " no predicted twin and " +
                    (measured_only.size() == 1 ? "is" : "are") +
                    " left out of the per-request comparison: " + key_list(measured_only));
  }
  if (!predicted_only.empty()) {
    notes.push_back(count_of(predicted_only.size(), "predicted request") +
                    " no measured twin and " + (predicted_only.size() == 1 ? "is" : "are") +
                    " left out of the per-request comparison: " + key_list(predicted_only));
  }
  for (const auto& [side, d] :
       {std::pair{"measured", &m.duplicates}, std::pair{"predicted", &p.duplicates}}) {
    if (d->empty()) continue;
    notes.push_back(
        std::to_string(d->size()) + " " + side + " request" +
        (d->size() == 1 ? " repeats" : "s repeat") +
        " a (conversation, turn) already seen; the first of each is paired: " + key_list(*d));
  }
  for (const char* q : kPerRequestQuantities) {
    const auto [mv, pv] = quantity_values(out.pairs, q);
    out.figures.push_back(per_request_figures(q, mv, pv, tolerances));
  }
  return out;
}

Comparison compare(const ReplayRun& measured, const std::vector<io::RequestRecord>& predicted,
                   const std::map<std::string, double>& tolerances) {
  Comparison c;
  c.scenario_name = measured.scenario_name;
  c.url = measured.url;
  c.model = measured.model;
  c.measured_failed = measured.failed();
  const Figures m = figures(measured_records(measured));
  const Figures p = figures(predicted);
  for (const Row& r : rows_of(m, p)) {
    MetricComparison mc;
    mc.name = r.name;
    mc.measured = r.measured;
    mc.predicted = r.predicted;
    mc.points = r.points;
    mc.error = r.points ? r.predicted - r.measured
                        : (r.measured != 0 ? 100.0 * (r.predicted - r.measured) / r.measured
                                           : std::nan(""));
    if (const auto it = tolerances.find(r.name); it != tolerances.end()) {
      mc.tolerance = it->second;
      mc.exceeded = !(std::fabs(mc.error) <= it->second);
    }
    c.rows.push_back(mc);
  }
  c.samples["TTFT"] = {m.ttft, p.ttft};
  c.samples["TPOT"] = {m.tpot, p.tpot};
  c.samples["latency"] = {m.latency, p.latency};
  if (c.measured_failed > 0) {
    c.notes.push_back(std::to_string(c.measured_failed) +
                      " measured requests failed and are left out");
  }
  if (measured.interrupted) c.notes.push_back("the replay was cut short: " + measured.stop_reason);
  c.per_request = compare_per_request(measured_records(measured), predicted, tolerances, c.notes);
  return c;
}

std::string comparison_table(const Comparison& c) {
  std::ostringstream os;
  os << "Measured (" << c.url << ", model " << c.model << ") against predicted (" << c.scenario_name
     << ")\n";
  os << pad("metric", 22, true) << pad("unit", 8) << pad("measured", 12) << pad("predicted", 12)
     << pad("error", 10) << pad("tolerance", 11) << '\n';
  for (const MetricComparison& r : c.rows) {
    const std::string err =
        std::isfinite(r.error) ? fixed(r.error, 1) + (r.points ? " pt" : "%") : "n/a";
    const std::string tol = r.tolerance ? fixed(*r.tolerance, 1) + (r.points ? " pt" : "%") : "-";
    os << pad(r.name, 22, true) << pad(unit_of(r.name), 8) << pad(fixed(r.measured), 12)
       << pad(fixed(r.predicted), 12) << pad(err, 10) << pad(tol, 11)
       << (r.exceeded ? "  EXCEEDED" : "") << '\n';
  }
  const PerRequest& pr = c.per_request;
  os << "per request (" << pr.pairs.size() << " pairs)\n";
  os << pad("quantity", 12, true) << pad("pairs", 7) << pad("pearson", 9) << pad("spearman", 9)
     << pad("med|err| ms", 13) << pad("med|rel err|", 14) << pad("mean rel err", 14)
     << "  tolerance\n";
  for (const PerRequestFigures& f : pr.figures) {
    os << pad(f.name + "_ms", 12, true) << pad(std::to_string(f.n), 7)
       << pad(figure_text(f.pearson, 3), 9) << pad(figure_text(f.spearman, 3), 9)
       << pad(figure_text(f.median_abs_error_ms, 2), 13)
       << pad(figure_text(f.median_abs_rel_error_percent, 1, "%"), 14)
       << pad(signed_percent(f.mean_rel_error_percent), 14) << "  " << per_request_tolerance_text(f)
       << (f.exceeded ? "  EXCEEDED" : "") << '\n';
  }
  for (const auto& n : c.notes) os << "note: " << n << '\n';
  std::int64_t exceeded = 0;
  for (const auto& r : c.rows) exceeded += r.exceeded ? 1 : 0;
  for (const auto& f : pr.figures) exceeded += f.exceeded ? 1 : 0;
  os << (exceeded > 0 ? "FAIL: " + std::to_string(exceeded) + " tolerance(s) exceeded\n"
                      : std::string("PASS: within every tolerance given\n"));
  return os.str();
}

std::string comparison_json(const Comparison& c) {
  io::Json j = io::json_document("validate");
  j["scenario"] = c.scenario_name;
  j["url"] = c.url;
  j["model"] = c.model;
  j["measured_failed"] = c.measured_failed;
  io::Json rows = io::Json::array();
  for (const auto& r : c.rows) {
    io::Json o;
    o["metric"] = r.name;
    o["unit"] = unit_of(r.name);
    o["measured"] = io::json_number_or_null(r.measured);
    o["predicted"] = io::json_number_or_null(r.predicted);
    o[r.points ? "error_points" : "error_percent"] = io::json_number_or_null(r.error);
    o["tolerance"] = r.tolerance ? io::json_number_or_null(*r.tolerance) : io::Json();
    o["exceeded"] = r.exceeded;
    rows.push_back(o);
  }
  j["metrics"] = rows;
  const PerRequest& pr = c.per_request;
  io::Json per;
  per["pairs_count"] = static_cast<std::int64_t>(pr.pairs.size());
  per["measured_unpaired"] = pr.measured_unpaired;
  per["predicted_unpaired"] = pr.predicted_unpaired;
  per["measured_duplicates"] = pr.measured_duplicates;
  per["predicted_duplicates"] = pr.predicted_duplicates;
  for (const PerRequestFigures& f : pr.figures) {
    io::Json o;
    o["n"] = f.n;
    o["pearson"] = optional_json(f.pearson);
    o["spearman"] = optional_json(f.spearman);
    o["median_abs_error_ms"] = optional_json(f.median_abs_error_ms);
    o["median_abs_rel_error_percent"] = optional_json(f.median_abs_rel_error_percent);
    o["mean_rel_error_percent"] = optional_json(f.mean_rel_error_percent);
    o["tolerance_median_abs_rel_percent"] = optional_json(f.tolerance_median_abs_rel);
    o["tolerance_corr"] = optional_json(f.tolerance_corr);
    o["exceeded"] = f.exceeded;
    per[f.name] = o;
  }
  io::Json pairs = io::Json::array();
  for (const RequestPair& r : pr.pairs) {
    io::Json o;
    o["conversation_id"] = r.conversation_id;
    o["turn"] = r.turn;
    o["measured_ttft_ms"] = io::json_number_or_null(r.measured.ttft_ms);
    o["predicted_ttft_ms"] = io::json_number_or_null(r.predicted.ttft_ms);
    o["measured_tpot_ms"] = optional_json(tpot_of(r.measured));
    o["predicted_tpot_ms"] = optional_json(tpot_of(r.predicted));
    o["measured_latency_ms"] = io::json_number_or_null(r.measured.latency_ms);
    o["predicted_latency_ms"] = io::json_number_or_null(r.predicted.latency_ms);
    o["measured_cached_tokens"] = r.measured.cached_tokens;
    o["predicted_cached_tokens"] = r.predicted.cached_tokens;
    pairs.push_back(o);
  }
  per["pairs"] = pairs;
  j["per_request"] = per;
  j["notes"] = c.notes;
  j["pass"] = !c.exceeded();
  return io::json_text(j, 2);
}

std::string comparison_markdown(const Comparison& c) {
  std::ostringstream os;
  os << "| metric | unit | measured | predicted | error | tolerance "
        "|\n|---|---|---:|---:|---:|---:|\n";
  for (const MetricComparison& r : c.rows) {
    const std::string err =
        std::isfinite(r.error) ? fixed(r.error, 1) + (r.points ? " pt" : " %") : "n/a";
    const std::string tol = r.tolerance ? fixed(*r.tolerance, 0) + (r.points ? " pt" : " %") : "";
    os << "| " << r.name << " | " << unit_of(r.name) << " | " << fixed(r.measured) << " | "
       << fixed(r.predicted) << " | " << err << " | " << tol << (r.exceeded ? " exceeded" : "")
       << " |\n";
  }
  os << "\nPer request (" << c.per_request.pairs.size() << " pairs):\n\n"
     << "| quantity | pairs | Pearson | Spearman | median abs error (ms) | median abs rel error | "
        "mean rel error | tolerance |\n|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const PerRequestFigures& f : c.per_request.figures) {
    const std::string tol = per_request_tolerance_text(f);
    os << "| " << f.name << " | " << f.n << " | " << figure_text(f.pearson, 3) << " | "
       << figure_text(f.spearman, 3) << " | " << figure_text(f.median_abs_error_ms, 2) << " | "
       << figure_text(f.median_abs_rel_error_percent, 1, " %") << " | "
       << signed_percent(f.mean_rel_error_percent) << " | " << (tol == "-" ? "" : tol)
       << (f.exceeded ? " exceeded" : "") << " |\n";
  }
  if (!c.notes.empty()) {
    os << "\nNotes:\n\n";
    for (const auto& n : c.notes) os << "- " << n << '\n';
  }
  return os.str();
}

namespace {

// The per-request section: a scatter plot per quantity, the figures, and the pairs, worst TTFT
// prediction first.
void html_per_request(std::ostream& os, const PerRequest& pr) {
  os << "<h2>Per request (" << pr.pairs.size() << " pairs)</h2>\n<div class='plots'>\n";
  for (const char* q : kPerRequestQuantities) {
    const auto [m, p] = quantity_values(pr.pairs, q);
    const std::string name = q;
    os << svg_scatter(name == "latency" ? name : (name == "ttft" ? "TTFT" : "TPOT"), m, p);
  }
  os << "</div>\n<p>One point a request; the dashed line is y = x (predicted = measured).</p>\n";
  os << "<table><tr><th>quantity</th><th>pairs</th><th>Pearson</th><th>Spearman</th><th>median "
        "|error| (ms)</th><th>median |relative error|</th><th>mean relative "
        "error</th><th>tolerance</th></tr>\n";
  for (const PerRequestFigures& f : pr.figures) {
    os << "<tr" << (f.exceeded ? " class='bad'" : "") << "><td>" << f.name << "</td><td>" << f.n
       << "</td><td>" << figure_text(f.pearson, 3) << "</td><td>" << figure_text(f.spearman, 3)
       << "</td><td>" << figure_text(f.median_abs_error_ms, 2) << "</td><td>"
       << figure_text(f.median_abs_rel_error_percent, 1, " %") << "</td><td>"
       << signed_percent(f.mean_rel_error_percent) << "</td><td>"
       << html_escape(per_request_tolerance_text(f)) << "</td></tr>\n";
  }
  os << "</table>\n";
  std::vector<const RequestPair*> sorted;
  for (const RequestPair& r : pr.pairs) sorted.push_back(&r);
  const auto ttft_error = [](const RequestPair* r) {
    return std::fabs(r->predicted.ttft_ms - r->measured.ttft_ms);
  };
  std::stable_sort(sorted.begin(), sorted.end(), [&](const RequestPair* a, const RequestPair* b) {
    return ttft_error(a) > ttft_error(b);
  });
  os << "<h3>Requests, largest TTFT error first</h3>\n<table><tr><th>conversation</th><th>turn</"
        "th><th>TTFT measured</th><th>TTFT predicted</th><th>TTFT error</th><th>TPOT "
        "measured</th><th>TPOT predicted</th><th>latency measured</th><th>latency "
        "predicted</th><th>cached measured</th><th>cached predicted</th></tr>\n";
  for (const RequestPair* r : sorted) {
    os << "<tr><td>" << html_escape(r->conversation_id) << "</td><td>" << r->turn << "</td><td>"
       << fixed(r->measured.ttft_ms) << "</td><td>" << fixed(r->predicted.ttft_ms) << "</td><td>"
       << fixed(r->predicted.ttft_ms - r->measured.ttft_ms) << "</td><td>"
       << figure_text(tpot_of(r->measured), 2) << "</td><td>"
       << figure_text(tpot_of(r->predicted), 2) << "</td><td>" << fixed(r->measured.latency_ms)
       << "</td><td>" << fixed(r->predicted.latency_ms) << "</td><td>" << r->measured.cached_tokens
       << "</td><td>" << r->predicted.cached_tokens << "</td></tr>\n";
  }
  os << "</table>\n<p>Times in ms; error = predicted - measured; cached = prompt tokens served "
        "from the prefix cache.</p>\n";
}

}  // namespace

std::string comparison_html(const Comparison& c) {
  std::ostringstream os;
  os << "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>kvsim validate: "
     << html_escape(c.scenario_name)
     << "</"
        "title>\n<style>body{font-family:sans-serif;margin:24px;color:#222}table{border-collapse:"
        "collapse}"
        "td,th{border:1px solid #ccc;padding:3px "
        "8px;text-align:right}td:first-child,th:first-child{text-align:left}"
        ".bad{background:#fdd}.ok{background:#dfd}.plots{display:flex;flex-wrap:wrap;gap:12px}</"
        "style></head>"
        "<body>\n";
  os << "<h1>Measured against predicted</h1>\n<p>Scenario <b>" << html_escape(c.scenario_name)
     << "</b>; measured on <code>" << html_escape(c.url) << "</code>, model <code>"
     << html_escape(c.model) << "</code>.</p>\n";
  os << "<p class='" << (c.exceeded() ? "bad" : "ok") << "'>"
     << (c.exceeded() ? "FAIL: a tolerance is exceeded" : "PASS: within every tolerance given")
     << "</p>\n";
  os << "<table><tr><th>metric</th><th>unit</th><th>measured</th><th>predicted</th><th>error</"
        "th><th>tolerance</th>"
        "</tr>\n";
  for (const MetricComparison& r : c.rows) {
    const std::string err =
        std::isfinite(r.error) ? fixed(r.error, 1) + (r.points ? " pt" : " %") : "n/a";
    const std::string tol = r.tolerance ? fixed(*r.tolerance, 1) + (r.points ? " pt" : " %") : "";
    os << "<tr" << (r.exceeded ? " class='bad'" : "") << "><td>" << r.name << "</td><td>"
       << unit_of(r.name) << "</td><td>" << fixed(r.measured) << "</td><td>" << fixed(r.predicted)
       << "</td><td>" << err << "</td><td>" << tol << "</td></tr>\n";
  }
  os << "</table>\n";
  for (const auto& n : c.notes) os << "<p>Note: " << html_escape(n) << "</p>\n";
  os << "<h2>Distributions</h2>\n<div class='plots'>\n";
  for (const char* name : {"TTFT", "TPOT", "latency"}) {
    const auto it = c.samples.find(name);
    if (it != c.samples.end()) os << svg_cdf(name, it->second.first, it->second.second);
  }
  os << "</div>\n<p>Solid: measured; dashed: predicted by kvsim for the same "
        "workload.</p>\n";
  html_per_request(os, c.per_request);
  os << "</body></html>\n";
  return os.str();
}

std::string replay_summary_text(const ReplayRun& run) {
  std::ostringstream os;
  const std::int64_t failed = run.failed();
  const auto total = static_cast<std::int64_t>(run.records.size());
  os << "Replay of " << run.scenario_name << " against " << run.url << " (model " << run.model
     << ")\n";
  os << "text sized by: " << run.tokenizer << '\n';
  for (const auto& l : run.header_lines) os << "  " << l << '\n';
  os << "requests: " << total << " sent, " << total - failed << " succeeded, " << failed
     << " failed; " << fixed(run.duration_s, 1) << " s";
  if (run.interrupted) os << "; stopped early: " << run.stop_reason;
  os << '\n';
  if (failed > 0) {
    std::map<std::string, int> errors;
    for (const auto& r : run.records) {
      if (!r.error.empty()) ++errors[r.error];
    }
    os << "errors:\n";
    for (const auto& [e, n] : errors) os << "  " << n << " x " << e << '\n';
  }
  const Figures f = figures(measured_records(run));
  if (f.ttft.empty()) {
    os << "no successful requests\n";
    return os.str();
  }
  os << pad("metric", 12, true) << pad("count", 7) << pad("mean", 10) << pad("p50", 10)
     << pad("p90", 10) << pad("p99", 10) << '\n';
  const auto line = [&](const char* name, const std::vector<double>& v) {
    os << pad(name, 12, true) << pad(std::to_string(v.size()), 7) << pad(fixed(mean(v)), 10)
       << pad(fixed(pct(v, 0.5)), 10) << pad(fixed(pct(v, 0.9)), 10) << pad(fixed(pct(v, 0.99)), 10)
       << '\n';
  };
  line("ttft_ms", f.ttft);
  line("tpot_ms", f.tpot);
  line("latency_ms", f.latency);
  os << "requests_per_sec: " << fixed(f.rps, 3) << '\n';
  os << "cache hit rate (usage cached_tokens / prompt_tokens): " << fixed(f.hit_rate, 1) << "%\n";
  const double q =
      counter_delta(run.metrics_before, run.metrics_after, "vllm:prefix_cache_queries");
  const double h = counter_delta(run.metrics_before, run.metrics_after, "vllm:prefix_cache_hits");
  if (std::isfinite(q) && std::isfinite(h) && q > 0) {
    os << "/metrics prefix cache: " << fixed(h, 0) << " hits of " << fixed(q, 0)
       << " queried tokens (" << fixed(100.0 * h / q, 1) << "%)\n";
  }
  const double pre = counter_delta(run.metrics_before, run.metrics_after, "vllm:num_preemptions");
  if (std::isfinite(pre)) os << "/metrics preemptions: " << fixed(pre, 0) << '\n';
  return os.str();
}

}  // namespace kvsim::validation
