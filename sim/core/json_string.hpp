#pragma once
// JSON string literals as Python's json.dumps writes them with ensure_ascii=False (RFC 8259
// escaping: the two-character escapes for " \ \b \f \n \r \t, other control characters as
// \u00XX, everything else, UTF-8 included, as is). The one escaping routine of every JSON kvsim
// writes: the result documents (sim/io/json_writer.hpp), the request records and the ShareGPT
// converter, whose files must match the Python tools' byte for byte.
//
// Bytes that are not UTF-8 (a path or a trace field read as raw bytes) never make the output
// invalid: each maximal ill-formed subsequence becomes U+FFFD, as Python's
// bytes.decode("utf-8", errors="replace") does (Unicode 15, section 3.9, "U+FFFD Substitution
// of Maximal Subparts"). Valid UTF-8 passes through unchanged.
#include <string>
#include <string_view>

namespace kvsim {

// Appends s to out as a JSON string literal, quotes included.
void append_json_string(std::string& out, std::string_view s);
// The JSON string literal of s, quotes included.
std::string json_quote(std::string_view s);

}  // namespace kvsim
