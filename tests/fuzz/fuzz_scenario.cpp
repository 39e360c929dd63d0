// Scenario files, as `kvsim check-scenario` and `kvsim run` load them: load_scenario_text with
// the source tree's catalog (relative paths resolve from scenarios/seed/, so the shipped
// scenarios' `../../models/profiles/...` files exist), then building the Simulation (which
// checks what only building can: the KV cache fit, the workload's files). Lines after a line
// `#--set` are `--set path=value` overrides (a YAML comment, so seeds stay plain scenarios).
// Also checks scenario.hpp's promise: the resolved YAML loads again to an equal scenario.
#include <vector>

#include "sim/scenario/scenario.hpp"
#include "sim/cluster/simulation.hpp"
#include "tests/fuzz/fuzz_common.hpp"

namespace {

namespace s = kvsim::scenario;

constexpr const char* kName = KVSIM_SOURCE_DIR "/scenarios/seed/fuzz.yaml";

s::LoadOptions options() {
  s::LoadOptions o;
  o.catalog_dir = KVSIM_SOURCE_DIR "/scenarios/catalog";
  o.base_dir = KVSIM_SOURCE_DIR "/scenarios/seed";
  o.profiles_dir = KVSIM_SOURCE_DIR "/models/profiles";
  return o;
}

void check_round_trip(const s::Scenario& sc) {
  s::Scenario again;
  try {
    again = s::load_scenario_text(sc.resolved_yaml, kName, options());
  } catch (const kvsim::InputError& e) {
    kvsim::fuzz::property_failed("the resolved YAML does not load again: " +
                                 std::string(e.what()) + "\n" + sc.resolved_yaml);
  }
  const auto diff = s::scenario_differences(sc, again);
  if (!diff.empty()) {
    std::string fields;
    for (const auto& d : diff) fields += " " + d;
    kvsim::fuzz::property_failed("the resolved YAML loads to another scenario; fields:" + fields +
                                 "\n--- resolved YAML:\n" + sc.resolved_yaml +
                                 "--- loaded again and resolved:\n" + again.resolved_yaml);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text = kvsim::fuzz::as_text(data, size);
  s::LoadOptions o = options();
  std::vector<std::string> sets;
  if (const auto at = text.find("\n#--set\n"); at != std::string::npos) {
    std::string rest = text.substr(at + 8);
    text.resize(at + 1);
    for (std::size_t start = 0; start < rest.size();) {
      const auto eol = rest.find('\n', start);
      const auto end = eol == std::string::npos ? rest.size() : eol;
      sets.push_back(rest.substr(start, end - start));
      start = end + 1;
    }
  }
  return kvsim::fuzz::expect_input_errors([&] {
    for (const auto& set : sets) o.overrides.push_back(s::parse_override(set));
    const s::Scenario sc = s::load_scenario_text(text, kName, o);
    check_round_trip(sc);
    const kvsim::cluster::Simulation sim(sc);
    (void)sim.info();
  });
}
