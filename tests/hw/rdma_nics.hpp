#pragma once
// RDMA NIC ports for the hardware tests (scenarios take a server's NIC as a rate and latency;
// the catalog holds the figures a scenario can name). 92 % of line rate for 25/100/200 Gb/s and
// 90 % for 400 Gb/s: docs/sources.md A9 seeds (11.5, 23, 45 GB/s); A7 measured ~12 GB/s per 100G
// and ~24 per 200G with nccl-tests, ~194 of 200 Gb/s with ib_write_bw. One-way latency 1 us: A7
// perftest ib_write_lat 0.93-1.32 us, ib_read_lat (a round trip) 1.91 us.
#include <string>
#include <utility>

#include "hw/storage.hpp"

namespace kvsim::hw::testing {

inline RdmaNicSpec rdma_nic(double gbits, double efficiency, std::string name) {
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

inline RdmaNicSpec rdma_nic_25g() { return rdma_nic(25, 0.92, "rdma_25g"); }
inline RdmaNicSpec rdma_nic_100g() { return rdma_nic(100, 0.92, "rdma_100g"); }
inline RdmaNicSpec rdma_nic_200g() { return rdma_nic(200, 0.92, "rdma_200g"); }
inline RdmaNicSpec rdma_nic_400g() { return rdma_nic(400, 0.90, "rdma_400g"); }

}  // namespace kvsim::hw::testing
