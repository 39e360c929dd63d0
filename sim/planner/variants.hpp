#pragma once
// KV-tier variants of one scenario, as `kvsim compare` and `kvsim plan` run them: a name, what it
// changes, and the `--set` overrides that make it.
#include <string>
#include <vector>

#include "sim/scenario/scenario.hpp"

namespace kvsim::planner {

struct Variant {
  std::string name;
  std::string description;
  std::vector<scenario::Override> overrides;
};

// "NAME: path=value, path=value" (the part after the colon may be empty; values may be YAML flow
// lists and maps, whose commas do not split). Throws InputError on an empty name.
Variant parse_variant(const std::string& text);

// The KV-tier variants of a scenario: the GPU's prefix cache alone (VRAM only); a host DRAM tier
// through vLLM's native offloading; the network store, when the hardware has one; and no KV
// reuse at all (every turn recomputes its history).
std::vector<Variant> default_variants(const scenario::Scenario& sc);

}  // namespace kvsim::planner
