#include "hw/pcie.hpp"

#include <string>

#include "sim/core/error.hpp"

namespace kvsim::hw {

double pcie_transfer_rate(PcieGen gen) {
  switch (gen) {
    case PcieGen::kGen3:
      return 8e9;
    case PcieGen::kGen4:
      return 16e9;
    case PcieGen::kGen5:
      return 32e9;
  }
  KVSIM_ASSERT(false, "unknown PCIe generation");
  return 0;
}

BytesPerSec pcie_theoretical_rate(PcieGen gen, int lanes) {
  switch (lanes) {
    case 1:
    case 2:
    case 4:
    case 8:
    case 12:
    case 16:
    case 32:
      break;
    default:
      throw InputError(Diagnostic{"", 0, 0, "host_link.lanes",
                                  "must be a PCIe link width: 1, 2, 4, 8, 12, 16 or 32 (got " +
                                      std::to_string(lanes) + ")"});
  }
  return BytesPerSec{pcie_transfer_rate(gen) * lanes * (128.0 / 130.0) / 8.0};
}

BytesPerSec practical_rate(PcieGen gen, int lanes, double efficiency) {
  if (!(efficiency > 0 && efficiency <= 1)) {
    throw InputError(Diagnostic{"", 0, 0, "host_link.efficiency", "must lie in (0, 1]"});
  }
  return BytesPerSec{pcie_theoretical_rate(gen, lanes).value * efficiency};
}

}  // namespace kvsim::hw
