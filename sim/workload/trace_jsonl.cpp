#include "sim/workload/trace_jsonl.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/core/error.hpp"
#include "sim/core/json_error.hpp"

namespace kvsim::workload::detail {
namespace {

using nlohmann::json;

bool fits_int64(const json& v) {
  return v.is_number_integer() &&
         !(v.is_number_unsigned() &&
           v.get<std::uint64_t>() >
               static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
}

}  // namespace

Trace hashed_trace(const std::string& format, const std::string& display_name, int hash_block_tokens) {
  if (hash_block_tokens <= 0) {
    throw InputError(Diagnostic{"", 0, 0, "trace.hash_block_tokens", "must be >= 1"});
  }
  Trace trace;
  trace.format = format;
  trace.source = display_name;
  trace.hash_block_tokens = hash_block_tokens;
  return trace;
}

std::vector<std::int64_t> hash_ids(const JsonLine& row, std::int64_t input_length, int hash_block_tokens) {
  std::vector<std::int64_t> ids = row.id_list("hash_ids");
  const std::int64_t blocks = hash_id_count(input_length, hash_block_tokens);
  if (static_cast<std::int64_t>(ids.size()) != blocks) {
    row.fail({JsonPathItem::member("hash_ids")},
             "has " + std::to_string(ids.size()) + " ids; input_length " + std::to_string(input_length) +
                 " needs ceil(" + std::to_string(input_length) + "/" + std::to_string(hash_block_tokens) +
                 ") = " + std::to_string(blocks));
  }
  return ids;
}

bool blank_line(const std::string& text) {
  return text.find_first_not_of(" \t\r") == std::string::npos;
}

JsonLine::JsonLine(const std::string& file, int line, const std::string& text)
    : file_(file), line_(line), text_(text) {
  try {
    row_ = json::parse(text);
  } catch (const json::parse_error& e) {
    const auto col =
        static_cast<int>(std::min<std::size_t>(e.byte > 0 ? e.byte : 1, text.size() + 1));
    std::string msg = e.what();
    if (const auto c = msg.find("column"); c != std::string::npos) {
      if (const auto colon = msg.find(": ", c); colon != std::string::npos)
        msg = msg.substr(colon + 2);
    }
    throw InputError(Diagnostic{file, line, col, "", "invalid JSON: " + msg});
  } catch (const json::exception& e) {
    // A number past a double (1e400) is out_of_range 406, not a parse_error.
    throw InputError(Diagnostic{file, line, 0, "", std::string("invalid JSON: ") + json_error_text(e)});
  }
  if (!row_.is_object()) fail({}, "a trace row must be a JSON object");
}

void JsonLine::fail(const JsonPath& path, const std::string& message) const {
  const std::size_t offset = locate_json_value(text_, path);
  throw InputError(
      Diagnostic{file_, line_, static_cast<int>(offset) + 1, json_path_string(path), message});
}

const json& JsonLine::require(const char* key) const {
  if (!row_.contains(key)) fail({}, std::string("missing key '") + key + "'");
  return row_.at(key);
}

std::int64_t JsonLine::integer(const char* key, std::int64_t min) const {
  const json& v = require(key);
  if (!v.is_number_integer()) fail({JsonPathItem::member(key)}, "must be an integer");
  if (!fits_int64(v)) fail({JsonPathItem::member(key)}, "is too large");
  const auto x = v.get<std::int64_t>();
  if (x < min) {
    fail({JsonPathItem::member(key)},
         "must be >= " + std::to_string(min) + ", got " + std::to_string(x));
  }
  return x;
}

double JsonLine::non_negative(const char* key, const char* unit) const {
  const json& v = require(key);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
    fail({JsonPathItem::member(key)}, std::string("must be a non-negative number of ") + unit);
  }
  return v.get<double>();
}

std::vector<std::int64_t> JsonLine::id_list(const char* key) const {
  const json& ids = require(key);
  if (!ids.is_array()) fail({JsonPathItem::member(key)}, "must be a list of integers");
  std::vector<std::int64_t> out;
  out.reserve(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const json& v = ids[i];
    if (!fits_int64(v) || v.get<std::int64_t>() < 0) {
      fail({JsonPathItem::member(key), JsonPathItem::at(i)}, "must be a non-negative integer");
    }
    out.push_back(v.get<std::int64_t>());
  }
  return out;
}

}  // namespace kvsim::workload::detail
