#include "sim/planner/variants.hpp"

#include "sim/core/error.hpp"

namespace kvsim::planner {

Variant parse_variant(const std::string& text) {
  const auto colon = text.find(':');
  Variant v;
  v.name = text.substr(0, colon);
  while (!v.name.empty() && v.name.back() == ' ') v.name.pop_back();
  if (v.name.empty())
    throw InputError("", 0, 0, "--variant '" + text + "': expected NAME: path=value, ...");
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
      std::string part =
          rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
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

std::vector<Variant> default_variants(const scenario::Scenario& sc) {
  std::vector<Variant> v = {
      {"vram-only",
       "GPU prefix cache only",
       {{"kv_offload.connector", "none"}, {"kv_offload.tiers", "[]"}}},
      {"dram",
       "native offloading to 64 GiB of host DRAM per server",
       {{"kv_offload.connector", "native"},
        {"kv_offload.tiers", "[{kind: host_dram, capacity: 64GiB}]"}}},
  };
  bool nics = true;
  for (const auto& s : sc.hardware.servers) nics = nics && s.nic.rate.value > 0;
  if (sc.hardware.remote_store && nics) {
    v.push_back({"nvme-net",
                 "native offloading to the network NVMe store (8 TB)",
                 {{"kv_offload.connector", "native"},
                  {"kv_offload.tiers", "[{kind: remote, capacity: 8TB}]"}}});
  }
  v.push_back({"no-reuse",
               "prefix caching off: every turn recomputes its history",
               {{"engine.enable_prefix_caching", "false"},
                {"kv_offload.connector", "none"},
                {"kv_offload.tiers", "[]"}}});
  return v;
}

}  // namespace kvsim::planner
