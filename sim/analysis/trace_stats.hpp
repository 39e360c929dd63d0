#pragma once
// What a request trace holds, before it is simulated: request rate over time, prompt and answer
// length distributions, multi-turn structure, how far apart reuses of a prefix block are, and the
// hit rate of a prefix cache that never evicts (the ceiling any cache size can reach).
//
// Definitions (docs/cache-sizing.md):
//  - rate: requests per second in consecutive buckets of `bucket_s` from the first arrival;
//  - quantiles: nearest-rank on the sorted values (p50 = the value at rank ceil(0.5 n));
//  - conversations (formats that carry them, e.g. Bailian): requests grouped by conversation id;
//    turns per conversation; the gap between a turn's arrival and its parent's;
//  - continuations (any trace with prefix hash ids): requests whose hash ids start with every
//    full block of an earlier request's prompt of at least 2 full blocks: a next turn resending
//    its history (the 2-block floor keeps a shared one-block system prompt from counting);
//  - reuse of a prefix block: each use of a hash id seen before, by the published rules (every
//    id of a request, first to last); its distance is the number of distinct blocks used since its
//    previous use (an LRU cache needs more blocks than that to keep it), its time the seconds since;
//  - ideal hit rate: hit tokens / prompt tokens with an infinite cache, the hit being the longest
//    prefix of ids seen before, min(block_tokens x hit blocks, input length).
#include <cstdint>
#include <string>
#include <vector>

#include "sim/workload/trace.hpp"

namespace kvsim::analysis {

struct Quantiles {
  std::int64_t count = 0;
  double mean = 0, min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};

// Nearest-rank quantiles of `values` (sorted in place).
Quantiles quantiles(std::vector<double>& values);

struct RateBucket {
  double start_s = 0;
  std::int64_t requests = 0;
  double requests_per_s = 0;
  std::int64_t input_tokens = 0;
};

struct TraceStats {
  std::string format;
  std::string source;
  int hash_block_tokens = 0;
  std::int64_t requests = 0;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  double span_s = 0;  // last arrival - first arrival
  double mean_rate = 0;  // requests / span
  double bucket_s = 60;
  // The bucket asked for, when the span needed wider ones (at most limits::kMaxRateBuckets
  // buckets); 0 when the asked bucket was kept.
  double bucket_widened_from_s = 0;
  double peak_bucket_rate = 0;
  std::vector<RateBucket> rate;
  Quantiles input_length, output_length, interarrival_s;
  // Multi-turn structure.
  bool has_conversations = false;
  std::int64_t conversations = 0;
  Quantiles turns_per_conversation;
  Quantiles turn_gap_s;  // arrival of a turn minus its parent's
  std::int64_t continuations = 0;
  // Reuse of prefix blocks.
  std::int64_t block_uses = 0;
  std::int64_t distinct_blocks = 0;
  Quantiles reuse_distance_blocks;
  Quantiles reuse_time_s;
  double ideal_token_hit_rate = 0;
  double ideal_request_hit_rate = 0;
};

TraceStats trace_stats(const workload::Trace& trace, double bucket_s = 60);

}  // namespace kvsim::analysis
