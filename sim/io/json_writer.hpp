#pragma once
// The one writer of kvsim's JSON result documents (every `--format json` and --json-out).
// A document is built as a Json value (nlohmann::ordered_json: keys keep their insertion order)
// and printed only by write_json / json_text here; no command calls Json::dump, which throws on
// invalid UTF-8 and prints doubles in its own way.
//
// Every document is an object whose first keys are
//   "schema_version": kJsonSchemaVersion,
//   "kvsim_version": the version that wrote it,
// then "command" (the kvsim command, where the document is a command's output) and the
// command's result. docs/results.md ("JSON outputs") lists the keys of each command.
//
// Printing (json_text):
//  - strings through append_json_string (sim/core/json_string.hpp): RFC 8259 escapes, UTF-8
//    kept, bytes that are not UTF-8 replaced by U+FFFD, never an exception;
//  - integers as integers; doubles in the shortest text that reads back as the same double
//    (format_shortest: 0.1, 166, 1e+21), NaN and infinities as null;
//  - containers nested less than `expand_depth` levels deep one member per line, indented by
//    two spaces; deeper ones on one line with Python's json.dumps separators (", " and ": ");
//  - a document ends with a newline.
#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <string_view>

namespace kvsim::io {

// The version of the JSON documents' shape. Bumped when a key is removed, renamed or changes
// meaning (or type); adding keys does not bump it, so readers must ignore keys they do not know.
inline constexpr int kJsonSchemaVersion = 1;

using Json = nlohmann::ordered_json;

// A new document: {"schema_version": 1, "kvsim_version": version, "command": command}, the
// command key left out when `command` is empty. `version` empty: this build's kVersion.
Json json_document(std::string_view command, std::string_view version = {});

// A double for a Json value: the number, or null when it is NaN or infinite.
Json json_number_or_null(double v);

// The JSON text of `value` (see above), with a final newline.
std::string json_text(const Json& value, int expand_depth = 1);
void write_json(std::ostream& os, const Json& value, int expand_depth = 1);

}  // namespace kvsim::io
