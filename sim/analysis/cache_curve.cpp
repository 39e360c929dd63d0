#include "kvsim/workload/cache_curve.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace kvsim::workload {
namespace {

// Fenwick tree of 0/1 marks at access times: a mark at each block's latest access.
class Fenwick {
 public:
  explicit Fenwick(std::size_t n) : tree_(n + 1, 0) {}
  void add(std::size_t i, int v) {
    for (++i; i < tree_.size(); i += i & (~i + 1)) tree_[i] += v;
  }
  // Sum of marks at positions [0, i).
  std::int64_t prefix(std::size_t i) const {
    std::int64_t s = 0;
    for (; i > 0; i -= i & (~i + 1)) s += tree_[i];
    return s;
  }

 private:
  std::vector<std::int64_t> tree_;
};

}  // namespace

CacheCurve lru_cache_curve(const std::vector<TraceRequest>& trace, int block_tokens,
                           const std::vector<std::int64_t>& capacities) {
  CacheCurve out;
  std::size_t accesses = 0;
  for (const auto& r : trace) accesses += r.hash_ids.size();
  Fenwick marks(accesses);
  std::unordered_map<std::int64_t, std::size_t> last;  // hash -> time of its latest access
  std::vector<std::int64_t> sorted = capacities;
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> hit_tokens(sorted.size(), 0.0);
  std::vector<std::int64_t> hit_requests(sorted.size(), 0);
  double infinite_hits = 0;
  std::size_t now = 0;
  std::vector<std::int64_t> prefix_max;  // m_k of the current request
  constexpr std::int64_t kNew = std::numeric_limits<std::int64_t>::max();
  for (const auto& r : trace) {
    ++out.requests;
    out.prompt_tokens += r.input_length;
    const std::int64_t full = std::min<std::int64_t>(r.input_length / block_tokens,
                                                     static_cast<std::int64_t>(r.hash_ids.size()));
    // Stack distances of the full blocks, before the request touches them.
    prefix_max.clear();
    std::int64_t running = 0;
    std::int64_t seen_prefix = 0;
    bool all_seen = true;
    for (std::int64_t k = 0; k < full; ++k) {
      auto it = last.find(r.hash_ids[static_cast<std::size_t>(k)]);
      const std::int64_t d =
          it == last.end() ? kNew : marks.prefix(now) - marks.prefix(it->second + 1);
      if (it == last.end()) all_seen = false;
      if (all_seen) ++seen_prefix;
      running = std::max(running, d);
      prefix_max.push_back(running);
    }
    infinite_hits += static_cast<double>(seen_prefix * block_tokens);
    for (std::size_t c = 0; c < sorted.size(); ++c) {
      const auto hit = static_cast<std::int64_t>(
          std::lower_bound(prefix_max.begin(), prefix_max.end(), sorted[c]) - prefix_max.begin());
      hit_tokens[c] += static_cast<double>(hit * block_tokens);
      hit_requests[c] += hit > 0 ? 1 : 0;
    }
    // Touch every block, last to first, so the first ends most recently used.
    for (auto k = static_cast<std::int64_t>(r.hash_ids.size()) - 1; k >= 0; --k) {
      const std::int64_t h = r.hash_ids[static_cast<std::size_t>(k)];
      auto it = last.find(h);
      if (it != last.end()) marks.add(it->second, -1);
      marks.add(now, 1);
      last[h] = now;
      ++now;
    }
  }
  out.distinct_blocks = static_cast<std::int64_t>(last.size());
  const double tokens = std::max<double>(static_cast<double>(out.prompt_tokens), 1.0);
  out.infinite_token_hit_rate = infinite_hits / tokens;
  for (std::size_t c = 0; c < sorted.size(); ++c) {
    out.points.push_back(CacheCurvePoint{sorted[c], hit_tokens[c] / tokens,
                                         static_cast<double>(hit_requests[c]) /
                                             std::max<double>(static_cast<double>(out.requests), 1.0)});
  }
  return out;
}

}  // namespace kvsim::workload
