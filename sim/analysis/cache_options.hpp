#pragma once
// How a cache-curve request is written (by `kvsim cache-curve` and the Python module's
// cache_curve): capacities in blocks, tokens or bytes, policies by name, tier-stack items.
// `where` names the option in error messages ("--capacities", "capacities").
#include <cstdint>
#include <string>
#include <vector>

#include "sim/analysis/cache_curve.hpp"
#include "sim/engine/kv_tier.hpp"

namespace kvsim::analysis {

// Capacities a curve uses when none are given: 20 points from 354 to 256,000 blocks, a factor
// of sqrt(2) apart (1000 * 2^(k/2) rounded, k = -3..16).
std::vector<std::int64_t> default_curve_capacities();

// "lru" or "arc"; InputError naming `where` otherwise. engine::eviction_policy_name (through
// sim/engine/kv_tier.hpp) writes a policy back.
engine::EvictionPolicy parse_eviction_policy(const std::string& name, const std::string& where);

// A capacity: a block count ("4000"), tokens ("2Mtok", "40000tok") or bytes of the model's KV
// ("64GiB", "2TB"), in whole hash blocks of `block_tokens` (rounded down, at least one, at most
// 2^53).
std::int64_t parse_capacity_blocks(const std::string& text, const std::string& where, int block_tokens,
                                   double kv_bytes_per_token);

// "NAME=CAPACITY[:lru|arc]" items of a tier stack, top tier first.
std::vector<TierLevel> parse_tier_levels(const std::vector<std::string>& items, const std::string& where,
                                         int block_tokens, double kv_bytes_per_token);

}  // namespace kvsim::analysis
