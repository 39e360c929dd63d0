#pragma once
// The figures of an NVMe drive and of a network-attached storage node (a KV store such as a
// Pliops XDP LightningAI appliance), as scenarios give them. The models that use them, with
// their equations and sources, are in hw/storage.hpp. Rates in bytes/s, times in SimTime ns.
#include <string>

#include "sim/core/units.hpp"

namespace kvsim::hw {

struct NvmeDriveSpec {
  std::string name;
  BytesPerSec read{0};        // sequential read, large I/O
  BytesPerSec write{0};       // sequential write, large I/O
  SimTime read_latency = 0;   // command to first byte
  SimTime write_latency = 0;  // command to acknowledgement
  double read_iops = 0;       // 4 KiB random read
  double write_iops = 0;      // 4 KiB random write
  int queue_depth = 0;        // I/Os the host keeps outstanding per drive
  std::string source;
};

struct StorageNodeSpec {
  std::string name;
  BytesPerSec nic{0};         // effective network rate of the node, each direction
  SimTime nic_latency = 0;    // network latency before the first byte (one-sided RDMA ~2 us)
  BytesPerSec controller{0};  // what the node's controller/CPU moves, reads and writes together
  int num_drives = 0;
  NvmeDriveSpec drive;
  SimTime software_latency = 0;  // target software: NVMe-oF target, KV index lookup
  std::string source;
};

}  // namespace kvsim::hw
