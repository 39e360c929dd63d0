#pragma once
// What a run holds and moves over time (RunControl::on_usage, `kvsim run --usage-out`): KV bytes
// held on the GPUs and per offload tier, and the busiest link's utilisation per link kind over
// each sampling interval.
//
// A sample is read, never made: the event loop takes it lazily when it first passes a boundary,
// from the state as it stands then (every event at or before the boundary done), and link bytes
// as the flow network will have moved them by the boundary (read on a copy of the network), so
// sampling changes no result.
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/cluster/offload_builder.hpp"
#include "sim/core/units.hpp"
#include "sim/engine/engine.hpp"
#include "sim/io/results.hpp"
#include "sim/scenario/scenario.hpp"

namespace kvsim::cluster {

class UsageSampler {
 public:
  // `offload` null when the scenario has no offload system; both outlive the sampler.
  UsageSampler(const scenario::Scenario& sc,
               const std::vector<std::unique_ptr<engine::Engine>>& engines,
               const OffloadCluster* offload);

  // The sample at `t` over the interval since the previous one (or since 0).
  io::UsageSample take(SimTime t);
  SimTime last() const { return last_; }
  bool taken() const { return taken_; }

 private:
  const scenario::Scenario& sc_;
  const std::vector<std::unique_ptr<engine::Engine>>& engines_;
  const OffloadCluster* offload_;
  std::int64_t block_bytes_;
  SimTime last_ = 0;
  bool taken_ = false;
  std::vector<std::int64_t> last_link_bytes_;  // per link direction at last_
};

}  // namespace kvsim::cluster
