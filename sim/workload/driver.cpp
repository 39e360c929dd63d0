#include "sim/workload/driver.hpp"

namespace kvsim::workload {}  // namespace kvsim::workload
