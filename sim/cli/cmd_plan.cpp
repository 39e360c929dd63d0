// kvsim plan: per KV-tier variant, the largest load that meets an SLO and what it costs; or,
// with --target-load, the cheapest hardware that carries a load (sim/planner/plan.hpp).
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"
#include "sim/io/atomic_file.hpp"
#include "sim/planner/plan.hpp"
#include "sim/planner/report_html.hpp"

namespace kvsim::cli {
namespace {

struct PlanCliOptions {
  std::string scenario;
  std::string slo;
  std::vector<std::string> variants;
  std::string load_path;
  int seeds = 2;
  std::string aggregate = "mean";
  std::int64_t start = 0;
  std::int64_t max_load = 1024;
  std::int64_t target_load = 0;
  int max_gpus = 16;
  int jobs = 0;
  std::string html;
  std::string costs;
  std::vector<std::string> prices;
  bool quiet = false;
  std::string format = "table";
};

int cmd_plan(const PlanCliOptions& o, const CommonOptions& common) {
  planner::PlanOptions po;
  po.scenario_path = o.scenario;
  po.load = load_options(common);
  po.slo = planner::parse_slo(o.slo);
  for (const auto& v : o.variants) po.variants.push_back(planner::parse_variant(v));
  po.seeds = o.seeds;
  po.aggregate = o.aggregate == "worst" ? planner::Aggregate::kWorst : planner::Aggregate::kMean;
  po.load_path = o.load_path;
  po.start = o.start;
  po.max_load = o.max_load;
  if (o.target_load > 0) po.target_load = o.target_load;
  po.max_gpus = o.max_gpus;
  po.jobs =
      o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  const std::string catalog = scenario::resolve_catalog_dir(common.catalog_dir, o.scenario);
  po.prices =
      planner::load_prices(o.costs.empty() ? planner::default_prices_path(catalog) : o.costs);
  for (const auto& p : o.prices) planner::apply_price_override(po.prices, p);
  if (!o.quiet)
    po.progress = [](const std::string& line) { std::cerr << "plan: " << line << '\n'; };
  const auto plan = planner::run_plan(po);
  if (o.format == "json") {
    io::write_json(std::cout, planner::plan_json(plan), 3);
  } else {
    std::cout << planner::format_plan_table(plan);
  }
  if (!o.html.empty()) {
    io::AtomicFile file(o.html);
    planner::write_plan_html(file.stream(), plan);
    file.commit();
    // stderr with --format json, so stdout stays one JSON document
    (o.format == "json" ? std::cerr : std::cout) << "HTML report: " << o.html << '\n';
  }
  return 0;
}

Command add_plan(CLI::App& app, CommonOptions& common) {
  auto o = std::make_shared<PlanCliOptions>();
  auto* cmd = app.add_subcommand(
      "plan", "Find the largest load each KV-tier variant carries within an SLO, and its cost");
  cmd->add_option("scenario", o->scenario, "Scenario YAML file")->required()->type_name("FILE");
  cmd->add_option("--slo", o->slo,
                  "SLO terms on summary metrics, e.g. "
                  "\"ttft_p90<=2s,tpot_p90<=100ms,request_throughput>=1\"")
      ->required()
      ->type_name("TERMS");
  cmd->add_option("--variant", o->variants,
                  "A variant as 'NAME: path=value, ...' (repeatable; default: the variants of "
                  "kvsim compare)")
      ->type_name("SPEC");
  cmd->add_option(
         "--load", o->load_path,
         "Scenario path of the integer load knob (default: workload.clients.num_clients with the "
         "conversations scaled along, or the trace's rate in percent)")
      ->type_name("PATH");
  cmd->add_option("--seeds", o->seeds, "Seeds per probed load (seed, seed+1, ...)")
      ->check(CLI::Range(1, 100));
  cmd->add_option("--aggregate", o->aggregate,
                  "How seeds combine: mean of each metric, or the worst value per SLO term")
      ->check(CLI::IsMember({"mean", "worst"}));
  cmd->add_option("--start", o->start, "First load probed (default: the scenario's own)")
      ->check(CLI::Range(1, 1 << 30));
  cmd->add_option("--max-load", o->max_load, "Largest load probed")->check(CLI::Range(1, 1 << 30));
  cmd->add_option(
         "--target-load", o->target_load,
         "Instead: the cheapest hardware (GPUs, servers, KV tier capacity) that carries this load")
      ->check(CLI::Range(1, 1 << 30));
  cmd->add_option("--max-gpus", o->max_gpus, "Largest GPU count tried with --target-load")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("-j,--jobs", o->jobs, "Simulations run at once (default: the machine's cores)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--html", o->html, "Write a self-contained HTML report here")->type_name("FILE");
  cmd->add_option("--costs", o->costs, "Price file (default: costs.yaml in the catalog)")
      ->type_name("FILE");
  cmd->add_option("--price", o->prices,
                  "Override a price: gpus.NAME=$/h, server=$/h, dram=$/GB, nvme=$/TB, "
                  "storage_node=$, network=$, "
                  "amortisation_hours=H (repeatable)")
      ->type_name("KEY=VALUE");
  cmd->add_flag("-q,--quiet", o->quiet, "No progress lines on stderr");
  cmd->add_option("--format", o->format, "Output format")->check(CLI::IsMember({"table", "json"}));
  add_common(cmd, common);
  return {cmd, [o, &common] { return cmd_plan(*o, common); }};
}

const CommandRegistrar plan_registrar(45, add_plan);

}  // namespace
}  // namespace kvsim::cli
