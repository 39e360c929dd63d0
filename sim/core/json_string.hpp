#pragma once
// JSON string literals as Python's json.dumps writes them with ensure_ascii=False (RFC 8259
// escaping: the two-character escapes for " \ \b \f \n \r \t, other control characters as
// \u00XX, everything else, UTF-8 included, as is). Used by the result writers and the ShareGPT
// converter, whose files must match the Python tools' byte for byte.
#include <string>
#include <string_view>

namespace kvsim {

// Appends s to out as a JSON string literal, quotes included.
void append_json_string(std::string& out, std::string_view s);
// The JSON string literal of s, quotes included.
std::string json_quote(std::string_view s);

}  // namespace kvsim
