#pragma once
// PCIe link rates per direction, in bytes/s.
//   theoretical = GT/s per lane x lanes x 128/130 (line code) / 8 bits per byte
// with 8, 16, 32 GT/s for Gen3, Gen4, Gen5 (PCI-SIG base specifications; 128b/130b encoding
// since Gen3). Gen4 x16 = 16e9 x 16 x 128/130 / 8 = 31.51 GB/s.
//   practical   = theoretical x efficiency
// Large (>= 1-2 MB) pinned DMA transfers reach 75-90 % of theoretical after TLP/DLLP overhead:
// 12.2-12.9 of 15.75 GB/s on Gen3 x16, 24-27 of 31.5 on Gen4 x16 (RTX 4090), 56-57 of 63 on
// Gen5 x16 (RTX 5090) (docs/sources.md A5, nvbandwidth and gearshifft measurements). The
// default 0.8 gives 25.2 GB/s on Gen4 x16, the 4090's measured H2D (docs/sources.md A9 seed:
// 25 GB/s).
#include "hw/gpu_spec.hpp"
#include "sim/core/units.hpp"

namespace kvsim::hw {

inline constexpr double kPcieDefaultEfficiency = 0.8;

// Raw signalling rate per lane, in transfers (bits) per second: 8e9, 16e9, 32e9.
double pcie_transfer_rate(PcieGen gen);

// Theoretical payload rate per direction. lanes must be a link width of the PCIe specification
// (1, 2, 4, 8, 12, 16 or 32); otherwise InputError.
BytesPerSec pcie_theoretical_rate(PcieGen gen, int lanes);

// What large pinned transfers achieve per direction: theoretical x efficiency. efficiency must
// lie in (0, 1]; otherwise InputError.
BytesPerSec practical_rate(PcieGen gen, int lanes, double efficiency = kPcieDefaultEfficiency);

}  // namespace kvsim::hw
