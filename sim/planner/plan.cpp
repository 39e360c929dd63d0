#include "sim/planner/plan.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <mutex>
#include <semaphore>
#include <sstream>
#include <thread>

#include "sim/core/error.hpp"
#include "sim/io/summary.hpp"
#include "sim/io/text_format.hpp"
#include "sim/planner/check.hpp"
#include "sim/cluster/simulation.hpp"
#include "sim/scenario/units.hpp"

namespace kvsim::planner {
namespace {

std::string int_text(std::int64_t v) { return std::to_string(v); }

// The value at a dotted path of a YAML tree (list items by index), or an undefined node.
YAML::Node node_at(const YAML::Node& root, const std::string& path) {
  YAML::Node cur = YAML::Clone(root);
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto dot = path.find('.', start);
    const std::string part =
        path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (cur.IsSequence()) {
      std::size_t index = 0;
      try {
        index = static_cast<std::size_t>(std::stoul(part));
      } catch (const std::exception&) {
        return YAML::Node(YAML::NodeType::Undefined);
      }
      if (index >= cur.size()) return YAML::Node(YAML::NodeType::Undefined);
      cur = cur[index];
    } else if (cur.IsMap() && cur[part]) {
      cur = cur[part];
    } else {
      return YAML::Node(YAML::NodeType::Undefined);
    }
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return cur;
}

// At most `n` Simulations at once across every thread of a plan.
class Slots {
 public:
  explicit Slots(int n) : sem_(std::max(1, n)) {}
  void acquire() { sem_.acquire(); }
  void release() { sem_.release(); }

 private:
  std::counting_semaphore<4096> sem_;
};

struct Context {
  const PlanOptions& opt;
  std::uint64_t base_seed = 0;
  Slots slots;
  std::mutex progress_mutex;

  Context(const PlanOptions& o, std::uint64_t seed) : opt(o), base_seed(seed), slots(o.jobs) {}

  void report(const std::string& line) {
    if (!opt.progress) return;
    const std::lock_guard<std::mutex> lock(progress_mutex);
    opt.progress(line);
  }

  // Runs every seed of one point (in parallel) and aggregates them.
  Probe probe(std::int64_t load, const std::vector<scenario::Override>& overrides,
              const std::string& label) {
    const int n = std::max(1, opt.seeds);
    std::vector<MetricValues> values(static_cast<std::size_t>(n));
    std::vector<std::exception_ptr> errors(static_cast<std::size_t>(n));
    std::vector<std::thread> threads;
    threads.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      threads.emplace_back([this, i, &values, &errors, &overrides] {
        const auto idx = static_cast<std::size_t>(i);
        slots.acquire();
        try {
          scenario::LoadOptions lo = opt.load;
          for (const auto& o : overrides) lo.overrides.push_back(o);
          lo.overrides.push_back(
              {"seed", std::to_string(base_seed + static_cast<std::uint64_t>(i))});
          const auto sc = scenario::load_scenario(opt.scenario_path, lo);
          cluster::Simulation sim(sc);
          const auto run = sim.run();
          const double warmup =
              sc.workload.warmup_percentages.empty() ? 0.0 : sc.workload.warmup_percentages.front();
          values[idx] = metric_values(io::summarize(run.requests, run.info, warmup), run.info);
        } catch (...) {
          errors[idx] = std::current_exception();
        }
        slots.release();
      });
    }
    for (auto& t : threads) t.join();
    for (const auto& e : errors) {
      if (e) std::rethrow_exception(e);
    }
    Probe p = aggregate_seeds(load, values, opt.slo, opt.aggregate);
    std::string terms;
    for (const auto& t : p.slo.terms) {
      terms += " " + t.term->metric + "=" + format_metric_value(t.term->kind, t.value);
    }
    report(label + " load " + int_text(load) + ": " + (p.pass() ? "meets" : "misses") +
           " the SLO;" + terms);
    return p;
  }
};

std::vector<scenario::Override> concat(std::vector<scenario::Override> a,
                                       const std::vector<scenario::Override>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

void price_option(OptionResult& r, const scenario::Scenario& sc, const Prices& prices,
                  double users) {
  r.bill = bill_of(sc);
  r.cost = hourly_cost(r.bill, prices);
  const auto it = r.at_load.metrics.find("output_tokens_per_sec");
  const double tps = r.feasible && it != r.at_load.metrics.end() ? it->second : 0.0;
  r.usd_per_m_tokens = r.feasible ? usd_per_million_tokens(r.cost.usd_per_hour, tps) : 0.0;
  r.users_per_usd_hour = r.feasible ? users_per_usd_hour(users, r.cost.usd_per_hour) : 0.0;
}

std::string binding_of(const Probe* p) {
  if (p == nullptr || p->slo.binding < 0) return "";
  return p->slo.terms[static_cast<std::size_t>(p->slo.binding)].term->text;
}

OptionResult search_variant(Context& ctx, const Variant& v, const LoadKnob& knob) {
  const PlanOptions& opt = ctx.opt;
  OptionResult r;
  r.variant = v.name;
  r.description = v.description;
  r.hardware = "as the scenario";
  SearchOptions so;
  so.start = opt.start > 0 ? opt.start : knob.base;
  so.max_load = std::max<std::int64_t>(opt.max_load, 1);
  r.search = find_max_load(
      [&](std::int64_t load) {
        return ctx.probe(load, concat(v.overrides, knob.overrides(load)), v.name);
      },
      so);
  r.load = r.search.max_load;
  r.feasible = r.load > 0;
  if (const Probe* p = r.search.at_max()) r.at_load = *p;
  if (r.search.capped) {
    r.binding = "none up to " + int_text(r.load) + " (--max-load)";
  } else if (r.feasible) {
    r.binding = binding_of(r.search.at_first_fail());
  } else {
    r.binding =
        binding_of(r.search.at_first_fail()) + " (at load " + int_text(r.search.first_fail) + ")";
  }
  auto lo = opt.load;
  for (const auto& o : concat(v.overrides, knob.overrides(std::max<std::int64_t>(r.load, 1))))
    lo.overrides.push_back(o);
  price_option(r, scenario::load_scenario(opt.scenario_path, lo), opt.prices,
               static_cast<double>(r.load));
  return r;
}

OptionResult target_variant(Context& ctx, const Variant& v, const LoadKnob& knob) {
  const PlanOptions& opt = ctx.opt;
  const std::int64_t load = *opt.target_load;
  OptionResult r;
  r.variant = v.name;
  r.description = v.description;
  r.load = load;
  auto lo = opt.load;
  for (const auto& o : v.overrides) lo.overrides.push_back(o);
  const auto base = scenario::load_scenario(opt.scenario_path, lo);
  // Options in the order of their cost per hour (ties: the listed order), tried until one carries
  // the load: the first that does is the cheapest.
  struct Candidate {
    HardwareOption option;
    double usd_per_hour = 0;
    std::size_t order = 0;
  };
  std::vector<Candidate> candidates;
  const auto options = hardware_options(base, opt.max_gpus);
  for (std::size_t i = 0; i < options.size(); ++i) {
    auto olo = lo;
    for (const auto& o : options[i].overrides) olo.overrides.push_back(o);
    const auto sc = scenario::load_scenario(opt.scenario_path, olo);
    candidates.push_back({options[i], hourly_cost(bill_of(sc), opt.prices).usd_per_hour, i});
  }
  std::stable_sort(
      candidates.begin(), candidates.end(),
      [](const Candidate& a, const Candidate& b) { return a.usd_per_hour < b.usd_per_hour; });
  for (const auto& c : candidates) {
    Probe p = ctx.probe(load, concat(concat(v.overrides, c.option.overrides), knob.overrides(load)),
                        v.name + " on " + c.option.name);
    r.options.push_back(p);
    r.option_names.push_back(c.option.name);
    if (p.pass()) {
      r.feasible = true;
      r.at_load = p;
      r.hardware = c.option.name;
      auto flo = lo;
      for (const auto& o : c.option.overrides) flo.overrides.push_back(o);
      price_option(r, scenario::load_scenario(opt.scenario_path, flo), opt.prices,
                   static_cast<double>(load));
      return r;
    }
  }
  r.hardware = "none of the " + int_text(static_cast<std::int64_t>(candidates.size())) + " options";
  if (!r.options.empty()) r.binding = binding_of(&r.options.back());
  price_option(r, base, opt.prices, static_cast<double>(load));
  return r;
}

std::string pad(const std::string& s, std::size_t w, bool left) {
  return left ? io::pad_right(s, w) : io::pad_left(s, w);
}

}  // namespace

LoadKnob make_load_knob(const scenario::Scenario& sc, const std::string& path) {
  LoadKnob k;
  if (!path.empty()) {
    const YAML::Node root = YAML::Load(sc.resolved_yaml);
    const YAML::Node n = node_at(root, path);
    k.base = 1;
    if (n.IsDefined() && n.IsScalar()) {
      try {
        k.base = std::max<std::int64_t>(1, n.as<std::int64_t>());
      } catch (const YAML::Exception&) {
        throw InputError("", 0, 0,
                         "--load " + path + ": the scenario's value '" + n.as<std::string>() +
                             "' is not an integer");
      }
    }
    k.name = path;
    k.description = "the scenario value " + path;
    k.overrides = [path](std::int64_t load) {
      return std::vector<scenario::Override>{{path, int_text(load)}};
    };
    return k;
  }
  if (sc.workload.kind == workload::WorkloadSpec::Kind::kTrace) {
    const double ts = sc.workload.trace.time_scale;
    k.name = "rate_percent";
    k.description = "request rate in percent of the trace's (time_scale x 100 / load)";
    k.base = 100;
    k.overrides = [ts](std::int64_t load) {
      return std::vector<scenario::Override>{
          {"workload.trace.time_scale",
           scenario::shortest_double(ts * 100.0 / static_cast<double>(load))}};
    };
    return k;
  }
  const auto& c = sc.workload.clients;
  const double p0 = std::max(1, c.num_clients);
  const double k0 = c.max_active_conversations > 0 ? c.max_active_conversations : p0;
  const std::optional<int> conv0 =
      sc.workload.generation ? std::optional<int>(sc.workload.generation->num_conversations)
                             : std::nullopt;
  const std::int64_t req0 = c.max_num_requests;
  k.name = "clients";
  k.description = "benchmark clients (-p); max_active_conversations" +
                  std::string(conv0 ? ", num_conversations" : "") +
                  (req0 > 0 ? ", max_num_requests" : "") + " scaled in proportion";
  k.base = c.num_clients;
  k.overrides = [p0, k0, conv0, req0](std::int64_t load) {
    const double f = static_cast<double>(load) / p0;
    const auto active = std::max<std::int64_t>(load, std::llround(k0 * f));
    std::vector<scenario::Override> o = {
        {"workload.clients.num_clients", int_text(load)},
        {"workload.clients.max_active_conversations", int_text(active)}};
    if (conv0) {
      o.push_back({"workload.generation.num_conversations",
                   int_text(std::max<std::int64_t>(active, std::llround(*conv0 * f)))});
    }
    if (req0 > 0) {
      o.push_back(
          {"workload.clients.max_num_requests",
           int_text(std::max<std::int64_t>(1, std::llround(static_cast<double>(req0) * f)))});
    }
    return o;
  };
  return k;
}

std::vector<HardwareOption> hardware_options(const scenario::Scenario& variant, int max_gpus) {
  if (variant.hardware.servers.size() != 1) {
    throw InputError(
        "", 0, 0,
        "--target-load: the hardware search needs a scenario with one server group, not " +
            int_text(static_cast<std::int64_t>(variant.hardware.servers.size())));
  }
  const auto& server = variant.hardware.servers.front();
  const int per_server = server.gpus_per_server * server.count >= 1 ? server.gpus_per_server : 1;
  std::vector<std::pair<std::string, std::vector<scenario::Override>>> gpu_opts;
  for (int total = 1; total <= std::max(1, max_gpus); total *= 2) {
    const int gps = std::min(total, per_server);
    const int count = (total + gps - 1) / gps;
    const std::string name = count == 1 ? int_text(gps) + " GPU" + (gps > 1 ? "s" : "")
                                        : int_text(static_cast<std::int64_t>(count) * gps) + " GPUs (" + int_text(count) +
                                              " x " + int_text(gps) + ")";
    gpu_opts.push_back({name,
                        {{"hardware.servers.0.count", int_text(count)},
                         {"hardware.servers.0.gpus_per_server", int_text(gps)}}});
  }
  // Capacity choices for the first KV tier (when the variant has one).
  std::vector<std::pair<std::string, std::string>> caps;  // label, tiers YAML
  if (variant.kv_offload.connector != engine::KvConnector::kNone &&
      !variant.kv_offload.tiers.empty()) {
    const auto& tier = variant.kv_offload.tiers.front();
    const bool remote = tier.kind == engine::KvTierKind::kRemote;
    // A tier as the scenario's YAML writes it.
    const auto tier_yaml = [](const engine::KvTierSpec& t, const std::string& capacity) {
      return std::string("{kind: ") + engine::kv_tier_kind_name(t.kind) +
             ", capacity: " + capacity + ", eviction: " + engine::eviction_policy_name(t.eviction) +
             "}";
    };
    std::vector<std::string> sizes;
    if (remote) {
      sizes = {"500GB", "1TB", "2TB", "4TB", "8TB"};
    } else {
      sizes = {"16GiB", "32GiB", "64GiB", "128GiB", "256GiB"};
    }
    for (const auto& size : sizes) {
      if (tier.kind == engine::KvTierKind::kHostDram && server.host.dram.value > 0 &&
          scenario::parse_bytes(size).value > server.host.dram.value) {
        continue;
      }
      std::string tiers = "[" + tier_yaml(tier, size);
      for (std::size_t i = 1; i < variant.kv_offload.tiers.size(); ++i) {
        const auto& t = variant.kv_offload.tiers[i];
        tiers += ", " + tier_yaml(t, scenario::format_bytes(t.capacity));
      }
      tiers += "]";
      caps.push_back(
          {size + " " + engine::kv_tier_kind_name(tier.kind) + (remote ? "" : "/server"), tiers});
    }
  }
  std::vector<HardwareOption> out;
  for (const auto& [gname, gover] : gpu_opts) {
    if (caps.empty()) {
      out.push_back({gname, gover});
      continue;
    }
    for (const auto& [cname, tiers] : caps) {
      auto o = gover;
      o.push_back({"kv_offload.tiers", tiers});
      std::string name = gname;
      name += ", ";
      name += cname;
      out.push_back({name, o});
    }
  }
  return out;
}

PlanResult run_plan(const PlanOptions& options) {
  if (options.slo.terms.empty()) throw InputError("", 0, 0, "--slo: at least one term is needed");
  if (options.seeds < 1) throw InputError("", 0, 0, "--seeds must be at least 1");
  const auto base = scenario::load_scenario(options.scenario_path, options.load);
  PlanResult plan;
  plan.scenario_name = base.name;
  plan.knob = make_load_knob(base, options.load_path);
  plan.slo = options.slo;
  plan.seeds = options.seeds;
  plan.aggregate = options.aggregate;
  plan.target_load = options.target_load;
  if (options.target_load && *options.target_load < 1)
    throw InputError("", 0, 0, "--target-load must be at least 1");
  // Prices must cover the scenario's GPUs before any simulation runs.
  hourly_cost(bill_of(base), options.prices);

  const auto variants = options.variants.empty() ? default_variants(base) : options.variants;
  Context ctx(options, base.seed);
  std::vector<OptionResult> results(variants.size());
  std::vector<std::exception_ptr> errors(variants.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        results[i] = options.target_load ? target_variant(ctx, variants[i], plan.knob)
                                         : search_variant(ctx, variants[i], plan.knob);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  // Ranking: feasible first; then most users per $/h (max-load mode) or least $/h (target).
  std::stable_sort(results.begin(), results.end(),
                   [&](const OptionResult& a, const OptionResult& b) {
                     if (a.feasible != b.feasible) return a.feasible;
                     if (options.target_load) return a.cost.usd_per_hour < b.cost.usd_per_hour;
                     return a.users_per_usd_hour > b.users_per_usd_hour;
                   });
  plan.options = std::move(results);
  return plan;
}

std::string format_plan_table(const PlanResult& plan) {
  std::ostringstream os;
  const bool target = plan.target_load.has_value();
  os << "Scenario " << plan.scenario_name << "; SLO " << plan.slo.text()
     << "; load = " << plan.knob.name << " (" << plan.knob.description << "); " << plan.seeds
     << " seed" << (plan.seeds > 1 ? "s" : "") << " per point, "
     << (plan.aggregate == Aggregate::kMean ? "mean" : "worst") << " over seeds\n";
  if (target)
    os << "Cheapest hardware carrying " << plan.knob.name << " = " << *plan.target_load << ":\n";
  auto metric = [](const OptionResult& r, const char* key, MetricKind kind) {
    if (!r.feasible) return std::string("-");
    const auto it = r.at_load.metrics.find(key);
    return it == r.at_load.metrics.end() ? std::string("-") : format_metric_value(kind, it->second);
  };
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"#", "option", target ? "hardware" : "max " + plan.knob.name,
                  "binding constraint", "req/s", "TTFT p90", "TPOT p90", "$/h", "$/M tok",
                  "users/$h"});
  int rank = 0;
  for (const auto& r : plan.options) {
    ++rank;
    rows.push_back(
        {std::to_string(rank), r.variant,
         target ? r.hardware : (r.feasible ? int_text(r.load) : "none"),
         r.binding.empty() ? "-" : r.binding, metric(r, "requests_per_sec", MetricKind::kRate),
         metric(r, "ttft_ms_p90", MetricKind::kTimeMs),
         metric(r, "tpot_ms_p90", MetricKind::kTimeMs), io::format_fixed(r.cost.usd_per_hour, 2),
         r.feasible && std::isfinite(r.usd_per_m_tokens) ? io::format_fixed(r.usd_per_m_tokens, 2)
                                                         : "-",
         r.feasible ? io::format_fixed(r.users_per_usd_hour, 1) : "-"});
  }
  std::vector<std::size_t> width(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      const bool left = c == 1 || c == 2 || c == 3;
      line += (c ? "  " : "") + pad(row[c], width[c], left || c == 0);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    os << line << '\n';
  }
  for (const auto& r : plan.options) {
    os << "  " << r.variant << ": " << r.description << "; cost";
    for (const auto& [what, usd] : r.cost.items)
      os << " " << what << " $" << io::format_fixed(usd, 3) << "/h";
    os << '\n';
    if (!r.search.violations.empty()) {
      os << "    warning: not monotone at load";
      for (const auto l : r.search.violations) os << ' ' << l;
      os << " (noise: try more --seeds or --aggregate worst)\n";
    }
  }
  return os.str();
}

namespace {

io::Json metrics_json(const MetricValues& m) {
  io::Json out = io::Json::object();
  for (const auto& [name, value] : m) out[name] = io::json_number_or_null(value);
  return out;
}

io::Json probe_json(const Probe& p) {
  io::Json terms = io::Json::array();
  for (const auto& t : p.slo.terms) terms.push_back(term_result_json(t));
  return io::Json{{"load", p.load}, {"pass", p.pass()}, {"slo", std::move(terms)}};
}

}  // namespace

io::Json plan_json(const PlanResult& plan) {
  io::Json doc = io::json_document("plan");
  doc["scenario"] = plan.scenario_name;
  doc["slo"] = plan.slo.text();
  doc["load_knob"] = io::Json{{"name", plan.knob.name}, {"description", plan.knob.description}, {"base", plan.knob.base}};
  doc["seeds"] = plan.seeds;
  doc["aggregate"] = plan.aggregate == Aggregate::kMean ? "mean" : "worst";
  doc["mode"] = plan.target_load ? "target_load" : "max_load";
  doc["target_load"] = plan.target_load ? io::Json(*plan.target_load) : io::Json();
  io::Json options = io::Json::array();
  int rank = 0;
  for (const auto& r : plan.options) {
    io::Json o = io::Json::object();
    o["rank"] = ++rank;
    o["variant"] = r.variant;
    o["description"] = r.description;
    o["hardware"] = r.hardware;
    o["feasible"] = r.feasible;
    o["load"] = r.load;
    o["binding"] = r.binding.empty() ? io::Json() : io::Json(r.binding);
    o["capped"] = r.search.capped;
    o["first_fail"] = r.search.first_fail > 0 ? io::Json(r.search.first_fail) : io::Json();
    o["violations"] = r.search.violations;
    o["usd_per_hour"] = io::json_number_or_null(r.cost.usd_per_hour);
    io::Json items = io::Json::array();
    for (const auto& [what, usd] : r.cost.items) items.push_back(io::Json{{"item", what}, {"usd_per_hour", io::json_number_or_null(usd)}});
    o["cost_items"] = std::move(items);
    o["usd_per_m_tokens"] = r.feasible ? io::json_number_or_null(r.usd_per_m_tokens) : io::Json();
    o["users_per_usd_hour"] = r.feasible ? io::json_number_or_null(r.users_per_usd_hour) : io::Json();
    io::Json at_load_slo = io::Json::array();
    for (const auto& t : r.at_load.slo.terms) at_load_slo.push_back(term_result_json(t));
    o["slo_at_load"] = std::move(at_load_slo);
    o["metrics_at_load"] = metrics_json(r.at_load.metrics);
    io::Json probes = io::Json::array();
    for (const auto& p : r.search.probes) probes.push_back(probe_json(p));
    for (std::size_t i = 0; i < r.options.size(); ++i) {
      io::Json p = probe_json(r.options[i]);
      p["hardware"] = i < r.option_names.size() ? r.option_names[i] : std::string();
      probes.push_back(std::move(p));
    }
    o["probes"] = std::move(probes);
    options.push_back(std::move(o));
  }
  doc["options"] = std::move(options);
  return doc;
}

}  // namespace kvsim::planner
