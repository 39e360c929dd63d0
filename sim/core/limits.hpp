#pragma once
// kvsim's stated limits (docs/limits.md): every count, size, rate and time a scenario or a
// trace gives is checked against these at load, so simulated time (int64 nanoseconds), bytes,
// tokens and blocks stay far inside int64 and memory stays bounded by the work. Each limit is
// far past any real deployment; an input beyond one is refused with a located message naming it.
//
// Why these numbers keep the arithmetic in range:
//  - the simulated clock stops at kTimeLimit (1e18 ns, about 31.7 years); any one duration is at
//    most kMaxDuration (1e17 ns), and computed durations saturate at kTimeOverLimit, so
//    `now + d` is at most about 2e18 ns (int64 holds 9.2e18) and the result is checked;
//  - token counts are at most kMaxTokens (2^24) per request or message and messages at most
//    kMaxTurns per conversation, so one conversation's tokens are below 2^41;
//  - bytes are at most kMaxBytes (2^53, exact in a double), byte rates at most 1e15 B/s and
//    FLOP rates at most 1e18 FLOP/s.
#include <cstdint>

#include "sim/core/units.hpp"

namespace kvsim::limits {

// The simulated clock's limit and the saturated value are in units.hpp: kTimeLimit (1e9 s,
// about 31.7 years) and kTimeOverLimit.
// Any one time in a scenario (a latency, a trace window) and a trace's replayed span.
inline constexpr SimTime kMaxDuration = 100'000'000LL * kSecond;  // 1e8 s, about 3.2 years
// Tokens of one request (prompt or answer), one message, or max_model_len.
inline constexpr std::int64_t kMaxTokens = std::int64_t{1} << 24;  // 16,777,216
// Messages (user and assistant turns) of one generated conversation.
inline constexpr std::int64_t kMaxTurns = 100'000;
// Messages of all generated conversations together (their token lists are held in memory).
inline constexpr std::int64_t kMaxMessages = 20'000'000;
// Generated conversations, requests of a trace window, and other plain counts.
inline constexpr std::int64_t kMaxCount = 10'000'000;
// KV blocks of one GPU pool (derived from memory or given by num_gpu_blocks_override).
inline constexpr std::int64_t kMaxGpuBlocks = std::int64_t{1} << 24;
// GPUs of one run (servers x gpus_per_server) and KV blocks of all its engines together (each
// engine holds its block pool, about 40 bytes a block, for the whole run).
inline constexpr std::int64_t kMaxGpus = 65'536;
inline constexpr std::int64_t kMaxTotalGpuBlocks = std::int64_t{1} << 27;  // 134,217,728
// A size in bytes (memory, a tier's capacity).
inline constexpr double kMaxBytes = 9007199254740992.0;  // 2^53 B = 8 PiB
inline constexpr double kMaxByteRate = 1e15;             // B/s
inline constexpr double kMaxFlopRate = 1e18;             // FLOP/s
// A YAML file (a scenario, a catalog file, a --set value) and one string in it.
inline constexpr std::int64_t kMaxYamlBytes = std::int64_t{4} << 20;    // 4 MiB
inline constexpr std::int64_t kMaxStringBytes = std::int64_t{64} << 10;  // 64 KiB
// Buckets of a rate-over-time series (kvsim trace-stats): wider buckets beyond it.
inline constexpr std::int64_t kMaxRateBuckets = 10'000;

// a + b for non-negative times, saturating at kTimeOverLimit.
inline SimTime saturating_add(SimTime a, SimTime b) {
  if (a >= kTimeOverLimit || b >= kTimeOverLimit - a) return kTimeOverLimit;
  return a + b;
}

}  // namespace kvsim::limits
