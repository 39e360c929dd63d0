#include "sim/io/summary.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "sim/core/error.hpp"

namespace kvsim::io {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// end_time_ms as the benchmark derives it: start_time_ms + latency_ms.
double end_time_ms(const RequestRecord& r) { return r.start_time_ms + r.latency_ms; }

template <class Field>
Describe describe_field(const std::vector<const RequestRecord*>& kept, Field field) {
  std::vector<double> values;
  values.reserve(kept.size());
  for (const RequestRecord* r : kept) values.push_back(field(*r));
  return describe(values, kAllPercentiles);
}

}  // namespace

std::array<MetricRow, 7> metric_rows(const Summary& s) {
  return {{{"ttft_ms", &s.ttft_ms},
           {"tpot_ms", &s.tpot_ms},
           {"latency_ms", &s.latency_ms},
           {"input_num_turns", &s.input_num_turns},
           {"input_num_tokens", &s.input_num_tokens},
           {"output_num_tokens", &s.output_num_tokens},
           {"output_num_chunks", &s.output_num_chunks}}};
}

Summary summarize(const std::vector<RequestRecord>& records, const RunInfo& info,
                  double warmup_percent) {
  if (!(warmup_percent >= 0.0 && warmup_percent < 100.0)) {
    // The benchmark asserts 0 <= p < 1 on its --warmup-percentages values.
    throw InputError(
        "", 0, 0, "warmup percentage must lie in [0, 100), got " + std::to_string(warmup_percent));
  }
  Summary s;
  s.warmup_percent = warmup_percent;

  std::vector<const RequestRecord*> counted;
  std::vector<const RequestRecord*> warmup;
  counted.reserve(records.size());
  for (const auto& r : records) {
    (r.counted ? counted : warmup).push_back(&r);
    s.prompt_tokens += r.prompt_tokens;
  }

  // raw_data.sort_values(by=["start_time_ms"]); ties broken by request id so the order does
  // not depend on the order the records arrived in.
  std::stable_sort(counted.begin(), counted.end(),
                   [](const RequestRecord* a, const RequestRecord* b) {
                     if (a->start_time_ms != b->start_time_ms) {
                       return a->start_time_ms < b->start_time_ms;
                     }
                     return a->request_id < b->request_id;
                   });
  s.num_samples = static_cast<std::int64_t>(counted.size());
  s.table_percentiles = benchmark_percentiles(counted.size());

  // warmup_count = int(percent * len(raw_data)); percent = float("X") / 100.
  const double fraction = warmup_percent / 100.0;
  const auto drop = static_cast<std::size_t>(fraction * static_cast<double>(counted.size()));
  s.warmup_samples = static_cast<std::int64_t>(drop);
  const std::vector<const RequestRecord*> kept(counted.begin() + static_cast<std::ptrdiff_t>(drop),
                                               counted.end());
  s.num_requests = static_cast<std::int64_t>(kept.size());

  if (kept.empty()) {
    s.runtime_sec = kNaN;
    s.requests_per_sec = kNaN;
    s.output_tokens_per_sec = kNaN;
  } else {
    // runtime_sec = df["end_time_ms"].iloc[-1] - df["start_time_ms"].iloc[0]: the end of the
    // sample that started last, not the latest end.
    s.runtime_sec = (end_time_ms(*kept.back()) - kept.front()->start_time_ms) / 1000.0;
    std::int64_t output_tokens = 0;
    for (const RequestRecord* r : kept) output_tokens += r->output_num_tokens;
    if (s.runtime_sec > 0) {
      s.requests_per_sec = static_cast<double>(kept.size()) / s.runtime_sec;
      s.output_tokens_per_sec = static_cast<double>(output_tokens) / s.runtime_sec;
    } else {
      s.requests_per_sec = kNaN;
      s.output_tokens_per_sec = kNaN;
    }
  }

  if (!warmup.empty()) {
    double first_start = warmup.front()->start_time_ms;
    double last_end = end_time_ms(*warmup.front());
    for (const RequestRecord* r : warmup) {
      first_start = std::min(first_start, r->start_time_ms);
      last_end = std::max(last_end, end_time_ms(*r));
    }
    s.has_warmup_step = true;
    s.warmup_runtime_sec = (last_end - first_start) / 1000.0;
    // params["total_runtime_incl_warmup_sec"] = runtime_sec + warmup_runtime_sec
    s.total_runtime_incl_warmup_sec = s.runtime_sec + s.warmup_runtime_sec;
  }

  s.ttft_ms = describe_field(kept, [](const RequestRecord& r) { return r.ttft_ms; });
  s.tpot_ms = describe_field(kept, [](const RequestRecord& r) { return r.tpot_ms; });
  s.latency_ms = describe_field(kept, [](const RequestRecord& r) { return r.latency_ms; });
  s.input_num_turns = describe_field(
      kept, [](const RequestRecord& r) { return static_cast<double>(r.input_num_turns); });
  s.input_num_tokens = describe_field(
      kept, [](const RequestRecord& r) { return static_cast<double>(r.input_num_tokens); });
  s.output_num_tokens = describe_field(
      kept, [](const RequestRecord& r) { return static_cast<double>(r.output_num_tokens); });
  // The benchmark counts the streamed chunks after the first (len(chunk_delay)). A vLLM
  // stream carries one token per chunk at the default stream interval, so the count is
  // output tokens - 1; its README sample shows exactly that (100.01 tokens, 99.01 chunks).
  s.output_num_chunks = describe_field(kept, [](const RequestRecord& r) {
    return static_cast<double>(std::max<std::int64_t>(0, r.output_num_tokens - 1));
  });

  s.prefix_cache_queries = info.prefix_cache_queries;
  s.prefix_cache_hits = info.prefix_cache_hits;
  // vllm/v1/metrics/stats.py CachingMetrics.hit_rate: 0 when nothing was queried.
  s.prefix_cache_hit_rate = info.prefix_cache_queries > 0
                                ? static_cast<double>(info.prefix_cache_hits) /
                                      static_cast<double>(info.prefix_cache_queries)
                                : 0.0;
  s.preemptions = info.preemptions;
  s.failed_requests = info.failed_requests;
  s.gpu_kv_cache_tokens = info.gpu_kv_cache_tokens;
  s.num_gpu_blocks = info.num_gpu_blocks;
  s.max_concurrency = info.max_concurrency;
  s.max_model_len = info.max_model_len;
  s.num_engines = info.num_engines;
  s.engine_steps = info.engine_steps;
  s.simulated_seconds = info.simulated_seconds;
  return s;
}

}  // namespace kvsim::io
