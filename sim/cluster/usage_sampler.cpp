#include "sim/cluster/usage_sampler.hpp"

#include <algorithm>
#include <string_view>

#include "sim/scenario/deployment.hpp"

namespace kvsim::cluster {

UsageSampler::UsageSampler(const scenario::Scenario& sc,
                           const std::vector<std::unique_ptr<engine::Engine>>& engines,
                           const OffloadCluster* offload)
    : sc_(sc),
      engines_(engines),
      offload_(offload),
      block_bytes_(scenario::replica_block_bytes(sc).value) {}

// The state at `t`, every event at or before t done and none after: GPU blocks and tier chunks
// as they stand, link bytes as the network will have moved them by t (read on a copy).
io::UsageSample UsageSampler::take(SimTime t) {
  io::UsageSample u;
  u.time_s = to_seconds(t);
  const SimTime dt = t - last_;
  u.interval_s = to_seconds(dt);
  const std::int64_t block = block_bytes_;
  for (const auto& e : engines_) {
    const auto& pool = e->kv().pool();
    u.gpu_bytes_held += (pool.num_blocks() - 1 - pool.num_free_blocks()) * block;
  }
  if (offload_ != nullptr) {
    const engine::OffloadSystem& offload = *offload_->offload;
    const std::int64_t chunk = block * offload.chunk_blocks();
    for (std::size_t k = 0; k < offload_->tier_instances.size(); ++k) {
      io::TierUsage tu;
      tu.kind = engine::kv_tier_kind_name(sc_.kv_offload.tiers[k].kind);
      for (const int idx : offload_->tier_instances[k]) {
        tu.bytes_held += offload.tier(idx).size() * chunk;
        tu.capacity_bytes += offload.tier(idx).capacity() * chunk;
      }
      u.tiers.push_back(std::move(tu));
    }
    // Utilization of each link direction over (last_, t]; the busiest link per kind.
    std::vector<std::int64_t> moved = offload_->network->link_bytes_moved_at(t);
    if (last_link_bytes_.empty()) last_link_bytes_.assign(moved.size(), 0);
    const hw::Topology& topo = *offload_->topology;
    const double seconds = to_seconds(dt);
    for (const char* kind : {"pcie", "nvme", "nic", "store"}) {
      io::LinkUsage lu;
      lu.kind = kind;
      bool present = false;
      for (hw::LinkId l = 0; l < static_cast<hw::LinkId>(topo.num_links()); ++l) {
        if (std::string_view(link_kind(topo, l)) != kind) continue;
        present = true;
        if (dt <= 0) continue;
        const std::size_t f = 2 * static_cast<std::size_t>(l);
        const auto& spec = topo.link(l);
        lu.utilization_forward =
            std::max(lu.utilization_forward, static_cast<double>(moved[f] - last_link_bytes_[f]) /
                                                 (spec.forward.value * seconds));
        lu.utilization_backward = std::max(
            lu.utilization_backward, static_cast<double>(moved[f + 1] - last_link_bytes_[f + 1]) /
                                         (spec.backward.value * seconds));
      }
      if (present) u.links.push_back(std::move(lu));
    }
    last_link_bytes_ = std::move(moved);
  }
  last_ = t;
  taken_ = true;
  return u;
}

}  // namespace kvsim::cluster
