// kvsim compare: a scenario's KV-tier variants (or several scenario files) side by side.
#include <filesystem>
#include <memory>
#include <optional>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"
#include "sim/io/comparison.hpp"
#include "sim/io/summary.hpp"
#include "sim/planner/variants.hpp"
#include "sim/cluster/simulation.hpp"

namespace kvsim::cli {
namespace {

using planner::default_variants;
using planner::parse_variant;
using planner::Variant;

struct CompareOptions {
  std::vector<std::string> scenarios;
  std::vector<std::string> variants;
  std::string format = "table";
  std::optional<std::uint64_t> seed;
};

int cmd_compare(const CompareOptions& co, const CommonOptions& common) {
  // Several files: each file is a variant. One file: its variants (--variant, or the defaults).
  std::vector<std::pair<std::string, Variant>> runs;
  if (co.scenarios.size() > 1) {
    if (!co.variants.empty()) throw InputError("", 0, 0, "--variant takes one scenario file, got " + std::to_string(co.scenarios.size()));
    for (const auto& f : co.scenarios) {
      runs.push_back({f, Variant{std::filesystem::path(f).stem().string(), f, {}}});
    }
  } else {
    std::vector<Variant> variants;
    for (const auto& t : co.variants) variants.push_back(parse_variant(t));
    if (variants.empty()) variants = default_variants(scenario::load_scenario(co.scenarios.front(), load_options(common)));
    for (auto& v : variants) runs.push_back({co.scenarios.front(), std::move(v)});
  }
  std::vector<io::ComparisonRow> rows;
  io::RunInfo first_info;
  for (const auto& [file, v] : runs) {
    auto lo = load_options(common);
    if (co.seed) lo.overrides.push_back({"seed", std::to_string(*co.seed)});
    for (const auto& o : v.overrides) lo.overrides.push_back(o);
    const auto sc = scenario::load_scenario(file, lo);
    cluster::Simulation sim(sc);
    auto result = sim.run();
    if (rows.empty()) first_info = result.info;
    rows.push_back({v.name, v.description, io::summarize(result.requests, result.info), result.info});
  }
  std::ostringstream out;
  if (co.format == "json") io::write_comparison_json(out, rows);
  else if (co.format == "csv") io::write_comparison_csv(out, rows);
  else io::write_comparison_table(out, rows, first_info);
  std::cout << out.str();
  return 0;
}

Command add_compare(CLI::App& app, CommonOptions& common) {
  auto cmp = std::make_shared<CompareOptions>();
  auto* compare = app.add_subcommand("compare", "Run a scenario's KV-tier variants and compare them side by side");
  compare->add_option("scenarios", cmp->scenarios,
                      "Scenario YAML file, or several files to compare with each other")
      ->required()
      ->type_name("FILE...");
  compare->add_option("--variant", cmp->variants,
                      "A variant as 'NAME: path=value, path=value' (repeatable; default: vram-only, "
                      "dram, nvme-net when the hardware has a store, no-reuse). The first variant is "
                      "the baseline of the ratios.")
      ->type_name("SPEC");
  compare->add_option("--format", cmp->format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}));
  compare->add_option("--seed", cmp->seed, "Root random seed (default: the scenario's seed)");
  add_common(compare, common);
  return {compare, [cmp, &common] { return cmd_compare(*cmp, common); }};
}

const CommandRegistrar compare_registrar(20, add_compare);

}  // namespace
}  // namespace kvsim::cli
