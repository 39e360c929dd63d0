#include "sim/analysis/cache_curve.hpp"

#include <algorithm>
#include <thread>
#include <unordered_map>

#include "sim/analysis/stack_distance.hpp"
#include "sim/core/error.hpp"

namespace kvsim::analysis {
namespace {

// The blocks of a request that take part, and how many tokens each serves on a hit.
struct RequestBlocks {
  std::size_t lookup = 0;  // blocks that may hit (all ids, or the full blocks only)
  std::size_t touched = 0;  // blocks inserted or touched afterwards (same count)
};

RequestBlocks blocks_of(const TraceRequest& r, const CurveOptions& o) {
  const auto n = r.hash_ids.size();
  if (o.rules == CurveRules::kPublished) return {n, n};
  const auto full = std::min<std::size_t>(static_cast<std::size_t>(r.input_length / o.block_tokens), n);
  return {full, full};
}

// Tokens served by the first `h` blocks of a request.
std::int64_t hit_tokens(const TraceRequest& r, std::size_t h, const CurveOptions& o) {
  return std::min<std::int64_t>(static_cast<std::int64_t>(h) * o.block_tokens, r.input_length);
}

// The order in which a request's blocks are touched: first to last (published) or last to first
// (vLLM), as indexes into hash_ids.
template <typename F>
void for_each_touch(std::size_t count, const CurveOptions& o, F&& f) {
  if (o.rules == CurveRules::kPublished) {
    for (std::size_t k = 0; k < count; ++k) f(k);
  } else {
    for (std::size_t k = count; k-- > 0;) f(k);
  }
}

void check(const std::vector<TraceRequest>& trace, const CurveOptions& o) {
  if (o.block_tokens <= 0) throw InputError("", 0, 0, "cache curve: block tokens must be positive");
  for (const auto& r : trace) {
    if (r.input_length <= 0) {
      throw InputError("", r.line, 0, "cache curve: a request has no input tokens");
    }
  }
}

double ratio(double num, double den) { return den > 0 ? num / den : 0.0; }

CacheCurve lru_curve(const std::vector<TraceRequest>& trace, const std::vector<std::int64_t>& sorted,
                     const CurveOptions& o) {
  CacheCurve out;
  std::size_t accesses = 0;
  for (const auto& r : trace) accesses += blocks_of(r, o).touched;
  StackDistances stack(accesses);
  std::vector<std::int64_t> hits(sorted.size(), 0);
  std::vector<double> fractions(sorted.size(), 0.0);
  std::int64_t infinite_hits = 0;
  double infinite_fractions = 0;
  std::vector<std::int64_t> prefix_max;  // m_k of the current request
  for (const auto& r : trace) {
    ++out.requests;
    out.prompt_tokens += r.input_length;
    const auto b = blocks_of(r, o);
    prefix_max.clear();
    std::int64_t running = 0;
    std::size_t seen_prefix = 0;
    bool all_seen = true;
    for (std::size_t k = 0; k < b.lookup; ++k) {
      const std::int64_t d = stack.distance(r.hash_ids[k]);
      all_seen = all_seen && d != StackDistances::kFirstUse;
      if (all_seen) ++seen_prefix;
      running = std::max(running, d);
      prefix_max.push_back(running);
    }
    const auto input = static_cast<double>(r.input_length);
    infinite_hits += hit_tokens(r, seen_prefix, o);
    infinite_fractions += static_cast<double>(hit_tokens(r, seen_prefix, o)) / input;
    for (std::size_t c = 0; c < sorted.size(); ++c) {
      const auto h = static_cast<std::size_t>(std::lower_bound(prefix_max.begin(), prefix_max.end(), sorted[c]) -
                                              prefix_max.begin());
      const auto t = hit_tokens(r, h, o);
      hits[c] += t;
      fractions[c] += static_cast<double>(t) / input;
    }
    for_each_touch(b.touched, o, [&](std::size_t k) { stack.use(r.hash_ids[k]); });
  }
  out.distinct_blocks = static_cast<std::int64_t>(stack.distinct());
  const auto tokens = static_cast<double>(out.prompt_tokens);
  const auto requests = static_cast<double>(out.requests);
  out.infinite_token_hit_rate = ratio(static_cast<double>(infinite_hits), tokens);
  out.infinite_request_hit_rate = ratio(infinite_fractions, requests);
  for (std::size_t c = 0; c < sorted.size(); ++c) {
    out.points.push_back({sorted[c], hits[c], ratio(static_cast<double>(hits[c]), tokens),
                          ratio(fractions[c], requests)});
  }
  return out;
}

// One cache simulated with the simulator's tier; every store completes at once.
class SimulatedCache {
 public:
  SimulatedCache(std::int64_t capacity, engine::EvictionPolicy policy) : tier_("curve", capacity, policy) {}
  bool holds(std::int64_t id) const { return tier_.is_ready(key(id)); }
  void use(std::int64_t id) {
    const auto h = key(id);
    if (tier_.contains(h)) {
      tier_.touch(std::span<const std::uint64_t>(&h, 1));
    } else if (tier_.begin_store(h)) {
      tier_.finish_store(h);
    }
  }

 private:
  static std::uint64_t key(std::int64_t id) { return static_cast<std::uint64_t>(id); }
  engine::KvTier tier_;
};

CacheCurvePoint simulated_point(const std::vector<TraceRequest>& trace, std::int64_t capacity,
                                const CurveOptions& o) {
  SimulatedCache cache(capacity, o.policy);
  std::int64_t hits = 0;
  double fractions = 0;
  std::int64_t tokens = 0;
  for (const auto& r : trace) {
    const auto b = blocks_of(r, o);
    std::size_t h = 0;
    while (h < b.lookup && cache.holds(r.hash_ids[h])) ++h;
    const auto t = hit_tokens(r, h, o);
    hits += t;
    tokens += r.input_length;
    fractions += static_cast<double>(t) / static_cast<double>(r.input_length);
    for_each_touch(b.touched, o, [&](std::size_t k) { cache.use(r.hash_ids[k]); });
  }
  return {capacity, hits, ratio(static_cast<double>(hits), static_cast<double>(tokens)),
          ratio(fractions, static_cast<double>(trace.size()))};
}

}  // namespace

CacheCurve cache_curve(const std::vector<TraceRequest>& trace, const std::vector<std::int64_t>& capacities,
                       const CurveOptions& options) {
  check(trace, options);
  std::vector<std::int64_t> sorted = capacities;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  for (const auto c : sorted) {
    if (c <= 0) throw InputError("", 0, 0, "cache curve: capacities must be positive, got " + std::to_string(c));
  }
  // The LRU pass gives the trace's totals and the infinite-cache rates in every case.
  auto out = lru_curve(trace, sorted, options);
  if (options.policy == engine::EvictionPolicy::kLru) return out;

  std::size_t threads = options.threads > 0 ? static_cast<std::size_t>(options.threads)
                                            : std::max(1u, std::thread::hardware_concurrency());
  threads = std::min(threads, sorted.size());
  std::vector<CacheCurvePoint> points(sorted.size());
  std::vector<std::thread> pool;
  for (std::size_t w = 0; w < threads; ++w) {
    pool.emplace_back([&, w] {
      for (std::size_t c = w; c < sorted.size(); c += threads) points[c] = simulated_point(trace, sorted[c], options);
    });
  }
  for (auto& t : pool) t.join();
  out.points = std::move(points);
  return out;
}

TierStackResult tier_stack_hits(const std::vector<TraceRequest>& trace, const std::vector<TierLevel>& levels,
                                const CurveOptions& options) {
  check(trace, options);
  if (levels.empty()) throw InputError("", 0, 0, "tier stack: no tiers");
  std::vector<SimulatedCache> caches;
  TierStackResult out;
  for (const auto& l : levels) {
    if (l.capacity_blocks <= 0) {
      throw InputError("", 0, 0, "tier stack: tier '" + l.name + "' needs a positive capacity");
    }
    caches.emplace_back(l.capacity_blocks, l.policy);
    out.tiers.push_back({l.name, l.capacity_blocks, 0, 0, 0});
  }
  std::vector<double> fractions(levels.size() + 1, 0.0);
  std::vector<std::int64_t> served(levels.size(), 0);
  for (const auto& r : trace) {
    ++out.requests;
    out.prompt_tokens += r.input_length;
    const auto b = blocks_of(r, options);
    std::fill(served.begin(), served.end(), 0);
    std::size_t h = 0;
    for (; h < b.lookup; ++h) {
      std::size_t t = 0;
      while (t < caches.size() && !caches[t].holds(r.hash_ids[h])) ++t;
      if (t == caches.size()) break;
      served[t] += hit_tokens(r, h + 1, options) - hit_tokens(r, h, options);
    }
    const auto input = static_cast<double>(r.input_length);
    for (std::size_t t = 0; t < caches.size(); ++t) {
      out.tiers[t].hit_tokens += served[t];
      fractions[t] += static_cast<double>(served[t]) / input;
    }
    out.total.hit_tokens += hit_tokens(r, h, options);
    fractions.back() += static_cast<double>(hit_tokens(r, h, options)) / input;
    for (auto& c : caches) {
      for_each_touch(b.touched, options, [&](std::size_t k) { c.use(r.hash_ids[k]); });
    }
  }
  const auto tokens = static_cast<double>(out.prompt_tokens);
  const auto requests = static_cast<double>(out.requests);
  for (std::size_t t = 0; t < caches.size(); ++t) {
    out.tiers[t].token_hit_rate = ratio(static_cast<double>(out.tiers[t].hit_tokens), tokens);
    out.tiers[t].request_hit_rate = ratio(fractions[t], requests);
  }
  out.total.name = "total";
  for (const auto& l : levels) out.total.capacity_blocks += l.capacity_blocks;
  out.total.token_hit_rate = ratio(static_cast<double>(out.total.hit_tokens), tokens);
  out.total.request_hit_rate = ratio(fractions.back(), requests);
  return out;
}

}  // namespace kvsim::analysis
