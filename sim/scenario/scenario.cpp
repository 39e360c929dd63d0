#include "kvsim/scenario/scenario.hpp"

namespace kvsim::scenario {}  // namespace kvsim::scenario
