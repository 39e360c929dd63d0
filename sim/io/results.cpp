#include "kvsim/io/results.hpp"

namespace kvsim::io {}  // namespace kvsim::io
