#pragma once
// Collective communication between the GPUs of one tensor-parallel group: the time of a ring
// all-reduce and a ring all-gather over k GPUs, from the GPUs' link rates. Bytes, bytes/s and
// seconds (double).
//
// Ring algorithm (Patarasuk & Yuan 2009, "Bandwidth optimal all-reduce algorithms for clusters
// of workstations"; NCCL's ring, docs.nvidia.com/deeplearning/nccl "Performance" busbw): the
// message of S bytes is cut into k chunks; all-reduce is a reduce-scatter then an all-gather,
// 2(k-1) steps in each of which every GPU sends one chunk (S/k) to its ring neighbour and
// receives one, all at once:
//   all_reduce(S) = call_latency + 2(k-1) x (hop_latency + S / (k B))
//                 = call_latency + 2(k-1)/k x S / B + 2(k-1) x hop_latency
//   all_gather(S) = call_latency + (k-1) x (hop_latency + S / (k B))     (S: the gathered size)
// with B the bottleneck rate per direction of one hop while every hop is busy at once:
//   - NVLink (catalog `nvlink` > 0): B = nvlink rate per direction.
//   - PCIe peer-to-peer (catalog p2p true, no NVLink): each GPU sends and receives over its own
//     PCIe link at once, B = host_link.bidirectional_each.
//   - No P2P (GeForce with the stock driver, docs/sources.md A2): NCCL stages every hop through
//     pinned host memory: GPU -> host over the sender's PCIe link, host -> GPU over the
//     receiver's, pipelined in chunks. Every GPU's link then carries its outgoing chunk up and its
//     incoming chunk down at the same time, so B = host_link.bidirectional_each (the 4090's ~13
//     GB/s each way when both directions copy; A2 measures ~25.8 GB/s bidirectional GPU to GPU
//     without P2P, 12.9 each way). Host memory carries every staged byte twice (written, then
//     read): k GPUs x 2 directions x B, so B is also capped at host_dram_bandwidth / (2k) when that
//     is known. Each hop crosses PCIe twice: its latency counts twice.
// Latencies: NCCL's own tuning model (src/graph/tuning.cc): Ring/Simple base latency 8.4 us per
// call, per step 5.7 us over PCI and 3.4 us over NVLink (hwLat). They are parameters.
//
// Which all-reduce vLLM 0.19 runs (vllm/distributed/device_communicators/cuda_communicator.py
// all_reduce; custom_all_reduce.py CustomAllreduce.should_custom_ar): its custom all-reduce
// kernel when the group has 2, 4, 6 or 8 GPUs on one node with peer-to-peer access, every pair
// joined by NVLink when there are more than 2 (PCIe-only GPUs get it at 2 only), and the message
// is under 8 MiB; NCCL otherwise. The custom kernel reads the peers' buffers directly:
//   one-shot (always at 2 GPUs; below 512 KiB for up to 4, 256 KiB for up to 8):
//       custom_latency + (k - 1) x S / B          (each GPU reads the k - 1 others' S bytes)
//   two-shot (larger messages): custom_latency + 2 (k - 1) / k x S / B
// custom_latency 8 us: measured 7.5-9.2 us for 256 B - 8 KB on two RTX PRO 6000 over PCIe
// against ~24 us for NCCL (docs/sources.md A10).
//
// Measured NCCL (GpuSpec::nccl_pair): where the catalog holds NCCL collectives measured between
// two GPUs of the kind, a group of two uses them instead of the ring formulas: the time of one
// call is interpolated linearly in the message size between measured sizes, held at the smallest
// size's time below it (the latency floor) and extended with the last segment's slope above the
// largest. The ring model over the link's nominal rate is 30-45 % fast against such a
// measurement on two RTX PRO 6000 (an 8 MiB all-gather per GPU: 179 us against 277 us
// measured), because NCCL's PCIe peer-to-peer path moves ~31-37 GB/s per direction, not the
// ~51 GB/s of the copy engines (docs/sources.md A10).
#include <vector>

#include "hw/gpu_spec.hpp"
#include "sim/core/units.hpp"

namespace kvsim::hw {

enum class CollectivePath { kNvlink, kPcieP2p, kHostStaged };

const char* collective_path_name(CollectivePath p);

// Latency figures of one collective call, seconds.
struct CollectiveLatency {
  double call_s = 8.4e-6;        // NCCL Ring/Simple base latency per call
  double pcie_hop_s = 5.7e-6;    // NCCL hwLat PCI, Ring/Simple, per ring step
  double nvlink_hop_s = 3.4e-6;  // NCCL hwLat NVLink, Ring/Simple, per ring step
  double custom_s = 8e-6;        // vLLM's custom all-reduce kernel per call
};

// The ring of k GPUs: its bottleneck rate per direction, its per-step and per-call latency.
struct CollectiveLink {
  int ranks = 1;
  CollectivePath path = CollectivePath::kHostStaged;
  double rate_bytes_per_s = 0;  // B
  double hop_latency_s = 0;     // per ring step
  double call_latency_s = 0;    // per call
  bool custom_all_reduce = false;  // vLLM's custom all-reduce applies (below 8 MiB)
  double custom_latency_s = 0;
  PairCollectives measured;  // NCCL measured between two GPUs (used when ranks is 2)
  bool uses_measured() const { return ranks == 2 && !measured.empty(); }
};

// The ring over `ranks` GPUs of one kind in one server. host_dram_bandwidth 0: not a bottleneck.
// Throws InputError when ranks < 1 or the needed link rate is not positive.
CollectiveLink collective_link(const GpuSpec& gpu, int ranks,
                               BytesPerSec host_dram_bandwidth = BytesPerSec{0},
                               const CollectiveLatency& latency = {});

// Seconds of one NCCL all-reduce of `bytes` (each GPU's full message): measured where the link
// has a measurement, else the ring formula; 0 when ranks is 1 or bytes is 0.
double nccl_all_reduce_s(double bytes, const CollectiveLink& link);

// Seconds of one NCCL all-gather whose gathered result is `bytes` (each GPU contributes
// bytes / k); 0 when ranks is 1 or bytes is 0.
double nccl_all_gather_s(double bytes, const CollectiveLink& link);

// Seconds of one NCCL reduce-scatter of `bytes` (each GPU's input; each ends with bytes / k): the
// ring takes as long as the all-gather of the same size; a measurement has its own figures.
double nccl_reduce_scatter_s(double bytes, const CollectiveLink& link);

// Seconds at `bytes` of a measured sweep (`us` at the increasing `sizes`; see the header).
double interpolate_measured_s(const std::vector<double>& sizes, const std::vector<double>& us,
                              double bytes);

// Seconds of the all-reduce vLLM picks for `bytes` (custom kernel or NCCL's ring; header).
double vllm_all_reduce_s(double bytes, const CollectiveLink& link);

}  // namespace kvsim::hw
