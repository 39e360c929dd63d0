#include "sim/planner/sweep_spec.hpp"

#include <yaml-cpp/yaml.h>

#include <array>
#include <charconv>
#include <climits>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "sim/core/error.hpp"

namespace kvsim::planner {
namespace {

constexpr std::int64_t kMaxPoints = 10'000'000;

// Reports problems at a node's place in the sweep file.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& path,
                         const std::string& message) const {
    const YAML::Mark m = at.Mark();
    const bool known = m.line >= 0;
    throw InputError(
        Diagnostic{file_, known ? m.line + 1 : 0, known ? m.column + 1 : 0, path, message});
  }

  // Rejects keys outside `allowed`, naming the valid ones.
  void check_keys(const YAML::Node& map, const std::string& path,
                  const std::set<std::string>& allowed) const {
    for (const auto& kv : map) {
      const auto key = kv.first.Scalar();
      if (allowed.count(key) == 0) {
        std::string valid;
        for (const auto& a : allowed) valid += (valid.empty() ? "" : ", ") + a;
        std::string msg = "unknown key '";
        msg += key;
        msg += "' (valid: ";
        msg += valid;
        msg += ")";
        fail(kv.first, join(path, key), msg);
      }
    }
  }

  static std::string join(const std::string& a, const std::string& b) {
    return a.empty() ? b : a + "." + b;
  }

  std::string text(const YAML::Node& n, const std::string& path) const {
    if (!n.IsScalar()) fail(n, path, "expected a text value");
    return n.Scalar();
  }

  double number(const YAML::Node& n, const std::string& path) const {
    if (!n.IsScalar()) fail(n, path, "expected a number");
    const std::string& s = n.Scalar();
    double v = 0;
    const auto res = std::from_chars(s.data(), s.data() + s.size(), v);
    if (res.ec != std::errc() || res.ptr != s.data() + s.size() || !std::isfinite(v)) {
      fail(n, path, "expected a number, got '" + s + "'");
    }
    return v;
  }

  std::uint64_t unsigned_integer(const YAML::Node& n, const std::string& path) const {
    if (!n.IsScalar()) fail(n, path, "expected a non-negative integer");
    const std::string& s = n.Scalar();
    std::uint64_t v = 0;
    const auto res = std::from_chars(s.data(), s.data() + s.size(), v);
    if (res.ec != std::errc() || res.ptr != s.data() + s.size()) {
      fail(n, path, "expected a non-negative integer, got '" + s + "'");
    }
    return v;
  }

  bool boolean(const YAML::Node& n, const std::string& path) const {
    if (n.IsScalar()) {
      if (n.Scalar() == "true") return true;
      if (n.Scalar() == "false") return false;
    }
    fail(n, path, "expected true or false");
  }

  // A value as `--set` takes it: scalars as written, lists and maps as flow YAML.
  static std::string value_text(const YAML::Node& n) {
    if (n.IsScalar()) return n.Scalar();
    if (n.IsNull()) return "null";
    YAML::Emitter e;
    e << YAML::Flow << n;
    return e.c_str();
  }

  std::vector<scenario::Override> overrides(const YAML::Node& n, const std::string& path) const {
    if (!n.IsMap())
      fail(n, path, "expected a map of override paths to values, e.g. engine.max_num_seqs: 128");
    std::vector<scenario::Override> out;
    for (const auto& kv : n) {
      const std::string key = kv.first.Scalar();
      if (key.empty()) fail(kv.first, path, "empty override path");
      out.push_back({key, value_text(kv.second)});
    }
    return out;
  }

  // The values of a range: {from, to, step} (to included when reached) or {from, to, count,
  // log}. Integer endpoints (and step) give integers; log and count ranges round to them then.
  std::vector<std::string> range(const YAML::Node& n, const std::string& path,
                                 const std::string& unit) const {
    if (!n.IsMap()) fail(n, path, "expected {from, to, step} or {from, to, count, log}");
    check_keys(n, path, {"from", "to", "step", "count", "log"});
    if (!n["from"]) fail(n, path, "missing 'from'");
    if (!n["to"]) fail(n, path, "missing 'to'");
    const double from = number(n["from"], join(path, "from"));
    const double to = number(n["to"], join(path, "to"));
    const auto is_int = [](double v) { return std::floor(v) == v && std::fabs(v) < 9.0e15; };
    bool integers = is_int(from) && is_int(to);
    std::vector<double> values;
    if (n["step"]) {
      if (n["count"] || n["log"])
        fail(n, path, "give either 'step' or 'count' (with 'log'), not both");
      const double step = number(n["step"], join(path, "step"));
      if (step == 0 || (to - from) / step < 0) {
        fail(n["step"], join(path, "step"),
             "step must be non-zero and lead from 'from' towards 'to'");
      }
      integers = integers && is_int(step);
      const double steps = std::floor((to - from) / step + 1e-9);
      if (steps + 1 > static_cast<double>(kMaxPoints)) fail(n, path, "too many values");
      for (std::int64_t i = 0; i <= static_cast<std::int64_t>(steps); ++i) {
        values.push_back(from + static_cast<double>(i) * step);
      }
    } else if (n["count"]) {
      const std::uint64_t count = unsigned_integer(n["count"], join(path, "count"));
      if (count < 1) fail(n["count"], join(path, "count"), "count must be at least 1");
      if (count > static_cast<std::uint64_t>(kMaxPoints)) {
        fail(n["count"], join(path, "count"),
             "count " + std::to_string(count) + " is past the limit of " +
                 std::to_string(kMaxPoints) + " values in one range");
      }
      const bool log = n["log"] ? boolean(n["log"], join(path, "log")) : false;
      if (log && (from <= 0 || to <= 0)) fail(n, path, "a log range needs from > 0 and to > 0");
      for (std::uint64_t i = 0; i < count; ++i) {
        const double t = count == 1 ? 0.0 : static_cast<double>(i) / static_cast<double>(count - 1);
        double v = log ? from * std::pow(to / from, t) : from + (to - from) * t;
        if (i + 1 == count) v = to;
        values.push_back(integers ? std::round(v) : v);
      }
      if (integers) {
        for (std::size_t i = 1; i < values.size(); ++i) {
          if (values[i] == values[i - 1]) {
            fail(n, path,
                 "integer values repeat after rounding (" + format(values[i]) +
                     "): use fewer values");
          }
        }
      }
    } else {
      fail(n, path, "a range needs 'step' or 'count'");
    }
    std::vector<std::string> out;
    out.reserve(values.size());
    for (const double v : values)
      out.push_back((integers ? std::to_string(static_cast<std::int64_t>(v)) : format(v)) + unit);
    return out;
  }

  static std::string format(double v) {
    std::array<char, 32> buf{};
    const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), v);
    return std::string(buf.data(), res.ptr);
  }

  // One axis entry: {path, values} | {path, range, unit} | {zip: [entries]}.
  Axis axis(const YAML::Node& n, const std::string& path, bool allow_zip) const {
    if (!n.IsMap()) fail(n, path, "expected {path, values}, {path, range} or {zip: [...]}");
    if (n["zip"]) {
      if (!allow_zip) fail(n, path, "a zip group cannot hold another zip group");
      check_keys(n, path, {"zip"});
      const YAML::Node list = n["zip"];
      if (!list.IsSequence() || list.size() < 1)
        fail(list, join(path, "zip"), "expected a list of axes");
      Axis out;
      for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string p = join(path, "zip") + "." + std::to_string(i);
        Axis one = axis(list[i], p, false);
        if (i > 0 && one.values.size() != out.values.size()) {
          fail(list[i], p,
               "zipped axes must have the same number of values: " +
                   std::to_string(one.values.size()) + " here, " +
                   std::to_string(out.values.size()) + " in the first");
        }
        out.paths.push_back(one.paths.front());
        if (i == 0) out.values.resize(one.values.size());
        for (std::size_t k = 0; k < one.values.size(); ++k)
          out.values[k].push_back(one.values[k].front());
      }
      return out;
    }
    check_keys(n, path, {"path", "values", "range", "unit"});
    if (!n["path"])
      fail(n, path, "missing 'path' (the override path, e.g. workload.clients.num_clients)");
    const std::string target = text(n["path"], join(path, "path"));
    if (target.empty()) fail(n["path"], join(path, "path"), "empty path");
    const std::string unit = n["unit"] ? text(n["unit"], join(path, "unit")) : "";
    std::vector<std::string> vals;
    if (n["values"] && n["range"]) fail(n, path, "give either 'values' or 'range', not both");
    if (n["values"]) {
      const YAML::Node v = n["values"];
      if (!v.IsSequence() || v.size() == 0)
        fail(v, join(path, "values"), "expected a non-empty list of values");
      for (const auto& item : v) vals.push_back(value_text(item) + unit);
    } else if (n["range"]) {
      vals = range(n["range"], join(path, "range"), unit);
    } else {
      fail(n, path, "missing 'values' or 'range'");
    }
    Axis out;
    out.paths.push_back(target);
    for (auto& v : vals) out.values.push_back({std::move(v)});
    return out;
  }

  std::vector<Axis> axes(const YAML::Node& n, const std::string& path) const {
    if (!n.IsSequence()) fail(n, path, "expected a list of axes");
    std::vector<Axis> out;
    for (std::size_t i = 0; i < n.size(); ++i)
      out.push_back(axis(n[i], path + "." + std::to_string(i), true));
    return out;
  }

 private:
  std::string file_;
};

std::string resolve(const std::string& file, const std::string& base_dir) {
  const std::filesystem::path p(file);
  if (p.is_absolute() || base_dir.empty()) return p.lexically_normal().string();
  return (std::filesystem::path(base_dir) / p).lexically_normal().string();
}

std::int64_t axes_points(const std::vector<Axis>& axes) {
  std::int64_t n = 1;
  for (const auto& a : axes) {
    n *= static_cast<std::int64_t>(a.values.size());
    if (n > kMaxPoints) return kMaxPoints + 1;
  }
  return n;
}

}  // namespace

namespace {
SweepSpec parse_sweep(const std::string& yaml_text, const std::string& display_name,
                      const std::string& base_dir) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::ParserException& e) {
    throw InputError(Diagnostic{display_name, e.mark.line + 1, e.mark.column + 1, "", e.msg});
  }
  const Reader r(display_name);
  if (!root.IsMap()) r.fail(root, "", "a sweep file is a map with name, scenarios and axes");
  r.check_keys(
      root, "",
      {"name", "description", "scenarios", "set", "axes", "repetitions", "seed", "warmup_percent"});
  SweepSpec spec;
  spec.source_file = display_name;
  if (!root["name"])
    r.fail(root, "name", "missing 'name' (the sweep's name, recorded with every run)");
  spec.name = r.text(root["name"], "name");
  if (spec.name.empty()) r.fail(root["name"], "name", "empty name");
  if (!root["scenarios"])
    r.fail(root, "scenarios", "missing 'scenarios' (the base scenario files)");
  const YAML::Node scs = root["scenarios"];
  if (!scs.IsSequence() || scs.size() == 0)
    r.fail(scs, "scenarios", "expected a non-empty list of scenario files");
  for (std::size_t i = 0; i < scs.size(); ++i) {
    const std::string p = "scenarios." + std::to_string(i);
    const YAML::Node s = scs[i];
    BaseScenario b;
    if (s.IsMap()) {
      r.check_keys(s, p, {"file", "set", "axes"});
      if (!s["file"]) r.fail(s, p, "missing 'file'");
      if (s["set"]) b.set = r.overrides(s["set"], p + ".set");
      if (s["axes"]) b.axes = r.axes(s["axes"], p + ".axes");
    }
    // A copy binds to the same node (assigning a YAML::Node would overwrite the node instead).
    const YAML::Node file_node = s.IsMap() ? s["file"] : s;
    const std::string file = r.text(file_node, p);
    b.file = resolve(file, base_dir);
    if (!std::filesystem::is_regular_file(b.file))
      r.fail(file_node, p, "no such scenario file: " + b.file);
    spec.scenarios.push_back(std::move(b));
  }
  if (root["set"]) spec.set = r.overrides(root["set"], "set");
  if (root["axes"]) spec.axes = r.axes(root["axes"], "axes");
  if (root["repetitions"]) {
    const auto reps = r.unsigned_integer(root["repetitions"], "repetitions");
    if (reps < 1 || reps > 100000)
      r.fail(root["repetitions"], "repetitions", "repetitions must lie in [1, 100000]");
    spec.repetitions = static_cast<std::int64_t>(reps);
  }
  if (root["seed"]) {
    spec.seed = r.unsigned_integer(root["seed"], "seed");
    if (*spec.seed > static_cast<std::uint64_t>(INT64_MAX))
      r.fail(root["seed"], "seed", "seed must be below 2^63");
  }
  if (root["warmup_percent"]) {
    spec.warmup_percent = r.number(root["warmup_percent"], "warmup_percent");
    if (spec.warmup_percent < 0 || spec.warmup_percent >= 100) {
      r.fail(root["warmup_percent"], "warmup_percent", "warmup_percent must lie in [0, 100)");
    }
    spec.warmup_set = true;
  }
  if (count_points(spec) > kMaxPoints)
    r.fail(root, "axes", "the sweep expands to more than 10,000,000 runs");
  return spec;
}
}  // namespace

SweepSpec load_sweep_text(const std::string& yaml_text, const std::string& display_name,
                          const std::string& base_dir) {
  try {
    return parse_sweep(yaml_text, display_name, base_dir);
  } catch (const YAML::Exception& e) {
    throw InputError(Diagnostic{display_name, e.mark.line >= 0 ? e.mark.line + 1 : 0,
                                e.mark.column >= 0 ? e.mark.column + 1 : 0, "", e.msg});
  }
}

SweepSpec load_sweep(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, 0, "cannot read the sweep file");
  std::ostringstream text;
  text << in.rdbuf();
  return load_sweep_text(text.str(), path, std::filesystem::path(path).parent_path().string());
}

std::int64_t count_points(const SweepSpec& spec) {
  const std::int64_t global = axes_points(spec.axes);
  std::int64_t total = 0;
  for (const auto& s : spec.scenarios) {
    const std::int64_t own = axes_points(s.axes);
    if (global > kMaxPoints || own > kMaxPoints) return kMaxPoints + 1;
    total += global * own * spec.repetitions;
    if (total > kMaxPoints) return kMaxPoints + 1;
  }
  return total;
}

std::vector<SweepPoint> expand(const SweepSpec& spec) {
  std::vector<SweepPoint> out;
  out.reserve(static_cast<std::size_t>(count_points(spec)));
  for (std::size_t s = 0; s < spec.scenarios.size(); ++s) {
    const BaseScenario& base = spec.scenarios[s];
    std::vector<const Axis*> axes;
    for (const auto& a : spec.axes) axes.push_back(&a);
    for (const auto& a : base.axes) axes.push_back(&a);
    // An odometer over the axes, the last one fastest.
    std::vector<std::size_t> pos(axes.size(), 0);
    bool done = false;
    while (!done) {
      std::vector<scenario::Override> ov = spec.set;
      ov.insert(ov.end(), base.set.begin(), base.set.end());
      for (std::size_t a = 0; a < axes.size(); ++a) {
        for (std::size_t k = 0; k < axes[a]->paths.size(); ++k) {
          ov.push_back({axes[a]->paths[k], axes[a]->values[pos[a]][k]});
        }
      }
      for (std::int64_t rep = 0; rep < spec.repetitions; ++rep) {
        SweepPoint p;
        p.index = static_cast<std::int64_t>(out.size());
        p.scenario = s;
        p.overrides = ov;
        p.repetition = rep;
        out.push_back(std::move(p));
      }
      // Advance the odometer, the last axis fastest; past the first axis' end we are done.
      std::size_t a = axes.size();
      while (true) {
        if (a == 0) {
          done = true;
          break;
        }
        --a;
        if (++pos[a] < axes[a]->values.size()) break;
        pos[a] = 0;
      }
    }
  }
  return out;
}

}  // namespace kvsim::planner
