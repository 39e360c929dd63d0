#pragma once
// Line-by-line JSON checks shared by the JSONL trace readers (Mooncake, Bailian): parse one line,
// and read typed keys from its object, throwing InputError `file:LINE:COL: error: <key>: <reason>`
// located at the offending value.
#include <cstdint>
#include <istream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/workload/json_locator.hpp"
#include "sim/workload/trace.hpp"

namespace kvsim::workload::detail {

class JsonLine {
 public:
  // Parses `text` (line `line` of `file`); throws InputError for bad JSON or a non-object.
  JsonLine(const std::string& file, int line, const std::string& text);

  const nlohmann::json& row() const { return row_; }
  [[noreturn]] void fail(const JsonPath& path, const std::string& message) const;
  const nlohmann::json& require(const char* key) const;
  // An integer >= min.
  std::int64_t integer(const char* key, std::int64_t min) const;
  // A finite number >= 0.
  double non_negative(const char* key, const char* unit) const;
  // A list of non-negative integers.
  std::vector<std::int64_t> id_list(const char* key) const;

 private:
  const std::string& file_;
  int line_;
  const std::string& text_;
  nlohmann::json row_;
};

// True when `text` is blank (spaces, tabs, a CR).
bool blank_line(const std::string& text);

// Calls on_row(row, line) for each line of `in` that is not blank, parsed (a trailing CR cut).
// A line that fast(text, line) takes (returns true for) is not parsed: `fast` reads the common
// form of a row itself and leaves anything else (and every error) to on_row.
template <class Fast, class OnRow>
void for_each_jsonl_row(std::istream& in, const std::string& display_name, Fast&& fast, OnRow&& on_row) {
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (blank_line(text)) continue;
    if (fast(text, line)) continue;
    const JsonLine row(display_name, line, text);
    on_row(row, line);
  }
}
template <class OnRow>
void for_each_jsonl_row(std::istream& in, const std::string& display_name, OnRow&& on_row) {
  for_each_jsonl_row(in, display_name, [](const std::string&, int) { return false; }, on_row);
}

// An empty trace of `format` read from `display_name`, with hash blocks of `hash_block_tokens`
// tokens (InputError at trace.hash_block_tokens unless >= 1).
Trace hashed_trace(const std::string& format, const std::string& display_name, int hash_block_tokens);

// Hash ids a prompt of `input_length` tokens has: one per `hash_block_tokens`, rounded up.
inline std::int64_t hash_id_count(std::int64_t input_length, int hash_block_tokens) {
  return (input_length + hash_block_tokens - 1) / hash_block_tokens;
}

// The row's "hash_ids": one id per `hash_block_tokens` tokens of input_length, rounded up.
std::vector<std::int64_t> hash_ids(const JsonLine& row, std::int64_t input_length, int hash_block_tokens);

}  // namespace kvsim::workload::detail
