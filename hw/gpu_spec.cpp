#include "hw/gpu_spec.hpp"

namespace kvsim::hw {

int pcie_generation(PcieGen g) { return static_cast<int>(g); }

}  // namespace kvsim::hw
