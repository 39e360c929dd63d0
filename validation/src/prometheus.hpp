#pragma once
// The Prometheus text exposition format as vLLM's /metrics serves it, reduced to one number per
// metric name: samples of the same name with different labels are summed (vLLM labels its
// counters by model and engine). Histogram and summary series keep their _sum/_count/_bucket
// names. The figures the harness reads (counters in tokens or requests, gauges as fractions):
//   vllm:prefix_cache_queries_total, vllm:prefix_cache_hits_total (tokens),
//   vllm:num_preemptions_total, vllm:kv_cache_usage_perc (gpu_cache_usage_perc before 0.10),
//   vllm:prompt_tokens_total, vllm:generation_tokens_total, vllm:num_requests_running/_waiting.
#include <map>
#include <string>
#include <string_view>

namespace kvsim::validation {

using MetricValues = std::map<std::string, double>;

// Lines that are not samples (comments, blanks, unparseable values) are skipped.
MetricValues parse_prometheus(std::string_view text);

// GET url + "/metrics"; empty when the server has none or does not answer in timeout_s.
MetricValues scrape_metrics(const std::string& base_url, double timeout_s = 10);

// value(after) - value(before) of a counter; NaN when either lacks it. Names with and without
// the "_total" suffix are both tried (prometheus_client exposes counters as NAME_total).
double counter_delta(const MetricValues& before, const MetricValues& after,
                     const std::string& name);

}  // namespace kvsim::validation
