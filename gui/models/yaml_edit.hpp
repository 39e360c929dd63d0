#pragma once
// Edits one value of a scenario's YAML text in place, so the file keeps its comments, order and
// layout: the scalar (or flow collection) at a dotted path is replaced where yaml-cpp's marks
// place it, and a missing key is inserted into its nearest existing parent map. The caller checks
// that the edited text still means what the equivalent `--set path=value` override means.
#include <optional>
#include <string>

namespace kvsim::gui {

// `path` is dotted with list indexes as numbers (hardware.servers.0.count); `value` is YAML text
// as a `--set` value is (64GiB, fcfs, [{kind: host_dram, capacity: 64GiB}]). Returns the edited
// text, or nothing when the text cannot be edited in place (a block collection or block scalar
// at the path, a list index that does not exist, text that does not parse).
std::optional<std::string> set_yaml_value(const std::string& text, const std::string& path,
                                          const std::string& value);

}  // namespace kvsim::gui
