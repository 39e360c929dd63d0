#include "sim/planner/offload_map.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <set>

#include "sim/core/error.hpp"
#include "sim/planner/parallel.hpp"
#include "sim/planner/results_db.hpp"
#include "sim/scenario/units.hpp"

namespace kvsim::planner {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::int64_t kMaxPoints = 1000;

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// "16GiB" -> 16 and "GiB"; "1e3" -> 1000 and "". False when the text does not start with a
// finite number.
bool split_number(const std::string& text, double* number, std::string* unit, bool* integer) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const double v = std::strtod(begin, &end);
  if (end == begin || !std::isfinite(v)) return false;
  const std::string digits(begin, static_cast<const char*>(end));
  *number = v;
  *unit = trim(std::string(end));
  *integer = digits.find_first_of(".eExXpPnN") == std::string::npos;
  return true;
}

std::string value_text(double v, bool integer, const std::string& unit) {
  if (integer) return std::to_string(static_cast<std::int64_t>(std::llround(v))) + unit;
  return scenario::shortest_double(v) + unit;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    out.push_back(trim(text.substr(start, comma == std::string::npos ? comma : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

bool is_time(MetricKind k) { return k == MetricKind::kTimeMs || k == MetricKind::kTimeSec; }

// The overrides of one cell of one variant: the user's, the variant's, y's, x's.
std::vector<scenario::Override> cell_overrides(const MapOptions& o, const Variant& v,
                                               const MapAxis& x, const MapAxis& y, std::size_t ix,
                                               std::size_t iy) {
  std::vector<scenario::Override> out = o.load.overrides;
  out.insert(out.end(), v.overrides.begin(), v.overrides.end());
  const auto yo = y.at(iy, v.name);
  const auto xo = x.at(ix, v.name);
  out.insert(out.end(), yo.begin(), yo.end());
  out.insert(out.end(), xo.begin(), xo.end());
  return out;
}

// The sweep axis of a map axis for one variant (no paths, but the same number of points, when
// none of its terms applies to the variant).
Axis sweep_axis(const MapAxis& a, const std::string& variant) {
  Axis out;
  for (const auto& o : a.at(0, variant)) out.paths.push_back(o.path);
  for (std::size_t i = 0; i < a.size(); ++i) {
    std::vector<std::string> values;
    for (const auto& o : a.at(i, variant)) values.push_back(o.value);
    out.values.push_back(std::move(values));
  }
  return out;
}

std::vector<Variant> resolve_variants(const MapOptions& o, const scenario::Scenario& base) {
  const auto defaults = default_variants(base);
  std::vector<Variant> out;
  if (o.variant_names.empty() && o.custom_variants.empty()) {
    for (const auto& v : defaults) {
      if (v.name == "vram-only" || v.name == "dram" || v.name == "nvme-net") out.push_back(v);
    }
  }
  for (const auto& name : o.variant_names) {
    const auto it = std::find_if(defaults.begin(), defaults.end(),
                                 [&](const Variant& v) { return v.name == name; });
    if (it == defaults.end()) {
      std::string names;
      for (const auto& v : defaults) {
        names += names.empty() ? "" : ", ";
        names += v.name;
      }
      std::string message = "--variants: no variant '";
      message += name;
      message += "' for this scenario (it has ";
      message += names;
      message += "; define others with --variant 'NAME: path=value, ...')";
      throw InputError("", 0, 0, message);
    }
    out.push_back(*it);
  }
  out.insert(out.end(), o.custom_variants.begin(), o.custom_variants.end());
  std::set<std::string> seen;
  for (const auto& v : out) {
    if (!seen.insert(v.name).second)
      throw InputError("", 0, 0, "--variants: variant '" + v.name + "' is named twice");
  }
  if (out.size() < 2)
    throw InputError("", 0, 0,
                     "a map compares variants: give at least two (--variants a,b or --variant)");
  return out;
}

// Thrown out of a search whose run is not done and may not (or cannot) be run now.
struct Incomplete {
  std::string why;
};

}  // namespace

AxisTerm parse_axis_term(const std::string& text, const std::string& flag) {
  auto fail = [&](const std::string& message) -> AxisTerm {
    throw InputError("", 0, 0, flag + " '" + text + "': " + message);
  };
  AxisTerm t;
  t.text = text;
  const auto eq = text.find('=');
  if (eq == std::string::npos)
    return fail("expected PATH=FROM:TO:COUNT, PATH=FROM:TO:COUNT:log or PATH=V1,V2,...");
  t.path = trim(text.substr(0, eq));
  if (const auto colon = t.path.find(':'); colon != std::string::npos) {
    t.variant = trim(t.path.substr(0, colon));
    t.path = trim(t.path.substr(colon + 1));
    if (t.variant.empty()) return fail("no variant name before ':'");
  }
  const std::string spec = trim(text.substr(eq + 1));
  if (t.path.empty()) return fail("no path before '='");
  if (spec.empty()) return fail("no values after '='");
  if (spec.find(':') == std::string::npos) {
    for (const auto& v : split_list(spec)) {
      if (v.empty()) return fail("an empty value in the list");
      double n = kNaN;
      std::string unit;
      bool integer = false;
      if (!split_number(v, &n, &unit, &integer)) n = kNaN;
      t.values.push_back(v);
      t.numbers.push_back(n);
    }
    return t;
  }
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto colon = spec.find(':', start);
    parts.push_back(trim(spec.substr(start, colon == std::string::npos ? colon : colon - start)));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (parts.size() != 3 && parts.size() != 4)
    return fail("expected FROM:TO:COUNT or FROM:TO:COUNT:log");
  if (parts.size() == 4) {
    if (parts[3] != "log" && parts[3] != "lin")
      return fail("the fourth field is 'log' (log-spaced) or 'lin', not '" + parts[3] + "'");
    t.log = parts[3] == "log";
  }
  double from = 0;
  double to = 0;
  std::string unit_from;
  std::string unit_to;
  bool int_from = false;
  bool int_to = false;
  if (!split_number(parts[0], &from, &unit_from, &int_from))
    return fail("FROM '" + parts[0] + "' is not a number");
  if (!split_number(parts[1], &to, &unit_to, &int_to))
    return fail("TO '" + parts[1] + "' is not a number");
  if (unit_from != unit_to)
    return fail("FROM and TO have different units ('" + unit_from + "' and '" + unit_to + "')");
  double count_d = 0;
  std::string count_unit;
  bool count_int = false;
  if (!split_number(parts[2], &count_d, &count_unit, &count_int) || !count_int ||
      !count_unit.empty() || count_d < 1 || count_d > static_cast<double>(kMaxPoints))
    return fail("COUNT '" + parts[2] + "' must be an integer from 1 to " +
                std::to_string(kMaxPoints));
  const auto count = static_cast<std::int64_t>(count_d);
  if (t.log && (from <= 0 || to <= 0)) return fail("a log-spaced range needs FROM and TO above 0");
  if (count == 1 && from != to) return fail("one point needs FROM equal to TO");
  // Counts (no unit) written as integers stay integers; values with a unit are rounded to four
  // significant digits (1.544GB/s), which is also the value set.
  const bool integer = int_from && int_to && unit_from.empty();
  for (std::int64_t i = 0; i < count; ++i) {
    const double f = count == 1 ? 0.0 : static_cast<double>(i) / static_cast<double>(count - 1);
    double v = t.log ? from * std::pow(to / from, f) : from + (to - from) * f;
    if (i == count - 1) v = to;
    if (integer) {
      v = static_cast<double>(std::llround(v));
    } else if (v != 0) {
      const double scale = std::pow(10.0, 3 - std::floor(std::log10(std::abs(v))));
      v = std::round(v * scale) / scale;
    }
    if (!t.numbers.empty() && v == t.numbers.back())
      return fail("points " + std::to_string(i) + " and " + std::to_string(i + 1) +
                  " round to the same value " + value_text(v, integer, unit_from) +
                  "; use fewer points or a wider range");
    t.numbers.push_back(v);
    t.values.push_back(value_text(v, integer, unit_from));
  }
  return t;
}

MapAxis make_map_axis(const std::vector<std::string>& terms, const std::string& flag,
                      const LoadKnob& knob) {
  MapAxis a;
  a.flag = flag;
  a.knob = knob;
  if (terms.empty()) throw InputError("", 0, 0, flag + " is required");
  std::set<std::string> paths;
  for (const auto& text : terms) {
    a.terms.push_back(parse_axis_term(text, flag));
    const AxisTerm& t = a.terms.back();
    if (!paths.insert(t.variant + ":" + t.path).second)
      throw InputError("", 0, 0, flag + ": path '" + t.path + "' is given twice");
    if (t.values.size() != a.terms.front().values.size()) {
      std::string message = flag;
      message += " '" + text + "': ";
      message += std::to_string(t.values.size()) + " values, but '";
      message += a.terms.front().text + "' has ";
      message += std::to_string(a.terms.front().values.size());
      message += " (terms of one axis vary together)";
      throw InputError("", 0, 0, message);
    }
    if (t.path != "users") continue;
    for (std::size_t i = 0; i < t.values.size(); ++i) {
      const double n = t.numbers[i];
      if (!(n >= 1) || n != std::floor(n) || t.values[i] != value_text(n, true, ""))
        throw InputError("", 0, 0,
                         flag + " '" + t.text + "': users are whole numbers of at least 1 (" +
                             knob.description + "), not '" + t.values[i] + "'");
    }
  }
  return a;
}

std::vector<scenario::Override> MapAxis::at(std::size_t i, const std::string& variant) const {
  std::vector<scenario::Override> out;
  for (const auto& t : terms) {
    if (!t.variant.empty() && t.variant != variant) continue;
    if (t.path == "users") {
      const auto o = knob.overrides(static_cast<std::int64_t>(t.numbers[i]));
      out.insert(out.end(), o.begin(), o.end());
    } else {
      out.push_back({t.path, t.values[i]});
    }
  }
  return out;
}

std::vector<std::string> MapAxis::paths() const {
  std::vector<std::string> out;
  for (const auto& t : terms) {
    if (t.path == "users") {
      for (const auto& o : knob.overrides(knob.base)) out.push_back(o.path);
    } else {
      out.push_back(t.path);
    }
  }
  return out;
}

bool MapCell::complete() const {
  return std::all_of(variants.begin(), variants.end(),
                     [](const VariantCell& v) { return v.complete; });
}

std::int64_t MapResult::missing_cells() const {
  return std::count_if(cells.begin(), cells.end(), [](const MapCell& c) { return !c.complete(); });
}

double MapResult::gain(const MapCell& c, std::size_t i, std::size_t j) const {
  const VariantCell& a = c.variants[i];
  const VariantCell& b = c.variants[j];
  if (!a.complete || !b.complete) return kNaN;
  return better_ratio(a.value, b.value);
}

double MapResult::seed_gain(const MapCell& c, std::size_t i, std::size_t j, std::size_t s) const {
  if (slo) return kNaN;
  const VariantCell& a = c.variants[i];
  const VariantCell& b = c.variants[j];
  if (s >= a.seed_values.size() || s >= b.seed_values.size()) return kNaN;
  return better_ratio(a.seed_values[s], b.seed_values[s]);
}

double MapResult::better_ratio(double a, double b) const {
  const double num = higher_is_better ? b : a;
  const double den = higher_is_better ? a : b;
  if (!(den > 0) || !std::isfinite(num)) return kNaN;
  return num / den;
}

namespace {

void fill_grid(MapResult& r, const MapOptions& o) {
  SweepSpec spec;
  spec.name = "map " + r.scenario_name;
  spec.source_file = o.scenario_path;
  spec.set = o.load.overrides;
  // Each variant its own axes (a term may apply to one variant only); all have the same points,
  // so run i of the expansion is ((variant * ny + iy) * nx + ix) * seeds + repetition.
  for (const auto& v : r.variants) {
    spec.scenarios.push_back(
        {o.scenario_path, v.overrides, {sweep_axis(r.y, v.name), sweep_axis(r.x, v.name)}});
  }
  spec.repetitions = o.seeds;
  SweepOptions all = o.sweep;
  all.catalog_dir = o.load.catalog_dir;
  all.shard = Shard{};
  const auto runs = plan_runs(spec, all);
  std::vector<PlannedRun> mine;
  for (const auto& run : runs) {
    if (o.sweep.shard.holds(run.point.index)) mine.push_back(run);
  }
  const auto progress = o.progress ? o.progress(static_cast<std::int64_t>(mine.size())) : nullptr;
  r.report = run_sweep(spec, mine, all, progress.get());
  r.report.sweep_runs = static_cast<std::int64_t>(runs.size());
  r.messages = r.report.messages;

  std::vector<std::string> keys;
  keys.reserve(runs.size());
  for (const auto& run : runs) keys.push_back(run.id.run_key);
  ResultsDb db(o.sweep.db_path, ResultsDb::Mode::kExisting);
  const auto done = db.done_summaries(keys);
  const std::size_t nx = r.x.size();
  const std::size_t ny = r.y.size();
  const auto seeds = static_cast<std::size_t>(o.seeds);
  for (const auto& run : runs) {
    const auto index = static_cast<std::size_t>(run.point.index);
    const std::size_t cell = index / seeds;
    const std::size_t ix = cell % nx;
    const std::size_t iy = (cell / nx) % ny;
    const std::size_t v = cell / (nx * ny);
    VariantCell& vc = r.cells[iy * nx + ix].variants[v];
    vc.run_keys.push_back(run.id.run_key);
    const auto it = done.find(run.id.run_key);
    if (it == done.end()) continue;
    const auto m = it->second.find(r.metric);
    vc.seed_values.push_back(m == it->second.end() ? kNaN : m->second);
    for (const auto& [name, value] : it->second) vc.mean[name] += value;
  }
  for (auto& c : r.cells) {
    for (auto& vc : c.variants) {
      vc.complete = vc.seed_values.size() == seeds;
      if (vc.seed_values.empty()) continue;
      const auto n = static_cast<double>(vc.seed_values.size());
      for (auto& [name, value] : vc.mean) value /= n;
      double sum = 0;
      vc.min = vc.seed_values.front();
      vc.max = vc.seed_values.front();
      for (const double s : vc.seed_values) {
        sum += s;
        vc.min = std::min(vc.min, s);
        vc.max = std::max(vc.max, s);
      }
      vc.value = sum / n;
    }
  }
}

void fill_slo(MapResult& r, const MapOptions& o, const LoadKnob& knob) {
  const std::size_t nx = r.x.size();
  const std::size_t ny = r.y.size();
  const std::size_t searches = nx * ny * r.variants.size();
  SweepOptions so = o.sweep;
  so.catalog_dir = o.load.catalog_dir;
  ResultsDb db(so.db_path, ResultsDb::Mode::kCreate);
  std::vector<std::size_t> mine;
  for (std::size_t s = 0; s < searches; ++s) {
    if (so.shard.holds(static_cast<std::int64_t>(s))) mine.push_back(s);
  }
  const auto progress = o.progress ? o.progress(static_cast<std::int64_t>(mine.size())) : nullptr;
  r.report.sweep_runs = static_cast<std::int64_t>(searches);
  r.report.shard_runs = static_cast<std::int64_t>(mine.size());
  std::mutex mu;
  const std::string sweep = "map " + r.scenario_name + " (" + o.slo->text() + ")";

  // One search; `may_run`: runs not done are run (this shard's), else the search stops there.
  const auto search = [&](std::size_t s, bool may_run) {
    const std::size_t ix = s % nx;
    const std::size_t iy = (s / nx) % ny;
    const std::size_t v = s / (nx * ny);
    VariantCell& vc = r.cells[iy * nx + ix].variants[v];
    const auto overrides = cell_overrides(o, r.variants[v], r.x, r.y, ix, iy);
    const auto probe = [&](std::int64_t load) {
      auto lo = o.load;
      lo.overrides = overrides;
      const auto k = knob.overrides(load);
      lo.overrides.insert(lo.overrides.end(), k.begin(), k.end());
      const auto sc = scenario::load_scenario(o.scenario_path, lo);
      std::vector<MetricValues> values;
      for (int rep = 0; rep < o.seeds; ++rep) {
        const PlannedRun run = plan_run(o.scenario_path, sc, lo.overrides, std::nullopt, rep,
                                        std::nullopt, sweep, static_cast<std::int64_t>(s));
        {
          const std::lock_guard<std::mutex> lock(mu);
          vc.run_keys.push_back(run.id.run_key);
        }
        auto got = db.done_summaries({run.id.run_key});
        if (got.empty()) {
          if (!may_run) throw Incomplete{""};
          const RunOutcome out = execute_run(db, run, so);
          {
            RunOutcome counted = out;
            counted.message.clear();  // said once, as the search's reason below
            const std::lock_guard<std::mutex> lock(mu);
            r.report.count(counted);
          }
          if (!out.message.empty()) throw Incomplete{out.message};
          got = db.done_summaries({run.id.run_key});
          if (got.empty())
            throw Incomplete{"run " + run.id.run_key.substr(0, 12) +
                             " failed before (--retry-failed)"};
        } else if (may_run) {
          const std::lock_guard<std::mutex> lock(mu);
          ++r.report.already_done;
        }
        values.push_back(got.begin()->second);
      }
      return aggregate_seeds(load, values, *o.slo, o.aggregate);
    };
    SearchOptions opt;
    opt.start = std::min(knob.base, o.max_users);
    opt.max_load = o.max_users;
    try {
      const SearchResult res = find_max_load(probe, opt);
      const std::lock_guard<std::mutex> lock(mu);
      vc.complete = true;
      vc.value = static_cast<double>(res.max_load);
      vc.min = vc.value;
      vc.max = vc.value;
      vc.capped = res.capped;
      vc.probes = static_cast<std::int64_t>(res.probes.size());
      if (const Probe* p = res.at_max()) vc.mean = p->metrics;
      const Probe* f = res.at_first_fail();
      if (f != nullptr && f->slo.binding >= 0)
        vc.binding = f->slo.terms[static_cast<std::size_t>(f->slo.binding)].term->text;
    } catch (const Incomplete& e) {
      const std::lock_guard<std::mutex> lock(mu);
      if (!e.why.empty()) r.messages.push_back(e.why);
    }
  };

  try {
    parallel_for(mine.size(), so.jobs, [&](std::size_t i) {
      search(mine[i], true);
      if (progress != nullptr) progress->advance(true, false);
    });
  } catch (...) {
    if (progress != nullptr) progress->finish();
    throw;
  }
  if (progress != nullptr) progress->finish();
  // Other shards' searches: read from the database what they have finished.
  for (std::size_t s = 0; s < searches; ++s) {
    if (!so.shard.holds(static_cast<std::int64_t>(s))) search(s, false);
  }
}

}  // namespace

MapResult run_map(const MapOptions& o) {
  if (o.seeds < 1) throw InputError("", 0, 0, "--seeds must be at least 1");
  const scenario::Scenario base = scenario::load_scenario(o.scenario_path, o.load);
  const LoadKnob knob = make_load_knob(base);
  MapResult r;
  r.definition = o.definition;
  r.scenario_name = base.name;
  r.scenario_path = o.scenario_path;
  r.db_path = o.sweep.db_path;
  r.knob = knob.name;
  r.seeds = o.seeds;
  r.x = make_map_axis(o.x, "--x", knob);
  r.y = make_map_axis(o.y, "--y", knob);
  for (const auto& a : r.x.paths()) {
    for (const auto& b : r.y.paths()) {
      if (a == b)
        throw InputError("", 0, 0, "--x and --y both set " + a + "; an axis varies one thing");
    }
  }
  r.variants = resolve_variants(o, base);
  for (const MapAxis* a : {&r.x, &r.y}) {
    for (const auto& t : a->terms) {
      if (t.variant.empty()) continue;
      if (std::none_of(r.variants.begin(), r.variants.end(),
                       [&](const Variant& v) { return v.name == t.variant; }))
        throw InputError("", 0, 0,
                         a->flag + " '" + t.text + "': the map has no variant '" + t.variant + "'");
    }
  }
  if (o.slo) {
    for (const MapAxis* a : {&r.x, &r.y}) {
      for (const auto& t : a->terms) {
        if (t.path == "users")
          throw InputError("", 0, 0,
                           a->flag + " '" + t.text +
                               "': with --slo each cell finds the most users meeting it, so an "
                               "axis cannot set them");
      }
    }
    if (o.max_users < 1) throw InputError("", 0, 0, "--max-users must be at least 1");
    r.slo = o.slo;
    r.metric = "max_users";
    r.higher_is_better = true;
  } else {
    r.metric = resolve_metric(o.metric, "--metric");
    r.higher_is_better = !is_time(metric_kind(r.metric));
  }
  r.cells.resize(r.x.size() * r.y.size());
  for (std::size_t iy = 0; iy < r.y.size(); ++iy) {
    for (std::size_t ix = 0; ix < r.x.size(); ++ix) {
      MapCell& c = r.cells[iy * r.x.size() + ix];
      c.ix = ix;
      c.iy = iy;
      c.variants.resize(r.variants.size());
    }
  }
  // With an SLO, every cell's scenario must load before any search runs (a bad axis value names
  // the cell); a grid's runs are all loaded by plan_runs before any runs.
  for (std::size_t v = 0; o.slo && v < r.variants.size(); ++v) {
    for (std::size_t iy = 0; iy < r.y.size(); ++iy) {
      for (std::size_t ix = 0; ix < r.x.size(); ++ix) {
        auto lo = o.load;
        lo.overrides = cell_overrides(o, r.variants[v], r.x, r.y, ix, iy);
        try {
          (void)scenario::load_scenario(o.scenario_path, lo);
        } catch (const InputError& e) {
          std::vector<Diagnostic> ds = e.diagnostics();
          ds.push_back(Diagnostic{o.scenario_path, 0, 0, "",
                                  "in variant " + r.variants[v].name + " at " + r.x.name() + "=" +
                                      r.x.labels()[ix] + ", " + r.y.name() + "=" +
                                      r.y.labels()[iy]});
          throw InputError(std::move(ds));
        }
      }
    }
  }
  if (o.slo) {
    fill_slo(r, o, knob);
  } else {
    fill_grid(r, o);
  }
  return r;
}

}  // namespace kvsim::planner
