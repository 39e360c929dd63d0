#pragma once
// Source locations in JSON text, for file:line:col diagnostics. The JSON library tells where a
// syntax error is (a byte offset) but not where a parsed value came from, so a schema error is
// located by scanning the (already valid) text again along the value's path.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kvsim::workload {

// One step of a path into a JSON document: an object key or an array index.
struct JsonPathItem {
  std::string key;
  std::size_t index = 0;
  bool is_index = false;
  static JsonPathItem at(std::size_t i) { return JsonPathItem{{}, i, true}; }
  static JsonPathItem member(std::string k) { return JsonPathItem{std::move(k), 0, false}; }
};
using JsonPath = std::vector<JsonPathItem>;

// Dotted form, e.g. "prompt_input.num_turns.min" or "[3].messages[0].role".
std::string json_path_string(const JsonPath& path);

// Byte offset of the first character of the value at `path` in valid JSON `text`. When a step
// is missing (an absent key, an index past the end), the offset of the deepest value found.
// With duplicate keys the last one counts, as in the JSON library.
std::size_t locate_json_value(std::string_view text, const JsonPath& path);

struct TextPosition {
  int line = 1;    // 1-based
  int column = 1;  // 1-based, in bytes
};
TextPosition text_position(std::string_view text, std::size_t offset);

}  // namespace kvsim::workload
