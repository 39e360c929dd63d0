#pragma once
// The identity of one sweep run: SHA-256 (FIPS 180-4) of the resolved scenario YAML and the
// seed, as 64 lowercase hex digits. Two runs with the same key simulate the same thing and
// give the same results (kvsim is deterministic), so a sweep skips a key already done.
// Derived seeds for repetitions come from SplitMix64 (Steele, Lea, Flood 2014).
#include <cstdint>
#include <string>
#include <string_view>

namespace kvsim::planner {

// SHA-256 of `data` as 64 lowercase hex digits.
std::string sha256_hex(std::string_view data);

// run_key = sha256_hex(resolved_yaml + "\n# kvsim run seed: " + decimal seed + "\n").
std::string run_key(std::string_view resolved_yaml, std::uint64_t seed);

// The seed of repetition `r` of a run whose root seed is `root`:
//   r = 0: root itself (so the first repetition is what `kvsim run` does);
//   r > 0: splitmix64(root + r * 0x9E3779B97F4A7C15) masked to 53 bits (exact in JSON and SQLite).
std::uint64_t repetition_seed(std::uint64_t root, std::uint64_t r);

}  // namespace kvsim::planner
