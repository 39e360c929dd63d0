#include "sim/scenario/field_table.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

#include "sim/core/limits.hpp"
#include "sim/scenario/suggest.hpp"
#include "sim/scenario/units.hpp"

namespace kvsim::scenario {
namespace {

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

// Whole-text integer parse; a leading '+' is allowed.
template <class I>
std::errc parse_integer(std::string_view text, I& out) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return std::errc::invalid_argument;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc{}) return ec;
  if (ptr != text.data() + text.size()) return std::errc::invalid_argument;
  return std::errc{};
}

bool parse_real(std::string_view text, double& out) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && ptr == text.data() + text.size() && std::isfinite(out);
}

std::optional<ValueProblem> range_problem(const Field& f, double v, std::string_view text) {
  if (f.range.contains(v)) return std::nullopt;
  return ValueProblem{ProblemClass::kOutOfRange, f.range.describe([&](double b) {
                        return format_bound(f, b);
                      }) + ", got " + std::string(text)};
}

}  // namespace

// Offset of the first byte that does not start a well-formed UTF-8 sequence (no overlong
// forms, surrogates or code points past U+10FFFF; RFC 3629), or npos.
std::size_t invalid_utf8_at(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // bounds of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    if (i + n >= s.size()) return i;  // truncated sequence
    for (std::size_t k = 1; k <= n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return i;
    }
    i += n + 1;
  }
  return std::string_view::npos;
}

std::optional<ValueProblem> string_problem(std::string_view text) {
  if (const std::size_t bad = invalid_utf8_at(text); bad != std::string_view::npos) {
    return ValueProblem{ProblemClass::kBadValue, "not valid UTF-8 (byte " + std::to_string(bad + 1) +
                                                     " of the string)"};
  }
  if (static_cast<std::int64_t>(text.size()) <= limits::kMaxStringBytes) return std::nullopt;
  return ValueProblem{ProblemClass::kOutOfRange,
                      "a string of " + std::to_string(text.size()) +
                          " bytes is past kvsim's limit of " +
                          std::to_string(limits::kMaxStringBytes) + " bytes (docs/limits.md)"};
}

namespace {

std::optional<ValueProblem> wrong_type(std::string_view expected, std::string_view text) {
  return ValueProblem{ProblemClass::kWrongType,
                      "expected " + std::string(expected) + ", got " + quoted(text)};
}

template <class I>
std::optional<ValueProblem> set_integer(const Field& f, void* owner, std::string_view text) {
  std::int64_t v = 0;
  const std::errc ec = parse_integer(text, v);
  if (ec == std::errc::result_out_of_range) {
    return ValueProblem{ProblemClass::kOutOfRange, "value " + quoted(text) + " is too large"};
  }
  if (ec != std::errc{}) return wrong_type("an integer", text);
  if (v < std::numeric_limits<I>::min() || v > std::numeric_limits<I>::max()) {
    return ValueProblem{ProblemClass::kOutOfRange, "value " + quoted(text) + " is too large"};
  }
  if (auto p = range_problem(f, static_cast<double>(v), text)) return p;
  *static_cast<I*>(f.get(owner)) = static_cast<I>(v);
  return std::nullopt;
}

// Parses a unit-carrying scalar; the parse function returns the value in base units.
template <class V, class Parse, class ToDouble>
std::optional<ValueProblem> set_quantity(const Field& f, void* owner, std::string_view text,
                                         Parse parse, ToDouble to_double) {
  try {
    const V v = parse(text);
    if (auto p = range_problem(f, to_double(v), text)) return p;
    *static_cast<V*>(f.get(owner)) = v;
    return std::nullopt;
  } catch (const UnitError& e) {
    switch (e.kind()) {
      case UnitError::Kind::kMissingUnit:
      case UnitError::Kind::kUnknownUnit:
        return ValueProblem{ProblemClass::kMissingUnit, e.what()};
      case UnitError::Kind::kTooLarge:
        return ValueProblem{ProblemClass::kOutOfRange, e.what()};
      case UnitError::Kind::kNotANumber:
        break;
    }
    return ValueProblem{ProblemClass::kWrongType, e.what()};
  }
}

std::string bracket_open(bool open) { return open ? "(" : "["; }
std::string bracket_close(bool open) { return open ? ")" : "]"; }

bool same_distribution(const workload::Distribution& a, const workload::Distribution& b) {
  return a.kind == b.kind && a.value == b.value && a.min == b.min && a.max == b.max &&
         a.has_max == b.has_max && a.integer_bounds == b.integer_bounds &&
         a.has_average == b.has_average && a.average == b.average &&
         a.median_ratio == b.median_ratio && a.mean == b.mean && a.sigma == b.sigma &&
         a.alpha == b.alpha;
}

}  // namespace

const char* field_kind_name(FieldKind kind) {
  switch (kind) {
    case FieldKind::kInt:
    case FieldKind::kInt64:
      return "integer";
    case FieldKind::kUint64:
      return "unsigned integer";
    case FieldKind::kDouble:
      return "number";
    case FieldKind::kBool:
      return "bool";
    case FieldKind::kString:
      return "string";
    case FieldKind::kEnum:
      return "enum";
    case FieldKind::kBytes:
      return "bytes";
    case FieldKind::kByteRate:
      return "byte rate";
    case FieldKind::kFlopRate:
      return "FLOP rate";
    case FieldKind::kTime:
      return "time";
    case FieldKind::kStruct:
    case FieldKind::kGroup:
      return "map";
    case FieldKind::kOptionalStruct:
      return "map, optional";
    case FieldKind::kStructList:
      return "list of maps";
    case FieldKind::kStringList:
      return "list of strings";
    case FieldKind::kDoubleList:
      return "list of numbers";
    case FieldKind::kDistribution:
      return "distribution";
  }
  return "value";
}

bool is_scalar_kind(FieldKind kind) {
  switch (kind) {
    case FieldKind::kStruct:
    case FieldKind::kGroup:
    case FieldKind::kOptionalStruct:
    case FieldKind::kStructList:
    case FieldKind::kStringList:
    case FieldKind::kDoubleList:
    case FieldKind::kDistribution:
      return false;
    default:
      return true;
  }
}

bool Range::contains(double v) const {
  if (min && (min_open ? !(v > *min) : !(v >= *min))) return false;
  if (max && (max_open ? !(v < *max) : !(v <= *max))) return false;
  return true;
}

Range with_stated_limit(FieldKind kind, Range r) {
  if (r.max) {
    if (std::isinf(*r.max)) r.max.reset();  // unbounded_above
    return r;
  }
  switch (kind) {
    case FieldKind::kInt:
    case FieldKind::kInt64:
      r.max = static_cast<double>(limits::kMaxCount);
      break;
    case FieldKind::kTime:
      r.max = static_cast<double>(limits::kMaxDuration);
      break;
    case FieldKind::kBytes:
      r.max = limits::kMaxBytes;
      break;
    case FieldKind::kByteRate:
      r.max = limits::kMaxByteRate;
      break;
    case FieldKind::kFlopRate:
      r.max = limits::kMaxFlopRate;
      break;
    default:
      break;
  }
  return r;
}

std::string Range::describe(const std::function<std::string(double)>& format) const {
  if (min && max) {
    return "must be in " + bracket_open(min_open) + format(*min) + ", " + format(*max) +
           bracket_close(max_open);
  }
  if (min) return std::string("must be ") + (min_open ? "> " : ">= ") + format(*min);
  if (max) return std::string("must be ") + (max_open ? "< " : "<= ") + format(*max);
  return "any value";
}

const Field* StructTable::find(std::string_view key) const {
  for (const auto& f : fields) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

std::vector<std::string> StructTable::keys() const {
  std::vector<std::string> out;
  out.reserve(fields.size());
  for (const auto& f : fields) out.push_back(f.key);
  return out;
}

std::string format_bound(const Field& field, double bound) {
  switch (field.kind) {
    case FieldKind::kBytes:
      return format_bytes(Bytes{static_cast<std::int64_t>(std::llround(bound))});
    case FieldKind::kByteRate:
      return format_byte_rate(BytesPerSec{bound});
    case FieldKind::kFlopRate:
      return format_flop_rate(FlopsPerSec{bound});
    case FieldKind::kTime:
      return format_time(static_cast<SimTime>(std::llround(bound)));
    default:
      // Whole bounds in digits (10000000, not 1e+07).
      if (bound == std::floor(bound) && std::fabs(bound) <= 1e15) {
        return std::to_string(static_cast<std::int64_t>(bound));
      }
      return shortest_double(bound);
  }
}

std::string scalar_text(const Field& f, const void* owner) {
  const void* m = f.get(owner);
  switch (f.kind) {
    case FieldKind::kInt:
      return std::to_string(*static_cast<const int*>(m));
    case FieldKind::kInt64:
      return std::to_string(*static_cast<const std::int64_t*>(m));
    case FieldKind::kUint64:
      return std::to_string(*static_cast<const std::uint64_t*>(m));
    case FieldKind::kDouble:
      return shortest_double(*static_cast<const double*>(m));
    case FieldKind::kBool:
      return *static_cast<const bool*>(m) ? "true" : "false";
    case FieldKind::kString:
      return *static_cast<const std::string*>(m);
    case FieldKind::kEnum: {
      const std::size_t i = f.get_enum(m);
      return i < f.enum_names.size() ? f.enum_names[i] : std::string();
    }
    case FieldKind::kBytes:
      return format_bytes(*static_cast<const Bytes*>(m));
    case FieldKind::kByteRate:
      return format_byte_rate(*static_cast<const BytesPerSec*>(m));
    case FieldKind::kFlopRate:
      return format_flop_rate(*static_cast<const FlopsPerSec*>(m));
    case FieldKind::kTime:
      return format_time(*static_cast<const SimTime*>(m));
    case FieldKind::kDistribution:
      return distribution_text(*static_cast<const workload::Distribution*>(m));
    default:
      return std::string();
  }
}

std::optional<ValueProblem> set_scalar_from_text(const Field& f, void* owner,
                                                 std::string_view text) {
  switch (f.kind) {
    case FieldKind::kInt:
      return set_integer<int>(f, owner, text);
    case FieldKind::kInt64:
      return set_integer<std::int64_t>(f, owner, text);
    case FieldKind::kUint64: {
      std::uint64_t v = 0;
      const std::errc ec = parse_integer(text, v);
      if (ec == std::errc::result_out_of_range) {
        return ValueProblem{ProblemClass::kOutOfRange, "value " + quoted(text) + " is too large"};
      }
      if (ec != std::errc{}) return wrong_type("a non-negative integer", text);
      *static_cast<std::uint64_t*>(f.get(owner)) = v;
      return std::nullopt;
    }
    case FieldKind::kDouble: {
      double v = 0;
      if (!parse_real(text, v)) return wrong_type("a number", text);
      if (auto p = range_problem(f, v, text)) return p;
      *static_cast<double*>(f.get(owner)) = v;
      return std::nullopt;
    }
    case FieldKind::kBool: {
      bool v = false;
      if (text == "true" || text == "True" || text == "TRUE") {
        v = true;
      } else if (!(text == "false" || text == "False" || text == "FALSE")) {
        return wrong_type("true or false", text);
      }
      *static_cast<bool*>(f.get(owner)) = v;
      return std::nullopt;
    }
    case FieldKind::kString:
      if (auto p = string_problem(text)) return p;
      *static_cast<std::string*>(f.get(owner)) = std::string(text);
      return std::nullopt;
    case FieldKind::kEnum: {
      for (std::size_t i = 0; i < f.enum_names.size(); ++i) {
        if (f.enum_names[i] == text) {
          f.set_enum(f.get(owner), i);
          return std::nullopt;
        }
      }
      std::string message = "expected one of " + join_names(f.enum_names) + ", got " + quoted(text);
      const std::string hint = closest_name(text, f.enum_names);
      if (!hint.empty()) message += "; did you mean " + quoted(hint) + "?";
      return ValueProblem{ProblemClass::kWrongType, message};
    }
    case FieldKind::kBytes:
      return set_quantity<Bytes>(f, owner, text, parse_bytes,
                                 [](Bytes b) { return b.as_double(); });
    case FieldKind::kByteRate:
      return set_quantity<BytesPerSec>(f, owner, text, parse_byte_rate,
                                       [](BytesPerSec r) { return r.value; });
    case FieldKind::kFlopRate:
      return set_quantity<FlopsPerSec>(f, owner, text, parse_flop_rate,
                                       [](FlopsPerSec r) { return r.value; });
    case FieldKind::kTime:
      return set_quantity<SimTime>(f, owner, text, parse_time,
                                   [](SimTime t) { return static_cast<double>(t); });
    default:
      return ValueProblem{
          ProblemClass::kWrongType,
          std::string("expected a ") + field_kind_name(f.kind) + ", got " + quoted(text)};
  }
}

std::optional<ValueProblem> parse_list_number(const Field& f, std::string_view text, double& out) {
  double v = 0;
  if (!parse_real(text, v)) return wrong_type("a number", text);
  if (auto p = range_problem(f, v, text)) return p;
  out = v;
  return std::nullopt;
}

std::vector<std::string> differences(const StructTable& table, const void* a, const void* b,
                                     const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& f : table.fields) {
    const std::string path = prefix.empty() ? f.key : prefix + "." + f.key;
    const void* ma = f.get(a);
    const void* mb = f.get(b);
    auto append = [&out](std::vector<std::string> more) {
      out.insert(out.end(), more.begin(), more.end());
    };
    switch (f.kind) {
      case FieldKind::kStruct:
      case FieldKind::kGroup:
        append(differences(*f.nested, ma, mb, path));
        break;
      case FieldKind::kOptionalStruct: {
        const bool ha = f.has_value(ma);
        const bool hb = f.has_value(mb);
        if (ha != hb) {
          out.push_back(path);
        } else if (ha) {
          append(differences(*f.nested, f.value(const_cast<void*>(ma)),
                             f.value(const_cast<void*>(mb)), path));
        }
        break;
      }
      case FieldKind::kStructList: {
        const std::size_t na = f.size(ma);
        if (na != f.size(mb)) {
          out.push_back(path);
          break;
        }
        for (std::size_t i = 0; i < na; ++i) {
          append(differences(*f.nested, f.at(const_cast<void*>(ma), i),
                             f.at(const_cast<void*>(mb), i), path + "." + std::to_string(i)));
        }
        break;
      }
      case FieldKind::kStringList:
        if (*static_cast<const std::vector<std::string>*>(ma) !=
            *static_cast<const std::vector<std::string>*>(mb)) {
          out.push_back(path);
        }
        break;
      case FieldKind::kDoubleList:
        if (*static_cast<const std::vector<double>*>(ma) !=
            *static_cast<const std::vector<double>*>(mb)) {
          out.push_back(path);
        }
        break;
      case FieldKind::kDistribution:
        if (!same_distribution(*static_cast<const workload::Distribution*>(ma),
                               *static_cast<const workload::Distribution*>(mb))) {
          out.push_back(path);
        }
        break;
      default:
        if (scalar_text(f, a) != scalar_text(f, b)) out.push_back(path);
        break;
    }
  }
  return out;
}

std::string uniform_bound_text(double value, bool integer_bounds) {
  std::string s = shortest_double(value);
  if (!integer_bounds && s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

const std::vector<std::string>& distribution_kind_names() {
  static const std::vector<std::string> names = {"constant", "uniform", "lognormal", "zipf",
                                                 "poisson"};
  return names;
}

const char* distribution_kind_name(workload::DistKind kind) {
  switch (kind) {
    case workload::DistKind::kConstant:
      return "constant";
    case workload::DistKind::kUniform:
      return "uniform";
    case workload::DistKind::kLognormal:
      return "lognormal";
    case workload::DistKind::kZipf:
      return "zipf";
    case workload::DistKind::kPoisson:
      return "poisson";
  }
  return "constant";
}

std::string distribution_text(const workload::Distribution& d) {
  std::string s = distribution_kind_name(d.kind);
  switch (d.kind) {
    case workload::DistKind::kConstant:
      s += " " + shortest_double(d.value);
      break;
    case workload::DistKind::kUniform:
      s += " " + uniform_bound_text(d.min, d.integer_bounds) + ".." +
           uniform_bound_text(d.max, d.integer_bounds);
      break;
    case workload::DistKind::kLognormal:
      if (d.has_average) {
        s += " average " + shortest_double(d.average) + " median_ratio " +
             shortest_double(d.median_ratio);
      } else {
        s += " mean " + shortest_double(d.mean) + " sigma " + shortest_double(d.sigma);
      }
      break;
    case workload::DistKind::kZipf:
    case workload::DistKind::kPoisson:
      s += " alpha " + shortest_double(d.alpha);
      break;
  }
  if (d.has_max && d.kind != workload::DistKind::kUniform &&
      d.kind != workload::DistKind::kConstant) {
    s += " max " + shortest_double(d.max);
  }
  return s;
}

}  // namespace kvsim::scenario
