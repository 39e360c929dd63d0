#include "hw/collective.hpp"

#include <algorithm>
#include <string>

#include "sim/core/error.hpp"

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
  // custom_all_reduce.py: 2, 4, 6 or 8 GPUs with P2P; beyond 2, fully NVLink-connected.
  const bool supported_size = ranks == 2 || ranks == 4 || ranks == 6 || ranks == 8;
  link.custom_all_reduce =
      supported_size && (gpu.p2p || gpu.nvlink.value > 0) && (ranks == 2 || gpu.nvlink.value > 0);
  link.custom_latency_s = latency.custom_s;
  link.measured = gpu.nccl_pair;
  if (ranks > 1 && !(link.rate_bytes_per_s > 0)) {
    throw InputError(Diagnostic{"", 0, 0, "gpu.host_link.bidirectional_each",
                                "tensor parallelism needs a positive GPU-to-GPU rate (" +
                                    std::string(collective_path_name(link.path)) + ")"});
  }
  return link;
}

double interpolate_measured_s(const std::vector<double>& sizes, const std::vector<double>& us,
                              double bytes) {
  KVSIM_ASSERT(!sizes.empty() && sizes.size() == us.size(), "a measured sweep's sizes and times");
  const std::size_t n = sizes.size();
  if (n == 1 || bytes <= sizes.front()) return us.front() * 1e-6;
  std::size_t hi = 1;
  while (hi + 1 < n && bytes > sizes[hi]) ++hi;
  const double x0 = sizes[hi - 1];
  const double x1 = sizes[hi];
  const double slope = (us[hi] - us[hi - 1]) / (x1 - x0);
  // Beyond the largest size the last segment's slope continues; never below that size's time.
  const double t = us[hi - 1] + slope * (bytes - x0);
  return std::max(t, bytes > x1 ? us[hi] : 0.0) * 1e-6;
}

double nccl_all_reduce_s(double bytes, const CollectiveLink& link) {
  if (link.ranks <= 1 || bytes <= 0) return 0;
  if (link.uses_measured())
    return interpolate_measured_s(link.measured.bytes, link.measured.all_reduce_us, bytes);
  const double k = link.ranks;
  const double steps = 2.0 * (k - 1);
  return link.call_latency_s + steps * (link.hop_latency_s + bytes / (k * link.rate_bytes_per_s));
}

double vllm_all_reduce_s(double bytes, const CollectiveLink& link) {
  if (link.ranks <= 1 || bytes <= 0) return 0;
  constexpr double kCustomMaxBytes = 8.0 * 1024 * 1024;  // custom_all_reduce.py max_size
  if (!link.custom_all_reduce || bytes >= kCustomMaxBytes) return nccl_all_reduce_s(bytes, link);
  const double k = link.ranks;
  const double one_shot_limit = k <= 2 ? kCustomMaxBytes : (k <= 4 ? 512.0 * 1024 : 256.0 * 1024);
  const double moved = bytes < one_shot_limit ? (k - 1) * bytes : 2.0 * (k - 1) / k * bytes;
  return link.custom_latency_s + moved / link.rate_bytes_per_s;
}

namespace {

// An all-gather whose result is `bytes`, or a reduce-scatter of `bytes`: the measured sweep
// `measured_us` at each GPU's share (nccl-tests' size), else the ring, where both take the same.
double gather_or_scatter_s(double bytes, const CollectiveLink& link,
                           const std::vector<double>& measured_us) {
  if (link.ranks <= 1 || bytes <= 0) return 0;
  const double k = link.ranks;
  if (link.uses_measured())
    return interpolate_measured_s(link.measured.bytes, measured_us, bytes / k);
  return link.call_latency_s + (k - 1) * (link.hop_latency_s + bytes / (k * link.rate_bytes_per_s));
}

}  // namespace

double nccl_all_gather_s(double bytes, const CollectiveLink& link) {
  return gather_or_scatter_s(bytes, link, link.measured.all_gather_us);
}

double nccl_reduce_scatter_s(double bytes, const CollectiveLink& link) {
  return gather_or_scatter_s(bytes, link, link.measured.reduce_scatter_us);
}

}  // namespace kvsim::hw
