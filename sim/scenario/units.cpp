#include "sim/scenario/units.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <system_error>

#include "sim/scenario/suggest.hpp"

namespace kvsim::scenario {
namespace {

// One accepted unit: value = number x 10^decimal_exponent x factor.
struct Unit {
  std::string name;
  int decimal_exponent;
  double factor;
};

const std::vector<Unit>& units_of(Quantity q) {
  static const std::vector<Unit> bytes = {
      {"B", 0, 1.0},         {"KB", 3, 1.0},           {"MB", 6, 1.0},
      {"GB", 9, 1.0},        {"TB", 12, 1.0},          {"KiB", 0, 1024.0},
      {"MiB", 0, 1048576.0}, {"GiB", 0, 1073741824.0}, {"TiB", 0, 1099511627776.0},
  };
  // Bit rates: 1 Gb/s = 10^9 / 8 bytes/s.
  static const std::vector<Unit> byte_rates = {
      {"B/s", 0, 1.0},         {"KB/s", 3, 1.0},           {"MB/s", 6, 1.0},
      {"GB/s", 9, 1.0},        {"TB/s", 12, 1.0},          {"KiB/s", 0, 1024.0},
      {"MiB/s", 0, 1048576.0}, {"GiB/s", 0, 1073741824.0}, {"TiB/s", 0, 1099511627776.0},
      {"Mb/s", 6, 0.125},      {"Mbit/s", 6, 0.125},       {"Gb/s", 9, 0.125},
      {"Gbit/s", 9, 0.125},    {"Tb/s", 12, 0.125},        {"Tbit/s", 12, 0.125},
  };
  static const std::vector<Unit> flop_rates = {
      {"FLOPS", 0, 1.0}, {"GFLOPS", 9, 1.0}, {"TFLOPS", 12, 1.0}, {"PFLOPS", 15, 1.0}};
  static const std::vector<Unit> times = {
      {"ns", 0, 1.0}, {"us", 3, 1.0}, {"ms", 6, 1.0}, {"s", 9, 1.0}};
  switch (q) {
    case Quantity::kBytes:
      return bytes;
    case Quantity::kByteRate:
      return byte_rates;
    case Quantity::kFlopRate:
      return flop_rates;
    case Quantity::kTime:
      return times;
  }
  return bytes;
}

bool is_blank(char c) { return c == ' ' || c == '\t'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

std::string units_list(Quantity q) { return "units: " + join_names(unit_names(q)); }

// Splits "<number><blanks><unit>" and returns the value in base units. The number's decimal
// exponent is added to the unit's before conversion, so 165.2TFLOPS is the double nearest
// 165.2e12, exactly as if it had been written in FLOPS.
double parse_quantity(std::string_view text, Quantity q) {
  const std::string_view s = trim(text);
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  const std::size_t mantissa_begin = i;
  std::size_t digits = 0;
  while (i < s.size() && is_digit(s[i])) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_digit(s[i])) ++i, ++digits;
  }
  const std::size_t mantissa_end = i;
  long exponent = 0;
  if (digits > 0 && i + 1 < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    std::size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    if (j < s.size() && is_digit(s[j])) {
      const std::size_t exp_begin = s[i + 1] == '+' ? i + 2 : i + 1;
      while (j < s.size() && is_digit(s[j])) ++j;
      const auto [p, ec] = std::from_chars(s.data() + exp_begin, s.data() + j, exponent);
      if (ec != std::errc{} || std::labs(exponent) > 400) {
        throw UnitError(UnitError::Kind::kNotANumber, "expected " + quantity_description(q) +
                                                          ", got '" + std::string(text) + "'");
      }
      (void)p;
      i = j;
    }
  }
  if (digits == 0) {
    throw UnitError(UnitError::Kind::kNotANumber,
                    "expected " + quantity_description(q) + ", got '" + std::string(text) + "'");
  }
  const std::string_view unit = trim(s.substr(i));
  if (unit.empty()) {
    throw UnitError(UnitError::Kind::kMissingUnit, "missing unit in '" + std::string(text) +
                                                       "': expected " + quantity_description(q) +
                                                       " (" + units_list(q) + ")");
  }
  const Unit* found = nullptr;
  for (const auto& u : units_of(q)) {
    if (u.name == unit) found = &u;
  }
  if (found == nullptr) {
    std::string message = "unknown unit '" + std::string(unit) + "' in '" + std::string(text) + "'";
    const std::string hint = closest_name(unit, unit_names(q));
    if (!hint.empty()) message += "; did you mean '" + hint + "'?";
    message += " (" + units_list(q) + ")";
    throw UnitError(UnitError::Kind::kUnknownUnit, message);
  }
  std::string number(s.substr(mantissa_begin, mantissa_end - mantissa_begin));
  number += 'e';
  number += std::to_string(exponent + found->decimal_exponent);
  double value = 0;
  const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc{} || ptr != number.data() + number.size() || !std::isfinite(value)) {
    throw UnitError(UnitError::Kind::kTooLarge, "value '" + std::string(text) + "' is too large");
  }
  value *= found->factor;
  if (s.front() == '-') value = -value;
  return value;
}

// Largest double below 2^63, so llround cannot overflow.
constexpr double kInt64Limit = 9.2e18;

std::int64_t to_int64(double value, std::string_view text) {
  if (!(std::fabs(value) < kInt64Limit)) {
    throw UnitError(UnitError::Kind::kTooLarge, "value '" + std::string(text) + "' is too large");
  }
  return static_cast<std::int64_t>(std::llround(value));
}

// Shortest accepted spelling of `value`: every byte-based unit whose scaled number is at least
// 1 in magnitude (or the base unit) is tried with the fewest significant digits that parse back
// to `equal_back` (sizes and times round when parsed, so a rounded decimal may do).
template <class ParseBack>
std::string format_quantity(double value, Quantity q, ParseBack equal_back) {
  std::string best;
  for (const auto& u : units_of(q)) {
    const double scale = std::pow(10.0, u.decimal_exponent) * u.factor;
    const double scaled = value / scale;
    const bool base = u.decimal_exponent == 0 && u.factor == 1.0;
    if (!base && std::fabs(scaled) < 1.0) continue;
    if (u.factor == 0.125) continue;  // rates are written in bytes, not bits
    // Fewest significant digits that still parse back (25759066358 bytes -> 23.99GiB), written
    // without an exponent (400us, not 4e+02us).
    for (int precision = 1; precision <= 17; ++precision) {
      char buf[64];
      const auto [ptr, ec] =
          std::to_chars(buf, buf + sizeof buf, scaled, std::chars_format::general, precision);
      if (ec != std::errc{}) break;
      std::string text(buf, ptr);
      if (text.find('e') != std::string::npos) continue;
      text += u.name;
      if (!equal_back(text)) continue;
      if (best.empty() || text.size() < best.size()) best = std::move(text);
      break;
    }
  }
  // Only integers beyond 2^53 set by code (not parsed) can miss every spelling.
  if (best.empty()) best = shortest_double(value) + units_of(q).front().name;
  return best;
}

}  // namespace

std::string shortest_double(double value) {
  char buf[64];
  const auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, value);
  if (ec != std::errc{}) return "nan";
  return std::string(buf, ptr);
}

const std::vector<std::string>& unit_names(Quantity quantity) {
  static const auto make = [](Quantity q) {
    std::vector<std::string> names;
    for (const auto& u : units_of(q)) names.push_back(u.name);
    return names;
  };
  static const std::vector<std::string> bytes = make(Quantity::kBytes);
  static const std::vector<std::string> byte_rates = make(Quantity::kByteRate);
  static const std::vector<std::string> flop_rates = make(Quantity::kFlopRate);
  static const std::vector<std::string> times = make(Quantity::kTime);
  switch (quantity) {
    case Quantity::kBytes:
      return bytes;
    case Quantity::kByteRate:
      return byte_rates;
    case Quantity::kFlopRate:
      return flop_rates;
    case Quantity::kTime:
      return times;
  }
  return bytes;
}

std::string quantity_description(Quantity quantity) {
  switch (quantity) {
    case Quantity::kBytes:
      return "a byte size such as 24GiB";
    case Quantity::kByteRate:
      return "a byte rate such as 25GB/s";
    case Quantity::kFlopRate:
      return "a FLOP rate such as 165.2TFLOPS";
    case Quantity::kTime:
      return "a time such as 80us";
  }
  return "a value with a unit";
}

Bytes parse_bytes(std::string_view text) {
  return Bytes{to_int64(parse_quantity(text, Quantity::kBytes), text)};
}

BytesPerSec parse_byte_rate(std::string_view text) {
  return BytesPerSec{parse_quantity(text, Quantity::kByteRate)};
}

FlopsPerSec parse_flop_rate(std::string_view text) {
  return FlopsPerSec{parse_quantity(text, Quantity::kFlopRate)};
}

SimTime parse_time(std::string_view text) {
  return to_int64(parse_quantity(text, Quantity::kTime), text);
}

std::string format_bytes(Bytes bytes) {
  return format_quantity(bytes.as_double(), Quantity::kBytes,
                         [&](const std::string& t) { return parse_bytes(t) == bytes; });
}

std::string format_byte_rate(BytesPerSec rate) {
  return format_quantity(rate.value, Quantity::kByteRate,
                         [&](const std::string& t) { return parse_byte_rate(t) == rate; });
}

std::string format_flop_rate(FlopsPerSec rate) {
  return format_quantity(rate.value, Quantity::kFlopRate,
                         [&](const std::string& t) { return parse_flop_rate(t) == rate; });
}

std::string format_time(SimTime time) {
  return format_quantity(static_cast<double>(time), Quantity::kTime,
                         [&](const std::string& t) { return parse_time(t) == time; });
}

}  // namespace kvsim::scenario
