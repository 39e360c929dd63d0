#include "sim/io/results.hpp"

namespace kvsim::io {}  // namespace kvsim::io
