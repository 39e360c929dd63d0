#pragma once
// Concurrent transfers sharing bandwidth over a sealed Topology. Each transfer moves a number of
// bytes along a route of (link, direction) hops and, optionally, through extra shared resources
// that are not links (an NVMe drive's read or write bandwidth, a storage controller). Times are
// integer nanoseconds (SimTime), sizes Bytes, rates bytes/s (double).
//
// Model (docs/topology.md):
//   * A transfer started at `now` waits latency = route_latency + extra_latency, then its bytes
//     flow; a zero-byte transfer completes when its latency ends.
//   * Flowing transfers share every (link, direction) and resource max-min fairly, by progressive
//     filling: all unfrozen rates rise together; when a resource saturates, the transfers through
//     it freeze at the current level; a transfer also freezes at its own rate cap. This is the
//     bottleneck (max-min fair) allocation of Bertsekas and Gallager, "Data Networks", 2nd ed.,
//     ch. 6 (max-min flow control), and what SimGrid's LMM solver computes for equal weights.
//   * Duplex interference: a (link, direction) whose opposite direction carries at least one
//     flowing transfer has capacity min(alone, both_busy_each) when both_busy_each > 0 (an RTX
//     4090's PCIe link: 25 / 26.5 GB/s alone, ~13 GB/s each with both busy, docs/sources.md A2).
//   * Shares are recomputed only at events: a transfer starts flowing, completes or is
//     cancelled. Between events every rate is constant, so a transfer's end is
//     event time + ceil(remaining x 1e9 / rate) ns: never a nanosecond early.
// Results depend only on the sequence of start/cancel calls, not on how often advance_to() is
// called: progress is computed at events, never at query times.
#include <cstdint>
#include <string>
#include <vector>

#include "hw/topology.hpp"
#include "sim/core/units.hpp"

namespace kvsim::hw {

using TransferId = std::uint64_t;
inline constexpr TransferId kNoTransfer = 0;
using ResourceId = std::int32_t;

struct TransferOptions {
  SimTime extra_latency = 0;  // added to the route's latency: device first byte, software
  BytesPerSec rate_cap{0};    // the transfer's own ceiling (e.g. a per-stream limit); 0 = none
  std::vector<ResourceId> resources;  // extra shared resources used besides the route's links
  std::uint64_t tag = 0;              // caller's cookie, returned in Completed
};

struct Completed {
  TransferId id = kNoTransfer;
  std::uint64_t tag = 0;
  SimTime started = 0;   // when start() was called
  SimTime finished = 0;  // when the last byte arrived
  Bytes bytes{0};
};

// Transfers in flight over a Topology and their max-min fair rates (bytes/s); time in ns.
class FlowNetwork {
 public:
  // Copies what it needs from the topology, which must be sealed.
  explicit FlowNetwork(const Topology& topology);

  // A shared resource of `capacity` bytes/s (> 0 and finite, else InputError).
  ResourceId add_resource(std::string name, BytesPerSec capacity);
  std::size_t num_resources() const { return resource_names_.size(); }
  const std::string& resource_name(ResourceId id) const;

  // Starts moving `bytes` along `route` at time `now` (>= the latest time seen). Completions due
  // at or before `now` are processed first and kept for the next advance_to(). An empty route
  // with no resource and no rate cap moves its bytes instantly once the latency has passed.
  TransferId start(SimTime now, const Route& route, Bytes bytes, const TransferOptions& opts);

  // When the next transfer completes if nothing else is started: exact, including the effect of
  // transfers still waiting out their latency. <= now() if completions await advance_to();
  // kNever when nothing is in flight.
  SimTime next_completion() const;

  // Moves time to t (>= now()) and returns the transfers that finished at or before t, in finish
  // order, ties by TransferId. The second form appends to `out` and does not allocate once `out`
  // has grown.
  std::vector<Completed> advance_to(SimTime t);
  void advance_to(SimTime t, std::vector<Completed>& out);

  // Stops a transfer at `now`; its bytes moved so far stay counted. False when it is not in
  // flight (unknown, or already finished: such a transfer is still reported by advance_to).
  bool cancel(SimTime now, TransferId id);

  SimTime now() const { return clock_; }
  // Transfers started and not yet finished (waiting out their latency or flowing).
  std::size_t active() const { return active_; }
  bool in_flight(TransferId id) const;
  // Current rate of a transfer in bytes/s: 0 while it waits out its latency or is unknown.
  double rate(TransferId id) const;

  // Current allocated rate, capacity (with duplex interference applied) and their ratio for one
  // direction of a link; and the cumulative bytes it has carried up to now() (whole bytes of
  // finished transfers plus the whole bytes in-flight transfers have delivered so far).
  BytesPerSec allocated(LinkId link, bool forward) const;
  BytesPerSec capacity(LinkId link, bool forward) const;
  double utilization(LinkId link, bool forward) const;
  Bytes bytes_moved(LinkId link, bool forward) const;
  // The same for an extra resource.
  BytesPerSec resource_allocated(ResourceId id) const;
  double resource_utilization(ResourceId id) const;
  Bytes resource_bytes_moved(ResourceId id) const;
  // The cumulative bytes of every link direction at a time t >= now(), as bytes_moved() would
  // read after advance_to(t), worked out on a copy of the state: nothing changes, so a caller
  // may sample at times of its own without shifting any result. Index 2 x link + (forward ? 0 :
  // 1).
  std::vector<std::int64_t> link_bytes_moved_at(SimTime t) const;

 private:
  enum class Phase : std::uint8_t { kFree, kWaiting, kFlowing };
  // What changes as time runs; one copy is live, another is a scratch copy that
  // next_completion() runs forward.
  struct Flow {
    Phase phase = Phase::kFree;
    SimTime flow_start = 0;  // when the latency ends
    SimTime end = kNever;    // projected completion at the current rate
    double remaining = 0;    // bytes left at State::now
    double rate = -1;        // bytes/s; -1 = not yet allocated
  };
  struct State {
    SimTime now = 0;  // time of the last event; `remaining` is as of this time
    std::vector<Flow> flows;
    std::vector<double> cap;    // per resource, effective capacity
    std::vector<double> alloc;  // per resource, sum of allocated rates
    // Resources whose cap or alloc the last recompute() moved off its idle value (cap = base
    // capacity, alloc = 0); every other resource holds its idle value.
    std::vector<std::int32_t> touched;
  };
  // What a transfer is, fixed at start().
  struct Slot {
    TransferId id = kNoTransfer;
    std::uint64_t tag = 0;
    std::int64_t bytes = 0;
    SimTime started = 0;
    double rate_cap = 0;
    std::vector<std::int32_t> res;  // resource indices (links first, then extra resources)
  };

  std::int32_t link_res(LinkId link, bool forward) const;
  std::int32_t extra_res(ResourceId id) const;
  std::size_t find_slot(TransferId id) const;  // slots_.size() when absent
  SimTime next_event(const State& s) const;
  void progress(State& s, SimTime t) const;
  void recompute(State& s) const;
  void run_live(SimTime t);
  SimTime run_dry(State& s) const;
  void finish(std::size_t slot, SimTime t);
  double delivered(std::size_t slot) const;
  Bytes moved(std::int32_t r) const;

  // Per resource index r: links are 2 * link + (forward ? 0 : 1); extra resources follow.
  std::size_t num_link_res_ = 0;
  std::vector<double> base_cap_;
  std::vector<double> busy_cap_;  // 0 = no duplex interference
  std::vector<std::int64_t> finished_bytes_;
  std::vector<SimTime> link_latency_;
  std::vector<std::string> resource_names_;

  std::vector<Slot> slots_;
  std::vector<std::size_t> free_slots_;
  State live_;
  SimTime clock_ = 0;
  TransferId next_id_ = 1;
  std::size_t active_ = 0;
  std::vector<Completed> pending_;  // finished, not yet returned by advance_to()

  mutable State scratch_;
  mutable bool cache_valid_ = false;
  mutable SimTime cache_ = kNever;
  // Working arrays of recompute().
  mutable std::vector<std::int32_t> count_;
  mutable std::vector<std::int32_t> unfrozen_;
  mutable std::vector<double> frozen_;
  mutable std::vector<char> saturated_;
  mutable std::vector<double> level_;
  mutable std::vector<std::int32_t> used_res_;  // resources some flowing transfer crosses, ascending
  mutable std::vector<std::int32_t> flowing_;   // flowing transfers, ascending
};

}  // namespace kvsim::hw
