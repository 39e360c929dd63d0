#pragma once
// What one run produces: a record per request (the vLLM multi-turn benchmark's fields and
// ours), a record per engine step, and the run's metadata. Times are in milliseconds or
// seconds as their names say; token counts are plain integers.
#include <cstdint>
#include <string>
#include <vector>

namespace kvsim::io {

struct RequestRecord {
  // The benchmark's keys (benchmark_serving_multi_turn.py RequestStats).
  double ttft_ms = 0;
  double tpot_ms = 0;
  double latency_ms = 0;
  double start_time_ms = 0;  // send time since the run started
  int input_num_turns = 0;
  std::int64_t input_num_tokens = 0;   // content tokens as the benchmark counts them
  std::int64_t output_num_tokens = 0;
  std::string conversation_id;
  int client_id = -1;
  // Ours.
  std::uint64_t request_id = 0;
  std::int64_t prompt_tokens = 0;  // as the server saw it (chat template included)
  std::int64_t cached_tokens = 0;  // prefix-cache hit tokens at first scheduling
  int preemptions = 0;
  int server = 0;                  // engine replica index
  bool counted = true;             // false for warmup-step requests
};

// One engine step.
struct StepRecord {
  double time_s = 0;        // step start
  double duration_ms = 0;
  int server = 0;
  int running = 0;          // requests in the running queue after scheduling
  int waiting = 0;          // requests in the waiting queue after scheduling
  std::int64_t batch_tokens = 0;
  int prefill_requests = 0;
  int decode_requests = 0;
  double kv_usage = 0;      // fraction of usable GPU blocks held by requests
  int preemptions = 0;      // preemptions in this step
};

// One kind of KV offload tier over the run, summed over its instances (one per server for
// host_dram and local_nvme).
struct TierInfo {
  std::string kind;                  // host_dram | local_nvme | remote
  std::int64_t capacity_bytes = 0;   // per instance
  std::int64_t hit_tokens = 0;       // tokens loaded from it into GPUs
  std::int64_t bytes_read = 0;
  std::int64_t bytes_written = 0;   // stores, cascades and promotions
  std::int64_t bytes_promoted = 0;  // of which copies of lower-tier chunks read through this tier
  std::int64_t evictions = 0;
  std::int64_t stores_dropped = 0;   // stores refused: already there, or nothing evictable
};

// One kind of link over the run: bytes summed over its links; utilization of the busiest link
// averaged over the simulated time (bytes / (capacity x seconds)).
struct LinkInfo {
  std::string kind;  // pcie (GPU-host), nvme (host-drive), nic (host-switch), store (switch-store)
  std::int64_t bytes_forward = 0;   // host to GPU, host to drive, host to switch, switch to store
  std::int64_t bytes_backward = 0;
  double max_utilization_forward = 0;
  double max_utilization_backward = 0;
};

// KV held and link load at one moment of a run, sampled at a fixed simulated-time interval
// (Simulation::run's usage sampler). Tiers and links by kind, as TierInfo and LinkInfo.
struct TierUsage {
  std::string kind;              // host_dram | local_nvme | remote
  std::int64_t bytes_held = 0;   // chunks resident (stores in flight included), all instances
  std::int64_t capacity_bytes = 0;  // usable capacity (whole chunks), all instances
};
struct LinkUsage {
  std::string kind;  // pcie | nvme | nic | store
  // The busiest link of the kind over the interval that ends at the sample:
  // bytes moved in the interval / (capacity x interval seconds), in [0, 1].
  double utilization_forward = 0;
  double utilization_backward = 0;
};
struct UsageSample {
  double time_s = 0;              // end of the interval
  double interval_s = 0;          // its length (the last one may be shorter)
  std::int64_t gpu_bytes_held = 0;  // GPU KV blocks held by requests, all engines
  std::vector<TierUsage> tiers;   // offload tiers, in lookup order
  std::vector<LinkUsage> links;   // link kinds of the topology
};

// Run-wide figures the engine knows that the records do not show.
struct RunInfo {
  std::string scenario_name;
  std::string kvsim_version;
  std::uint64_t seed = 0;
  std::vector<std::string> header_lines;  // workload parameters, as the benchmark prints them
  std::int64_t gpu_kv_cache_tokens = 0;   // per engine, as vLLM logs "GPU KV cache size"
  std::int64_t num_gpu_blocks = 0;
  double max_concurrency = 0;             // vLLM's "Maximum concurrency for N tokens per request"
  std::int64_t max_model_len = 0;
  int num_engines = 1;
  std::int64_t prefix_cache_queries = 0;  // tokens looked up (vLLM prefix_cache_queries)
  std::int64_t prefix_cache_hits = 0;     // tokens hit
  std::int64_t preemptions = 0;
  std::int64_t engine_steps = 0;
  // Of those, steps taken inside decode stretches, and step ends handled without the event
  // queue (docs/performance.md); speed counters only, not written to results.
  std::int64_t stretch_steps = 0;
  std::int64_t skipped_events = 0;
  double simulated_seconds = 0;
  std::int64_t failed_requests = 0;      // rejected by the server (e.g. longer than max_model_len)
  std::vector<std::string> memory_breakdown;  // how the KV cache size was derived, term by term
  std::string compute_model;                  // the step-time model used and why (one line)
  // Where the time of two reference steps goes (a decode of up to 128 sequences, a 2,048-token
  // prefill): kernels, collectives, GPU overheads and host time (sim/cluster/compute_factory.hpp).
  std::vector<std::string> step_times;
  std::vector<std::string> notes;             // warnings about the run's set-up (rescaled profiles, ...)
  std::int64_t external_hit_tokens = 0;  // tokens loaded from offload tiers instead of computed
  std::vector<TierInfo> tiers;           // offload tiers, in lookup order
  std::vector<LinkInfo> links;           // links that carried KV, by kind
};

}  // namespace kvsim::io
