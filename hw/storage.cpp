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
