#include "sim/analysis/cache_options.hpp"

#include <cmath>
#include <exception>

#include "sim/core/error.hpp"
#include "sim/scenario/units.hpp"

namespace kvsim::analysis {

std::vector<std::int64_t> default_curve_capacities() {
  std::vector<std::int64_t> out;
  for (int k = -3; k <= 16; ++k) out.push_back(std::llround(1000.0 * std::pow(2.0, k / 2.0)));
  return out;
}

engine::EvictionPolicy parse_eviction_policy(const std::string& name, const std::string& where) {
  if (name == "lru") return engine::EvictionPolicy::kLru;
  if (name == "arc") return engine::EvictionPolicy::kArc;
  throw InputError("", 0, 0, where + ": unknown policy '" + name + "' (lru or arc)");
}

std::int64_t parse_capacity_blocks(const std::string& text, const std::string& where, int block_tokens,
                                   double kv_bytes_per_token) {
  constexpr double kMaxBlocks = 9007199254740992.0;  // 2^53: exact in a double
  const auto b = text.find_first_not_of(' ');
  const auto e = text.find_last_not_of(' ');
  const std::string t = b == std::string::npos ? "" : text.substr(b, e - b + 1);
  if (t.empty()) throw InputError("", 0, 0, where + ": empty capacity");
  std::size_t pos = 0;
  double value = 0;
  try {
    value = std::stod(t, &pos);
  } catch (const std::exception&) {
    throw InputError("", 0, 0,
                     where + ": '" + t + "' is not a capacity (blocks, e.g. 4000; tokens, e.g. 2Mtok; or bytes, e.g. 64GiB)");
  }
  const std::string unit = t.substr(pos);
  double tokens = 0;
  if (unit.empty()) {
    if (value != std::floor(value)) throw InputError("", 0, 0, where + ": a block count must be whole: '" + t + "'");
    tokens = value * block_tokens;
  } else if (unit == "tok" || unit == "ktok" || unit == "Mtok") {
    tokens = value * (unit == "tok" ? 1.0 : unit == "ktok" ? 1e3 : 1e6);
  } else {
    tokens = scenario::parse_bytes(t).as_double() / kv_bytes_per_token;
  }
  const double whole = std::floor(tokens / block_tokens);
  if (whole > kMaxBlocks) {
    throw InputError("", 0, 0,
                     where + ": '" + t + "' is " + scenario::shortest_double(whole) + " blocks, past the limit of 2^53 blocks");
  }
  const auto n = static_cast<std::int64_t>(whole);
  if (!(n >= 1)) {
    throw InputError("", 0, 0,
                     where + ": '" + t + "' is less than one block of " + std::to_string(block_tokens) + " tokens");
  }
  return n;
}

std::vector<TierLevel> parse_tier_levels(const std::vector<std::string>& items, const std::string& where,
                                         int block_tokens, double kv_bytes_per_token) {
  std::vector<TierLevel> levels;
  for (const auto& item : items) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::string message = where;
      message += ": '";
      message += item;
      message += "': expected NAME=CAPACITY[:lru|arc], e.g. dram=64GiB";
      throw InputError("", 0, 0, message);
    }
    TierLevel l;
    l.name = item.substr(0, eq);
    std::string place = where;  // "--tiers dram"
    place += ' ';
    place += l.name;
    std::string rest = item.substr(eq + 1);
    if (const auto colon = rest.find(':'); colon != std::string::npos) {
      l.policy = parse_eviction_policy(rest.substr(colon + 1), place);
      rest = rest.substr(0, colon);
    }
    l.capacity_blocks = parse_capacity_blocks(rest, place, block_tokens, kv_bytes_per_token);
    levels.push_back(l);
  }
  return levels;
}

}  // namespace kvsim::analysis
