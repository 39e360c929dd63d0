#pragma once
// GPU and server specifications as catalogued in scenarios/catalog/gpus.yaml. Figures are
// per GPU: memory in bytes, bandwidths in bytes/s, tensor throughput in FLOP/s (dense, no
// sparsity; for BF16/FP16 the accumulate mode PyTorch uses: FP32 accumulate, which is half
// rate on GeForce cards).
#include <string>
#include <vector>

#include "kvsim/core/units.hpp"

namespace kvsim::hw {

enum class PcieGen { kGen3 = 3, kGen4 = 4, kGen5 = 5 };

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
  BytesPerSec memory_bandwidth{0};  // peak
  FlopsPerSec bf16_dense{0};        // dense BF16 tensor FLOP/s with PyTorch's accumulate mode
  FlopsPerSec fp8_dense{0};         // 0 when the GPU has no FP8 tensor cores
  HostLinkSpec host_link;
  bool p2p = false;                 // GPU peer-to-peer supported
  bool gpudirect = false;           // GPUDirect RDMA / Storage supported
  std::string source;               // citations for the figures (catalog text)
};

// A GPU server: `count` identical machines each with `gpus_per_server` GPUs. Later issues add
// host DRAM, local NVMe and NICs here.
struct ServerSpec {
  std::string name = "server";
  int count = 1;
  int gpus_per_server = 1;
  GpuSpec gpu;
};

int pcie_generation(PcieGen g);

struct HardwareSpec {
  std::vector<ServerSpec> servers;
};

}  // namespace kvsim::hw
