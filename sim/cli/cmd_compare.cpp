// kvsim compare: a scenario's KV-tier variants (or several scenario files) side by side.
#include <filesystem>
#include <memory>
#include <optional>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "command.hpp"
#include "kvsim/core/error.hpp"
#include "kvsim/io/comparison.hpp"
#include "kvsim/io/summary.hpp"
#include "kvsim/scenario/simulation.hpp"

namespace kvsim::cli {
namespace {

struct Variant {
  std::string name;
  std::string description;
  std::vector<scenario::Override> overrides;
};

// "NAME: path=value, path=value" (the part after the colon may be empty).
Variant parse_variant(const std::string& text) {
  const auto colon = text.find(':');
  Variant v;
  v.name = text.substr(0, colon);
  while (!v.name.empty() && v.name.back() == ' ') v.name.pop_back();
  if (v.name.empty()) throw InputError("", 0, 0, "--variant '" + text + "': expected NAME: path=value, ...");
  if (colon != std::string::npos) {
    std::string rest = text.substr(colon + 1);
    // The next comma outside brackets and braces (values may be YAML flow lists and maps).
    auto next_comma = [&rest](std::size_t from) {
      int depth = 0;
      for (std::size_t i = from; i < rest.size(); ++i) {
        const char ch = rest[i];
        if (ch == '[' || ch == '{') ++depth;
        if (ch == ']' || ch == '}') --depth;
        if (ch == ',' && depth == 0) return i;
      }
      return std::string::npos;
    };
    std::size_t start = 0;
    while (start <= rest.size()) {
      const auto comma = next_comma(start);
      std::string part = rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      const auto b = part.find_first_not_of(' ');
      const auto e = part.find_last_not_of(' ');
      if (b != std::string::npos) {
        part = part.substr(b, e - b + 1);
        v.overrides.push_back(scenario::parse_override(part));
        v.description += (v.description.empty() ? "" : ", ") + part;
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (v.description.empty()) v.description = "the scenario as written";
  return v;
}

// The KV-tier variants of a scenario: the GPU's prefix cache alone (VRAM only); a host DRAM tier
// through vLLM's native offloading; the network store, when the hardware has one; and no KV
// reuse at all (every turn recomputes its history).
std::vector<Variant> default_variants(const scenario::Scenario& sc) {
  std::vector<Variant> v = {
      {"vram-only", "GPU prefix cache only", {{"kv_offload.connector", "none"}, {"kv_offload.tiers", "[]"}}},
      {"dram", "native offloading to 64 GiB of host DRAM per server",
       {{"kv_offload.connector", "native"}, {"kv_offload.tiers", "[{kind: host_dram, capacity: 64GiB}]"}}},
  };
  bool nics = true;
  for (const auto& s : sc.hardware.servers) nics = nics && s.nic.rate.value > 0;
  if (sc.hardware.remote_store && nics) {
    v.push_back({"nvme-net", "native offloading to the network NVMe store (8 TB)",
                 {{"kv_offload.connector", "native"}, {"kv_offload.tiers", "[{kind: remote, capacity: 8TB}]"}}});
  }
  v.push_back({"no-reuse", "prefix caching off: every turn recomputes its history",
               {{"engine.enable_prefix_caching", "false"}, {"kv_offload.connector", "none"}, {"kv_offload.tiers", "[]"}}});
  return v;
}

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
    scenario::Simulation sim(sc);
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
