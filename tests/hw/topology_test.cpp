#include "hw/topology.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "sim/core/error.hpp"

namespace kvsim::hw {
namespace {

LinkSpec symmetric(const char* name, double rate, SimTime latency) {
  LinkSpec s;
  s.name = name;
  s.forward = BytesPerSec{rate};
  s.backward = BytesPerSec{rate};
  s.latency = latency;
  return s;
}

// A GeForce host reading from a network KV store: GPU -(PCIe)- host -(PCIe)- NIC -(200G)-
// switch -(storage NIC)- storage node. Links are added host-side first, so the GPU's link runs
// host -> gpu (forward = H2D) and the others run towards the storage node.
struct RemoteShape {
  Topology t;
  NodeId gpu{}, host{}, nic{}, sw{}, store{};
  LinkId pcie{}, nic_pcie{}, net{}, store_link{};
  RemoteShape() {
    gpu = t.add_node(NodeKind::kGpu, "gpu0");
    host = t.add_node(NodeKind::kHost, "host0");
    nic = t.add_node(NodeKind::kNic, "nic0");
    sw = t.add_node(NodeKind::kNetworkSwitch, "tor");
    store = t.add_node(NodeKind::kStorageNode, "kvstore");
    HostLinkSpec h;
    h.h2d = BytesPerSec{25e9};
    h.d2h = BytesPerSec{26.5e9};
    h.bidirectional_each = BytesPerSec{13e9};
    pcie = t.add_link(host, gpu, gpu_host_link(h, "gpu0-pcie", 500));
    nic_pcie = t.add_link(host, nic, symmetric("nic0-pcie", 25.2e9, 500));
    net = t.add_link(nic, sw, symmetric("nic0-tor", 23e9, 1 * kMicrosecond));
    store_link = t.add_link(sw, store, symmetric("tor-kvstore", 23e9, 2 * kMicrosecond));
    t.seal();
  }
};

// The GPU reaches the store in four hops: the PCIe link backwards (it was added host -> gpu),
// then three links forwards; the latency is 0.5 + 0.5 + 1 + 2 us = 4 us.
TEST(Topology, GpuToStorageNodeRoute) {
  RemoteShape s;
  const Route r = s.t.route(s.gpu, s.store);
  const Route expected{{s.pcie, false}, {s.nic_pcie, true}, {s.net, true}, {s.store_link, true}};
  EXPECT_EQ(r, expected);
  EXPECT_EQ(s.t.hop_count(s.gpu, s.store), 4);
  EXPECT_EQ(s.t.route_latency(r), 4 * kMicrosecond);
  // The smallest one-direction rate on the way: the 23 GB/s network links.
  EXPECT_DOUBLE_EQ(s.t.route_bottleneck(r).value, 23e9);
}

// The way back uses the same links in reverse order and opposite directions, with the same
// latency; a load's last hop is the PCIe link host -> gpu (H2D, forward, 25 GB/s alone).
TEST(Topology, ReverseRouteMirrorsTheForwardOne) {
  RemoteShape s;
  const Route r = s.t.route(s.store, s.gpu);
  const Route expected{{s.store_link, false}, {s.net, false}, {s.nic_pcie, false}, {s.pcie, true}};
  EXPECT_EQ(r, expected);
  EXPECT_EQ(s.t.route_latency(r), 4 * kMicrosecond);
  EXPECT_DOUBLE_EQ(s.t.link(s.pcie).forward.value, 25e9);
  EXPECT_DOUBLE_EQ(s.t.link(s.pcie).backward.value, 26.5e9);
  EXPECT_DOUBLE_EQ(s.t.link(s.pcie).both_busy_each.value, 13e9);
}

TEST(Topology, NodesAndLinksKeepTheirAttributes) {
  RemoteShape s;
  EXPECT_EQ(s.t.num_nodes(), 5U);
  EXPECT_EQ(s.t.num_links(), 4U);
  EXPECT_EQ(s.t.kind(s.store), NodeKind::kStorageNode);
  EXPECT_EQ(s.t.name(s.sw), "tor");
  EXPECT_EQ(s.t.find_node("nic0"), s.nic);
  EXPECT_EQ(s.t.find_node("nope"), kNoNode);
  EXPECT_EQ(s.t.link_a(s.pcie), s.host);
  EXPECT_EQ(s.t.link_b(s.pcie), s.gpu);
  EXPECT_EQ(s.t.link(s.net).name, "nic0-tor");
  EXPECT_STREQ(to_string(NodeKind::kNvmeDrive), "nvme_drive");
}

// A node reaches itself over the empty route; an isolated node is unreachable and its route is
// empty too, told apart by reachable() and hop_count() = -1.
TEST(Topology, SelfAndUnreachable) {
  Topology t;
  const NodeId a = t.add_node(NodeKind::kHost, "a");
  const NodeId b = t.add_node(NodeKind::kGpu, "b");
  const NodeId lone = t.add_node(NodeKind::kNvmeDrive, "lone");
  t.add_link(a, b, symmetric("ab", 1e9, 0));
  t.seal();
  EXPECT_TRUE(t.reachable(a, a));
  EXPECT_TRUE(t.route(a, a).empty());
  EXPECT_EQ(t.hop_count(a, a), 0);
  EXPECT_FALSE(t.reachable(a, lone));
  EXPECT_FALSE(t.reachable(lone, b));
  EXPECT_TRUE(t.route(a, lone).empty());
  EXPECT_EQ(t.hop_count(a, lone), -1);
  EXPECT_EQ(t.route_latency(Route{}), 0);
  EXPECT_EQ(t.route_bottleneck(Route{}).value, std::numeric_limits<double>::infinity());
}

// Diamond a-b-d / a-c-d: both routes a -> d have two hops. The rule picks the smallest link id
// at each step: from a, link 0 (a-b) beats link 1 (a-c), then b-d. From d back to a, link 2
// (d-b) beats link 3 (d-c). A parallel a-b link (id 4) changes nothing; a direct a-d link wins
// whatever its id, having fewer hops.
TEST(Topology, FewestHopsThenSmallestLinkIds) {
  Topology t;
  const NodeId a = t.add_node(NodeKind::kHost, "a");
  const NodeId b = t.add_node(NodeKind::kPcieSwitch, "b");
  const NodeId c = t.add_node(NodeKind::kPcieSwitch, "c");
  const NodeId d = t.add_node(NodeKind::kGpu, "d");
  const LinkId ab = t.add_link(a, b, symmetric("ab", 1e9, 10));
  const LinkId ac = t.add_link(a, c, symmetric("ac", 1e9, 1));
  const LinkId bd = t.add_link(b, d, symmetric("bd", 1e9, 10));
  const LinkId cd = t.add_link(c, d, symmetric("cd", 1e9, 1));
  t.add_link(a, b, symmetric("ab2", 1e9, 0));
  t.seal();
  EXPECT_EQ(t.route(a, d), (Route{{ab, true}, {bd, true}}));
  EXPECT_EQ(t.route(d, a), (Route{{bd, false}, {ab, false}}));
  // Hop count, not latency, decides: the slower-latency branch still wins on link ids.
  EXPECT_EQ(t.route_latency(t.route(a, d)), 20);
  EXPECT_EQ(t.route(c, b), (Route{{ac, false}, {ab, true}}));
  (void)cd;

  Topology u;
  const NodeId ua = u.add_node(NodeKind::kHost, "a");
  const NodeId ub = u.add_node(NodeKind::kPcieSwitch, "b");
  const NodeId ud = u.add_node(NodeKind::kGpu, "d");
  u.add_link(ua, ub, symmetric("ab", 1e9, 0));
  u.add_link(ub, ud, symmetric("bd", 1e9, 0));
  const LinkId direct = u.add_link(ud, ua, symmetric("da", 1e9, 0));
  u.seal();
  EXPECT_EQ(u.route(ua, ud), (Route{{direct, false}}));
}

// Identical construction gives identical routes for every pair.
TEST(Topology, RoutesAreDeterministic) {
  RemoteShape x;
  RemoteShape y;
  for (NodeId i = 0; i < 5; ++i) {
    for (NodeId j = 0; j < 5; ++j) EXPECT_EQ(x.t.route(i, j), y.t.route(i, j));
  }
}

TEST(Topology, BadLinksAreInputErrors) {
  Topology t;
  const NodeId a = t.add_node(NodeKind::kHost, "a");
  const NodeId b = t.add_node(NodeKind::kGpu, "b");
  LinkSpec zero = symmetric("zero", 1e9, 0);
  zero.forward = BytesPerSec{0};
  EXPECT_THROW(t.add_link(a, b, zero), InputError);
  LinkSpec negative_busy = symmetric("busy", 1e9, 0);
  negative_busy.both_busy_each = BytesPerSec{-1};
  EXPECT_THROW(t.add_link(a, b, negative_busy), InputError);
  EXPECT_THROW(t.add_link(a, b, symmetric("late", 1e9, -5)), InputError);
  EXPECT_THROW(t.add_link(a, b, symmetric("inf", std::numeric_limits<double>::infinity(), 0)),
               InputError);
  try {
    t.add_link(a, b, zero);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().at(0).path, "zero.forward");
  }
  EXPECT_EQ(t.num_links(), 0U);
}

TEST(Topology, ProgrammingErrorsAssert) {
  Topology t;
  const NodeId a = t.add_node(NodeKind::kHost, "a");
  EXPECT_THROW(t.add_link(a, a, symmetric("self", 1e9, 0)), InternalError);
  EXPECT_THROW(t.add_link(a, 7, symmetric("dangling", 1e9, 0)), InternalError);
  EXPECT_THROW(t.route(a, a), InternalError);  // not sealed
  t.seal();
  EXPECT_THROW(t.add_node(NodeKind::kGpu, "late"), InternalError);
}

}  // namespace
}  // namespace kvsim::hw
