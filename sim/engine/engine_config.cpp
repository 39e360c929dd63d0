#include "kvsim/engine/engine_config.hpp"

namespace kvsim::engine {}  // namespace kvsim::engine
