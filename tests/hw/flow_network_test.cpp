#include "hw/flow_network.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/rng.hpp"

namespace kvsim::hw {
namespace {

LinkSpec symmetric(const char* name, double rate, SimTime latency = 0) {
  LinkSpec s;
  s.name = name;
  s.forward = BytesPerSec{rate};
  s.backward = BytesPerSec{rate};
  s.latency = latency;
  return s;
}

// Two nodes a, b joined by one link.
struct OneLink {
  Topology t;
  NodeId a{}, b{};
  LinkId link{};
  explicit OneLink(LinkSpec spec) {
    a = t.add_node(NodeKind::kHost, "a");
    b = t.add_node(NodeKind::kGpu, "b");
    link = t.add_link(a, b, std::move(spec));
    t.seal();
  }
  Route ab() const { return t.route(a, b); }
  Route ba() const { return t.route(b, a); }
};

TransferOptions tagged(std::uint64_t tag, SimTime extra_latency = 0) {
  TransferOptions o;
  o.tag = tag;
  o.extra_latency = extra_latency;
  return o;
}

// 1.34 GB over a 25 GB/s link takes 1.34e9 / 25e9 s = 53.6 ms of flow after its latency, here
// 2 us on the link plus 3 us of the device: it ends at 5,000 + 53,600,000 ns, not a nanosecond
// earlier.
TEST(FlowNetwork, LoneTransferEndsAtLatencyPlusBytesOverRate) {
  OneLink n(symmetric("l", 25e9, 2 * kMicrosecond));
  FlowNetwork net(n.t);
  const TransferId id = net.start(0, n.ab(), Bytes{1'340'000'000}, tagged(42, 3 * kMicrosecond));
  const SimTime end = 5'000 + 53'600'000;
  EXPECT_EQ(net.next_completion(), end);
  EXPECT_EQ(net.active(), 1U);
  EXPECT_TRUE(net.advance_to(end - 1).empty());
  EXPECT_TRUE(net.in_flight(id));
  const auto done = net.advance_to(end);
  ASSERT_EQ(done.size(), 1U);
  EXPECT_EQ(done[0].id, id);
  EXPECT_EQ(done[0].tag, 42U);
  EXPECT_EQ(done[0].started, 0);
  EXPECT_EQ(done[0].finished, end);
  EXPECT_EQ(done[0].bytes, Bytes{1'340'000'000});
  EXPECT_EQ(net.active(), 0U);
  EXPECT_EQ(net.next_completion(), kNever);
  EXPECT_EQ(net.bytes_moved(n.link, true), Bytes{1'340'000'000});
  EXPECT_EQ(net.bytes_moved(n.link, false), Bytes{0});
}

// A transfer that does not fill whole nanoseconds ends at the next one: 1,000 bytes at 3 GB/s
// = 333.3 ns -> 334 ns after a start at 1,000 ns.
TEST(FlowNetwork, EndTimeRoundsUp) {
  OneLink n(symmetric("l", 3e9));
  FlowNetwork net(n.t);
  net.start(1'000, n.ab(), Bytes{1'000}, {});
  EXPECT_EQ(net.next_completion(), 1'334);
  EXPECT_TRUE(net.advance_to(1'333).empty());
  EXPECT_EQ(net.advance_to(1'334).size(), 1U);
}

// Zero bytes end when the latency does; with no latency, at once.
TEST(FlowNetwork, ZeroByteTransfersEndAfterTheirLatency) {
  OneLink n(symmetric("l", 1e9, 700));
  FlowNetwork net(n.t);
  const TransferId a = net.start(100, n.ab(), Bytes{0}, tagged(1, 200));
  EXPECT_EQ(net.next_completion(), 1'000);
  const auto done = net.advance_to(5'000);
  ASSERT_EQ(done.size(), 1U);
  EXPECT_EQ(done[0].id, a);
  EXPECT_EQ(done[0].finished, 1'000);

  FlowNetwork net2(n.t);
  net2.start(10, Route{}, Bytes{0}, {});
  EXPECT_EQ(net2.next_completion(), 10);
  EXPECT_EQ(net2.advance_to(10).at(0).finished, 10);
}

// Two equal transfers of 1 GB started together on a 10 GB/s link get 5 GB/s each and both end
// at 1e9 / 5e9 s = 200 ms, reported in id order.
TEST(FlowNetwork, TwoEqualTransfersShareALinkEqually) {
  OneLink n(symmetric("l", 10e9));
  FlowNetwork net(n.t);
  const TransferId x = net.start(0, n.ab(), Bytes{1'000'000'000}, {});
  const TransferId y = net.start(0, n.ab(), Bytes{1'000'000'000}, {});
  EXPECT_DOUBLE_EQ(net.rate(x), 5e9);
  EXPECT_DOUBLE_EQ(net.rate(y), 5e9);
  EXPECT_DOUBLE_EQ(net.utilization(n.link, true), 1.0);
  EXPECT_DOUBLE_EQ(net.utilization(n.link, false), 0.0);
  EXPECT_EQ(net.next_completion(), 200 * kMillisecond);
  const auto done = net.advance_to(kSecond);
  ASSERT_EQ(done.size(), 2U);
  EXPECT_EQ(done[0].id, x);
  EXPECT_EQ(done[1].id, y);
  EXPECT_EQ(done[0].finished, 200 * kMillisecond);
  EXPECT_EQ(done[1].finished, 200 * kMillisecond);
}

// Staggered: x (1 GB) runs alone at 10 GB/s for 50 ms and moves 0.5 GB; y (1 GB) joins at 50 ms
// and both run at 5 GB/s, so x's last 0.5 GB take 100 ms: x ends at 150 ms. By then y has moved
// 0.5 GB; alone again at 10 GB/s its last 0.5 GB take 50 ms: y ends at 200 ms.
TEST(FlowNetwork, WhenOneEndsTheOtherSpeedsUp) {
  OneLink n(symmetric("l", 10e9));
  FlowNetwork net(n.t);
  const TransferId x = net.start(0, n.ab(), Bytes{1'000'000'000}, {});
  EXPECT_EQ(net.next_completion(), 100 * kMillisecond);
  EXPECT_DOUBLE_EQ(net.rate(x), 10e9);
  EXPECT_TRUE(net.advance_to(50 * kMillisecond).empty());
  EXPECT_EQ(net.bytes_moved(n.link, true), Bytes{500'000'000});
  const TransferId y = net.start(50 * kMillisecond, n.ab(), Bytes{1'000'000'000}, {});
  EXPECT_DOUBLE_EQ(net.rate(x), 5e9);
  EXPECT_DOUBLE_EQ(net.rate(y), 5e9);
  EXPECT_EQ(net.next_completion(), 150 * kMillisecond);
  auto done = net.advance_to(150 * kMillisecond);
  ASSERT_EQ(done.size(), 1U);
  EXPECT_EQ(done[0].id, x);
  EXPECT_EQ(done[0].finished, 150 * kMillisecond);
  EXPECT_DOUBLE_EQ(net.rate(y), 10e9);
  EXPECT_EQ(net.next_completion(), 200 * kMillisecond);
  done = net.advance_to(300 * kMillisecond);
  ASSERT_EQ(done.size(), 1U);
  EXPECT_EQ(done[0].id, y);
  EXPECT_EQ(done[0].finished, 200 * kMillisecond);
  EXPECT_EQ(net.bytes_moved(n.link, true), Bytes{2'000'000'000});
}

// The same staggering through a latency: y is started at 0 but its bytes flow only after 50 ms.
// next_completion() at time 0 already knows that x will be slowed down and ends at 150 ms.
TEST(FlowNetwork, NextCompletionForeseesTransfersStillInTheirLatency) {
  OneLink n(symmetric("l", 10e9));
  FlowNetwork net(n.t);
  const TransferId x = net.start(0, n.ab(), Bytes{1'000'000'000}, {});
  const TransferId y = net.start(0, n.ab(), Bytes{1'000'000'000}, tagged(0, 50 * kMillisecond));
  EXPECT_DOUBLE_EQ(net.rate(y), 0.0);  // waiting out its latency
  EXPECT_EQ(net.next_completion(), 150 * kMillisecond);
  const auto done = net.advance_to(kSecond);
  ASSERT_EQ(done.size(), 2U);
  EXPECT_EQ(done[0].id, x);
  EXPECT_EQ(done[0].finished, 150 * kMillisecond);
  EXPECT_EQ(done[1].id, y);
  EXPECT_EQ(done[1].finished, 200 * kMillisecond);
}

// Max-min fairness with different bottlenecks. Links L1 = 10 GB/s (x -> y) and L2 = 4 GB/s
// (y -> z); A uses L1, B uses L1 and L2, C uses L2. By hand: L2's fair share is 4 / 2 = 2 and
// L1's 10 / 2 = 5, so L2 saturates first and B and C freeze at 2 GB/s; L1 has 10 - 2 = 8 left
// for A alone. Sizes A 0.8 GB, B 0.4 GB, C 0.2 GB: A and C both end at 100 ms (0.8 / 8 and
// 0.2 / 2), reported A then C by id; B has then moved 0.2 GB, gets all of L2 (4 GB/s, L1 has 10)
// and ends its last 0.2 GB 50 ms later, at 150 ms.
TEST(FlowNetwork, ThreeFlowsGetTheirMaxMinFairRates) {
  Topology t;
  const NodeId x = t.add_node(NodeKind::kHost, "x");
  const NodeId y = t.add_node(NodeKind::kPcieSwitch, "y");
  const NodeId z = t.add_node(NodeKind::kGpu, "z");
  const LinkId l1 = t.add_link(x, y, symmetric("L1", 10e9));
  const LinkId l2 = t.add_link(y, z, symmetric("L2", 4e9));
  t.seal();
  FlowNetwork net(t);
  const TransferId a = net.start(0, t.route(x, y), Bytes{800'000'000}, tagged(1));
  const TransferId b = net.start(0, t.route(x, z), Bytes{400'000'000}, tagged(2));
  const TransferId c = net.start(0, t.route(y, z), Bytes{200'000'000}, tagged(3));
  EXPECT_DOUBLE_EQ(net.rate(a), 8e9);
  EXPECT_DOUBLE_EQ(net.rate(b), 2e9);
  EXPECT_DOUBLE_EQ(net.rate(c), 2e9);
  EXPECT_DOUBLE_EQ(net.allocated(l1, true).value, 10e9);
  EXPECT_DOUBLE_EQ(net.allocated(l2, true).value, 4e9);
  EXPECT_DOUBLE_EQ(net.utilization(l2, true), 1.0);
  auto done = net.advance_to(100 * kMillisecond);
  ASSERT_EQ(done.size(), 2U);
  EXPECT_EQ(done[0].id, a);
  EXPECT_EQ(done[1].id, c);
  EXPECT_EQ(done[0].finished, 100 * kMillisecond);
  EXPECT_EQ(done[1].finished, 100 * kMillisecond);
  EXPECT_DOUBLE_EQ(net.rate(b), 4e9);
  EXPECT_DOUBLE_EQ(net.utilization(l1, true), 0.4);
  done = net.advance_to(kSecond);
  ASSERT_EQ(done.size(), 1U);
  EXPECT_EQ(done[0].id, b);
  EXPECT_EQ(done[0].finished, 150 * kMillisecond);
}

// A per-transfer rate cap freezes that transfer early; the other takes the rest: on 10 GB/s, a
// transfer capped at 3 GB/s and an uncapped one get 3 and 7.
TEST(FlowNetwork, RateCapFreezesAtTheCap) {
  OneLink n(symmetric("l", 10e9));
  FlowNetwork net(n.t);
  TransferOptions capped;
  capped.rate_cap = BytesPerSec{3e9};
  const TransferId a = net.start(0, n.ab(), Bytes{3'000'000'000}, capped);
  const TransferId b = net.start(0, n.ab(), Bytes{7'000'000'000}, {});
  EXPECT_DOUBLE_EQ(net.rate(a), 3e9);
  EXPECT_DOUBLE_EQ(net.rate(b), 7e9);
  // Both end at 1 s: 3 GB / 3 GB/s and 7 GB / 7 GB/s.
  EXPECT_EQ(net.next_completion(), kSecond);
  EXPECT_EQ(net.advance_to(kSecond).size(), 2U);
}

// An extra resource is shared like a link: two transfers on separate 10 GB/s links through one
// 6 GB/s resource get 3 GB/s each; a third on the second link without the resource gets the
// 10 - 3 = 7 GB/s left there.
TEST(FlowNetwork, ExtraResourcesAreShared) {
  Topology t;
  const NodeId h = t.add_node(NodeKind::kHost, "h");
  const NodeId d1 = t.add_node(NodeKind::kNvmeDrive, "d1");
  const NodeId d2 = t.add_node(NodeKind::kNvmeDrive, "d2");
  t.add_link(h, d1, symmetric("h-d1", 10e9));
  const LinkId l2 = t.add_link(h, d2, symmetric("h-d2", 10e9));
  t.seal();
  FlowNetwork net(t);
  const ResourceId ctrl = net.add_resource("controller", BytesPerSec{6e9});
  EXPECT_EQ(net.resource_name(ctrl), "controller");
  TransferOptions via;
  via.resources = {ctrl};
  const TransferId a = net.start(0, t.route(d1, h), Bytes{3'000'000'000}, via);
  const TransferId b = net.start(0, t.route(d2, h), Bytes{3'000'000'000}, via);
  const TransferId c = net.start(0, t.route(d2, h), Bytes{7'000'000'000}, {});
  EXPECT_DOUBLE_EQ(net.rate(a), 3e9);
  EXPECT_DOUBLE_EQ(net.rate(b), 3e9);
  EXPECT_DOUBLE_EQ(net.rate(c), 7e9);
  EXPECT_DOUBLE_EQ(net.resource_utilization(ctrl), 1.0);
  EXPECT_DOUBLE_EQ(net.utilization(l2, false), 1.0);
  net.advance_to(kSecond);
  EXPECT_EQ(net.resource_bytes_moved(ctrl), Bytes{6'000'000'000});
  EXPECT_THROW(net.add_resource("dead", BytesPerSec{0}), InputError);
}

// RTX 4090 PCIe (docs/sources.md A2): 25 GB/s H2D and 26.5 GB/s D2H alone, ~13 GB/s each when
// both directions are busy. The link runs host -> gpu, so a load (H2D) is forward, a store
// (D2H) backward.
struct Rtx4090 : OneLink {
  Rtx4090() : OneLink(make()) {}
  static LinkSpec make() {
    HostLinkSpec h;
    h.h2d = BytesPerSec{25e9};
    h.d2h = BytesPerSec{26.5e9};
    h.bidirectional_each = BytesPerSec{13e9};
    return gpu_host_link(h, "pcie", 0);
  }
  Route load() const { return ab(); }
  Route store() const { return ba(); }
};

// Alone: a 1.3 GB load takes 1.3e9 / 25e9 = 52 ms, a 1.3 GB store 1.3e9 / 26.5e9 =
// 49.0566037.. ms -> 49,056,604 ns.
TEST(FlowNetwork, PcieDirectionsAloneRunAtTheirOwnRates) {
  Rtx4090 n;
  FlowNetwork net(n.t);
  const TransferId load = net.start(0, n.load(), Bytes{1'300'000'000}, {});
  EXPECT_DOUBLE_EQ(net.rate(load), 25e9);
  EXPECT_EQ(net.advance_to(kSecond).at(0).finished, 52 * kMillisecond);
  const TransferId store = net.start(kSecond, n.store(), Bytes{1'300'000'000}, {});
  EXPECT_DOUBLE_EQ(net.rate(store), 26.5e9);
  EXPECT_DOUBLE_EQ(net.capacity(n.link, false).value, 26.5e9);
  EXPECT_EQ(net.advance_to(2 * kSecond).at(0).finished, kSecond + 49'056'604);
}

// Together: each direction gets 13 GB/s, so 1.3 GB each way both end at 100 ms. With a 0.65 GB
// store instead, the store ends at 0.65 / 13 = 50 ms; the load has moved 0.65 GB and finishes
// its last 0.65 GB alone at 25 GB/s in 26 ms: 76 ms.
TEST(FlowNetwork, PcieBothDirectionsBusyRunAt13Each) {
  {
    Rtx4090 n;
    FlowNetwork net(n.t);
    const TransferId load = net.start(0, n.load(), Bytes{1'300'000'000}, {});
    const TransferId store = net.start(0, n.store(), Bytes{1'300'000'000}, {});
    EXPECT_DOUBLE_EQ(net.rate(load), 13e9);
    EXPECT_DOUBLE_EQ(net.rate(store), 13e9);
    EXPECT_DOUBLE_EQ(net.capacity(n.link, true).value, 13e9);
    EXPECT_DOUBLE_EQ(net.utilization(n.link, true), 1.0);
    EXPECT_DOUBLE_EQ(net.utilization(n.link, false), 1.0);
    const auto done = net.advance_to(kSecond);
    ASSERT_EQ(done.size(), 2U);
    EXPECT_EQ(done[0].finished, 100 * kMillisecond);
    EXPECT_EQ(done[1].finished, 100 * kMillisecond);
  }
  {
    Rtx4090 n;
    FlowNetwork net(n.t);
    const TransferId load = net.start(0, n.load(), Bytes{1'300'000'000}, {});
    const TransferId store = net.start(0, n.store(), Bytes{650'000'000}, {});
    const auto done = net.advance_to(kSecond);
    ASSERT_EQ(done.size(), 2U);
    EXPECT_EQ(done[0].id, store);
    EXPECT_EQ(done[0].finished, 50 * kMillisecond);
    EXPECT_EQ(done[1].id, load);
    EXPECT_EQ(done[1].finished, 76 * kMillisecond);
  }
}

// A link direction's capacity is its both-busy figure (13 GB/s) while the opposite direction
// carries a transfer, whether it carries one itself or not, and its own figure otherwise; what
// the transfers get is allocated. When they end, every figure is the idle one again.
TEST(FlowNetwork, CapacitiesFollowTheTransfersInFlightAndReturnToIdle) {
  Rtx4090 n;
  FlowNetwork net(n.t);
  net.start(0, n.load(), Bytes{250'000'000}, {});  // 10 ms alone at 25 GB/s
  EXPECT_DOUBLE_EQ(net.capacity(n.link, true).value, 25e9);
  EXPECT_DOUBLE_EQ(net.allocated(n.link, true).value, 25e9);
  EXPECT_DOUBLE_EQ(net.capacity(n.link, false).value, 13e9);
  EXPECT_DOUBLE_EQ(net.allocated(n.link, false).value, 0.0);
  ASSERT_EQ(net.advance_to(kSecond).size(), 1U);
  EXPECT_DOUBLE_EQ(net.capacity(n.link, true).value, 25e9);
  EXPECT_DOUBLE_EQ(net.capacity(n.link, false).value, 26.5e9);
  EXPECT_DOUBLE_EQ(net.allocated(n.link, true).value, 0.0);
  EXPECT_DOUBLE_EQ(net.utilization(n.link, true), 0.0);

  net.start(kSecond, n.store(), Bytes{265'000'000}, {});  // 10 ms alone at 26.5 GB/s
  EXPECT_DOUBLE_EQ(net.capacity(n.link, true).value, 13e9);
  EXPECT_DOUBLE_EQ(net.capacity(n.link, false).value, 26.5e9);
  EXPECT_DOUBLE_EQ(net.allocated(n.link, false).value, 26.5e9);
  EXPECT_DOUBLE_EQ(net.allocated(n.link, true).value, 0.0);
  const TransferId load = net.start(kSecond + kMillisecond, n.load(), Bytes{1'000'000'000}, {});
  EXPECT_DOUBLE_EQ(net.rate(load), 13e9);
  EXPECT_DOUBLE_EQ(net.capacity(n.link, false).value, 13e9);
  ASSERT_EQ(net.advance_to(3 * kSecond).size(), 2U);
  EXPECT_DOUBLE_EQ(net.capacity(n.link, true).value, 25e9);
  EXPECT_DOUBLE_EQ(net.capacity(n.link, false).value, 26.5e9);
  EXPECT_DOUBLE_EQ(net.allocated(n.link, true).value, 0.0);
  EXPECT_DOUBLE_EQ(net.allocated(n.link, false).value, 0.0);
}

// Without both_busy_each the directions are independent: 25 and 26.5 GB/s at once.
TEST(FlowNetwork, NoInterferenceWithoutBothBusyFigure) {
  LinkSpec s = Rtx4090::make();
  s.both_busy_each = BytesPerSec{0};
  OneLink n(s);
  FlowNetwork net(n.t);
  const TransferId load = net.start(0, n.ab(), Bytes{1'000'000}, {});
  const TransferId store = net.start(0, n.ba(), Bytes{1'000'000}, {});
  EXPECT_DOUBLE_EQ(net.rate(load), 25e9);
  EXPECT_DOUBLE_EQ(net.rate(store), 26.5e9);
}

// Cancelling y at 50 ms (both at 5 GB/s, each has moved 0.25 GB) leaves x 0.75 GB at 10 GB/s:
// x ends at 125 ms. y's 0.25 GB stay counted on the link.
TEST(FlowNetwork, CancelReleasesBandwidth) {
  OneLink n(symmetric("l", 10e9));
  FlowNetwork net(n.t);
  const TransferId x = net.start(0, n.ab(), Bytes{1'000'000'000}, {});
  const TransferId y = net.start(0, n.ab(), Bytes{1'000'000'000}, {});
  EXPECT_TRUE(net.cancel(50 * kMillisecond, y));
  EXPECT_FALSE(net.cancel(50 * kMillisecond, y));
  EXPECT_FALSE(net.in_flight(y));
  EXPECT_DOUBLE_EQ(net.rate(x), 10e9);
  EXPECT_EQ(net.bytes_moved(n.link, true), Bytes{500'000'000});
  EXPECT_EQ(net.next_completion(), 125 * kMillisecond);
  const auto done = net.advance_to(kSecond);
  ASSERT_EQ(done.size(), 1U);
  EXPECT_EQ(done[0].id, x);
  EXPECT_EQ(done[0].finished, 125 * kMillisecond);
  EXPECT_EQ(net.bytes_moved(n.link, true), Bytes{1'250'000'000});
}

// A completion due before a later start() is processed first and reported by the next
// advance_to(), with its true finish time.
TEST(FlowNetwork, CompletionsBeforeAStartAreKept) {
  OneLink n(symmetric("l", 1e9));
  FlowNetwork net(n.t);
  const TransferId x = net.start(0, n.ab(), Bytes{1'000}, {});  // ends at 1,000 ns
  net.start(5'000, n.ab(), Bytes{1'000}, {});
  EXPECT_EQ(net.next_completion(), 1'000);
  const auto done = net.advance_to(5'000);
  ASSERT_EQ(done.size(), 1U);
  EXPECT_EQ(done[0].id, x);
  EXPECT_EQ(done[0].finished, 1'000);
  EXPECT_EQ(net.next_completion(), 6'000);
}

TEST(FlowNetwork, ProgrammingErrorsAssert) {
  OneLink n(symmetric("l", 1e9));
  Topology unsealed;
  EXPECT_THROW(FlowNetwork{unsealed}, InternalError);
  FlowNetwork net(n.t);
  net.advance_to(100);
  EXPECT_THROW(net.start(50, n.ab(), Bytes{1}, {}), InternalError);
  EXPECT_THROW(net.advance_to(99), InternalError);
  TransferOptions twice;
  const ResourceId r = net.add_resource("r", BytesPerSec{1e9});
  twice.resources = {r, r};
  EXPECT_THROW(net.start(100, n.ab(), Bytes{1}, twice), InternalError);
}

// A small fabric for random workloads: two GPUs behind one host, a NIC and a storage node.
struct Fabric {
  Topology t;
  std::vector<NodeId> nodes;
  Fabric() {
    const NodeId g0 = t.add_node(NodeKind::kGpu, "g0");
    const NodeId g1 = t.add_node(NodeKind::kGpu, "g1");
    const NodeId h = t.add_node(NodeKind::kHost, "h");
    const NodeId nic = t.add_node(NodeKind::kNic, "nic");
    const NodeId s = t.add_node(NodeKind::kStorageNode, "s");
    HostLinkSpec pcie;
    pcie.h2d = BytesPerSec{25e9};
    pcie.d2h = BytesPerSec{26.5e9};
    pcie.bidirectional_each = BytesPerSec{13e9};
    t.add_link(h, g0, gpu_host_link(pcie, "p0", 500));
    t.add_link(h, g1, gpu_host_link(pcie, "p1", 500));
    t.add_link(h, nic, symmetric("hn", 25.2e9, 500));
    t.add_link(nic, s, symmetric("ns", 11.5e9, 2'000));
    t.seal();
    nodes = {g0, g1, h, nic, s};
  }
};

struct RunResult {
  std::vector<Completed> done;
  std::vector<std::int64_t> moved;  // per link direction at the end
  std::int64_t started_bytes = 0;
};

// Starts 300 transfers at random times between random endpoints with random sizes, latencies
// and caps, advancing either only to each next start time (coarse) or also to every
// intermediate next_completion() (fine).
RunResult random_run(std::uint64_t seed, bool fine) {
  Fabric f;
  FlowNetwork net(f.t);
  const ResourceId ctrl = net.add_resource("ctrl", BytesPerSec{9e9});
  Rng rng(seed);
  RunResult run;
  SimTime now = 0;
  for (int i = 0; i < 300; ++i) {
    now += rng.uniform_int(0, 2 * kMillisecond);
    if (fine) {
      while (net.next_completion() <= now) {
        const SimTime next = net.next_completion();
        const auto done = net.advance_to(next);
        EXPECT_FALSE(done.empty());  // next_completion() is exact
        for (const Completed& c : done) EXPECT_EQ(c.finished, next);
        run.done.insert(run.done.end(), done.begin(), done.end());
      }
    }
    net.advance_to(now, run.done);
    const auto from = static_cast<std::size_t>(rng.uniform_int(0, 4));
    const auto to = static_cast<std::size_t>(rng.uniform_int(0, 4));
    TransferOptions o;
    o.tag = static_cast<std::uint64_t>(i);
    o.extra_latency = rng.uniform_int(0, 100 * kMicrosecond);
    if (rng.uniform01() < 0.3) o.rate_cap = BytesPerSec{rng.uniform_real(1e9, 20e9)};
    if (rng.uniform01() < 0.3 || (from == to && o.rate_cap.value == 0)) o.resources = {ctrl};
    const Bytes bytes{rng.uniform_int(0, 64) * kMiB.value};
    run.started_bytes += bytes.value;
    net.start(now, f.t.route(f.nodes[from], f.nodes[to]), bytes, o);
  }
  while (net.next_completion() != kNever) {
    const SimTime next = net.next_completion();
    EXPECT_GE(next, net.now());
    net.advance_to(next, run.done);
  }
  for (LinkId l = 0; l < static_cast<LinkId>(f.t.num_links()); ++l) {
    run.moved.push_back(net.bytes_moved(l, true).value);
    run.moved.push_back(net.bytes_moved(l, false).value);
  }
  EXPECT_EQ(net.active(), 0U);
  return run;
}

// Determinism: the same sequence of starts gives the same completions, whatever the seed, and
// however often advance_to() is called in between. Every transfer completes exactly once, time
// never goes back in the reported order, and every byte started is delivered.
TEST(FlowNetwork, SameStartsGiveSameCompletions) {
  for (const std::uint64_t seed : {1U, 2U, 3U}) {
    const RunResult a = random_run(seed, false);
    const RunResult b = random_run(seed, false);
    const RunResult c = random_run(seed, true);
    ASSERT_EQ(a.done.size(), 300U);
    ASSERT_EQ(b.done.size(), 300U);
    ASSERT_EQ(c.done.size(), 300U);
    std::int64_t bytes = 0;
    std::vector<int> seen(300, 0);
    for (std::size_t i = 0; i < 300; ++i) {
      EXPECT_EQ(a.done[i].id, b.done[i].id);
      EXPECT_EQ(a.done[i].finished, b.done[i].finished);
      EXPECT_EQ(a.done[i].id, c.done[i].id);
      EXPECT_EQ(a.done[i].finished, c.done[i].finished);
      EXPECT_GE(a.done[i].finished, a.done[i].started);
      if (i > 0) {
        EXPECT_GE(a.done[i].finished, a.done[i - 1].finished);
      }
      ++seen[a.done[i].tag];
      bytes += a.done[i].bytes.value;
    }
    for (const int s : seen) EXPECT_EQ(s, 1);
    EXPECT_EQ(bytes, a.started_bytes);
    EXPECT_EQ(a.moved, b.moved);
    EXPECT_EQ(a.moved, c.moved);
  }
}

}  // namespace
}  // namespace kvsim::hw
