#include "validation/src/prometheus.hpp"

#include <charconv>
#include <cmath>
#include <limits>

#include "validation/src/http_client.hpp"

namespace kvsim::validation {

MetricValues parse_prometheus(std::string_view text) {
  MetricValues out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (line.empty() || line.front() == '#') continue;
    std::size_t name_end = line.find_first_of("{ ");
    if (name_end == std::string_view::npos) continue;
    const std::string name(line.substr(0, name_end));
    std::size_t value_start = name_end;
    if (line[name_end] == '{') {
      // Label values may hold '}' inside quotes.
      bool quoted = false;
      std::size_t i = name_end + 1;
      for (; i < line.size(); ++i) {
        if (line[i] == '\\' && quoted) {
          ++i;
        } else if (line[i] == '"') {
          quoted = !quoted;
        } else if (line[i] == '}' && !quoted) {
          break;
        }
      }
      if (i >= line.size()) continue;
      value_start = i + 1;
    }
    std::string_view rest = line.substr(value_start);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    const std::string_view value_text = rest.substr(0, rest.find(' '));
    double v = 0;
    if (value_text == "NaN") {
      v = std::numeric_limits<double>::quiet_NaN();
    } else if (value_text == "+Inf") {
      v = std::numeric_limits<double>::infinity();
    } else if (value_text == "-Inf") {
      v = -std::numeric_limits<double>::infinity();
    } else {
      const auto [ptr, ec] =
          std::from_chars(value_text.data(), value_text.data() + value_text.size(), v);
      if (ec != std::errc() || ptr != value_text.data() + value_text.size()) continue;
    }
    out[name] += v;
  }
  return out;
}

MetricValues scrape_metrics(const std::string& base_url, double timeout_s) {
  std::string url = base_url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  const HttpResponse r = http_get(url + "/metrics", timeout_s);
  if (!r.error.empty() || r.status != 200) return {};
  return parse_prometheus(r.body);
}

double counter_delta(const MetricValues& before, const MetricValues& after,
                     const std::string& name) {
  for (const std::string& n : {name, name + "_total"}) {
    const auto a = after.find(n);
    const auto b = before.find(n);
    if (a != after.end() && b != before.end()) return a->second - b->second;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace kvsim::validation
