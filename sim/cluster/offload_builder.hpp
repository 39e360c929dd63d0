#pragma once
// The KV offload system of a scenario: the hardware topology its transfers cross, the flow
// network that times them, and the tiers (docs/topology.md, docs/offload.md).
//
// Topology: per server a host with its GPUs on PCIe (forward = host to GPU; one node per engine
// replica, whose tp GPUs move their KV shards over tp links at once, so one link of tp times the
// rates), optional local NVMe drives behind the host (striped: their lanes side by side), and the
// NIC as the host's link to one switch that reaches the network store. Devices are resources
// the transfers share: each server's drives (aggregate of `count`), the store's controller and
// drives (hw/storage.hpp), each host's DRAM bandwidth (every tier's data passes through host
// memory on the way to a GeForce GPU). Tiers: host_dram and local_nvme one per server, remote
// one for all; each engine gets a route to and from every tier and between adjacent tiers.
#include <memory>
#include <vector>

#include "hw/flow_network.hpp"
#include "hw/topology.hpp"
#include "sim/engine/engine.hpp"
#include "sim/engine/offload.hpp"
#include "sim/io/results.hpp"
#include "sim/scenario/scenario.hpp"

namespace kvsim::cluster {

// LMCache moves KV between vLLM's paged GPU cache and pinned host memory with one gather/scatter
// kernel per 256-token chunk (lmcache/v1/gpu_connector.py, multi_layer_kv_transfer: the SMs read
// or write host memory over PCIe) instead of the copy engines: its transfers run at this fraction
// of the GPU link's copy-engine rate. 0.88: LMCache's L1 load through that path on an NVIDIA L20
// (PCIe 4.0) against the raw copy, 22.1 of 25.07 GB/s (LMCache issue 4626). Consistent with
// 41-44 GB/s retrieve and store logged on a PCIe 5.0 host (LMCache PR 1740) and with SM copies
// trailing copy-engine copies (NVIDIA/nvbandwidth issue 24).
inline constexpr double kLmcacheCopyEfficiency = 0.88;

struct OffloadCluster {
  std::unique_ptr<hw::Topology> topology;
  std::unique_ptr<hw::FlowNetwork> network;
  std::unique_ptr<engine::OffloadSystem> offload;
  std::vector<std::vector<int>> tier_instances;  // per scenario tier: its OffloadSystem tiers
};

// Builds the offload system for `engines` (one per GPU replica, in the order of the scenario's
// servers) and attaches each engine to it, for a scenario that scenario::check_deployment passes
// (every tier has its devices).
OffloadCluster build_offload(const scenario::Scenario& sc,
                             const std::vector<std::unique_ptr<engine::Engine>>& engines);

// The kind of a link (io::LinkInfo::kind) from the kinds of its ends: pcie, nvme, store or nic.
const char* link_kind(const hw::Topology& topo, hw::LinkId l);

// Tiers by kind in the order of the scenario's tier list, and links by kind: what a run's
// summary reports (io::RunInfo::tiers and ::links) after `seconds` of simulated time.
void report_offload(const scenario::Scenario& sc, const OffloadCluster& oc, double seconds,
                    io::RunInfo& info);

}  // namespace kvsim::cluster
