#pragma once
// The planner's YAML readers (plans, prices) report bad input the same way: an InputError at
// the node's line and column (1-based), with the path of the field within the document.
#include <yaml-cpp/yaml.h>

#include <string>

#include "sim/core/error.hpp"

namespace kvsim::planner {

[[noreturn]] inline void fail_at(const std::string& file, const YAML::Node& node, const std::string& path,
                                 const std::string& message) {
  Diagnostic d;
  d.file = file;
  if (node.IsDefined()) {
    d.line = node.Mark().line + 1;
    d.column = node.Mark().column + 1;
  }
  d.path = path;
  d.message = message;
  throw InputError(d);
}

}  // namespace kvsim::planner
