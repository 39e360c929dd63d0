// kvsim._kvsim: the C++ side of the Python module kvsim (docs/python.md). It calls the library
// functions the command line calls (sim/cli/cmd_*.cpp) and hands back what the CLI would print
// in its JSON formats, as text the Python side parses with json.loads, so both give the same
// numbers. Every call releases the GIL while it loads and simulates.
//
// Errors: kvsim::InputError becomes kvsim.InputError (a ValueError) whose str() is the CLI's
// diagnostic text and whose .diagnostics lists (file, line, column, message); InternalError and
// any other C++ exception become a RuntimeError (pybind11 translates the rest).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "sim/analysis/cache_curve.hpp"
#include "sim/analysis/cache_options.hpp"
#include "sim/core/error.hpp"
#include "sim/core/version.hpp"
#include "sim/io/comparison.hpp"
#include "sim/io/sinks.hpp"
#include "sim/io/summary.hpp"
#include "sim/planner/variants.hpp"
#include "sim/scenario/catalog.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/cluster/simulation.hpp"
#include "sim/scenario/tables.hpp"
#include "sim/scenario/units.hpp"
#include "sim/scenario/yaml_codec.hpp"
#include "sim/workload/trace.hpp"

namespace py = pybind11;

namespace kvsim::python {
namespace {

// A scenario as the Python side passes it: a file, or YAML text (a YAML string or a dict
// serialised as JSON) whose relative paths resolve against base_dir (the current folder).
struct Source {
  std::string path;  // a file; empty: `text`
  std::string text;
  std::string display_name;  // names the text in diagnostics, e.g. "<string>"
  std::string base_dir;
};

// The environment as the kvsim program reads it (sim/cli/command.cpp apply_environment), read
// here at each call of the module, the libraries' entry: the catalog folder given, else
// KVSIM_CATALOG_DIR; the engines' fast paths unless KVSIM_PLAIN_STEPS=1.
std::string catalog_dir_or_environment(const std::string& given) {
  if (!given.empty()) return given;
  const char* env = std::getenv("KVSIM_CATALOG_DIR");
  return env != nullptr ? env : "";
}

bool fast_paths_from_environment() {
  const char* plain = std::getenv("KVSIM_PLAIN_STEPS");
  return plain == nullptr || std::string(plain) != "1";
}

// What `--set PATH=VALUE` (each "PATH=VALUE" as the CLI's parse_override reads it) and
// `--catalog DIR` give a command (sim/cli/command.cpp load_options).
scenario::LoadOptions load_options(const std::vector<std::string>& sets, const std::string& catalog_dir) {
  scenario::LoadOptions lo;
  for (const auto& s : sets) lo.overrides.push_back(scenario::parse_override(s));
  lo.catalog_dir = catalog_dir_or_environment(catalog_dir);
  lo.fast_paths = fast_paths_from_environment();
  return lo;
}

scenario::Scenario load(const Source& src, const scenario::LoadOptions& lo) {
  if (!src.path.empty()) return scenario::load_scenario(src.path, lo);
  auto with_base = lo;
  with_base.base_dir = src.base_dir;
  return scenario::load_scenario_text(src.text, src.display_name, with_base);
}

// ---- run ----------------------------------------------------------------------------------

struct RunOutput {
  std::string summary_json;   // io::write_summary_json, as `kvsim run --format json` prints it
  std::string requests_json;  // io::write_requests_json, as --requests-out writes it
  std::vector<std::string> notes;
};

// kvsim run (sim/cli/cmd_run.cpp cmd_run) without its output files: --trace FILE, --seed and
// --warmup-percent the same way, the summary always as JSON, the records kept in memory.
RunOutput run(const Source& src, const std::vector<std::string>& sets, std::optional<std::uint64_t> seed,
              const std::string& trace, std::optional<double> warmup_percent, const std::string& catalog_dir) {
  auto lo = load_options(sets, catalog_dir);
  if (!trace.empty()) {
    const auto abs = std::filesystem::absolute(trace).string();
    if (!std::filesystem::exists(abs)) throw InputError(trace, 0, 0, "trace: no such file");
    lo.overrides.push_back({"workload.kind", "trace"});
    lo.overrides.push_back({"workload.trace.file", abs});
  }
  if (seed) lo.overrides.push_back({"seed", std::to_string(*seed)});
  const auto sc = load(src, lo);
  cluster::Simulation sim(sc);
  RunOutput out;
  out.notes = sim.info().notes;
  const auto result = sim.run();
  // warmup_percent wins; otherwise the scenario's first warmup percentage (as the CLI).
  double warmup = 0;
  if (warmup_percent) {
    if (!(*warmup_percent >= 0 && *warmup_percent <= 100)) {
      throw InputError("", 0, 0, "warmup_percent: must lie in [0, 100]");
    }
    warmup = *warmup_percent;
  } else if (!sc.workload.warmup_percentages.empty()) {
    warmup = sc.workload.warmup_percentages.front();
  }
  const auto summary = io::summarize(result.requests, result.info, warmup);
  std::ostringstream s;
  io::write_summary_json(s, summary, result.info);
  out.summary_json = s.str();
  std::ostringstream r;
  io::write_requests_json(r, result.requests);
  out.requests_json = r.str();
  return out;
}

// ---- compare ------------------------------------------------------------------------------

// kvsim compare (sim/cli/cmd_compare.cpp cmd_compare): several files, each a variant named by
// its stem; or one scenario and its variants (given as 'NAME: path=value, ...', or the
// defaults). Returns write_comparison_json's text.
std::string compare(const std::vector<Source>& sources, const std::vector<std::string>& variant_specs,
                    const std::vector<std::string>& sets, std::optional<std::uint64_t> seed,
                    const std::string& catalog_dir) {
  if (sources.empty()) throw InputError("", 0, 0, "compare: no scenario given");
  std::vector<std::pair<const Source*, planner::Variant>> runs;
  if (sources.size() > 1) {
    if (!variant_specs.empty()) {
      throw InputError("", 0, 0, "variants take one scenario, got " + std::to_string(sources.size()));
    }
    for (const auto& s : sources) {
      runs.push_back({&s, planner::Variant{std::filesystem::path(s.path).stem().string(), s.path, {}}});
    }
  } else {
    std::vector<planner::Variant> variants;
    for (const auto& t : variant_specs) variants.push_back(planner::parse_variant(t));
    if (variants.empty()) variants = planner::default_variants(load(sources.front(), load_options(sets, catalog_dir)));
    for (auto& v : variants) runs.push_back({&sources.front(), std::move(v)});
  }
  std::vector<io::ComparisonRow> rows;
  for (const auto& [src, v] : runs) {
    auto lo = load_options(sets, catalog_dir);
    if (seed) lo.overrides.push_back({"seed", std::to_string(*seed)});
    for (const auto& o : v.overrides) lo.overrides.push_back(o);
    const auto sc = load(*src, lo);
    cluster::Simulation sim(sc);
    auto result = sim.run();
    rows.push_back({v.name, v.description, io::summarize(result.requests, result.info), result.info});
  }
  std::ostringstream out;
  io::write_comparison_json(out, rows);
  return out.str();
}

// ---- check-scenario -----------------------------------------------------------------------

struct CheckOutput {
  std::string name;
  std::int64_t gpu_kv_cache_tokens = 0;
  int num_engines = 0;
  std::string compute_model;
  std::vector<std::string> notes;
  std::vector<std::string> memory_breakdown;
  std::vector<std::string> step_times;
};

// kvsim check-scenario (sim/cli/cmd_run.cpp cmd_check): load, build (which checks the KV fit).
CheckOutput check_scenario(const Source& src, const std::vector<std::string>& sets, const std::string& catalog_dir) {
  const auto sc = load(src, load_options(sets, catalog_dir));
  const cluster::Simulation sim(sc);
  const auto& info = sim.info();
  return {sc.name,          info.gpu_kv_cache_tokens,  info.num_engines, info.compute_model,
          info.notes,       info.memory_breakdown,     info.step_times};
}

// ---- cache-curve --------------------------------------------------------------------------
// The request as `kvsim cache-curve` takes it (sim/analysis/cache_options.hpp parses both).

struct CurveRequest {
  std::string trace;
  std::vector<std::string> capacities;  // as the CLI's --capacities items
  std::vector<std::string> tiers;       // as the CLI's --tiers items, NAME=CAPACITY[:lru|arc]
  int block_tokens = 0;                 // 0: the trace format's own
  std::string model = "llama-3.1-8b";
  std::string policy = "lru";
  std::string rules = "published";
  std::string trace_format;
  workload::TraceWindow window;
  std::string catalog_dir;
};

// One row of `kvsim cache-curve --format json`: the curve's points, or the tiers and a "total".
struct CurveRow {
  std::string tier;  // empty for a curve point
  std::int64_t capacity_blocks = 0;
  double capacity_tokens = 0;
  double capacity_bytes = 0;
  std::string policy;
  std::string rules;  // curve rows only
  double token_hit_rate_percent = 0;
  double request_hit_rate_percent = 0;
  std::int64_t hit_tokens = 0;
};

std::vector<CurveRow> cache_curve(const CurveRequest& o) {
  const auto cat = scenario::load_catalog_for(catalog_dir_or_environment(o.catalog_dir), "");
  const auto it = cat.models.find(o.model);
  if (it == cat.models.end()) throw InputError("", 0, 0, "model: no model '" + o.model + "' in the catalog");
  const double bytes_per_token = it->second.kv_bytes_per_token().as_double();
  if (o.rules != "published" && o.rules != "vllm") {
    throw InputError("", 0, 0, "rules: unknown rules '" + o.rules + "' (published or vllm)");
  }
  workload::TraceReadOptions ro;
  if (!o.trace_format.empty())
    ro.format = workload::parse_trace_format(o.trace_format, "trace.format");
  ro.hash_block_tokens = o.block_tokens;
  workload::validate_window(o.window, "cache_curve");
  const auto trace = workload::select(workload::read_trace(o.trace, ro), o.window);
  if (trace.hash_block_tokens <= 0) {
    throw InputError(o.trace, 0, 0,
                     "a " + trace.format + " trace has no prefix information (every prompt is unique), so no "
                     "cache can hit: there is no curve to draw");
  }
  const int block_tokens = trace.hash_block_tokens;
  analysis::CurveOptions co;
  co.block_tokens = block_tokens;
  co.rules = o.rules == "vllm" ? analysis::CurveRules::kVllm : analysis::CurveRules::kPublished;
  co.policy = analysis::parse_eviction_policy(o.policy, "policy");

  std::vector<std::int64_t> capacities;
  for (const auto& c : o.capacities) {
    capacities.push_back(analysis::parse_capacity_blocks(c, "capacities", block_tokens, bytes_per_token));
  }
  const auto levels = analysis::parse_tier_levels(o.tiers, "tiers", block_tokens, bytes_per_token);
  if (!levels.empty() && !o.capacities.empty()) {
    throw InputError("", 0, 0, "capacities and tiers are exclusive: a tier stack has its own capacities");
  }
  if (capacities.empty()) capacities = analysis::default_curve_capacities();

  const auto row = [&](std::int64_t blocks) {
    CurveRow r;
    r.capacity_blocks = blocks;
    r.capacity_tokens = static_cast<double>(blocks) * block_tokens;
    r.capacity_bytes = r.capacity_tokens * bytes_per_token;
    return r;
  };
  std::vector<CurveRow> rows;
  if (!levels.empty()) {
    const auto stack = analysis::tier_stack_hits(trace.requests, levels, co);
    auto tiers = stack.tiers;
    tiers.push_back(stack.total);
    for (std::size_t i = 0; i < tiers.size(); ++i) {
      auto r = row(tiers[i].capacity_blocks);
      r.tier = tiers[i].name;
      r.policy = i < levels.size() ? engine::eviction_policy_name(levels[i].policy) : "-";
      r.token_hit_rate_percent = 100.0 * tiers[i].token_hit_rate;
      r.request_hit_rate_percent = 100.0 * tiers[i].request_hit_rate;
      r.hit_tokens = tiers[i].hit_tokens;
      rows.push_back(r);
    }
  } else {
    const auto curve = analysis::cache_curve(trace.requests, capacities, co);
    for (const auto& p : curve.points) {
      auto r = row(p.capacity_blocks);
      r.policy = o.policy;
      r.rules = o.rules;
      r.token_hit_rate_percent = 100.0 * p.token_hit_rate;
      r.request_hit_rate_percent = 100.0 * p.request_hit_rate;
      r.hit_tokens = p.hit_tokens;
      rows.push_back(r);
    }
  }
  return rows;
}

py::list curve_rows(const std::vector<CurveRow>& rows) {
  py::list out;
  for (const auto& r : rows) {
    py::dict d;
    if (!r.tier.empty()) d["tier"] = r.tier;
    d["capacity_blocks"] = r.capacity_blocks;
    d["capacity_tokens"] = std::llround(r.capacity_tokens);
    d["capacity_bytes"] = std::llround(r.capacity_bytes);
    d["policy"] = r.policy;
    if (r.tier.empty()) d["rules"] = r.rules;
    d["token_hit_rate_percent"] = r.token_hit_rate_percent;
    d["request_hit_rate_percent"] = r.request_hit_rate_percent;
    d["hit_tokens"] = r.hit_tokens;
    out.append(d);
  }
  return out;
}

// ---- catalog ------------------------------------------------------------------------------

// A YAML scalar as the Python value it reads as: an integer, a float, a bool, None, else text
// (quantities with units, such as "24GiB", stay text, as the catalog files write them).
py::object yaml_to_python(const YAML::Node& node) {
  if (node.IsMap()) {
    py::dict d;
    for (const auto& kv : node) d[py::str(kv.first.as<std::string>())] = yaml_to_python(kv.second);
    return d;
  }
  if (node.IsSequence()) {
    py::list l;
    for (const auto& item : node) l.append(yaml_to_python(item));
    return l;
  }
  if (!node.IsScalar()) return py::none();
  const auto text = node.Scalar();
  if (node.Tag() != "!") {  // "!" marks a quoted scalar: always text
    if (text == "true") return py::bool_(true);
    if (text == "false") return py::bool_(false);
    if (text == "~" || text == "null") return py::none();
    try {
      std::size_t pos = 0;
      const long long i = std::stoll(text, &pos);
      if (pos == text.size()) return py::int_(i);
    } catch (const std::exception&) {
    }
    try {
      std::size_t pos = 0;
      const double v = std::stod(text, &pos);
      if (pos == text.size()) return py::float_(v);
    } catch (const std::exception&) {
    }
  }
  return py::str(text);
}

template <class Map>
py::dict catalog_section(const Map& entries, const scenario::StructTable& table) {
  py::dict out;
  for (const auto& [name, entry] : entries) {
    out[py::str(name)] = yaml_to_python(YAML::Load(scenario::detail::emit_yaml(table, &entry)));
  }
  return out;
}

py::dict catalog(const std::string& dir) {
  scenario::Catalog cat;
  {
    const py::gil_scoped_release release;
    cat = scenario::load_catalog_for(catalog_dir_or_environment(dir), "");
  }
  py::dict out;
  out["dir"] = cat.dir;
  out["gpus"] = catalog_section(cat.gpus, scenario::gpu_table());
  out["models"] = catalog_section(cat.models, scenario::model_table());
  out["drives"] = catalog_section(cat.drives, scenario::nvme_drive_table());
  out["storage"] = catalog_section(cat.storage, scenario::storage_node_table());
  return out;
}

// ---- errors -------------------------------------------------------------------------------

// The Python class of kvsim.InputError, created once at import and kept for the process's life
// (a module is never unloaded).
PyObject* input_error_type = nullptr;

void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const InputError& e) {
    py::list diagnostics;
    for (const auto& d : e.diagnostics()) {
      const std::string message = d.path.empty() ? d.message : d.path + ": " + d.message;
      diagnostics.append(py::make_tuple(d.file, d.line, d.column, message));
    }
    py::object type = py::reinterpret_borrow<py::object>(input_error_type);
    py::object exc = type(py::str(e.what()));
    exc.attr("diagnostics") = diagnostics;
    PyErr_SetObject(input_error_type, exc.ptr());
  } catch (const InternalError& e) {
    PyErr_SetString(PyExc_RuntimeError, (std::string("kvsim: internal error: ") + e.what()).c_str());
  }
}

Source source_from(const py::dict& d) {
  Source s;
  s.path = d.contains("path") ? d["path"].cast<std::string>() : std::string();
  s.text = d.contains("text") ? d["text"].cast<std::string>() : std::string();
  s.display_name = d.contains("display_name") ? d["display_name"].cast<std::string>() : std::string("<string>");
  s.base_dir = d.contains("base_dir") ? d["base_dir"].cast<std::string>() : std::string();
  return s;
}

}  // namespace
}  // namespace kvsim::python

PYBIND11_MODULE(_kvsim, m) {
  using namespace kvsim::python;
  m.doc() = "The C++ side of the kvsim Python module; use the functions of the package kvsim.";
  m.attr("__version__") = kvsim::kVersion;

  // kvsim.InputError, a ValueError with the diagnostics as a list of (file, line, column, message).
  input_error_type = PyErr_NewExceptionWithDoc(
      "kvsim.InputError",
      "Bad input (a scenario, a trace, an argument). str() is the command line's diagnostic text "
      "(file:line:col: error: ...); .diagnostics lists each as (file, line, column, message), "
      "with line and column 0 where unknown and file empty for an argument.",
      PyExc_ValueError, nullptr);
  if (input_error_type == nullptr) throw py::error_already_set();
  m.attr("InputError") = py::reinterpret_borrow<py::object>(input_error_type);
  py::register_exception_translator(&translate);

  m.def(
      "run",
      [](const py::dict& source, const std::vector<std::string>& sets, std::optional<std::uint64_t> seed,
         const std::string& trace, std::optional<double> warmup_percent, const std::string& catalog_dir) {
        const Source src = source_from(source);
        RunOutput out;
        {
          const py::gil_scoped_release release;
          out = run(src, sets, seed, trace, warmup_percent, catalog_dir);
        }
        return py::make_tuple(py::bytes(out.summary_json), py::bytes(out.requests_json), out.notes);
      },
      py::arg("source"), py::arg("sets"), py::arg("seed"), py::arg("trace"), py::arg("warmup_percent"),
      py::arg("catalog_dir"),
      "Runs a scenario as `kvsim run`; returns (summary JSON, requests JSON, notes).");
  m.def(
      "compare",
      [](const py::list& sources, const std::vector<std::string>& variants, const std::vector<std::string>& sets,
         std::optional<std::uint64_t> seed, const std::string& catalog_dir) {
        std::vector<Source> srcs;
        for (const auto& s : sources) srcs.push_back(source_from(s.cast<py::dict>()));
        std::string json;
        {
          const py::gil_scoped_release release;
          json = compare(srcs, variants, sets, seed, catalog_dir);
        }
        return py::bytes(json);
      },
      py::arg("sources"), py::arg("variants"), py::arg("sets"), py::arg("seed"), py::arg("catalog_dir"),
      "Runs variants as `kvsim compare`; returns its JSON rows.");
  m.def(
      "check_scenario",
      [](const py::dict& source, const std::vector<std::string>& sets, const std::string& catalog_dir) {
        const Source src = source_from(source);
        CheckOutput c;
        {
          const py::gil_scoped_release release;
          c = check_scenario(src, sets, catalog_dir);
        }
        py::dict d;
        d["name"] = c.name;
        d["gpu_kv_cache_tokens"] = c.gpu_kv_cache_tokens;
        d["num_engines"] = c.num_engines;
        d["compute_model"] = c.compute_model;
        d["notes"] = c.notes;
        d["memory_breakdown"] = c.memory_breakdown;
        d["step_times"] = c.step_times;
        return d;
      },
      py::arg("source"), py::arg("sets"), py::arg("catalog_dir"), "Checks a scenario as `kvsim check-scenario`.");
  m.def(
      "cache_curve",
      [](const std::string& trace, const std::vector<std::string>& capacities, const std::vector<std::string>& tiers,
         int block_tokens, const std::string& model, const std::string& policy, const std::string& rules,
         const std::string& trace_format, std::optional<double> time_scale, std::optional<double> rate_scale,
         std::optional<double> start_s, std::optional<double> duration_s, std::optional<std::int64_t> max_requests,
         const std::string& catalog_dir) {
        CurveRequest o;
        o.trace = trace;
        o.capacities = capacities;
        o.tiers = tiers;
        o.block_tokens = block_tokens;
        o.model = model;
        o.policy = policy;
        o.rules = rules;
        o.trace_format = trace_format;
        if (time_scale) o.window.time_scale = *time_scale;
        if (rate_scale) o.window.rate_scale = *rate_scale;
        if (start_s) o.window.start_s = *start_s;
        if (duration_s) o.window.duration_s = *duration_s;
        if (max_requests) o.window.max_requests = *max_requests;
        o.catalog_dir = catalog_dir;
        std::vector<CurveRow> rows;
        {
          const py::gil_scoped_release release;
          rows = cache_curve(o);
        }
        return curve_rows(rows);
      },
      py::arg("trace"), py::arg("capacities"), py::arg("tiers"), py::arg("block_tokens"), py::arg("model"),
      py::arg("policy"), py::arg("rules"), py::arg("trace_format"), py::arg("time_scale"), py::arg("rate_scale"),
      py::arg("start"), py::arg("duration"), py::arg("max_requests"), py::arg("catalog_dir"),
      "Prefix-cache hit rate against capacity as `kvsim cache-curve`; returns its rows.");
  m.def("catalog", &catalog, py::arg("dir"), "The catalog's entries as `kvsim catalog` lists them.");
}
