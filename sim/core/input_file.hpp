#pragma once
// Where an input's bytes come from: a file, a gzip-compressed file (recognised by gzip's magic
// bytes 1f 8b, whatever its name; decompressed as it is read, through zlib), or standard input
// when the path is "-" (compressed or not). Standard input is read once and kept in memory, so
// a reader may open it again (trace format detection reads the head, then the parser reads it
// all).
#include <istream>
#include <memory>
#include <string>

namespace kvsim {

inline constexpr const char* kStdinPath = "-";

bool is_stdin_path(const std::string& path);
// The name diagnostics give the input: "<stdin>" for "-", else the path.
std::string input_display_name(const std::string& path);
// Opens the input for reading; `what` names it in the error ("the trace file"). Throws
// InputError naming the path when it cannot be opened. A gzip stream that turns out corrupt
// or truncated throws InputError from the read that finds it.
std::unique_ptr<std::istream> open_input(const std::string& path, const std::string& what);
// All of the input's bytes (decompressed).
std::string read_input(const std::string& path, const std::string& what);
// True for "-" and for an existing regular file; what a command checks before it starts.
bool input_exists(const std::string& path);

}  // namespace kvsim
