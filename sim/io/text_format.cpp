#include "sim/io/text_format.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

#include "sim/core/error.hpp"

namespace kvsim::io {
namespace {

// Python spells non-finite floats "nan", "inf", "-inf" in every format.
bool non_finite_text(double v, std::string& out) {
  if (std::isnan(v)) {
    out = "nan";
    return true;
  }
  if (std::isinf(v)) {
    out = v < 0 ? "-inf" : "inf";
    return true;
  }
  return false;
}

template <class... Args>
std::string to_chars_string(double v, Args... args) {
  // 400 characters hold any double in fixed notation with up to 40 decimals.
  std::array<char, 400> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), v, args...);
  KVSIM_ASSERT(res.ec == std::errc{}, "number does not fit the formatting buffer");
  return std::string(buf.data(), res.ptr);
}

bool is_number_with_decimal(const std::string& s) {
  // pandas: ^\s*[\+-]?[0-9]+\.[0-9]*$
  std::size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  const std::size_t digits_start = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  if (i == digits_start || i >= s.size() || s[i] != '.') return false;
  ++i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  return i == s.size();
}

}  // namespace

std::string format_fixed(double v, int decimals) {
  KVSIM_ASSERT(decimals >= 0 && decimals <= 40, "decimals outside [0, 40]");
  std::string out;
  if (non_finite_text(v, out)) return out;
  return to_chars_string(v, std::chars_format::fixed, decimals);
}

std::string format_scientific(double v, int decimals) {
  KVSIM_ASSERT(decimals >= 0 && decimals <= 40, "decimals outside [0, 40]");
  std::string out;
  if (non_finite_text(v, out)) return out;
  return to_chars_string(v, std::chars_format::scientific, decimals);
}

std::string format_shortest(double v) {
  std::string out;
  if (non_finite_text(v, out)) return out;
  return to_chars_string(v);
}

std::string format_thousands(std::int64_t v) {
  const bool negative = v < 0;
  // Work on the magnitude as unsigned so INT64_MIN is fine.
  std::uint64_t mag = negative ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  std::string digits;
  int in_group = 0;
  do {
    if (in_group == 3) {
      digits.push_back(',');
      in_group = 0;
    }
    digits.push_back(static_cast<char>('0' + mag % 10));
    mag /= 10;
    ++in_group;
  } while (mag != 0);
  if (negative) digits.push_back('-');
  return std::string(digits.rbegin(), digits.rend());
}

std::vector<std::string> pandas_float_column(std::span<const double> values, int digits) {
  const auto format_all = [&](bool scientific) {
    std::vector<std::string> out;
    out.reserve(values.size());
    for (const double v : values) {
      if (std::isnan(v)) {
        out.emplace_back("NaN");
        continue;
      }
      std::string s = scientific ? format_scientific(v, digits) : format_fixed(v, digits);
      // The format spec's ' ' flag: a space before non-negative numbers.
      if (s.front() != '-') s.insert(s.begin(), ' ');
      out.push_back(std::move(s));
    }
    // _trim_zeros_float: cut one character from every fixed number while all end in '0'.
    const auto should_trim = [&] {
      bool any = false;
      for (const auto& s : out) {
        if (!is_number_with_decimal(s)) continue;
        any = true;
        if (s.back() != '0') return false;
      }
      return any;
    };
    while (should_trim()) {
      for (auto& s : out) {
        if (is_number_with_decimal(s)) s.pop_back();
      }
    }
    for (auto& s : out) {
      if (is_number_with_decimal(s) && s.back() == '.') s.push_back('0');
    }
    return out;
  };

  std::vector<std::string> fixed = format_all(false);
  std::size_t max_len = 0;
  for (const auto& s : fixed) max_len = std::max(max_len, s.size());
  const bool too_long = max_len > static_cast<std::size_t>(digits) + 6;
  const double small = std::pow(10.0, -digits);
  bool has_large = false;
  bool has_small = false;
  for (const double v : values) {
    const double a = std::fabs(v);
    if (a > 1e6) has_large = true;
    if (a < small && a > 0) has_small = true;
  }
  if (has_small || (too_long && has_large)) return format_all(true);
  return fixed;
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  return format_shortest(v);
}

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

std::string csv_number(double v) {
  if (!std::isfinite(v)) return "";
  return format_shortest(v);
}

std::string pad_left(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}
std::string pad_right(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

}  // namespace kvsim::io
