#pragma once
// NVMe drives, RDMA NICs and network-attached KV-store nodes. Rates in bytes/s, times in ns.
//
// A large sequential read or write of an NVMe drive is bandwidth-bound after a first-byte
// latency (docs/sources.md A6):
//   t_drive = latency + bytes / rate,  rate(io) = min(seq_bw, iops x io, queue_depth x io /
//   latency)
// where the last two terms matter only for small I/Os (IOPS, and Little's law for the I/Os kept
// in flight).
// A remote KV fetch from a storage node (docs/sources.md A7, [D]):
//   t_node = nic_latency + software_latency + drive_latency
//            + bytes / min(NIC, controller, num_drives x per-drive rate)
// The FlowNetwork gives the same time for a lone transfer and shares the NIC, the controller
// and the drives among concurrent ones (add_storage_node_resources, storage_read_options).
#include <cstdint>
#include <string>

#include "hw/flow_network.hpp"
#include "hw/gpu_spec.hpp"
#include "hw/storage_spec.hpp"
#include "hw/topology.hpp"
#include "sim/core/units.hpp"

namespace kvsim::hw {

// Drives and storage nodes have no presets here: their figures, with sources, are entries of
// the catalog (scenarios/catalog/drives.yaml, storage.yaml), which a scenario's `preset:` copies
// (sim/scenario/catalog.hpp). This file holds the models that use the figures.

// Checks a drive's figures: rates and IOPS > 0, latencies >= 0, queue_depth >= 1; otherwise
// InputError with `path` + ".field".
void validate(const NvmeDriveSpec& drive, const std::string& path);

// Sustained rate with I/Os of io_size bytes: min(seq, iops x io, queue_depth x io / latency)
// (a zero latency drops the last term).
BytesPerSec nvme_read_rate(const NvmeDriveSpec& drive, Bytes io_size);
BytesPerSec nvme_write_rate(const NvmeDriveSpec& drive, Bytes io_size);
// One large transfer alone: latency + bytes / seq (rounded up to the next ns).
SimTime nvme_read_time(const NvmeDriveSpec& drive, Bytes bytes);
SimTime nvme_write_time(const NvmeDriveSpec& drive, Bytes bytes);

// An RDMA NIC port: line rate, the fraction of it large RDMA transfers reach, and the one-way
// latency of its link.
struct RdmaNicSpec {
  std::string name;
  double line_rate_bits_per_s = 0;
  double efficiency = 0;  // in (0, 1]
  SimTime latency = 0;
  std::string source;
  // line_rate / 8 x efficiency.
  BytesPerSec effective() const { return BytesPerSec{line_rate_bits_per_s / 8.0 * efficiency}; }
};

// The NIC's link as a LinkSpec: effective() both ways, no duplex interference (Ethernet and
// InfiniBand are full duplex with separate lanes each way), the NIC's latency.
LinkSpec rdma_link(const RdmaNicSpec& nic, std::string name);

// A network-attached KV store on NVMe.

// Checks the node's figures (rates > 0, latencies >= 0, num_drives >= 1, the drive's own);
// InputError with `path` + ".field".
void validate(const StorageNodeSpec& node, const std::string& path);

// min(NIC, controller, num_drives x drive rate).
BytesPerSec storage_read_bandwidth(const StorageNodeSpec& node);
BytesPerSec storage_write_bandwidth(const StorageNodeSpec& node);
// nic_latency + software_latency + drive latency.
SimTime storage_read_latency(const StorageNodeSpec& node);
SimTime storage_write_latency(const StorageNodeSpec& node);
// latency + bytes / bandwidth, one transfer alone.
SimTime storage_read_time(const StorageNodeSpec& node, Bytes bytes);
SimTime storage_write_time(const StorageNodeSpec& node, Bytes bytes);
// bytes / storage_*_time: what a transfer of that size sees end to end.
BytesPerSec storage_effective_read_bandwidth(const StorageNodeSpec& node, Bytes bytes);
BytesPerSec storage_effective_write_bandwidth(const StorageNodeSpec& node, Bytes bytes);

// Topology helpers. A local drive hangs off a host over a PCIe link at the link's theoretical
// rate (the drive's own figures already include protocol overhead: 6.5 GB/s is 83 % of Gen4
// x4's 7.88) and no latency (the drive's latency goes into the transfer).
LinkId attach_nvme_drive(Topology& topology, NodeId host, NodeId drive,
                         PcieGen gen = PcieGen::kGen4, int lanes = 4);
// A storage node's network link to a switch: node.nic both ways, node.nic_latency.
LinkId attach_storage_node(Topology& topology, NodeId network_switch, NodeId node,
                           const StorageNodeSpec& spec);

// FlowNetwork resources of a drive: its read and its write bandwidth.
struct NvmeDriveResources {
  ResourceId read = -1;
  ResourceId write = -1;
};
NvmeDriveResources add_nvme_drive_resources(FlowNetwork& network, const NvmeDriveSpec& drive,
                                            const std::string& name);
// Options for a read or write on the drive: its latency and resource. Transfers sharing the
// drive share its bandwidth.
TransferOptions nvme_read_options(const NvmeDriveSpec& drive, const NvmeDriveResources& res,
                                  std::uint64_t tag = 0);
TransferOptions nvme_write_options(const NvmeDriveSpec& drive, const NvmeDriveResources& res,
                                   std::uint64_t tag = 0);

// FlowNetwork resources of a storage node: its controller and its drives' aggregate read and
// write bandwidth (num_drives x per-drive). The NIC is the node's link in the topology.
struct StorageNodeResources {
  ResourceId controller = -1;
  ResourceId drives_read = -1;
  ResourceId drives_write = -1;
};
StorageNodeResources add_storage_node_resources(FlowNetwork& network, const StorageNodeSpec& node);
// extra_latency = software_latency + drive latency (the NIC's latency is on the route).
TransferOptions storage_read_options(const StorageNodeSpec& node, const StorageNodeResources& res,
                                     std::uint64_t tag = 0);
TransferOptions storage_write_options(const StorageNodeSpec& node, const StorageNodeResources& res,
                                      std::uint64_t tag = 0);

}  // namespace kvsim::hw
