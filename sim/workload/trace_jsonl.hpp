#pragma once
// Line-by-line JSON checks shared by the JSONL trace readers (Mooncake, Bailian): parse one line,
// and read typed keys from its object, throwing InputError `file:LINE:COL: error: <key>: <reason>`
// located at the offending value.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kvsim/workload/json_locator.hpp"

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

}  // namespace kvsim::workload::detail
