// The drives and the storage node come from the catalog (scenarios/catalog/drives.yaml,
// storage.yaml), the one place their figures are kept; the arithmetic in the comments below
// states the figures it uses.
#include "hw/storage.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "../models/catalog_reader.hpp"
#include "hw/pcie.hpp"
#include "sim/core/error.hpp"
#include "tests/hw/rdma_nics.hpp"

namespace kvsim::hw {
namespace {

using kvsim::testing::CatalogEntry;
using testing::rdma_nic_25g;
using testing::rdma_nic_100g;
using testing::rdma_nic_200g;
using testing::rdma_nic_400g;
using kvsim::testing::parse_quantity;
using kvsim::testing::parse_time_ns;

const std::string kCatalogDir = std::string(KVSIM_SOURCE_DIR) + "/scenarios/catalog";

SimTime time_of(const CatalogEntry& e, const std::string& key) {
  return static_cast<SimTime>(std::llround(parse_time_ns(e.at(key))));
}

// The drive whose keys are `prefix` + field in a catalog entry.
NvmeDriveSpec drive_of(const CatalogEntry& e, const std::string& prefix) {
  NvmeDriveSpec d;
  d.name = e.count(prefix + "name") != 0 ? e.at(prefix + "name") : "";
  d.read = BytesPerSec{parse_quantity(e.at(prefix + "read"))};
  d.write = BytesPerSec{parse_quantity(e.at(prefix + "write"))};
  d.read_latency = time_of(e, prefix + "read_latency");
  d.write_latency = time_of(e, prefix + "write_latency");
  d.read_iops = std::stod(e.at(prefix + "read_iops"));
  d.write_iops = std::stod(e.at(prefix + "write_iops"));
  d.queue_depth = std::stoi(e.at(prefix + "queue_depth"));
  d.source = e.count(prefix + "source") != 0 ? e.at(prefix + "source") : "";
  return d;
}

// An entry of drives.yaml.
NvmeDriveSpec catalog_drive(const std::string& name) {
  static const auto drives = kvsim::testing::read_catalog(kCatalogDir + "/drives.yaml");
  NvmeDriveSpec d = drive_of(drives.at(name), "");
  d.name = name;
  return d;
}

// An entry of storage.yaml.
StorageNodeSpec catalog_store(const std::string& name) {
  static const auto nodes = kvsim::testing::read_catalog(kCatalogDir + "/storage.yaml");
  const CatalogEntry& e = nodes.at(name);
  StorageNodeSpec n;
  n.name = name;
  n.nic = BytesPerSec{parse_quantity(e.at("nic"))};
  n.nic_latency = time_of(e, "nic_latency");
  n.controller = BytesPerSec{parse_quantity(e.at("controller"))};
  n.num_drives = std::stoi(e.at("num_drives"));
  n.drive = drive_of(e, "drive.");
  n.software_latency = time_of(e, "software_latency");
  n.source = e.at("source");
  return n;
}

// The catalog's drives carry the figures of docs/sources.md A6, with their sources.
TEST(Storage, CatalogDrivesCarryTheirDatasheetFigures) {
  const NvmeDriveSpec a = catalog_drive("samsung_pm9a3");
  EXPECT_DOUBLE_EQ(a.read.value, 6.5e9);
  EXPECT_DOUBLE_EQ(a.write.value, 3.5e9);
  EXPECT_EQ(a.read_iops, 900e3);
  EXPECT_EQ(a.write_iops, 200e3);
  EXPECT_EQ(a.read_latency, 80 * kMicrosecond);
  EXPECT_EQ(a.write_latency, 30 * kMicrosecond);
  EXPECT_EQ(a.queue_depth, 128);
  EXPECT_FALSE(a.source.empty());
  const NvmeDriveSpec b = catalog_drive("samsung_pm1743");
  EXPECT_DOUBLE_EQ(b.read.value, 13e9);
  EXPECT_DOUBLE_EQ(b.write.value, 6.6e9);
  EXPECT_EQ(b.read_iops, 2.5e6);
  EXPECT_EQ(b.write_iops, 250e3);
  EXPECT_EQ(b.read_latency, 70 * kMicrosecond);
  EXPECT_FALSE(b.source.empty());
  EXPECT_NO_THROW(validate(a, "a"));
  EXPECT_NO_THROW(validate(b, "b"));
  // The storage node's drive is the PM9A3 entry, figure for figure.
  const NvmeDriveSpec in_node = catalog_store("pliops-xdp-lightningai").drive;
  EXPECT_EQ(in_node.name, a.name);
  EXPECT_EQ(in_node.read, a.read);
  EXPECT_EQ(in_node.write, a.write);
  EXPECT_EQ(in_node.read_latency, a.read_latency);
  EXPECT_EQ(in_node.write_latency, a.write_latency);
  EXPECT_EQ(in_node.read_iops, a.read_iops);
  EXPECT_EQ(in_node.write_iops, a.write_iops);
  EXPECT_EQ(in_node.queue_depth, a.queue_depth);
}

// 1 GiB from a PM9A3: 80 us + 2^30 / 6.5e9 s = 80,000 + 165,191,049.85 -> 165,271,050 ns.
// Writes: 30 us + 2^30 / 3.5e9 s = 30,000 + 306,783,378.29 -> 306,813,379 ns.
TEST(Storage, DriveTimeIsLatencyPlusBytesOverBandwidth) {
  const NvmeDriveSpec d = catalog_drive("samsung_pm9a3");
  EXPECT_EQ(nvme_read_time(d, kGiB), 165'271'050);
  EXPECT_EQ(nvme_write_time(d, kGiB), 306'813'379);
}

// Small I/Os are IOPS-bound: 4 KiB reads at 900K IOPS give 3.6864 GB/s, below 6.5. Large ones
// are bandwidth-bound: 2 MiB x 900K is far above 6.5 GB/s. With one I/O in flight Little's law
// binds: 4,096 B per 80 us = 51.2 MB/s.
TEST(Storage, IoSizeDecidesBetweenIopsAndBandwidth) {
  NvmeDriveSpec d = catalog_drive("samsung_pm9a3");
  EXPECT_DOUBLE_EQ(nvme_read_rate(d, Bytes{4096}).value, 3.6864e9);
  EXPECT_DOUBLE_EQ(nvme_read_rate(d, 2 * kMiB).value, 6.5e9);
  // Writes: 200K x 4 KiB = 819.2 MB/s.
  EXPECT_DOUBLE_EQ(nvme_write_rate(d, Bytes{4096}).value, 819.2e6);
  d.queue_depth = 1;
  EXPECT_DOUBLE_EQ(nvme_read_rate(d, Bytes{4096}).value, 51.2e6);
}

// RDMA presets: line / 8 x efficiency. 25G: 3.125 x 0.92 = 2.875 GB/s; 100G 11.5; 200G 23;
// 400G: 50 x 0.90 = 45 GB/s (docs/sources.md A9).
TEST(Storage, RdmaNicPresets) {
  EXPECT_NEAR(rdma_nic_25g().effective().value, 2.875e9, 1.0);
  EXPECT_NEAR(rdma_nic_100g().effective().value, 11.5e9, 1.0);
  EXPECT_NEAR(rdma_nic_200g().effective().value, 23e9, 1.0);
  EXPECT_NEAR(rdma_nic_400g().effective().value, 45e9, 1.0);
  EXPECT_EQ(rdma_nic_200g().latency, 1 * kMicrosecond);
  const LinkSpec l = rdma_link(rdma_nic_100g(), "port");
  EXPECT_EQ(l.forward, l.backward);
  EXPECT_EQ(l.both_busy_each.value, 0.0);
}

// The Pliops entry (all assumed): NIC 23, controller 25.2, 8 x PM9A3 = 52 read / 28 write, so
// the NIC bounds both: 23 GB/s. First byte 2 + 20 + 80 = 102 us read, 2 + 20 + 30 = 52 us write.
// 1 GiB read: 102,000 + 2^30 / 23e9 s (46,684,427.13 -> 46,684,428) = 46,786,428 ns.
TEST(Storage, PliopsAssumedEntry) {
  const StorageNodeSpec p = catalog_store("pliops-xdp-lightningai");
  EXPECT_NO_THROW(validate(p, "storage"));
  EXPECT_DOUBLE_EQ(storage_read_bandwidth(p).value, 23e9);
  EXPECT_DOUBLE_EQ(storage_write_bandwidth(p).value, 23e9);
  EXPECT_EQ(storage_read_latency(p), 102 * kMicrosecond);
  EXPECT_EQ(storage_write_latency(p), 52 * kMicrosecond);
  EXPECT_EQ(storage_read_time(p, kGiB), 46'786'428);
  // A 2 MiB KV chunk is latency-dominated: 102,000 + 91,180.5 -> 193,181 ns, i.e. 10.86 GB/s.
  EXPECT_EQ(storage_read_time(p, 2 * kMiB), 193'181);
  EXPECT_NEAR(storage_effective_read_bandwidth(p, 2 * kMiB).value, 2097152 / 193181e-9, 1.0);
  EXPECT_LT(storage_effective_read_bandwidth(p, 2 * kMiB).value, 0.5 * 23e9);
}

// Whichever of NIC, controller and drives is smallest bounds the node.
TEST(Storage, NodeBandwidthIsTheSmallestStage) {
  StorageNodeSpec p = catalog_store("pliops-xdp-lightningai");
  p.num_drives = 1;
  EXPECT_DOUBLE_EQ(storage_read_bandwidth(p).value, 6.5e9);
  EXPECT_DOUBLE_EQ(storage_write_bandwidth(p).value, 3.5e9);
  p.num_drives = 8;
  p.controller = BytesPerSec{10e9};
  EXPECT_DOUBLE_EQ(storage_read_bandwidth(p).value, 10e9);
}

TEST(Storage, BadSpecsAreInputErrors) {
  StorageNodeSpec p = catalog_store("pliops-xdp-lightningai");
  p.num_drives = 0;
  try {
    validate(p, "tiers.remote");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().at(0).path, "tiers.remote.num_drives");
  }
  p = catalog_store("pliops-xdp-lightningai");
  p.drive.read = BytesPerSec{-1};
  try {
    validate(p, "s");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().at(0).path, "s.drive.read");
  }
  NvmeDriveSpec d = catalog_drive("samsung_pm9a3");
  d.queue_depth = 0;
  EXPECT_THROW(validate(d, "d"), InputError);
}

// A GeForce host (no GPUDirect): GPU - host over the 4090's PCIe (25 GB/s H2D), a PM9A3 on
// Gen4 x4 (7.88 GB/s link), a NIC at 25 or 200 Gb/s to a switch, and the assumed Pliops node.
struct Host {
  Topology t;
  NodeId gpu{}, host{}, drive{}, nic{}, sw{}, store{};
  LinkId pcie{};
  StorageNodeSpec node = catalog_store("pliops-xdp-lightningai");
  NvmeDriveSpec ssd = catalog_drive("samsung_pm9a3");
  explicit Host(const RdmaNicSpec& port) {
    gpu = t.add_node(NodeKind::kGpu, "gpu");
    host = t.add_node(NodeKind::kHost, "host");
    drive = t.add_node(NodeKind::kNvmeDrive, "nvme0");
    nic = t.add_node(NodeKind::kNic, "nic");
    sw = t.add_node(NodeKind::kNetworkSwitch, "tor");
    store = t.add_node(NodeKind::kStorageNode, "kv");
    HostLinkSpec h;
    h.h2d = BytesPerSec{25e9};
    h.d2h = BytesPerSec{26.5e9};
    h.bidirectional_each = BytesPerSec{13e9};
    pcie = t.add_link(host, gpu, gpu_host_link(h, "pcie", 0));
    attach_nvme_drive(t, host, drive);
    LinkSpec nic_pcie;
    nic_pcie.name = "nic-pcie";
    nic_pcie.forward = practical_rate(PcieGen::kGen4, 16);
    nic_pcie.backward = nic_pcie.forward;
    t.add_link(host, nic, nic_pcie);
    t.add_link(nic, sw, rdma_link(port, "nic-tor"));
    attach_storage_node(t, sw, store, node);
    t.seal();
  }
};

SimTime lone_transfer(const Host& h, FlowNetwork& net, NodeId from, Bytes bytes,
                      const TransferOptions& o) {
  net.start(0, h.t.route(from, h.gpu), bytes, o);
  const auto done = net.advance_to(10 * kSecond);
  EXPECT_EQ(done.size(), 1U);
  return done.empty() ? kNever : done[0].finished;
}

// 1 GiB into the GPU. From host DRAM: 2^30 / 25e9 s = 42,949,672.96 -> 42,949,673 ns. From the
// PM9A3, streamed through host memory: the drive's 6.5 GB/s is the smallest stage (the x4 link
// carries 7.88), plus its 80 us: 80,000 + 165,191,050 = 165,271,050 ns, the drive's own time.
TEST(Storage, NvmeReadIsSlowerThanDramOverPcie) {
  Host h(rdma_nic_200g());
  FlowNetwork dram_net(h.t);
  const SimTime dram = lone_transfer(h, dram_net, h.host, kGiB, {});
  EXPECT_EQ(dram, 42'949'673);

  FlowNetwork nvme_net(h.t);
  const NvmeDriveResources res = add_nvme_drive_resources(nvme_net, h.ssd, "nvme0");
  const SimTime nvme = lone_transfer(h, nvme_net, h.drive, kGiB, nvme_read_options(h.ssd, res));
  EXPECT_EQ(nvme, 165'271'050);
  EXPECT_EQ(nvme, nvme_read_time(h.ssd, kGiB));
  EXPECT_GT(nvme, dram);
}

// 1 GiB from the store to the GPU. Latency: links 1 us (NIC) + 2 us (store's NIC) and the
// store's 20 us software + 80 us drive = 103 us. Behind 25 Gb/s the NIC's 2.875 GB/s bounds:
// 2^30 / 2.875e9 s = 373,475,417.04 -> 373,475,418 ns. Behind 200 Gb/s the smallest stage is
// 23 GB/s (NIC and store alike): 46,684,428 ns. The 200G time equals the node's own formula plus
// the client NIC link's 1 us.
TEST(Storage, RemoteReadBehindSlowNicTakesLonger) {
  Host slow(rdma_nic_25g());
  FlowNetwork slow_net(slow.t);
  const StorageNodeResources r25 = add_storage_node_resources(slow_net, slow.node);
  const SimTime t25 =
      lone_transfer(slow, slow_net, slow.store, kGiB, storage_read_options(slow.node, r25));
  EXPECT_EQ(t25, 103'000 + 373'475'418);

  Host fast(rdma_nic_200g());
  FlowNetwork fast_net(fast.t);
  const StorageNodeResources r200 = add_storage_node_resources(fast_net, fast.node);
  const SimTime t200 =
      lone_transfer(fast, fast_net, fast.store, kGiB, storage_read_options(fast.node, r200));
  EXPECT_EQ(t200, 103'000 + 46'684'428);
  EXPECT_EQ(t200, storage_read_time(fast.node, kGiB) + 1 * kMicrosecond);
  EXPECT_GT(t25, t200);
}

// Two hosts reading from one store at once split its 23 GB/s NIC: 11.5 GB/s each, and the
// controller and drives carry 23 GB/s together.
TEST(Storage, ConcurrentRemoteReadsShareTheNode) {
  Topology t;
  const NodeId h0 = t.add_node(NodeKind::kHost, "h0");
  const NodeId h1 = t.add_node(NodeKind::kHost, "h1");
  const NodeId sw = t.add_node(NodeKind::kNetworkSwitch, "tor");
  const NodeId kv = t.add_node(NodeKind::kStorageNode, "kv");
  t.add_link(h0, sw, rdma_link(rdma_nic_200g(), "h0"));
  t.add_link(h1, sw, rdma_link(rdma_nic_200g(), "h1"));
  const StorageNodeSpec node = catalog_store("pliops-xdp-lightningai");
  const LinkId kv_link = attach_storage_node(t, sw, kv, node);
  t.seal();
  FlowNetwork net(t);
  const StorageNodeResources res = add_storage_node_resources(net, node);
  net.start(0, t.route(kv, h0), kGiB, storage_read_options(node, res));
  const TransferId b = net.start(0, t.route(kv, h1), kGiB, storage_read_options(node, res));
  net.advance_to(200 * kMicrosecond);  // both past their latency
  EXPECT_DOUBLE_EQ(net.rate(b), 11.5e9);
  EXPECT_DOUBLE_EQ(net.utilization(kv_link, false), 1.0);
  EXPECT_DOUBLE_EQ(net.resource_allocated(res.controller).value, 23e9);
  EXPECT_DOUBLE_EQ(net.resource_allocated(res.drives_read).value, 23e9);
  EXPECT_DOUBLE_EQ(net.resource_utilization(res.drives_read), 23e9 / 52e9);
}

}  // namespace
}  // namespace kvsim::hw
