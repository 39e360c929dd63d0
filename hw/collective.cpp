#include "kvsim/hw/collective.hpp"

#include <algorithm>
#include <string>

#include "kvsim/core/error.hpp"

namespace kvsim::hw {

const char* collective_path_name(CollectivePath p) {
  switch (p) {
    case CollectivePath::kNvlink:
      return "nvlink";
    case CollectivePath::kPcieP2p:
      return "pcie-p2p";
    case CollectivePath::kHostStaged:
      return "host-staged";
  }
  return "host-staged";
}

CollectiveLink collective_link(const GpuSpec& gpu, int ranks, BytesPerSec host_dram_bandwidth,
                               const CollectiveLatency& latency) {
  if (ranks < 1) {
    throw InputError(Diagnostic{"", 0, 0, "engine.tensor_parallel_size", "must be at least 1"});
  }
  CollectiveLink link;
  link.ranks = ranks;
  link.call_latency_s = latency.call_s;
  if (gpu.nvlink.value > 0) {
    link.path = CollectivePath::kNvlink;
    link.rate_bytes_per_s = gpu.nvlink.value;
    link.hop_latency_s = latency.nvlink_hop_s;
  } else if (gpu.p2p) {
    link.path = CollectivePath::kPcieP2p;
    link.rate_bytes_per_s = gpu.host_link.bidirectional_each.value;
    link.hop_latency_s = latency.pcie_hop_s;
  } else {
    link.path = CollectivePath::kHostStaged;
    link.rate_bytes_per_s = gpu.host_link.bidirectional_each.value;
    if (host_dram_bandwidth.value > 0) {
      link.rate_bytes_per_s =
          std::min(link.rate_bytes_per_s, host_dram_bandwidth.value / (2.0 * ranks));
    }
    link.hop_latency_s = 2 * latency.pcie_hop_s;  // GPU -> host, then host -> GPU
  }
  if (ranks > 1 && !(link.rate_bytes_per_s > 0)) {
    throw InputError(Diagnostic{"", 0, 0, "gpu.host_link.bidirectional_each",
                                "tensor parallelism needs a positive GPU-to-GPU rate (" +
                                    std::string(collective_path_name(link.path)) + ")"});
  }
  return link;
}

double ring_all_reduce_s(double bytes, const CollectiveLink& link) {
  if (link.ranks <= 1 || bytes <= 0) return 0;
  const double k = link.ranks;
  const double steps = 2.0 * (k - 1);
  return link.call_latency_s + steps * (link.hop_latency_s + bytes / (k * link.rate_bytes_per_s));
}

double ring_all_gather_s(double bytes, const CollectiveLink& link) {
  if (link.ranks <= 1 || bytes <= 0) return 0;
  const double k = link.ranks;
  return link.call_latency_s + (k - 1) * (link.hop_latency_s + bytes / (k * link.rate_bytes_per_s));
}

}  // namespace kvsim::hw
