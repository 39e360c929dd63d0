#include "sim/scenario/yaml_codec.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>

#include <yaml-cpp/eventhandler.h>

#include "sim/core/limits.hpp"
#include "sim/scenario/suggest.hpp"
#include "sim/scenario/units.hpp"

namespace kvsim::scenario::detail {
namespace {

using workload::DistKind;
using workload::Distribution;

std::string join_path(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

std::string describe_node(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "an empty value";
  if (n.IsMap()) return "a map";
  if (n.IsSequence()) return "a list";
  return "'" + n.Scalar() + "'";
}

std::string expected_for(const Field& f) {
  switch (f.kind) {
    case FieldKind::kInt:
    case FieldKind::kInt64:
      return "an integer";
    case FieldKind::kUint64:
      return "a non-negative integer";
    case FieldKind::kDouble:
      return "a number";
    case FieldKind::kBool:
      return "true or false";
    case FieldKind::kString:
      return "a string";
    case FieldKind::kEnum:
      return "one of " + join_names(f.enum_names);
    case FieldKind::kBytes:
      return quantity_description(Quantity::kBytes);
    case FieldKind::kByteRate:
      return quantity_description(Quantity::kByteRate);
    case FieldKind::kFlopRate:
      return quantity_description(Quantity::kFlopRate);
    case FieldKind::kTime:
      return quantity_description(Quantity::kTime);
    case FieldKind::kStruct:
    case FieldKind::kGroup:
    case FieldKind::kOptionalStruct:
      return "a map";
    case FieldKind::kStructList:
      return "a list of maps";
    case FieldKind::kStringList:
      return "a list of strings";
    case FieldKind::kDoubleList:
      return "a list of numbers";
    case FieldKind::kDistribution:
      return "a distribution map such as {distribution: uniform, min: 1, max: 10}";
  }
  return "a value";
}

bool is_integer_text(const std::string& s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

// The keys a distribution map may hold, and which each kind takes.
const std::vector<std::string>& distribution_keys() {
  static const std::vector<std::string> keys = {"distribution", "value", "min",   "max",  "average",
                                                "median_ratio", "mean",  "sigma", "alpha"};
  return keys;
}

const std::vector<std::string>& kind_params(DistKind kind) {
  static const std::vector<std::string> constant = {"value"};
  static const std::vector<std::string> uniform = {"min", "max"};
  static const std::vector<std::string> lognormal = {"average", "median_ratio", "mean", "sigma",
                                                     "max"};
  static const std::vector<std::string> alpha_max = {"alpha", "max"};
  switch (kind) {
    case DistKind::kConstant:
      return constant;
    case DistKind::kUniform:
      return uniform;
    case DistKind::kLognormal:
      return lognormal;
    case DistKind::kZipf:
    case DistKind::kPoisson:
      return alpha_max;
  }
  return constant;
}

std::string quoted_string(const std::string& s) { return "'" + s + "'"; }

bool needs_quotes(const std::string& s) {
  if (s.empty()) return true;
  if (s == "~" || s == "null" || s == "Null" || s == "NULL") return true;
  return s.front() == ' ' || s.back() == ' ';
}

void emit_string(YAML::Emitter& out, const std::string& s) {
  // A string with a line break is double-quoted (its \n escaped): a literal block would read
  // back with a final line break added or removed.
  if (s.find_first_of("\n\r") != std::string::npos || needs_quotes(s)) {
    out << YAML::DoubleQuoted << s;
  } else {
    out << s;
  }
}

void emit_distribution(YAML::Emitter& out, const Distribution& d) {
  out << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "distribution" << YAML::Value << distribution_kind_name(d.kind);
  auto number = [&out](const char* key, double v) {
    out << YAML::Key << key << YAML::Value << shortest_double(v);
  };
  switch (d.kind) {
    case DistKind::kConstant:
      number("value", d.value);
      break;
    case DistKind::kUniform:
      out << YAML::Key << "min" << YAML::Value << uniform_bound_text(d.min, d.integer_bounds);
      out << YAML::Key << "max" << YAML::Value << uniform_bound_text(d.max, d.integer_bounds);
      break;
    case DistKind::kLognormal:
      if (d.has_average) {
        number("average", d.average);
        number("median_ratio", d.median_ratio);
      } else {
        number("mean", d.mean);
        number("sigma", d.sigma);
      }
      if (d.has_max) number("max", d.max);
      break;
    case DistKind::kZipf:
    case DistKind::kPoisson:
      number("alpha", d.alpha);
      if (d.has_max) number("max", d.max);
      break;
  }
  out << YAML::EndMap;
}

void emit_struct(YAML::Emitter& out, const StructTable& t, const void* obj) {
  out << YAML::BeginMap;
  for (const auto& f : t.fields) {
    const void* m = f.get(obj);
    switch (f.kind) {
      case FieldKind::kStruct:
      case FieldKind::kGroup:
        out << YAML::Key << f.key << YAML::Value;
        emit_struct(out, *f.nested, m);
        break;
      case FieldKind::kOptionalStruct:
        if (f.has_value(m)) {
          out << YAML::Key << f.key << YAML::Value;
          emit_struct(out, *f.nested, f.value(const_cast<void*>(m)));
        }
        break;
      case FieldKind::kStructList: {
        out << YAML::Key << f.key << YAML::Value;
        const std::size_t n = f.size(m);
        if (n == 0) out << YAML::Flow;
        out << YAML::BeginSeq;
        for (std::size_t i = 0; i < n; ++i) {
          emit_struct(out, *f.nested, f.at(const_cast<void*>(m), i));
        }
        out << YAML::EndSeq;
        break;
      }
      case FieldKind::kStringList:
        out << YAML::Key << f.key << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (const auto& s : *static_cast<const std::vector<std::string>*>(m)) emit_string(out, s);
        out << YAML::EndSeq;
        break;
      case FieldKind::kDoubleList:
        out << YAML::Key << f.key << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (double v : *static_cast<const std::vector<double>*>(m)) out << shortest_double(v);
        out << YAML::EndSeq;
        break;
      case FieldKind::kDistribution:
        out << YAML::Key << f.key << YAML::Value;
        emit_distribution(out, *static_cast<const Distribution*>(m));
        break;
      case FieldKind::kString:
        out << YAML::Key << f.key << YAML::Value;
        emit_string(out, scalar_text(f, obj));
        break;
      default:
        out << YAML::Key << f.key << YAML::Value << scalar_text(f, obj);
        break;
    }
  }
  out << YAML::EndMap;
}

}  // namespace

void Decoder::mark_override(const YAML::Node& node, std::string label) {
  overrides_.push_back(OverrideNode{node, std::move(label)});
}

const std::string* Decoder::origin(const YAML::Node& node, const std::string* inherited) const {
  // The latest override that placed this very node wins over one that placed an ancestor.
  for (auto it = overrides_.rbegin(); it != overrides_.rend(); ++it) {
    if (it->node.is(node)) return &it->label;
  }
  return inherited;
}

void Decoder::report(const YAML::Node& node, const std::string* label, const std::string& path,
                     const std::string& message) {
  Diagnostic d;
  d.path = path;
  d.message = message;
  if (label != nullptr) {
    d.file = *label;
  } else {
    d.file = file_;
    const YAML::Mark mark = node.IsDefined() ? node.Mark() : YAML::Mark::null_mark();
    if (mark.line >= 0) {
      d.line = mark.line + 1;
      d.column = mark.column + 1;
    }
  }
  diagnostics_.push_back(std::move(d));
}

void Decoder::report_at(const YAML::Node& root, const std::string& path, const std::string& message) {
  YAML::Node node;
  node.reset(root);  // reset, not assignment: assigning to a node writes into the tree
  const std::string* label = origin(root, nullptr);
  // Nodes the decoder made (defaults, presets) have no mark: the deepest one that has wins.
  YAML::Node marked;
  marked.reset(root);
  std::size_t start = 0;
  while (start < path.size()) {
    const std::size_t dot = std::min(path.find('.', start), path.size());
    const std::string part = path.substr(start, dot - start);
    start = dot + 1;
    // A missing key gives an invalid node, which reset() refuses: copy it, then test it.
    YAML::Node child;
    if (node.IsMap()) {
      const YAML::Node& map = node;  // const lookup: no key is added
      const YAML::Node found = map[part];
      if (found.IsDefined()) child.reset(found);
    } else if (node.IsSequence() && !part.empty() && part.find_first_not_of("0123456789") == std::string::npos &&
               std::stoul(part) < node.size()) {
      child.reset(node[std::stoul(part)]);
    }
    if (!child.IsDefined()) break;
    node.reset(child);
    label = origin(node, label);
    if (node.Mark().line >= 0) marked.reset(node);
  }
  report(label != nullptr ? node : marked, label, path, message);
}

void Decoder::decode(const YAML::Node& node, void* obj, const StructTable& table,
                     const std::string& path) {
  decode_struct(node, obj, table, path, origin(node, nullptr), false);
}

void Decoder::decode_struct(const YAML::Node& node, void* obj, const StructTable& t,
                            const std::string& path, const std::string* label, bool satisfied) {
  // An empty value (`engine:`) stands for an empty map: every field keeps its default.
  const bool empty = !node.IsDefined() || node.IsNull();
  if (!empty && !node.IsMap()) {
    report(node, label, path, "expected a map, got " + describe_node(node));
    return;
  }
  const bool presets = !t.preset_catalog.empty() && resolver_;
  struct Entry {
    YAML::Node key;
    YAML::Node value;
    const std::string* label;
  };
  std::map<std::string, Entry> given;
  std::optional<Entry> preset;
  std::optional<Entry> file_preset;
  if (!empty) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      const YAML::Node key = it->first;
      const YAML::Node value = it->second;
      const std::string* here = origin(value, label);
      if (!key.IsScalar()) {
        report(key, here, path, "expected a key name, got " + describe_node(key));
        continue;
      }
      const std::string& name = key.Scalar();
      const std::string key_path = join_path(path, name);
      if (given.count(name) != 0 || (name == "preset" && preset)) {
        const YAML::Mark first = name == "preset" ? preset->key.Mark() : given[name].key.Mark();
        report(key, here, key_path,
               "duplicate key (first given at line " + std::to_string(first.line + 1) + ")");
        continue;
      }
      if (name == "preset" && presets) {
        preset = Entry{key, value, here};
        continue;
      }
      if (!t.file_preset_key.empty() && name == t.file_preset_key && resolver_) {
        if (file_preset) {
          report(key, here, key_path,
                 "duplicate key (first given at line " + std::to_string(file_preset->key.Mark().line + 1) + ")");
          continue;
        }
        file_preset = Entry{key, value, here};
        continue;
      }
      if (t.find(name) == nullptr) {
        std::vector<std::string> valid = t.keys();
        if (!t.file_preset_key.empty() && resolver_) valid.insert(valid.begin(), t.file_preset_key);
        if (presets) valid.insert(valid.begin(), "preset");
        const std::string hint = closest_name(name, valid);
        report(key, here, key_path,
               hint.empty() ? "unknown key; valid keys: " + join_names(valid)
                            : "unknown key; did you mean '" + hint + "'?");
        continue;
      }
      given.emplace(name, Entry{key, value, here});
    }
  }

  if (preset) {
    const std::string preset_path = join_path(path, "preset");
    satisfied = true;  // a failed preset is reported once; its fields are not "missing" too
    if (!preset->value.IsScalar()) {
      report(preset->value, preset->label, preset_path,
             "expected a preset name, got " + describe_node(preset->value));
    } else {
      const PresetLookup found = resolver_(t.preset_catalog, preset->value.Scalar());
      if (found.entry != nullptr) {
        t.assign(obj, found.entry);
      } else if (!found.message.empty()) {
        report(preset->value, preset->label, preset_path, found.message);
      }
    }
  }
  if (file_preset) {
    const std::string file_path = join_path(path, t.file_preset_key);
    satisfied = true;
    if (preset) {
      report(file_preset->key, file_preset->label, file_path,
             "give either preset or " + t.file_preset_key + ", not both");
    } else if (!file_preset->value.IsScalar()) {
      report(file_preset->value, file_preset->label, file_path,
             "expected a file path, got " + describe_node(file_preset->value));
    } else {
      const PresetLookup found = resolver_("file:" + t.file_preset_key, file_preset->value.Scalar());
      if (found.entry != nullptr) {
        t.assign(obj, found.entry);
      } else if (!found.message.empty()) {
        report(file_preset->value, file_preset->label, file_path, found.message);
      }
    }
  }

  for (const auto& f : t.fields) {
    const std::string field_path = join_path(path, f.key);
    auto it = given.find(f.key);
    if (it != given.end()) {
      decode_field(it->second.value, obj, f, field_path, it->second.label, satisfied);
    } else if (f.required && !satisfied) {
      report(node, label, field_path, "missing required field");
    }
  }

  if (t.check) {
    std::vector<FieldIssue> issues;
    t.check(
        obj, [&given](std::string_view key) { return given.count(std::string(key)) != 0; }, issues);
    for (const auto& issue : issues) report_issue(node, label, path, issue);
  }
}

void Decoder::report_issue(const YAML::Node& node, const std::string* label,
                           const std::string& path, const FieldIssue& issue) {
  // Walk the issue's relative path as far as the tree has it.
  YAML::Node at = node;
  const std::string* here = label;
  std::size_t begin = 0;
  while (begin < issue.path.size()) {
    std::size_t end = issue.path.find('.', begin);
    if (end == std::string::npos) end = issue.path.size();
    const std::string key = issue.path.substr(begin, end - begin);
    if (!at.IsMap()) break;
    const YAML::Node& const_at = at;
    const YAML::Node next = const_at[key];
    if (!next.IsDefined()) break;
    here = origin(next, here);
    at.reset(next);
    begin = end + 1;
  }
  report(at, here, join_path(path, issue.path), issue.message);
}

void Decoder::decode_field(const YAML::Node& node, void* owner, const Field& f,
                           const std::string& path, const std::string* label, bool satisfied) {
  switch (f.kind) {
    case FieldKind::kStruct:
    case FieldKind::kGroup:
      decode_struct(node, f.get(owner), *f.nested, path, label, satisfied);
      return;
    case FieldKind::kOptionalStruct: {
      void* m = f.get(owner);
      if (!node.IsDefined() || node.IsNull()) {
        f.reset(m);
        return;
      }
      if (!node.IsMap()) {
        report(node, label, path, "expected a map, got " + describe_node(node));
        return;
      }
      decode_struct(node, f.emplace(m), *f.nested, path, label, false);
      return;
    }
    case FieldKind::kStructList: {
      if (!node.IsSequence()) {
        report(node, label, path, "expected " + expected_for(f) + ", got " + describe_node(node));
        return;
      }
      void* m = f.get(owner);
      f.resize(m, node.size());
      for (std::size_t i = 0; i < node.size(); ++i) {
        const YAML::Node item = node[i];
        decode_struct(item, f.at(m, i), *f.nested, path + "." + std::to_string(i),
                      origin(item, label), false);
      }
      if (!f.range.contains(static_cast<double>(node.size()))) {
        report(node, label, path,
               "has " + std::to_string(node.size()) + " entries; the count " +
                   f.range.describe([](double b) { return shortest_double(b); }));
      }
      return;
    }
    case FieldKind::kStringList:
    case FieldKind::kDoubleList: {
      if (!node.IsSequence()) {
        report(node, label, path, "expected " + expected_for(f) + ", got " + describe_node(node));
        return;
      }
      std::vector<std::string> strings;
      std::vector<double> numbers;
      bool ok = true;
      for (std::size_t i = 0; i < node.size(); ++i) {
        const YAML::Node item = node[i];
        const std::string* here = origin(item, label);
        const std::string item_path = path + "." + std::to_string(i);
        if (!item.IsScalar()) {
          report(item, here, item_path,
                 std::string("expected ") +
                     (f.kind == FieldKind::kStringList ? "a string" : "a number") + ", got " +
                     describe_node(item));
          ok = false;
          continue;
        }
        if (f.kind == FieldKind::kStringList) {
          if (auto problem = string_problem(item.Scalar())) {
            report(item, here, item_path, problem->message);
            ok = false;
            continue;
          }
          strings.push_back(item.Scalar());
          continue;
        }
        double v = 0;
        if (auto problem = parse_list_number(f, item.Scalar(), v)) {
          report(item, here, item_path, problem->message);
          ok = false;
          continue;
        }
        numbers.push_back(v);
      }
      if (!ok) return;
      if (f.kind == FieldKind::kStringList) {
        *static_cast<std::vector<std::string>*>(f.get(owner)) = std::move(strings);
      } else {
        *static_cast<std::vector<double>*>(f.get(owner)) = std::move(numbers);
      }
      return;
    }
    case FieldKind::kDistribution:
      decode_distribution(node, *static_cast<Distribution*>(f.get(owner)), path, label, f.range);
      return;
    default:
      break;
  }
  if (!node.IsScalar()) {
    report(node, label, path, "expected " + expected_for(f) + ", got " + describe_node(node));
    return;
  }
  if (auto problem = set_scalar_from_text(f, owner, node.Scalar())) {
    report(node, label, path, problem->message);
  }
}

void Decoder::decode_distribution(const YAML::Node& node, Distribution& out,
                                  const std::string& path, const std::string* label,
                                  const Range& limit) {
  // The largest value the field may take (kvsim's stated limits, docs/limits.md).
  const double top = limit.max ? *limit.max : std::numeric_limits<double>::max();
  if (!node.IsMap()) {
    Field dummy;
    dummy.kind = FieldKind::kDistribution;
    report(node, label, path, "expected " + expected_for(dummy) + ", got " + describe_node(node));
    return;
  }
  const std::size_t errors_before = diagnostics_.size();
  struct Param {
    YAML::Node key;
    YAML::Node value;
    const std::string* label;
  };
  std::map<std::string, Param> params;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node key = it->first;
    const YAML::Node value = it->second;
    const std::string* here = origin(value, label);
    const std::string name = key.IsScalar() ? key.Scalar() : std::string();
    const auto& keys = distribution_keys();
    if (std::find(keys.begin(), keys.end(), name) == keys.end()) {
      const std::string hint = closest_name(name, keys);
      report(key, here, join_path(path, name),
             hint.empty() ? "unknown key; valid keys: " + join_names(keys)
                          : "unknown key; did you mean '" + hint + "'?");
      continue;
    }
    if (params.count(name) != 0) {
      report(key, here, join_path(path, name), "duplicate key");
      continue;
    }
    params.emplace(name, Param{key, value, here});
  }

  // The kind.
  auto kind_it = params.find("distribution");
  if (kind_it == params.end()) {
    report(node, label, path,
           "missing 'distribution' (one of " + join_names(distribution_kind_names()) + ")");
    return;
  }
  const Param& kind_param = kind_it->second;
  const std::string kind_name = kind_param.value.IsScalar() ? kind_param.value.Scalar() : "";
  const auto& names = distribution_kind_names();
  const auto name_it = std::find(names.begin(), names.end(), kind_name);
  if (name_it == names.end()) {
    std::string message =
        "unknown distribution " +
        (kind_param.value.IsScalar() ? quoted_string(kind_name) : describe_node(kind_param.value));
    const std::string hint = closest_name(kind_name, names);
    if (!hint.empty()) message += "; did you mean '" + hint + "'?";
    message += " (valid: " + join_names(names) + ")";
    report(kind_param.value, kind_param.label, join_path(path, "distribution"), message);
    return;
  }
  Distribution d;
  d.kind = static_cast<DistKind>(name_it - names.begin());

  // Parameters that do not belong to this kind.
  const auto& allowed = kind_params(d.kind);
  for (const auto& [name, p] : params) {
    if (name == "distribution") continue;
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string message = "'" + name;
      message += "' is not a parameter of ";
      message += kind_name;
      message += " (it takes ";
      message += join_names(allowed);
      message += ")";
      report(p.key, p.label, join_path(path, name), message);
    }
  }

  // Reads one numeric parameter, range checked; nullopt if absent or bad (bad is reported).
  auto number = [&](const char* key, Range range) -> std::optional<double> {
    auto it = params.find(key);
    if (it == params.end()) return std::nullopt;
    Field f;
    f.kind = FieldKind::kDouble;
    f.range = range;
    const Param& p = it->second;
    if (!p.value.IsScalar()) {
      report(p.value, p.label, join_path(path, key),
             "expected a number, got " + describe_node(p.value));
      return std::nullopt;
    }
    double v = 0;
    if (auto problem = parse_list_number(f, p.value.Scalar(), v)) {
      report(p.value, p.label, join_path(path, key), problem->message);
      return std::nullopt;
    }
    return v;
  };
  auto has = [&](const char* key) { return params.count(key) != 0; };
  auto bad = [&](const std::string& message) { report(node, label, path, message); };

  if (d.kind != DistKind::kUniform && d.kind != DistKind::kConstant) {
    if (const auto max = number("max", Range::open_closed(0, top))) {
      d.has_max = true;
      d.max = *max;
    }
  }
  switch (d.kind) {
    case DistKind::kConstant: {
      if (!has("value")) {
        bad("constant needs value");
        break;
      }
      if (auto v = number("value", Range::closed(0, top))) d.value = *v;
      break;
    }
    case DistKind::kUniform: {
      // bench_dataset.py: asserts min > 0 and min <= max; randint when both are integers.
      if (!has("min") || !has("max")) {
        bad("uniform needs min and max");
        break;
      }
      const auto lo = number("min", Range::open_closed(0, top));
      const auto hi = number("max", Range::open_closed(0, top));
      if (!lo || !hi) break;
      if (*lo > *hi) {
        bad("uniform needs min <= max, got min " + shortest_double(*lo) + " and max " +
            shortest_double(*hi));
        break;
      }
      d.min = *lo;
      d.max = *hi;
      d.integer_bounds = is_integer_text(params.at("min").value.Scalar()) &&
                         is_integer_text(params.at("max").value.Scalar());
      break;
    }
    case DistKind::kLognormal: {
      // bench_dataset.py LognormalDistribution: average (>= 1) with median_ratio in (0, 1),
      // default 0.85; or mean > 0 and sigma >= 0 of the underlying normal, never both.
      const bool by_average = has("average") && !has("mean") && !has("sigma");
      const bool by_mean = !has("average") && has("mean") && has("sigma") && !has("median_ratio");
      if (!by_average && !by_mean) {
        bad("lognormal needs either average or mean+sigma");
        break;
      }
      if (by_average) {
        d.has_average = true;
        if (auto v = number("average", Range::closed(1, std::max(1.0, top)))) d.average = *v;
        if (auto v = number("median_ratio", Range::open(0, 1))) d.median_ratio = *v;
      } else {
        if (auto v = number("mean", Range::open_closed(0, std::log(std::max(top, 2.0))))) d.mean = *v;
        if (auto v = number("sigma", Range::at_least(0))) d.sigma = *v;
      }
      break;
    }
    case DistKind::kZipf:
    case DistKind::kPoisson: {
      if (!has("alpha")) {
        bad(kind_name + " needs alpha");
        break;
      }
      // numpy: zipf needs a > 1; poisson needs lam >= 0.
      const Range range = d.kind == DistKind::kZipf ? Range::above(1) : Range::closed(0, top);
      if (auto v = number("alpha", range)) d.alpha = *v;
      break;
    }
  }
  if (diagnostics_.size() == errors_before) out = d;
}

namespace {

// Where each YAML document starts; every other event is ignored.
struct DocumentStarts : YAML::EventHandler {
  int seen = 0;
  YAML::Mark second = YAML::Mark::null_mark();
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++seen == 2) second = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

}  // namespace

std::optional<YAML::Node> parse_yaml(const std::string& text, const std::string& file,
                                     std::vector<Diagnostic>& diagnostics) {
  if (static_cast<std::int64_t>(text.size()) > limits::kMaxYamlBytes) {
    diagnostics.push_back(Diagnostic{file, 0, 0, "",
                                     "the YAML text is " + std::to_string(text.size()) +
                                         " bytes, past kvsim's limit of " +
                                         std::to_string(limits::kMaxYamlBytes) +
                                         " bytes (docs/limits.md)"});
    return std::nullopt;
  }
  try {
    // More than one document would be silently dropped: say so instead. Documents are counted
    // with the event parser, two at most (yaml-cpp's LoadAll never returns on a lone ',').
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentStarts starts;
    int documents = 0;
    while (documents < 2 && parser.HandleNextDocument(starts)) ++documents;
    if (documents > 1) {
      Diagnostic d;
      d.file = file;
      if (starts.second.line >= 0) {
        d.line = starts.second.line + 1;
        d.column = starts.second.column + 1;
      }
      d.message =
          "a second YAML document: a scenario file holds one (a '---' line starts another, and "
          "so does text YAML cannot continue the first with, such as a line starting with ',')";
      diagnostics.push_back(std::move(d));
      return std::nullopt;
    }
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    Diagnostic d;
    d.file = file;
    if (e.mark.line >= 0) {
      d.line = e.mark.line + 1;
      d.column = e.mark.column + 1;
    }
    d.message = "YAML syntax: " + e.msg;
    diagnostics.push_back(std::move(d));
  }
  return std::nullopt;
}

std::string emit_yaml(const StructTable& table, const void* obj) {
  YAML::Emitter out;
  out.SetIndent(2);
  emit_struct(out, table, obj);
  std::string text = out.c_str();
  text += '\n';
  return text;
}

void sort_diagnostics(std::vector<Diagnostic>& diagnostics) {
  std::map<std::string, std::size_t> order;
  for (const auto& d : diagnostics) order.emplace(d.file, order.size());
  std::stable_sort(diagnostics.begin(), diagnostics.end(),
                   [&order](const Diagnostic& a, const Diagnostic& b) {
                     const std::size_t fa = order.at(a.file);
                     const std::size_t fb = order.at(b.file);
                     if (fa != fb) return fa < fb;
                     if (a.line != b.line) return a.line < b.line;
                     return a.column < b.column;
                   });
}

}  // namespace kvsim::scenario::detail
