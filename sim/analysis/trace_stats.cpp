#include "sim/analysis/trace_stats.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_set>

#include "sim/analysis/stack_distance.hpp"
#include "sim/core/error.hpp"
#include "sim/core/limits.hpp"

namespace kvsim::analysis {
namespace {

// splitmix64 finaliser: chains the ids of a prefix into one 64-bit key.
std::uint64_t mix(std::uint64_t h, std::int64_t id) {
  std::uint64_t z = h + 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(id);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

Quantiles quantiles(std::vector<double>& values) {
  Quantiles q;
  q.count = static_cast<std::int64_t>(values.size());
  if (values.empty()) return q;
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (const double v : values) sum += v;
  const auto n = values.size();
  auto rank = [&](double p) {
    const auto r = static_cast<std::size_t>(std::ceil(p * static_cast<double>(n)));
    return values[std::min(n, std::max<std::size_t>(r, 1)) - 1];
  };
  q.mean = sum / static_cast<double>(n);
  q.min = values.front();
  q.p50 = rank(0.50);
  q.p90 = rank(0.90);
  q.p99 = rank(0.99);
  q.max = values.back();
  return q;
}

TraceStats trace_stats(const workload::Trace& trace, double bucket_s) {
  if (!(bucket_s > 0)) throw InputError("", 0, 0, "trace stats: the rate bucket must be positive");
  TraceStats s;
  s.format = trace.format;
  s.source = trace.source;
  s.hash_block_tokens = trace.hash_block_tokens;
  s.bucket_s = bucket_s;
  const auto& reqs = trace.requests;
  s.requests = static_cast<std::int64_t>(reqs.size());
  if (reqs.empty()) return s;

  // Rate and lengths.
  const double t0 = reqs.front().timestamp_ms / 1000.0;
  s.span_s = reqs.back().timestamp_ms / 1000.0 - t0;
  s.mean_rate = s.span_s > 0 ? static_cast<double>(s.requests) / s.span_s : 0.0;
  // The series has at most kMaxRateBuckets buckets: a longer span widens them (1-2-5 steps).
  if (s.span_s / bucket_s >= static_cast<double>(limits::kMaxRateBuckets)) {
    const double need = s.span_s / static_cast<double>(limits::kMaxRateBuckets - 1);
    double step = std::pow(10.0, std::floor(std::log10(need)));
    for (const double m : {1.0, 2.0, 5.0, 10.0}) {
      if (m * step >= need) {
        step *= m;
        break;
      }
    }
    s.bucket_widened_from_s = bucket_s;
    bucket_s = step;
    s.bucket_s = bucket_s;
  }
  std::vector<double> input, output, gaps;
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    const auto& r = reqs[i];
    s.input_tokens += r.input_length;
    s.output_tokens += r.output_length;
    input.push_back(static_cast<double>(r.input_length));
    output.push_back(static_cast<double>(r.output_length));
    if (i > 0) gaps.push_back((r.timestamp_ms - reqs[i - 1].timestamp_ms) / 1000.0);
    const auto b = static_cast<std::size_t>(std::floor((r.timestamp_ms / 1000.0 - t0) / bucket_s));
    if (s.rate.size() <= b) s.rate.resize(b + 1);
    ++s.rate[b].requests;
    s.rate[b].input_tokens += r.input_length;
  }
  for (std::size_t b = 0; b < s.rate.size(); ++b) {
    s.rate[b].start_s = static_cast<double>(b) * bucket_s;
    s.rate[b].requests_per_s = static_cast<double>(s.rate[b].requests) / bucket_s;
    s.peak_bucket_rate = std::max(s.peak_bucket_rate, s.rate[b].requests_per_s);
  }
  s.input_length = quantiles(input);
  s.output_length = quantiles(output);
  s.interarrival_s = quantiles(gaps);

  // Conversations, where the format has them.
  std::map<std::int64_t, std::int64_t> turns;
  std::vector<double> turn_gaps;
  for (const auto& r : reqs) {
    if (r.conversation >= 0) ++turns[r.conversation];
    if (r.parent >= 0) {
      turn_gaps.push_back((r.timestamp_ms - reqs[static_cast<std::size_t>(r.parent)].timestamp_ms) / 1000.0);
    }
  }
  s.has_conversations = !turns.empty();
  s.conversations = static_cast<std::int64_t>(turns.size());
  std::vector<double> per_conversation;
  per_conversation.reserve(turns.size());
  for (const auto& [id, n] : turns) per_conversation.push_back(static_cast<double>(n));
  s.turns_per_conversation = quantiles(per_conversation);
  s.turn_gap_s = quantiles(turn_gaps);

  // Prefix blocks: reuse, continuations, the infinite cache.
  if (trace.hash_block_tokens > 0) {
    const auto bt = trace.hash_block_tokens;
    std::size_t accesses = 0;
    for (const auto& r : reqs) accesses += r.hash_ids.size();
    StackDistances stack(accesses);
    std::vector<double> access_time_s;  // seconds of each access, by access index
    access_time_s.reserve(accesses);
    std::vector<double> distances, times;
    std::unordered_set<std::uint64_t> whole_prompts;  // chained key of each prompt's full blocks
    std::int64_t hit_tokens = 0;
    double fractions = 0;
    for (const auto& r : reqs) {
      const double now_s = r.timestamp_ms / 1000.0;
      // Longest prefix seen before, and whether this prompt extends an earlier whole prompt.
      std::size_t seen = 0;
      while (seen < r.hash_ids.size() && stack.last_use(r.hash_ids[seen]) >= 0) ++seen;
      const std::int64_t hit = std::min<std::int64_t>(static_cast<std::int64_t>(seen) * bt, r.input_length);
      hit_tokens += hit;
      fractions += static_cast<double>(hit) / static_cast<double>(std::max<std::int64_t>(r.input_length, 1));
      const auto full = std::min<std::size_t>(static_cast<std::size_t>(r.input_length / bt), r.hash_ids.size());
      std::uint64_t key = 0;
      bool continues = false;
      for (std::size_t k = 0; k < full; ++k) {
        key = mix(key, r.hash_ids[k]);
        continues = continues || (k >= 1 && whole_prompts.count(key) != 0);
      }
      if (continues) ++s.continuations;
      if (full >= 2) whole_prompts.insert(key);
      for (const auto id : r.hash_ids) {
        const auto last = stack.last_use(id);
        if (last >= 0) {
          distances.push_back(static_cast<double>(stack.distance(id)));
          times.push_back(now_s - access_time_s[static_cast<std::size_t>(last)]);
        }
        stack.use(id);
        access_time_s.push_back(now_s);
      }
    }
    s.block_uses = static_cast<std::int64_t>(stack.accesses());
    s.distinct_blocks = static_cast<std::int64_t>(stack.distinct());
    s.reuse_distance_blocks = quantiles(distances);
    s.reuse_time_s = quantiles(times);
    s.ideal_token_hit_rate =
        s.input_tokens > 0 ? static_cast<double>(hit_tokens) / static_cast<double>(s.input_tokens) : 0.0;
    s.ideal_request_hit_rate = fractions / static_cast<double>(s.requests);
  }
  return s;
}

}  // namespace kvsim::analysis
