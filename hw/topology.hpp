#pragma once
// The devices of a deployment (GPUs, hosts, PCIe and network switches, NICs, storage nodes, NVMe
// drives) and the full-duplex links between them, with a capacity in bytes/s per direction and a
// latency in ns. Routes are the fewest-hop paths, computed once by seal(); among equal-hop paths
// the one whose sequence of link ids is lexicographically smallest wins, so routes depend only on
// the order in which nodes and links were added.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "sim/core/units.hpp"

namespace kvsim::hw {

using NodeId = std::int32_t;
using LinkId = std::int32_t;
inline constexpr NodeId kNoNode = -1;

enum class NodeKind { kGpu, kHost, kPcieSwitch, kNic, kNetworkSwitch, kStorageNode, kNvmeDrive };

const char* to_string(NodeKind kind);

// One full-duplex link between nodes a and b (a and b as passed to Topology::add_link).
struct LinkSpec {
  std::string name;
  BytesPerSec forward{0};   // a -> b, one direction alone
  BytesPerSec backward{0};  // b -> a, one direction alone
  // Per-direction capacity while both directions carry traffic; 0 = the directions do not
  // interfere. An RTX 4090's PCIe link: 25 GB/s H2D / 26.5 GB/s D2H alone, ~13 GB/s each when
  // both are busy (docs/sources.md A2, A9). A direction never gets more than it would alone:
  // its capacity while both are busy is min(alone, both_busy_each).
  BytesPerSec both_busy_each{0};
  SimTime latency = 0;  // added once per hop to a route's first-byte latency
};

// One hop of a route: the link, traversed a -> b (forward) or b -> a.
struct Hop {
  LinkId link = -1;
  bool forward = true;
  friend bool operator==(const Hop&, const Hop&) = default;
};
using Route = std::vector<Hop>;

// Nodes and full-duplex links (capacities in bytes/s per direction, latencies in ns), built
// once, then sealed; routes are looked up, never searched, after seal().
class Topology {
 public:
  Topology();
  ~Topology();
  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  // Adding nodes or links after seal() is a programming error (KVSIM_ASSERT).
  NodeId add_node(NodeKind kind, std::string name);
  // A link between two distinct existing nodes. Capacities must be positive and finite,
  // both_busy_each and latency non-negative; otherwise InputError (path = the link's name).
  // Parallel links between the same two nodes are allowed (e.g. two NIC ports).
  LinkId add_link(NodeId a, NodeId b, LinkSpec spec);
  // Computes every route. Idempotent.
  void seal();
  bool sealed() const;

  std::size_t num_nodes() const;
  std::size_t num_links() const;
  NodeKind kind(NodeId node) const;
  const std::string& name(NodeId node) const;
  // The first node with this name, or kNoNode.
  NodeId find_node(std::string_view name) const;
  const LinkSpec& link(LinkId link) const;
  NodeId link_a(LinkId link) const;
  NodeId link_b(LinkId link) const;

  // Queries below need seal(). A node reaches itself over the empty route.
  bool reachable(NodeId from, NodeId to) const;
  // Fewest-hop route from -> to; empty when from == to or when `to` is unreachable.
  Route route(NodeId from, NodeId to) const;
  // Same, written into `out` (cleared first) without allocating once `out` has grown.
  void route_into(NodeId from, NodeId to, Route& out) const;
  // Number of hops of the fewest-hop route; -1 when unreachable.
  int hop_count(NodeId from, NodeId to) const;
  // Sum of the latencies of the route's links.
  SimTime route_latency(const Route& route) const;
  // The smallest one-direction-alone capacity along the route (what a lone transfer gets);
  // +infinity for the empty route.
  BytesPerSec route_bottleneck(const Route& route) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A GPU's host link as a LinkSpec for add_link(host, gpu, ...): forward = host-to-device
// (loads), backward = device-to-host (stores), both_busy_each from the measured bidirectional
// figure. Rates from the GPU catalog (docs/sources.md A2, A5).
LinkSpec gpu_host_link(const HostLinkSpec& host_link, std::string name, SimTime latency);

}  // namespace kvsim::hw
