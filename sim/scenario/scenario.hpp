#pragma once
// A scenario: everything one simulated run needs, decoded from YAML into typed specs owned by
// their modules. load_scenario() reads a file, applies `--set` overrides, pulls catalog presets
// and reports every problem at once as file:line:col diagnostics (InputError).
#include <cstdint>
#include <string>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "models/compute_spec.hpp"
#include "models/model_spec.hpp"
#include "sim/engine/engine_config.hpp"
#include "sim/engine/offload_config.hpp"
#include "sim/scenario/catalog.hpp"
#include "sim/workload/workload_spec.hpp"

namespace kvsim::scenario {

// How requests are assigned to engine replicas (the scenario's `routing:` section); the router
// that follows it is sim/cluster/router.hpp, which states each policy.
enum class RoutingPolicy : std::uint8_t { kSessionAffinity, kRoundRobin, kLeastLoaded, kPrefixAware };
struct RouterSpec {
  RoutingPolicy policy = RoutingPolicy::kSessionAffinity;
};

// How `kvsim run` writes the summary (the scenario's output.format).
enum class OutputFormat : std::uint8_t { kTable, kJson, kCsv };

struct OutputSpec {
  OutputFormat format = OutputFormat::kTable;
  std::string requests_out;      // per-request JSON array, empty = none
  std::string timeseries_out;    // per-step CSV, empty = none
};

struct Scenario {
  std::string name;
  std::string description;
  std::uint64_t seed = 0;
  hw::HardwareSpec hardware;
  models::ModelSpec model;
  engine::EngineConfig engine;
  engine::KvOffloadSpec kv_offload;
  RouterSpec routing;
  models::ComputeSpec compute;
  workload::WorkloadSpec workload;
  OutputSpec output;
  // Where it came from, and the resolved tree (after overrides and presets) as YAML text.
  std::string source_file;
  std::string resolved_yaml;
  // The folder of shipped fitted profiles compute.kind auto chooses from (LoadOptions).
  std::string profiles_dir;
};

// One `--set path=value` override, e.g. {"engine.max_num_seqs", "128"}.
struct Override {
  std::string path;
  std::string value;
};

struct LoadOptions {
  std::vector<Override> overrides;
  // Folder holding gpus.yaml, models.yaml, ...; empty: a scenarios/catalog folder in the
  // scenario file's folder or above it, else an installed kvsim's, else the source tree's
  // scenarios/catalog (resolve_catalog_dir). The library reads no environment: the programs
  // put --catalog, else KVSIM_CATALOG_DIR, here.
  std::string catalog_dir;
  // Folder that relative file paths in the scenario (workload.input_file, workload.trace.file)
  // and the catalog search start from; empty: the folder of the scenario file (for
  // load_scenario_text: of display_name, or the current folder).
  std::string base_dir;
  // Folder of the shipped fitted profiles (models/profiles/*.yaml) for compute.kind auto; empty:
  // beside the catalog in use (a source tree's models/profiles, an installation's profiles/),
  // else the source tree's models/profiles.
  std::string profiles_dir;
  // Whether to check the scenario as a whole after decoding (deployment.hpp: parallel layout,
  // the KV cache vLLM would size at start-up, what each tier needs of the hardware), reporting a
  // problem at its key's line. false decodes and checks each key only: for tools that inspect or
  // edit a scenario that cannot run as it stands (Simulation still refuses it).
  bool check_deployment = true;
  // The engines' exact fast paths (EngineConfig::fast_paths): false gives the plain
  // step-by-step run, with the same results. The programs set it false for KVSIM_PLAIN_STEPS=1.
  bool fast_paths = true;
};

// Throws InputError with every diagnostic found.
Scenario load_scenario(const std::string& path, const LoadOptions& options = {});
Scenario load_scenario_text(const std::string& yaml_text, const std::string& display_name,
                            const LoadOptions& options = {});

// Parses "a.b.c=value" into an Override; throws InputError naming the flag on bad syntax.
Override parse_override(const std::string& text);

// Every field of `scenario` as YAML, in the field tables' order (what resolved_yaml holds);
// loading it gives an equal scenario.
std::string emit_scenario_yaml(const Scenario& scenario);

// Dotted paths of the fields in which two scenarios differ (source_file and resolved_yaml are
// not compared); empty when equal.
std::vector<std::string> scenario_differences(const Scenario& a, const Scenario& b);

}  // namespace kvsim::scenario
