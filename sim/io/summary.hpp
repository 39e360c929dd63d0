#pragma once
// The run summary: the vLLM multi-turn benchmark's statistics (process_statistics in
// benchmarks/multi_turn/benchmark_serving_multi_turn.py) computed from our request records,
// plus the engine-side figures kvsim knows. Times in ms or s as the names say; rates per second.
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/io/results.hpp"
#include "sim/io/stats.hpp"

namespace kvsim::io {

struct Summary {
  // Samples: the counted records (RequestRecord::counted), sorted by start time; the first
  // warmup share of them is dropped, the rest are "kept".
  std::int64_t num_samples = 0;     // counted records before the warmup drop
  double warmup_percent = 0;        // as asked, in percent (10 means 10%)
  std::int64_t warmup_samples = 0;  // int(warmup_percent / 100 * num_samples), dropped
  std::int64_t num_requests = 0;    // kept samples

  // runtime_sec = (start + latency of the last kept sample in start order
  //                - start of the first kept sample) / 1000
  double runtime_sec = 0;
  double requests_per_sec = 0;       // num_requests / runtime_sec (NaN when runtime_sec is 0)
  double output_tokens_per_sec = 0;  // sum of kept output_num_tokens / runtime_sec (NaN if 0)

  // The benchmark's --warmup-step figures, from the records that are not counted: the span
  // from the first one's start to the latest one's end. Only when such records exist.
  bool has_warmup_step = false;
  double warmup_runtime_sec = 0;
  double total_runtime_incl_warmup_sec = 0;

  // The benchmark's describe().T rows over the kept samples. Each Describe holds every
  // percentile in kAllPercentiles; the table shows table_percentiles of them.
  Describe ttft_ms;
  Describe tpot_ms;
  Describe latency_ms;
  Describe input_num_turns;
  Describe input_num_tokens;
  Describe output_num_tokens;
  Describe output_num_chunks;  // output_num_tokens - 1: one token per streamed chunk
  // benchmark_percentiles(num_samples): the columns the benchmark prints.
  std::vector<double> table_percentiles;

  // Ours, from RunInfo (whole run, warmup included).
  double prefix_cache_hit_rate = 0;  // hits / queries in tokens; 0 when nothing was queried
  std::int64_t prefix_cache_queries = 0;
  std::int64_t prefix_cache_hits = 0;
  std::int64_t preemptions = 0;
  std::int64_t failed_requests = 0;  // rejected by the server; not among the samples
  std::int64_t gpu_kv_cache_tokens = 0;
  std::int64_t num_gpu_blocks = 0;
  double max_concurrency = 0;
  std::int64_t max_model_len = 0;
  int num_engines = 1;
  std::int64_t prompt_tokens = 0;  // all finished requests' prompts, chat template included
  std::int64_t engine_steps = 0;
  double simulated_seconds = 0;
};

// Percentile fractions stored in every Summary Describe: the benchmark's full set.
inline constexpr std::array<double, 7> kAllPercentiles{0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999};

// One row of the statistics table: the metric's name as the benchmark prints it.
struct MetricRow {
  std::string_view name;
  const Describe* stats;
};
// The rows in the benchmark's order (the RequestStats field order).
std::array<MetricRow, 7> metric_rows(const Summary& s);

// Builds the summary. warmup_percent is the benchmark's --warmup-percentages value for one
// entry, in percent; it must lie in [0, 100) (InputError otherwise).
Summary summarize(const std::vector<RequestRecord>& records, const RunInfo& info,
                  double warmup_percent = 0);

}  // namespace kvsim::io
