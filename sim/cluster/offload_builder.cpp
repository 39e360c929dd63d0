#include "sim/cluster/offload_builder.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "hw/storage.hpp"
#include "sim/core/error.hpp"
#include "sim/scenario/deployment.hpp"

namespace kvsim::cluster {
using scenario::replica_block_bytes;
using scenario::Scenario;

const char* link_kind(const hw::Topology& topo, hw::LinkId l) {
  const auto a = topo.kind(topo.link_a(l));
  const auto b = topo.kind(topo.link_b(l));
  auto has = [&](hw::NodeKind k) { return a == k || b == k; };
  if (has(hw::NodeKind::kGpu)) return "pcie";
  if (has(hw::NodeKind::kNvmeDrive)) return "nvme";
  if (has(hw::NodeKind::kStorageNode)) return "store";
  return "nic";
}

OffloadCluster build_offload(const Scenario& sc,
                             const std::vector<std::unique_ptr<engine::Engine>>& engines) {
  OffloadCluster oc;
  const auto& ko = sc.kv_offload;
  // A tensor-parallel replica's block is its GPUs' shards together.
  const int tp = sc.engine.tensor_parallel_size;
  const Bytes block_bytes = replica_block_bytes(sc);

  // Topology: per server a host with its GPUs on PCIe (forward = host to GPU), optional local
  // NVMe behind the host, and the NIC as the host's link to one switch that reaches the store.
  oc.topology = std::make_unique<hw::Topology>();
  hw::Topology& topo = *oc.topology;
  const bool need_network = scenario::has_remote_tier(ko);
  KVSIM_ASSERT(!need_network || sc.hardware.remote_store,
               "a remote tier without a store passed the checks");
  const hw::NodeId sw =
      need_network ? topo.add_node(hw::NodeKind::kNetworkSwitch, "switch") : hw::kNoNode;
  hw::NodeId store = hw::kNoNode;
  if (need_network) {
    store = topo.add_node(hw::NodeKind::kStorageNode, "remote_store");
    hw::attach_storage_node(topo, sw, store, *sc.hardware.remote_store);
  }
  struct ServerNodes {
    hw::NodeId host;
    hw::NodeId nvme = hw::kNoNode;
    const hw::ServerSpec* spec;
  };
  std::vector<ServerNodes> servers;
  std::vector<hw::NodeId> gpu_nodes;
  std::vector<int> gpu_server;
  for (std::size_t group = 0; group < sc.hardware.servers.size(); ++group) {
    const auto& spec = sc.hardware.servers[group];
    for (int c = 0; c < spec.count; ++c) {
      const std::string sname = spec.name + "-" + std::to_string(c);
      ServerNodes sn{topo.add_node(hw::NodeKind::kHost, sname), hw::kNoNode, &spec};
      // One node per engine replica. With tensor parallelism each GPU of the replica moves its
      // own KV shard (1/tp of every block) over its own PCIe link, all at once and alike, so the
      // replica's tp links act as one link of tp times the rates.
      hw::HostLinkSpec replica_link = spec.gpu.host_link;
      replica_link.h2d = BytesPerSec{replica_link.h2d.value * tp};
      replica_link.d2h = BytesPerSec{replica_link.d2h.value * tp};
      replica_link.bidirectional_each = BytesPerSec{replica_link.bidirectional_each.value * tp};
      for (int g = 0; g < spec.gpus_per_server / tp; ++g) {
        const hw::NodeId gpu =
            topo.add_node(hw::NodeKind::kGpu, sname + "/gpu" + std::to_string(g));
        topo.add_link(sn.host, gpu,
                      hw::gpu_host_link(replica_link, sname + "/pcie" + std::to_string(g), 0));
        gpu_nodes.push_back(gpu);
        gpu_server.push_back(static_cast<int>(servers.size()));
      }
      if (spec.local_nvme) {
        sn.nvme = topo.add_node(hw::NodeKind::kNvmeDrive, sname + "/nvme");
        // The drives as one device: their PCIe lanes side by side (striped tier).
        hw::attach_nvme_drive(topo, sn.host, sn.nvme, spec.local_nvme->gen,
                              spec.local_nvme->lanes * spec.local_nvme->count);
      }
      if (need_network) {
        hw::LinkSpec nic;
        nic.name = sname + "/nic";
        nic.forward = spec.nic.rate;
        nic.backward = spec.nic.rate;
        nic.latency = spec.nic.latency + sc.hardware.switch_latency;
        topo.add_link(sn.host, sw, nic);
      }
      servers.push_back(sn);
    }
  }
  topo.seal();
  oc.network = std::make_unique<hw::FlowNetwork>(topo);
  hw::FlowNetwork& network = *oc.network;
  const bool lmcache = ko.connector == engine::KvConnector::kLmcache;
  const int chunk_blocks = scenario::offload_chunk_tokens(sc) / sc.engine.block_size;
  oc.offload = std::make_unique<engine::OffloadSystem>(
      network, block_bytes, sc.engine.block_size, ko.offload_prompt_only,
      lmcache ? engine::OffloadSystem::Kind::kLmcache : engine::OffloadSystem::Kind::kNative,
      chunk_blocks);

  // Device resources: each server's NVMe drives (aggregate of `count`), the store's controller
  // and drives.
  struct Device {
    std::vector<hw::ResourceId> read, write;
    SimTime read_latency = 0, write_latency = 0;
  };
  std::vector<Device> nvme_dev(servers.size());
  for (std::size_t s = 0; s < servers.size(); ++s) {
    if (servers[s].nvme == hw::kNoNode) continue;
    const auto& ln = *servers[s].spec->local_nvme;
    hw::NvmeDriveSpec agg = ln.drive;
    agg.read = BytesPerSec{ln.drive.read.value * ln.count};
    agg.write = BytesPerSec{ln.drive.write.value * ln.count};
    const auto res = hw::add_nvme_drive_resources(network, agg, topo.name(servers[s].nvme));
    nvme_dev[s] = Device{{res.read}, {res.write}, ln.drive.read_latency, ln.drive.write_latency};
  }
  // Each host's DRAM bandwidth, shared by every transfer into or out of host memory (tier reads
  // and writes, and the bounce of network and NVMe data on its way to the GPU).
  std::vector<hw::ResourceId> dram_res(servers.size(), -1);
  for (std::size_t s = 0; s < servers.size(); ++s) {
    const auto bw = servers[s].spec->host.dram_bandwidth;
    if (bw.value > 0) dram_res[s] = network.add_resource(topo.name(servers[s].host) + "/dram", bw);
  }
  Device store_dev;
  if (need_network) {
    const auto& node = *sc.hardware.remote_store;
    const auto res = hw::add_storage_node_resources(network, node);
    const auto r = hw::storage_read_options(node, res);
    const auto w = hw::storage_write_options(node, res);
    store_dev = Device{r.resources, w.resources, r.extra_latency, w.extra_latency};
  }

  // Tiers: host_dram and local_nvme one per server, remote one for all.
  std::vector<std::vector<int>> tier_of(ko.tiers.size());  // [tier spec][server] -> tier index
  for (std::size_t t = 0; t < ko.tiers.size(); ++t) {
    const auto& ts = ko.tiers[t];
    const std::int64_t blocks = ts.capacity.value / (block_bytes.value * chunk_blocks);
    const std::string kind = engine::kv_tier_kind_name(ts.kind);
    if (ts.kind == engine::KvTierKind::kRemote) {
      const int idx = oc.offload->add_tier(kind, blocks, ts.eviction);
      tier_of[t].assign(servers.size(), idx);
      continue;
    }
    for (std::size_t s = 0; s < servers.size(); ++s) {
      KVSIM_ASSERT(ts.kind != engine::KvTierKind::kLocalNvme || servers[s].nvme != hw::kNoNode,
                   "a local_nvme tier without drives");
      tier_of[t].push_back(
          oc.offload->add_tier(topo.name(servers[s].host) + "/" + kind, blocks, ts.eviction));
    }
  }

  oc.tier_instances.assign(ko.tiers.size(), {});
  for (std::size_t t = 0; t < ko.tiers.size(); ++t) {
    for (const int idx : tier_of[t]) {
      auto& v = oc.tier_instances[t];
      if (std::find(v.begin(), v.end(), idx) == v.end()) v.push_back(idx);
    }
  }

  // Each engine's stack: routes from and to its GPU, and between adjacent tiers.
  auto tier_node = [&](std::size_t t, std::size_t s) {
    switch (ko.tiers[t].kind) {
      case engine::KvTierKind::kHostDram:
        return servers[s].host;
      case engine::KvTierKind::kLocalNvme:
        return servers[s].nvme;
      case engine::KvTierKind::kRemote:
        break;
    }
    return store;
  };
  auto tier_device = [&](std::size_t t, std::size_t s) -> Device {
    switch (ko.tiers[t].kind) {
      case engine::KvTierKind::kHostDram:
        return Device{};
      case engine::KvTierKind::kLocalNvme:
        return nvme_dev[s];
      case engine::KvTierKind::kRemote:
        break;
    }
    return store_dev;
  };
  for (std::size_t e = 0; e < engines.size(); ++e) {
    const auto s = static_cast<std::size_t>(gpu_server[e]);
    std::vector<engine::TierPath> paths;
    std::vector<engine::CascadePath> cascades;
    for (std::size_t t = 0; t < ko.tiers.size(); ++t) {
      const hw::NodeId node = tier_node(t, s);
      const Device dev = tier_device(t, s);
      engine::TierPath p;
      p.tier = tier_of[t][s];
      p.to_gpu = topo.route(node, gpu_nodes[e]);
      p.from_gpu = topo.route(gpu_nodes[e], node);
      p.read_latency = dev.read_latency;
      p.write_latency = dev.write_latency;
      p.read_resources = dev.read;
      p.write_resources = dev.write;
      p.host_memory = ko.tiers[t].kind == engine::KvTierKind::kHostDram;
      if (ko.connector == engine::KvConnector::kLmcache) {
        const hw::HostLinkSpec& link = servers[s].spec->gpu.host_link;
        // The replica's tp links act as one of tp times the rates (above).
        p.read_rate_cap = BytesPerSec{kLmcacheCopyEfficiency * link.h2d.value * tp};
        p.write_rate_cap = BytesPerSec{kLmcacheCopyEfficiency * link.d2h.value * tp};
      }
      if (dram_res[s] >= 0) {  // every tier's data passes through host memory on a GeForce GPU
        p.read_resources.push_back(dram_res[s]);
        p.write_resources.push_back(dram_res[s]);
      }
      paths.push_back(std::move(p));
      if (t > 0) {
        engine::CascadePath c;
        c.route = topo.route(tier_node(t - 1, s), node);
        c.latency = dev.write_latency;
        c.resources = dev.write;
        cascades.push_back(std::move(c));
      }
    }
    oc.offload->attach(*engines[e], std::move(paths), std::move(cascades));
  }
  return oc;
}

void report_offload(const Scenario& sc, const OffloadCluster& oc, double seconds,
                    io::RunInfo& info) {
  // Tiers by kind, in the order of the scenario's tier list.
  const auto reports = oc.offload->report();
  const std::int64_t block_bytes = replica_block_bytes(sc).value;
  for (const auto& spec : sc.kv_offload.tiers) {
    io::TierInfo t;
    t.kind = engine::kv_tier_kind_name(spec.kind);
    t.capacity_bytes = spec.capacity.value;
    for (const auto& r : reports) {
      // A remote tier is named by its kind, the others "<server>/<kind>".
      const bool match =
          spec.kind == engine::KvTierKind::kRemote
              ? r.name == t.kind
              : r.name.size() > t.kind.size() &&
                    r.name.compare(r.name.size() - t.kind.size(), t.kind.size(), t.kind) == 0;
      if (!match) continue;
      t.hit_tokens += r.hit_tokens;
      t.bytes_read += r.bytes_read.value;
      t.bytes_written += r.bytes_written.value;
      t.bytes_promoted += r.promoted_chunks * oc.offload->chunk_blocks() * block_bytes;
      t.evictions += r.stats.evictions;
      t.stores_dropped += r.stats.stores_dropped;
    }
    info.tiers.push_back(t);
  }
  // Links by kind, from the kinds of their ends.
  const hw::Topology& topo = *oc.topology;
  seconds = std::max(seconds, 1e-9);
  auto kind_of = [&](hw::LinkId l) -> std::string { return link_kind(topo, l); };
  std::map<std::string, io::LinkInfo> by_kind;
  for (hw::LinkId l = 0; l < static_cast<hw::LinkId>(topo.num_links()); ++l) {
    io::LinkInfo& li = by_kind[kind_of(l)];
    li.kind = kind_of(l);
    const auto fwd = oc.network->bytes_moved(l, true).value;
    const auto bwd = oc.network->bytes_moved(l, false).value;
    li.bytes_forward += fwd;
    li.bytes_backward += bwd;
    const auto& spec = topo.link(l);
    li.max_utilization_forward = std::max(
        li.max_utilization_forward, static_cast<double>(fwd) / (spec.forward.value * seconds));
    li.max_utilization_backward = std::max(
        li.max_utilization_backward, static_cast<double>(bwd) / (spec.backward.value * seconds));
  }
  for (const char* k : {"pcie", "nvme", "nic", "store"}) {
    auto it = by_kind.find(k);
    if (it != by_kind.end()) info.links.push_back(it->second);
  }
}

}  // namespace kvsim::cluster
