#include "sim/planner/slo.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <sstream>
#include <string_view>
#include <utility>

#include "sim/core/error.hpp"
#include "sim/io/sinks.hpp"
#include "sim/io/text_format.hpp"
#include "sim/scenario/suggest.hpp"
#include "sim/scenario/units.hpp"

namespace kvsim::planner {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Splits one CSV line into fields (RFC 4180 quoting, as io::csv_field writes it).
std::vector<std::string> split_csv_line(std::string_view line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur.push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur.push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  out.push_back(std::move(cur));
  return out;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// The fields of the CSV summary that are text, not numbers.
bool is_text_field(std::string_view key) { return key == "kvsim_version" || key == "scenario"; }

// vLLM's benchmark names: vllm/benchmarks/serve.py's result keys (mean_ttft_ms, median_tpot_ms,
// p90_e2el_ms, request_throughput, output_throughput) and the short forms ttft_p90, tpot_mean.
std::string canonical_name(const std::string& name) {
  static const std::array<std::pair<std::string_view, std::string_view>, 3> plain = {{
      {"request_throughput", "requests_per_sec"},
      {"output_throughput", "output_tokens_per_sec"},
      {"hit_rate", "prefix_cache_hit_rate"},
  }};
  for (const auto& [from, to] : plain) {
    if (name == from) return std::string(to);
  }
  // Metric objects: ttft, tpot, latency (e2el and itl as vLLM names them).
  static const std::array<std::pair<std::string_view, std::string_view>, 4> objects = {
      {{"ttft", "ttft_ms"},
       {"tpot", "tpot_ms"},
       {"e2el", "latency_ms"},
       {"latency", "latency_ms"}}};
  auto stat_name = [](std::string stat) {
    if (stat == "median") return std::string("p50");
    if (stat.size() > 1 && stat[0] == 'p') {
      for (char& c : stat) {
        if (c == '.') c = '_';
      }
    }
    return stat;
  };
  for (const auto& [short_name, full] : objects) {
    // ttft_p90, ttft_mean, ttft_median
    const std::string prefix = std::string(short_name) + "_";
    if (starts_with(name, prefix) && !starts_with(name, std::string(full) + "_")) {
      return std::string(full) + "_" + stat_name(name.substr(prefix.size()));
    }
    // p90_ttft_ms, mean_ttft_ms, median_ttft_ms (bench_serving's result keys)
    const std::string suffix = "_" + std::string(short_name) + "_ms";
    if (ends_with(name, suffix) && name.size() > suffix.size()) {
      return std::string(full) + "_" + stat_name(name.substr(0, name.size() - suffix.size()));
    }
  }
  return name;
}

// Whether the name as written states its unit (ttft_ms_p90, runtime_sec, ..._bytes...).
bool name_states_unit(const std::string& written) {
  return written.find("_ms") != std::string::npos || written.find("_sec") != std::string::npos ||
         written.find("bytes") != std::string::npos || written.find("seconds") != std::string::npos;
}

MetricKind kind_of(const std::string& metric) {
  for (const std::string_view obj : {"ttft_ms_", "tpot_ms_", "latency_ms_"}) {
    if (starts_with(metric, obj))
      return ends_with(metric, "_count") ? MetricKind::kCount : MetricKind::kTimeMs;
  }
  if (ends_with(metric, "_sec") || metric == "simulated_seconds") {
    return ends_with(metric, "per_sec") ? MetricKind::kRate : MetricKind::kTimeSec;
  }
  if (metric.find("bytes") != std::string::npos) return MetricKind::kBytes;
  if (metric == "prefix_cache_hit_rate" || metric.find("utilization") != std::string::npos) {
    return MetricKind::kRatio;
  }
  return MetricKind::kCount;
}

bool known_metric(const std::string& metric) {
  const auto& names = base_metric_names();
  if (std::find(names.begin(), names.end(), metric) != names.end()) return true;
  return starts_with(metric, "tier_") || starts_with(metric, "link_");
}

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

double parse_plain_number(const std::string& text, bool* ok) {
  *ok = false;
  if (text.empty()) return 0;
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return 0;
  }
  if (used != text.size() || !std::isfinite(v)) return 0;
  *ok = true;
  return v;
}

}  // namespace

MetricValues metric_values(const io::Summary& summary, const io::RunInfo& info) {
  std::ostringstream csv;
  io::write_summary_csv(csv, summary, info);
  const std::string text = csv.str();
  const auto nl = text.find('\n');
  KVSIM_ASSERT(nl != std::string::npos, "summary CSV has no header line");
  const auto header = split_csv_line(std::string_view(text).substr(0, nl));
  std::string_view rest = std::string_view(text).substr(nl + 1);
  if (!rest.empty() && rest.back() == '\n') rest.remove_suffix(1);
  const auto values = split_csv_line(rest);
  KVSIM_ASSERT(header.size() == values.size(), "summary CSV header and values differ in length");
  MetricValues out;
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (is_text_field(header[i])) continue;
    bool ok = false;
    const double v = parse_plain_number(values[i], &ok);
    out[header[i]] = ok ? v : kNaN;
  }
  return out;
}

const std::vector<std::string>& base_metric_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& [key, value] : metric_values(io::Summary{}, io::RunInfo{})) {
      if (!starts_with(key, "tier_") && !starts_with(key, "link_")) n.push_back(key);
    }
    return n;
  }();
  return names;
}

std::string resolve_metric(const std::string& written, const std::string& what) {
  std::string metric = canonical_name(written);
  if (known_metric(metric)) return metric;
  std::vector<std::string> candidates = base_metric_names();
  for (const char* alias :
       {"ttft_p90", "tpot_p90", "e2el_p90", "request_throughput", "output_throughput"}) {
    candidates.emplace_back(alias);
  }
  const std::string near = scenario::closest_name(written, candidates);
  throw InputError(
      "", 0, 0,
      what + ": unknown metric '" + written + "'" +
          (near.empty() ? "" : " (did you mean '" + near + "'?)") +
          "; valid metrics: " + scenario::join_names(base_metric_names()) +
          ", tier_<kind>_* and link_<kind>_* (see docs/results.md), and vLLM's names such as "
          "ttft_p90, p90_tpot_ms, median_e2el_ms, request_throughput, output_throughput");
}

MetricKind metric_kind(const std::string& metric) { return kind_of(metric); }

bool SloTerm::holds(double value) const {
  if (std::isnan(value)) return false;
  switch (op) {
    case Comparison::kLessEqual:
      return value <= threshold;
    case Comparison::kLess:
      return value < threshold;
    case Comparison::kGreaterEqual:
      return value >= threshold;
    case Comparison::kGreater:
      return value > threshold;
  }
  return false;
}

double SloTerm::slack(double value) const {
  if (std::isnan(value)) return -std::numeric_limits<double>::infinity();
  const double diff = upper_bound() ? threshold - value : value - threshold;
  return threshold != 0 ? diff / std::abs(threshold) : diff;
}

std::string Slo::text() const {
  std::string out;
  for (const auto& t : terms) out += (out.empty() ? "" : ",") + t.text;
  return out;
}

Slo parse_slo(const std::string& text, const std::string& what) {
  Slo slo;
  auto fail = [&](const std::string& term, const std::string& message) {
    throw InputError("", 0, 0, what + " '" + term + "': " + message);
  };
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const std::string raw = trim(std::string_view(text).substr(
        start, comma == std::string::npos ? std::string::npos : comma - start));
    start = comma == std::string::npos ? text.size() + 1 : comma + 1;
    if (raw.empty()) {
      if (comma == std::string::npos && !slo.terms.empty()) break;
      fail(text, "empty term; expected METRIC<=VALUE, METRIC>=VALUE, ... separated by commas");
    }
    SloTerm term;
    term.text = raw;
    const auto op_pos = raw.find_first_of("<>");
    if (op_pos == std::string::npos)
      fail(raw,
           "no comparison; expected METRIC<=VALUE, METRIC<VALUE, METRIC>=VALUE or METRIC>VALUE");
    const bool eq = op_pos + 1 < raw.size() && raw[op_pos + 1] == '=';
    term.op = raw[op_pos] == '<' ? (eq ? Comparison::kLessEqual : Comparison::kLess)
                                 : (eq ? Comparison::kGreaterEqual : Comparison::kGreater);
    const std::string written = trim(std::string_view(raw).substr(0, op_pos));
    const std::string value_text = trim(std::string_view(raw).substr(op_pos + (eq ? 2 : 1)));
    if (written.empty()) fail(raw, "no metric name before the comparison");
    if (value_text.empty()) fail(raw, "no value after the comparison");
    std::string where = what;
    where += " '" + raw + "'";
    term.metric = resolve_metric(written, where);
    term.kind = kind_of(term.metric);
    bool ok = false;
    const double bare = parse_plain_number(value_text, &ok);
    try {
      switch (term.kind) {
        case MetricKind::kTimeMs:
        case MetricKind::kTimeSec: {
          const double per_unit = term.kind == MetricKind::kTimeMs ? 1e6 : 1e9;
          if (ok) {
            if (!name_states_unit(written)) {
              std::string msg = "'" + written + "' is a time: give a unit (e.g. ";
              msg += value_text;
              msg += "ms or ";
              msg += value_text;
              msg += "s)";
              fail(raw, msg);
            }
            term.threshold = bare;
          } else {
            term.threshold = static_cast<double>(scenario::parse_time(value_text)) / per_unit;
          }
          break;
        }
        case MetricKind::kBytes:
          term.threshold = ok ? bare : static_cast<double>(scenario::parse_bytes(value_text).value);
          break;
        case MetricKind::kRatio:
          if (ok) {
            term.threshold = bare;
          } else if (value_text.back() == '%') {
            bool pct_ok = false;
            term.threshold =
                parse_plain_number(trim(value_text.substr(0, value_text.size() - 1)), &pct_ok) /
                100.0;
            if (!pct_ok) fail(raw, "expected a ratio such as 0.9 or 90%");
          } else {
            fail(raw, "expected a ratio such as 0.9 or 90%");
          }
          break;
        case MetricKind::kRate:
        case MetricKind::kCount:
          if (!ok && term.kind == MetricKind::kRate) {
            // "1/s", "1 req/s", "500tok/s": a number per second.
            const auto slash = value_text.find("/s");
            if (slash != std::string::npos && slash + 2 == value_text.size()) {
              std::string num = value_text.substr(0, slash);
              while (!num.empty() && (std::isalpha(static_cast<unsigned char>(num.back())) != 0 ||
                                      num.back() == ' ')) {
                num.pop_back();
              }
              term.threshold = parse_plain_number(num, &ok);
            }
            if (!ok) fail(raw, "expected a rate per second such as 2.5 or 2.5/s");
          } else if (!ok) {
            fail(raw, "expected a number");
          } else {
            term.threshold = bare;
          }
          break;
      }
    } catch (const scenario::UnitError& e) {
      fail(raw, e.what());
    }
    slo.terms.push_back(std::move(term));
  }
  if (slo.terms.empty()) fail(text, "no terms");
  return slo;
}

SloResult evaluate(const Slo& slo, const MetricValues& values) {
  SloResult r;
  double least = std::numeric_limits<double>::infinity();
  for (const auto& term : slo.terms) {
    const auto it = values.find(term.metric);
    if (it == values.end()) {
      std::vector<std::string> names;
      for (const auto& [k, v] : values) names.push_back(k);
      throw InputError("", 0, 0,
                       "SLO term '" + term.text + "': this run has no metric '" + term.metric +
                           "'; its metrics are " + scenario::join_names(names));
    }
    TermResult tr;
    tr.term = &term;
    tr.value = it->second;
    tr.pass = term.holds(tr.value);
    tr.slack = term.slack(tr.value);
    r.pass = r.pass && tr.pass;
    if (r.binding < 0 || tr.slack < least) {
      least = tr.slack;
      r.binding = static_cast<int>(r.terms.size());
    }
    r.terms.push_back(tr);
  }
  return r;
}

std::string format_metric_value(MetricKind kind, double value) {
  if (std::isnan(value)) return "n/a";
  switch (kind) {
    case MetricKind::kTimeMs:
      return io::format_fixed(value, value >= 100 ? 0 : 1) + " ms";
    case MetricKind::kTimeSec:
      return io::format_fixed(value, 2) + " s";
    case MetricKind::kBytes:
      return io::format_fixed(value / 1e9, 2) + " GB";
    case MetricKind::kRatio:
      return io::format_fixed(100.0 * value, 1) + "%";
    case MetricKind::kRate:
      return io::format_fixed(value, 2) + "/s";
    case MetricKind::kCount:
      return io::format_shortest(value);
  }
  return {};
}

}  // namespace kvsim::planner
