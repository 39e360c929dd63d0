#include "sim/planner/check.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <mutex>
#include <semaphore>
#include <sstream>
#include <thread>

#include "sim/core/error.hpp"
#include "sim/io/summary.hpp"
#include "sim/io/svg_chart.hpp"
#include "sim/planner/capacity_search.hpp"
#include "sim/planner/yaml_fail.hpp"
#include "sim/cluster/simulation.hpp"
#include "sim/scenario/suggest.hpp"

namespace kvsim::planner {
namespace {

std::string scalar(const std::string& file, const YAML::Node& node, const std::string& path) {
  if (!node.IsScalar()) fail_at(file, node, path, "expected a string");
  return node.as<std::string>();
}

// An SLO text parsed with its location on error.
Slo slo_at(const std::string& file, const YAML::Node& node, const std::string& path) {
  try {
    return parse_slo(scalar(file, node, path), "slo");
  } catch (const InputError& e) {
    fail_at(file, node, path, e.diagnostics().front().message);
  }
}

std::string op_text(Comparison op) {
  switch (op) {
    case Comparison::kLessEqual:
      return "<=";
    case Comparison::kLess:
      return "<";
    case Comparison::kGreaterEqual:
      return ">=";
    case Comparison::kGreater:
      return ">";
  }
  return "";
}

std::string term_line(const TermResult& t) {
  return t.term->metric + " = " + format_metric_value(t.term->kind, t.value) + " (" +
         op_text(t.term->op) + " " + format_metric_value(t.term->kind, t.term->threshold) + ")";
}

}  // namespace

PlanFile load_plan_file(const std::string& path, const scenario::LoadOptions& base) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw InputError(path, 0, 0, "cannot read the plan file");
  } catch (const YAML::ParserException& e) {
    throw InputError(path, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
  if (!root.IsMap()) fail_at(path, root, "", "expected a map with name, slo, seeds and scenarios");
  PlanFile plan;
  plan.path = path;
  plan.name = std::filesystem::path(path).stem().string();
  std::optional<Slo> default_slo;
  YAML::Node scenarios;
  const std::vector<std::string> keys = {"name", "seeds", "slo", "scenarios"};
  for (const auto& kv : root) {
    const auto key = kv.first.as<std::string>();
    if (key == "name") {
      plan.name = scalar(path, kv.second, key);
    } else if (key == "seeds") {
      try {
        plan.seeds = kv.second.as<int>();
      } catch (const YAML::Exception&) {
        fail_at(path, kv.second, key, "expected an integer");
      }
      if (plan.seeds < 1 || plan.seeds > 100) fail_at(path, kv.second, key, "must lie in [1, 100]");
    } else if (key == "slo") {
      default_slo = slo_at(path, kv.second, key);
    } else if (key == "scenarios") {
      scenarios = kv.second;
    } else {
      const auto near = scenario::closest_name(key, keys);
      fail_at(path, kv.first, key,
              "unknown key" + (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                  "; valid keys: " + scenario::join_names(keys));
    }
  }
  if (!scenarios.IsDefined() || !scenarios.IsSequence() || scenarios.size() == 0) {
    fail_at(path, scenarios.IsDefined() ? scenarios : root, "scenarios",
            "expected a non-empty list of scenarios");
  }
  const auto dir = std::filesystem::path(path).parent_path();
  const std::vector<std::string> entry_keys = {"name", "file", "set", "slo"};
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    const YAML::Node e = scenarios[i];
    const std::string where = "scenarios." + std::to_string(i);
    if (!e.IsMap()) fail_at(path, e, where, "expected a map with file, set and slo");
    PlanEntry entry;
    bool has_slo = false;
    YAML::Node file_node;
    for (const auto& kv : e) {
      const auto key = kv.first.as<std::string>();
      if (key == "name") {
        entry.name = scalar(path, kv.second, where + ".name");
      } else if (key == "file") {
        file_node = kv.second;
        const auto f = std::filesystem::path(scalar(path, kv.second, where + ".file"));
        entry.file = (f.is_absolute() ? f : dir / f).lexically_normal().string();
      } else if (key == "set") {
        if (!kv.second.IsSequence())
          fail_at(path, kv.second, where + ".set", "expected a list of PATH=VALUE");
        for (const auto& s : kv.second) {
          try {
            entry.overrides.push_back(scenario::parse_override(scalar(path, s, where + ".set")));
          } catch (const InputError& err) {
            fail_at(path, s, where + ".set", err.diagnostics().front().message);
          }
        }
      } else if (key == "slo") {
        entry.slo = slo_at(path, kv.second, where + ".slo");
        has_slo = true;
      } else {
        const auto near = scenario::closest_name(key, entry_keys);
        std::string key_path = where;
        key_path += "." + key;
        fail_at(path, kv.first, key_path,
                "unknown key" + (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                    "; valid keys: " + scenario::join_names(entry_keys));
      }
    }
    if (entry.file.empty()) fail_at(path, e, where + ".file", "missing");
    if (!has_slo) {
      if (!default_slo)
        fail_at(path, e, where + ".slo", "missing, and the plan has no default slo");
      entry.slo = *default_slo;
    }
    if (entry.name.empty()) entry.name = std::filesystem::path(entry.file).stem().string();
    // The scenario must load; its own diagnostics carry its file:line:col.
    auto lo = base;
    for (const auto& o : entry.overrides) lo.overrides.push_back(o);
    if (!std::filesystem::exists(entry.file))
      fail_at(path, file_node, where + ".file", "no such file: " + entry.file);
    scenario::load_scenario(entry.file, lo);
    plan.entries.push_back(std::move(entry));
  }
  return plan;
}

CheckResult run_check(const PlanFile& plan, const scenario::LoadOptions& base, int jobs,
                      const std::function<void(const std::string&)>& progress) {
  const std::size_t n = plan.entries.size();
  const auto seeds = static_cast<std::size_t>(std::max(1, plan.seeds));
  std::vector<std::vector<MetricValues>> values(n, std::vector<MetricValues>(seeds));
  std::vector<std::exception_ptr> errors(n * seeds);
  std::counting_semaphore<4096> slots(std::max(1, jobs));
  std::mutex progress_mutex;
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t s = 0; s < seeds; ++s) {
      threads.emplace_back([&, i, s] {
        slots.acquire();
        try {
          auto lo = base;
          for (const auto& o : plan.entries[i].overrides) lo.overrides.push_back(o);
          if (seeds > 1) {
            const auto sc0 = scenario::load_scenario(plan.entries[i].file, lo);
            lo.overrides.push_back({"seed", std::to_string(sc0.seed + s)});
          }
          const auto sc = scenario::load_scenario(plan.entries[i].file, lo);
          cluster::Simulation sim(sc);
          const auto run = sim.run();
          const double warmup =
              sc.workload.warmup_percentages.empty() ? 0.0 : sc.workload.warmup_percentages.front();
          values[i][s] = metric_values(io::summarize(run.requests, run.info, warmup), run.info);
          if (progress) {
            const std::lock_guard<std::mutex> lock(progress_mutex);
            progress(plan.entries[i].name +
                     (seeds > 1 ? " seed " + std::to_string(sc.seed) : std::string()) + " done");
          }
        } catch (...) {
          errors[i * seeds + s] = std::current_exception();
        }
        slots.release();
      });
    }
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  CheckResult r;
  for (std::size_t i = 0; i < n; ++i) {
    const Probe p = aggregate_seeds(0, values[i], plan.entries[i].slo, Aggregate::kMean);
    EntryResult er;
    er.entry = &plan.entries[i];
    er.slo = p.slo;
    er.metrics = p.metrics;
    for (const auto& t : er.slo.terms) {
      ++r.terms;
      if (!t.pass) ++r.failures;
    }
    r.entries.push_back(std::move(er));
  }
  return r;
}

std::string format_check(const CheckResult& result) {
  std::ostringstream os;
  for (const auto& e : result.entries) {
    for (const auto& t : e.slo.terms) {
      os << (t.pass ? "PASS " : "FAIL ") << e.entry->name << "  " << term_line(t) << '\n';
    }
  }
  os << (result.pass() ? "All " : "") << result.terms - result.failures << " of " << result.terms
     << " SLO terms met";
  if (!result.pass()) os << "; " << result.failures << " missed";
  os << '\n';
  return os.str();
}

io::Json term_result_json(const TermResult& t) {
  return io::Json{{"term", t.term->text},
                  {"metric", t.term->metric},
                  {"op", op_text(t.term->op)},
                  {"threshold", io::json_number_or_null(t.term->threshold)},
                  {"value", io::json_number_or_null(t.value)},
                  {"pass", t.pass},
                  {"slack", io::json_number_or_null(t.slack)}};
}

io::Json check_json(const PlanFile& plan, const CheckResult& result) {
  io::Json doc = io::json_document("check");
  doc["plan"] = plan.name;
  doc["plan_file"] = plan.path;
  doc["pass"] = result.pass();
  doc["terms"] = result.terms;
  doc["failures"] = result.failures;
  io::Json scenarios = io::Json::array();
  for (const auto& e : result.entries) {
    io::Json terms = io::Json::array();
    for (const auto& t : e.slo.terms) terms.push_back(term_result_json(t));
    io::Json entry = io::Json::object();
    entry["name"] = e.entry->name;
    entry["file"] = e.entry->file;
    entry["pass"] = e.slo.pass;
    entry["terms"] = std::move(terms);
    scenarios.push_back(std::move(entry));
  }
  doc["scenarios"] = std::move(scenarios);
  return doc;
}

void write_junit(std::ostream& os, const PlanFile& plan, const CheckResult& result) {
  using io::xml_escape;
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  os << "<testsuites name=\"kvsim check\" tests=\"" << result.terms << "\" failures=\""
     << result.failures << "\" errors=\"0\">\n";
  os << "  <testsuite name=\"" << xml_escape(plan.name) << "\" tests=\"" << result.terms
     << "\" failures=\"" << result.failures << "\" errors=\"0\" skipped=\"0\">\n";
  for (const auto& e : result.entries) {
    for (const auto& t : e.slo.terms) {
      os << "    <testcase classname=\"" << xml_escape(plan.name + "." + e.entry->name)
         << "\" name=\"" << xml_escape(t.term->text) << "\"";
      if (t.pass) {
        os << "/>\n";
      } else {
        os << ">\n      <failure message=\"" << xml_escape("SLO missed: " + term_line(t))
           << "\" type=\"SloMissed\">" << xml_escape(e.entry->file + ": " + term_line(t))
           << "</failure>\n    </testcase>\n";
      }
    }
  }
  os << "  </testsuite>\n</testsuites>\n";
}

}  // namespace kvsim::planner
