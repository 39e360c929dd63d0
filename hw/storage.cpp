#include "hw/storage.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "hw/pcie.hpp"
#include "sim/core/error.hpp"

namespace kvsim::hw {

namespace {

void require(bool ok, const std::string& path, const char* field, const char* message) {
  if (!ok) throw InputError(Diagnostic{"", 0, 0, path + "." + field, message});
}

bool positive_rate(BytesPerSec r) { return std::isfinite(r.value) && r.value > 0; }

// min(seq, iops x io, queue_depth x io / latency): bandwidth, IOPS and Little's law (I/Os in
// flight / time each takes) bound the rate; io_size <= 0 means large I/O (seq alone).
BytesPerSec io_rate(BytesPerSec seq, double iops, int queue_depth, SimTime latency, Bytes io_size) {
  double rate = seq.value;
  if (io_size.value <= 0) return BytesPerSec{rate};
  const double io = io_size.as_double();
  if (iops > 0) rate = std::min(rate, iops * io);
  if (latency > 0 && queue_depth > 0) rate = std::min(rate, queue_depth * io / to_seconds(latency));
  return BytesPerSec{rate};
}

BytesPerSec times(int n, BytesPerSec r) { return BytesPerSec{n * r.value}; }

}  // namespace

// Read latency 80 us: docs/sources.md A9 seed for a Gen4 drive (A6: 30-90 us first byte;
// Samsung publishes no latency for the PM9A3). Write latency 30 us: assumed, the low end of that
// range, since enterprise drives acknowledge writes from a power-loss-protected DRAM buffer.
// Queue depth 128: assumed, the deep queue an io_uring- or SPDK-based store keeps; with 80 us it
// admits 1.6M I/Os per second, so the rated IOPS bind first.
NvmeDriveSpec samsung_pm9a3() {
  NvmeDriveSpec d;
  d.name = "samsung_pm9a3";
  d.read = BytesPerSec{6.5e9};
  d.write = BytesPerSec{3.5e9};
  d.read_latency = 80 * kMicrosecond;
  d.write_latency = 30 * kMicrosecond;
  d.read_iops = 900e3;
  d.write_iops = 200e3;
  d.queue_depth = 128;
  d.source =
      "A6 [S] computerbase.de 2020-05 samsung-pm9a3, heise.de/-4720224 (U.2: 6,500 / 3,500 MB/s, "
      "900K / 200K IOPS); read latency A9 seed 80 us; write latency 30 us and queue depth 128 "
      "assumed";
  return d;
}

// Read latency 70 us: Samsung publishes none; Kioxia's Gen5 prototype reads in 70 us (A6), taken
// as a proxy. Write latency and queue depth as for the PM9A3 (assumed).
NvmeDriveSpec samsung_pm1743() {
  NvmeDriveSpec d;
  d.name = "samsung_pm1743";
  d.read = BytesPerSec{13e9};
  d.write = BytesPerSec{6.6e9};
  d.read_latency = 70 * kMicrosecond;
  d.write_latency = 30 * kMicrosecond;
  d.read_iops = 2.5e6;
  d.write_iops = 250e3;
  d.queue_depth = 128;
  d.source =
      "A6 [S] computerbase.de 2021-12 samsung-pm1743, clubic.com (13,000 / 6,600 MB/s, 2.5M / "
      "250K IOPS); read latency 70 us from Kioxia's Gen5 prototype (A6, proxy); write latency "
      "30 us and queue depth 128 assumed";
  return d;
}

void validate(const NvmeDriveSpec& d, const std::string& path) {
  require(positive_rate(d.read), path, "read", "must be a finite rate > 0");
  require(positive_rate(d.write), path, "write", "must be a finite rate > 0");
  require(d.read_latency >= 0, path, "read_latency", "must be >= 0");
  require(d.write_latency >= 0, path, "write_latency", "must be >= 0");
  require(std::isfinite(d.read_iops) && d.read_iops > 0, path, "read_iops", "must be > 0");
  require(std::isfinite(d.write_iops) && d.write_iops > 0, path, "write_iops", "must be > 0");
  require(d.queue_depth >= 1, path, "queue_depth", "must be >= 1");
}

BytesPerSec nvme_read_rate(const NvmeDriveSpec& d, Bytes io_size) {
  return io_rate(d.read, d.read_iops, d.queue_depth, d.read_latency, io_size);
}

BytesPerSec nvme_write_rate(const NvmeDriveSpec& d, Bytes io_size) {
  return io_rate(d.write, d.write_iops, d.queue_depth, d.write_latency, io_size);
}

SimTime nvme_read_time(const NvmeDriveSpec& d, Bytes bytes) {
  return d.read_latency + transfer_time(bytes, d.read);
}

SimTime nvme_write_time(const NvmeDriveSpec& d, Bytes bytes) {
  return d.write_latency + transfer_time(bytes, d.write);
}

namespace {

// 25/100/200 Gb/s at 92 % and 400 Gb/s at 90 % of line rate: docs/sources.md A9 seeds (11.5,
// 23, 45 GB/s); A7 measured ~12 GB/s per 100G and ~24 per 200G with nccl-tests, ~194 of 200 Gb/s
// with ib_write_bw. One-way latency 1 us: A7 perftest ib_write_lat 0.93-1.32 us, ib_read_lat
// (a round trip) 1.91 us.
RdmaNicSpec rdma_nic(double gbits, double efficiency, std::string name) {
  RdmaNicSpec n;
  n.name = std::move(name);
  n.line_rate_bits_per_s = gbits * 1e9;
  n.efficiency = efficiency;
  n.latency = 1 * kMicrosecond;
  n.source =
      "A9 seeds 100G 11.5, 200G 23, 400G 45 GB/s; A7 [M] NVIDIA/nccl-tests issue 119 (~12 GB/s "
      "per 100G, ~24 per 200G), linux-rdma/perftest issue 131 (ib_write_lat ~1 us, ib_read_lat "
      "1.91 us)";
  return n;
}

}  // namespace

RdmaNicSpec rdma_nic_25g() { return rdma_nic(25, 0.92, "rdma_25g"); }
RdmaNicSpec rdma_nic_100g() { return rdma_nic(100, 0.92, "rdma_100g"); }
RdmaNicSpec rdma_nic_200g() { return rdma_nic(200, 0.92, "rdma_200g"); }
RdmaNicSpec rdma_nic_400g() { return rdma_nic(400, 0.90, "rdma_400g"); }

LinkSpec rdma_link(const RdmaNicSpec& nic, std::string name) {
  LinkSpec s;
  s.name = std::move(name);
  s.forward = nic.effective();
  s.backward = nic.effective();
  s.latency = nic.latency;
  return s;
}

void validate(const StorageNodeSpec& n, const std::string& path) {
  require(positive_rate(n.nic), path, "nic", "must be a finite rate > 0");
  require(n.nic_latency >= 0, path, "nic_latency", "must be >= 0");
  require(positive_rate(n.controller), path, "controller", "must be a finite rate > 0");
  require(n.num_drives >= 1, path, "num_drives", "must be >= 1");
  require(n.software_latency >= 0, path, "software_latency", "must be >= 0");
  validate(n.drive, path + ".drive");
}

BytesPerSec storage_read_bandwidth(const StorageNodeSpec& n) {
  return std::min({n.nic, n.controller, times(n.num_drives, n.drive.read)});
}

BytesPerSec storage_write_bandwidth(const StorageNodeSpec& n) {
  return std::min({n.nic, n.controller, times(n.num_drives, n.drive.write)});
}

SimTime storage_read_latency(const StorageNodeSpec& n) {
  return n.nic_latency + n.software_latency + n.drive.read_latency;
}

SimTime storage_write_latency(const StorageNodeSpec& n) {
  return n.nic_latency + n.software_latency + n.drive.write_latency;
}

SimTime storage_read_time(const StorageNodeSpec& n, Bytes bytes) {
  return storage_read_latency(n) + transfer_time(bytes, storage_read_bandwidth(n));
}

SimTime storage_write_time(const StorageNodeSpec& n, Bytes bytes) {
  return storage_write_latency(n) + transfer_time(bytes, storage_write_bandwidth(n));
}

BytesPerSec storage_effective_read_bandwidth(const StorageNodeSpec& n, Bytes bytes) {
  return BytesPerSec{bytes.as_double() / to_seconds(storage_read_time(n, bytes))};
}

BytesPerSec storage_effective_write_bandwidth(const StorageNodeSpec& n, Bytes bytes) {
  return BytesPerSec{bytes.as_double() / to_seconds(storage_write_time(n, bytes))};
}

// Assumptions (docs/topology.md, "Pliops XDP LightningAI"):
//   NIC 23 GB/s: 2 x 100 GbE (or 1 x 200 GbE) RDMA at the A9 seed of 11.5 GB/s per 100G.
//   NIC latency 2 us: one one-sided RDMA read round trip (A7 ib_read_lat 1.91 us; A9 seed 2 us).
//   Software 20 us: an NVMe-oF/RDMA target adds 10-20 us (A7), taken at the top for the KV
//     index lookup; with the drive's 80 us the first byte arrives after ~100 us, A9's seed for a
//     remote NVMe first byte (range 40-200 us).
//   Controller 25.2 GB/s: the XDP card assumed on a PCIe Gen4 x16 slot at 80 % of 31.5 GB/s
//     (docs/sources.md A5), so that the NIC, not the card, is the bottleneck.
//   8 x Samsung PM9A3: a common 1U/2U U.2 population; 52 GB/s read and 28 GB/s write, above the
//     NIC, so the NIC bounds both directions.
StorageNodeSpec pliops_xdp_lightningai_assumed() {
  StorageNodeSpec n;
  n.name = "pliops_xdp_lightningai";
  n.nic = BytesPerSec{23e9};
  n.nic_latency = 2 * kMicrosecond;
  n.controller = BytesPerSec{25.2e9};
  n.num_drives = 8;
  n.drive = samsung_pm9a3();
  n.software_latency = 20 * kMicrosecond;
  n.source =
      "A8: no public bandwidth or latency of Pliops XDP; every figure assumed: NIC 2x100G at "
      "the A9 seed 11.5 GB/s each; NIC latency A7 ib_read_lat; software A7 NVMe-oF/RDMA 10-20 us; "
      "first byte ~100 us as A9's remote-NVMe seed; controller PCIe Gen4 x16 at 80 % (A5); "
      "8 x PM9A3 (A6)";
  return n;
}

LinkId attach_nvme_drive(Topology& topology, NodeId host, NodeId drive, PcieGen gen, int lanes) {
  LinkSpec s;
  s.name = topology.name(host) + "-" + topology.name(drive);
  s.forward = pcie_theoretical_rate(gen, lanes);
  s.backward = s.forward;
  return topology.add_link(host, drive, std::move(s));
}

LinkId attach_storage_node(Topology& topology, NodeId network_switch, NodeId node,
                           const StorageNodeSpec& spec) {
  LinkSpec s;
  s.name = topology.name(network_switch) + "-" + topology.name(node);
  s.forward = spec.nic;
  s.backward = spec.nic;
  s.latency = spec.nic_latency;
  return topology.add_link(network_switch, node, std::move(s));
}

NvmeDriveResources add_nvme_drive_resources(FlowNetwork& network, const NvmeDriveSpec& drive,
                                            const std::string& name) {
  NvmeDriveResources r;
  r.read = network.add_resource(name + ".read", drive.read);
  r.write = network.add_resource(name + ".write", drive.write);
  return r;
}

TransferOptions nvme_read_options(const NvmeDriveSpec& drive, const NvmeDriveResources& res,
                                  std::uint64_t tag) {
  TransferOptions o;
  o.extra_latency = drive.read_latency;
  o.resources = {res.read};
  o.tag = tag;
  return o;
}

TransferOptions nvme_write_options(const NvmeDriveSpec& drive, const NvmeDriveResources& res,
                                   std::uint64_t tag) {
  TransferOptions o;
  o.extra_latency = drive.write_latency;
  o.resources = {res.write};
  o.tag = tag;
  return o;
}

StorageNodeResources add_storage_node_resources(FlowNetwork& network, const StorageNodeSpec& node) {
  StorageNodeResources r;
  r.controller = network.add_resource(node.name + ".controller", node.controller);
  r.drives_read =
      network.add_resource(node.name + ".drives_read", times(node.num_drives, node.drive.read));
  r.drives_write =
      network.add_resource(node.name + ".drives_write", times(node.num_drives, node.drive.write));
  return r;
}

TransferOptions storage_read_options(const StorageNodeSpec& node, const StorageNodeResources& res,
                                     std::uint64_t tag) {
  TransferOptions o;
  o.extra_latency = node.software_latency + node.drive.read_latency;
  o.resources = {res.controller, res.drives_read};
  o.tag = tag;
  return o;
}

TransferOptions storage_write_options(const StorageNodeSpec& node, const StorageNodeResources& res,
                                      std::uint64_t tag) {
  TransferOptions o;
  o.extra_latency = node.software_latency + node.drive.write_latency;
  o.resources = {res.controller, res.drives_write};
  o.tag = tag;
  return o;
}

}  // namespace kvsim::hw
