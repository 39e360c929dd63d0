#pragma once
// The seed deployment (scenarios/seed/) with a smaller population: 64 conversations, 8 clients,
// 48 active, so a Debug run is quick while the GPU KV cache stays under pressure and the tiers
// are read, written and evict. `extra` overrides come after these.
#include <string>
#include <utility>
#include <vector>

#include "sim/scenario/scenario.hpp"

namespace kvsim::scenario::test_support {

inline Scenario small_seed(const std::string& file, std::vector<Override> extra = {}) {
  const std::string source = KVSIM_SOURCE_DIR;
  LoadOptions o;
  o.catalog_dir = source + "/scenarios/catalog";
  o.overrides = {{"workload.generation.num_conversations", "64"},
                 {"workload.clients.num_clients", "8"},
                 {"workload.clients.max_active_conversations", "48"}};
  for (auto& e : extra) o.overrides.push_back(std::move(e));
  return load_scenario(source + "/scenarios/seed/" + file, o);
}

}  // namespace kvsim::scenario::test_support
