#include "sim/cluster/router.hpp"

#include <algorithm>

namespace kvsim::cluster {

Router::Router(const scenario::RouterSpec& spec, int data_parallel_size,
               const std::vector<std::unique_ptr<engine::Engine>>& engines)
    : policy_(spec.policy), dp_(data_parallel_size), engines_(engines) {}

int Router::load(int u) const {
  int n = 0;
  for (int e = u * dp_; e < (u + 1) * dp_; ++e) {
    const auto& eng = *engines_[static_cast<std::size_t>(e)];
    n += eng.num_running() + eng.num_waiting();
  }
  return n;
}

int Router::least_loaded(const std::vector<int>& candidates) const {
  int best = candidates.front();
  for (const int u : candidates) {
    if (load(u) < load(best)) best = u;
  }
  return best;
}

int Router::rank_in_group(int u) const {
  int best = u * dp_;
  std::int64_t best_score = -1;
  for (int e = u * dp_; e < (u + 1) * dp_; ++e) {
    const auto& eng = *engines_[static_cast<std::size_t>(e)];
    const std::int64_t score = 4 * static_cast<std::int64_t>(eng.num_waiting()) + eng.num_running();
    if (best_score < 0 || score < best_score) {
      best = e;
      best_score = score;
    }
  }
  return best;
}

int Router::round_robin() {
  const int units = static_cast<int>(engines_.size()) / dp_;
  const int u = next_unit_;
  next_unit_ = (next_unit_ + 1) % units;
  return u;
}

int Router::route(const workload::RequestSpec& spec, const engine::Request& r) {
  const int units = static_cast<int>(engines_.size()) / dp_;
  if (units == 1) return rank(0);
  switch (policy_) {
    case scenario::RoutingPolicy::kRoundRobin:
      return rank(round_robin());
    case scenario::RoutingPolicy::kLeastLoaded:
      scratch_.resize(static_cast<std::size_t>(units));
      for (int u = 0; u < units; ++u) scratch_[static_cast<std::size_t>(u)] = u;
      return rank(least_loaded(scratch_));
    case scenario::RoutingPolicy::kPrefixAware: {
      std::int64_t best_hit = -1;
      scratch_.clear();
      for (int u = 0; u < units; ++u) {
        std::int64_t hit = 0;
        for (int e = u * dp_; e < (u + 1) * dp_; ++e) {
          hit = std::max(hit, engines_[static_cast<std::size_t>(e)]->kv().cached_prefix_blocks(
                                  r.block_hashes));
        }
        if (hit > best_hit) {
          best_hit = hit;
          scratch_.clear();
        }
        if (hit == best_hit) scratch_.push_back(u);
      }
      return rank(least_loaded(scratch_));
    }
    case scenario::RoutingPolicy::kSessionAffinity: {
      if (spec.conversation_id < 0) return rank(round_robin());
      const auto it = conversation_unit_.find(spec.conversation_id);
      if (it != conversation_unit_.end()) return rank(it->second);
      const int u = round_robin();
      conversation_unit_.emplace(spec.conversation_id, u);
      return rank(u);
    }
  }
  return rank(0);  // unreachable: every policy returns above
}

}  // namespace kvsim::cluster
