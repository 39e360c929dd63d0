#pragma once
// GPU and server specifications as catalogued in scenarios/catalog/gpus.yaml. Figures are
// per GPU: memory in bytes, bandwidths in bytes/s, tensor throughput in FLOP/s (dense, no
// sparsity; for BF16/FP16 the accumulate mode PyTorch uses: FP32 accumulate, which is half
// rate on GeForce cards).
#include <optional>
#include <string>
#include <vector>

#include "hw/storage_spec.hpp"
#include "sim/core/units.hpp"

namespace kvsim::hw {

enum class PcieGen { kGen3 = 3, kGen4 = 4, kGen5 = 5 };

// NCCL collectives measured between two GPUs of this kind in one server (vLLM's
// PyNcclCommunicator, BF16, replayed in CUDA graphs): the time of one call at each message size.
// Sizes follow nccl-tests: all_reduce its input, all_gather each GPU's input (the gathered result
// is twice that), reduce_scatter each GPU's output (the input is twice that). Empty: not measured
// (hw/collective.hpp then uses its ring model).
struct PairCollectives {
  std::vector<double> bytes;          // increasing
  std::vector<double> all_reduce_us;  // one per size
  std::vector<double> all_gather_us;
  std::vector<double> reduce_scatter_us;
  std::string source;
  bool empty() const { return bytes.empty(); }
};

// The GPU's host link: measured practical rates per direction and when both are busy.
struct HostLinkSpec {
  PcieGen gen = PcieGen::kGen4;
  int lanes = 16;
  BytesPerSec h2d{0};              // pinned host-to-device, one direction alone
  BytesPerSec d2h{0};              // pinned device-to-host, one direction alone
  BytesPerSec bidirectional_each{0};  // per direction when both are busy
};

struct GpuSpec {
  std::string name;                 // catalog name, e.g. rtx4090
  Bytes memory{0};                  // total device memory as CUDA reports it
  // The most CUDA reports for this card on other hosts (the total varies with the driver, a
  // display, WSL); at most the board's memory as nvidia-smi shows it. 0, or not above memory
  // (a memory given beside a preset): none. A deployment
  // that vLLM refuses at `memory` but starts at this is sized with a note, not refused
  // (models/memory.hpp, kv_capacity).
  Bytes memory_max{0};
  BytesPerSec memory_bandwidth{0};  // peak
  FlopsPerSec bf16_dense{0};        // dense BF16 tensor FLOP/s with PyTorch's accumulate mode
  FlopsPerSec fp8_dense{0};         // 0 when the GPU has no FP8 tensor cores
  HostLinkSpec host_link;
  bool p2p = false;                 // GPU peer-to-peer supported
  // NVLink rate per direction between two GPUs of a server (all links of the GPU together, half
  // of the marketed bidirectional figure); 0 = no NVLink (GPU-to-GPU traffic uses PCIe).
  BytesPerSec nvlink{0};
  bool gpudirect = false;           // GPUDirect RDMA / Storage supported
  int num_sms = 0;                  // streaming multiprocessors; 0: not stated
  // The device name CUDA and nvidia-smi report ("NVIDIA GeForce RTX 4090"): a measured kernel
  // profile names its GPU so, and compute.kind auto matches it to this. Empty: not stated.
  std::string cuda_name;
  // NCCL between two such GPUs, measured (empty: the ring model of hw/collective.hpp).
  PairCollectives nccl_pair;
  std::string source;               // citations for the figures (catalog text)
};

// The host of a GPU server: its DRAM, which holds a host_dram KV tier.
struct HostSpec {
  Bytes dram{0};                  // installed memory; 0 = not stated (no capacity check)
  BytesPerSec dram_bandwidth{0};  // memory bandwidth KV copies share; 0 = not a bottleneck
};

// A server's RDMA NIC toward the storage network.
struct NicSpec {
  BytesPerSec rate{0};  // effective rate per direction; 0 = no NIC
  SimTime latency = 0;  // one-sided RDMA latency
};

// NVMe drives inside a server, on the host's PCIe (a local_nvme KV tier spreads over them).
struct LocalNvmeSpec {
  int count = 1;
  NvmeDriveSpec drive;
  PcieGen gen = PcieGen::kGen4;
  int lanes = 4;
};

// A GPU server: `count` identical machines each with `gpus_per_server` GPUs, its host DRAM,
// local NVMe drives and RDMA NIC.
struct ServerSpec {
  std::string name = "server";
  int count = 1;
  int gpus_per_server = 1;
  GpuSpec gpu;
  HostSpec host;
  NicSpec nic;
  std::optional<LocalNvmeSpec> local_nvme;  // absent: no local NVMe
  // Set by the scenario loader when gpus_per_server was not given: it becomes the engine's
  // tensor_parallel_size x data_parallel_size.
  bool gpus_per_server_auto = false;
};

int pcie_generation(PcieGen g);

struct HardwareSpec {
  std::vector<ServerSpec> servers;
  // The network-attached KV store that every server reaches over its NIC and one switch.
  std::optional<StorageNodeSpec> remote_store;
  SimTime switch_latency = 0;  // the network switch's forwarding latency
};

}  // namespace kvsim::hw
