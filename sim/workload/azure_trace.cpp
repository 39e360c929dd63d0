#include "sim/workload/azure_trace.hpp"

#include <algorithm>
#include <limits>

#include "sim/core/error.hpp"
#include "sim/workload/trace_csv.hpp"

namespace kvsim::workload {
namespace {

// Days from 1970-01-01 to the proleptic Gregorian date y-m-d (H. Hinnant, "chrono-Compatible
// Low-Level Date Algorithms", days_from_civil).
std::int64_t days_from_civil(std::int64_t y, std::int64_t m, std::int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;
  const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool is_leap(std::int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

class Cursor {
 public:
  explicit Cursor(const std::string& s) : s_(s) {}
  // Exactly `n` digits.
  bool digits(int n, std::int64_t& out) {
    out = 0;
    for (int k = 0; k < n; ++k) {
      if (i_ >= s_.size() || s_[i_] < '0' || s_[i_] > '9') return false;
      out = out * 10 + (s_[i_++] - '0');
    }
    return true;
  }
  bool eat(char c) {
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool at_digit() const { return i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9'; }
  bool done() const { return i_ == s_.size(); }

 private:
  const std::string& s_;
  std::size_t i_ = 0;
};

}  // namespace

std::optional<std::int64_t> parse_azure_timestamp(const std::string& raw) {
  const auto b = raw.find_first_not_of(" \t");
  if (b == std::string::npos) return std::nullopt;
  const std::string text = raw.substr(b, raw.find_last_not_of(" \t") - b + 1);
  Cursor c(text);
  std::int64_t y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (!c.digits(4, y) || !c.eat('-') || !c.digits(2, mo) || !c.eat('-') || !c.digits(2, d))
    return std::nullopt;
  if (!c.eat(' ') && !c.eat('T')) return std::nullopt;
  if (!c.digits(2, h) || !c.eat(':') || !c.digits(2, mi) || !c.eat(':') || !c.digits(2, s))
    return std::nullopt;
  static constexpr int kMonthDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (mo < 1 || mo > 12 || d < 1 || d > kMonthDays[mo - 1] + (mo == 2 && is_leap(y) ? 1 : 0) ||
      h > 23 || mi > 59 || s > 60) {
    return std::nullopt;
  }
  std::int64_t frac_ns = 0;
  if (c.eat('.')) {
    if (!c.at_digit()) return std::nullopt;
    std::int64_t scale = 100'000'000;
    while (c.at_digit()) {
      std::int64_t digit = 0;
      c.digits(1, digit);
      frac_ns += digit * scale;  // digits past the nanosecond are dropped
      scale /= 10;
    }
  }
  std::int64_t offset_s = 0;
  if (c.eat('Z')) {
  } else if (!c.done()) {
    const bool plus = c.eat('+');
    if (!plus && !c.eat('-')) return std::nullopt;
    std::int64_t oh = 0, om = 0;
    if (!c.digits(2, oh)) return std::nullopt;
    c.eat(':');
    if (!c.digits(2, om) || oh > 23 || om > 59) return std::nullopt;
    offset_s = (plus ? 1 : -1) * (oh * 3600 + om * 60);
  }
  if (!c.done()) return std::nullopt;
  const std::int64_t secs = days_from_civil(y, mo, d) * 86'400 + h * 3600 + mi * 60 + s - offset_s;
  // From 1970 to 2199: nanoseconds since 1970 and differences of two of them fit int64 (which
  // holds 1677 to 2262 alone).
  constexpr std::int64_t kMaxSecs = 7'258'118'400;  // 2200-01-01 00:00:00 UTC
  if (secs < 0 || secs >= kMaxSecs) return std::nullopt;
  return secs * 1'000'000'000 + frac_ns;
}

Trace parse_azure(std::istream& in, const std::string& display_name) {
  detail::CsvTable csv(in, display_name, {"TIMESTAMP", "ContextTokens", "GeneratedTokens"});
  Trace trace;
  trace.format = "azure";
  trace.source = display_name;
  trace.hash_block_tokens = 0;
  std::vector<std::int64_t> ns;
  while (csv.next()) {
    const auto t = parse_azure_timestamp(csv.field(0).text);
    if (!t) {
      csv.fail(0, "'" + csv.field(0).text +
                      "' is not a time YYYY-MM-DD HH:MM:SS[.fraction][+HH:MM] from 1970 to 2199 "
                      "(e.g. 2023-11-16 18:15:46.6805900)");
    }
    TraceRequest r;
    r.line = csv.line();
    r.input_length = csv.integer(1, 1);
    r.output_length = csv.integer(2, 0);
    ns.push_back(*t);
    trace.requests.push_back(std::move(r));
  }
  if (!ns.empty()) {
    const std::int64_t first = *std::min_element(ns.begin(), ns.end());
    for (std::size_t i = 0; i < ns.size(); ++i) {
      trace.requests[i].timestamp_ms = static_cast<double>(ns[i] - first) / 1e6;
    }
  }
  sort_trace(trace, {});
  return trace;
}

}  // namespace kvsim::workload
