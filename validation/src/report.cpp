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
    if (!value.empty() && value.back() == '%') value.pop_back();
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || !(v >= 0) || !std::isfinite(v)) {
      throw InputError("", 0, 0,
                       "--tolerance: '" + item + "': the bound must be a number >= 0 (percent)");
    }
    out[name] = v;
  }
  return out;
}

bool Comparison::exceeded() const {
  return std::any_of(rows.begin(), rows.end(),
                     [](const MetricComparison& r) { return r.exceeded; });
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
  for (const auto& n : c.notes) os << "note: " << n << '\n';
  std::int64_t exceeded = 0;
  for (const auto& r : c.rows) exceeded += r.exceeded ? 1 : 0;
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
  return os.str();
}

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
        "workload.</p>\n</body></html>\n";
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
