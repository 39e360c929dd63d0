#include "kvsim/workload/mooncake_trace.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "kvsim/core/error.hpp"
#include "kvsim/workload/json_locator.hpp"

namespace kvsim::workload {
namespace {

using nlohmann::json;

constexpr std::uint64_t kTraceTailSalt = 0x74726163657461ULL;      // "tracea"
constexpr std::uint64_t kTraceOutputSalt = 0x74726163656f7574ULL;  // "traceout"

class LineChecker {
 public:
  LineChecker(const std::string& file, int line, const std::string& text)
      : file_(file), line_(line), text_(text) {}

  [[noreturn]] void fail(const JsonPath& path, const std::string& message) const {
    const std::size_t offset = locate_json_value(text_, path);
    throw InputError(
        Diagnostic{file_, line_, static_cast<int>(offset) + 1, json_path_string(path), message});
  }

  const json& require(const json& obj, const char* key) const {
    if (!obj.contains(key)) fail({}, std::string("missing key '") + key + "'");
    return obj.at(key);
  }

  std::int64_t integer(const json& obj, const char* key, std::int64_t min) const {
    const json& v = require(obj, key);
    if (!v.is_number_integer()) fail({JsonPathItem::member(key)}, "must be an integer");
    if (v.is_number_unsigned() &&
        v.get<std::uint64_t>() >
            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      fail({JsonPathItem::member(key)}, "is too large");
    }
    const auto x = v.get<std::int64_t>();
    if (x < min)
      fail({JsonPathItem::member(key)},
           "must be >= " + std::to_string(min) + ", got " + std::to_string(x));
    return x;
  }

 private:
  const std::string& file_;
  int line_;
  const std::string& text_;
};

}  // namespace

std::vector<TraceRequest> parse_mooncake_trace(std::istream& in, const std::string& display_name,
                                               int hash_block_tokens) {
  if (hash_block_tokens <= 0) {
    throw InputError(Diagnostic{"", 0, 0, "trace.hash_block_tokens", "must be >= 1"});
  }
  std::vector<TraceRequest> out;
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.find_first_not_of(" \t") == std::string::npos) continue;
    json row;
    try {
      row = json::parse(text);
    } catch (const json::parse_error& e) {
      const auto col =
          static_cast<int>(std::min<std::size_t>(e.byte > 0 ? e.byte : 1, text.size() + 1));
      std::string msg = e.what();
      if (const auto c = msg.find("column"); c != std::string::npos) {
        if (const auto colon = msg.find(": ", c); colon != std::string::npos)
          msg = msg.substr(colon + 2);
      }
      throw InputError(Diagnostic{display_name, line, col, "", "invalid JSON: " + msg});
    }
    const LineChecker check(display_name, line, text);
    if (!row.is_object()) check.fail({}, "a trace row must be a JSON object");
    TraceRequest r;
    r.line = line;
    const json& ts = check.require(row, "timestamp");
    if (!ts.is_number() || !std::isfinite(ts.get<double>()) || ts.get<double>() < 0) {
      check.fail({JsonPathItem::member("timestamp")},
                 "must be a non-negative number of milliseconds");
    }
    r.timestamp_ms = ts.get<double>();
    r.input_length = check.integer(row, "input_length", 1);
    r.output_length = check.integer(row, "output_length", 1);
    const json& ids = check.require(row, "hash_ids");
    if (!ids.is_array())
      check.fail({JsonPathItem::member("hash_ids")}, "must be a list of integers");
    r.hash_ids.reserve(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const json& v = ids[i];
      if (!v.is_number_integer() ||
          (v.is_number_unsigned() &&
           v.get<std::uint64_t>() >
               static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) ||
          v.get<std::int64_t>() < 0) {
        check.fail({JsonPathItem::member("hash_ids"), JsonPathItem::at(i)},
                   "must be a non-negative integer");
      }
      r.hash_ids.push_back(v.get<std::int64_t>());
    }
    const std::int64_t blocks = (r.input_length + hash_block_tokens - 1) / hash_block_tokens;
    if (static_cast<std::int64_t>(r.hash_ids.size()) != blocks) {
      check.fail({JsonPathItem::member("hash_ids")},
                 "has " + std::to_string(r.hash_ids.size()) + " ids; input_length " +
                     std::to_string(r.input_length) + " needs ceil(" +
                     std::to_string(r.input_length) + "/" + std::to_string(hash_block_tokens) +
                     ") = " + std::to_string(blocks));
    }
    out.push_back(std::move(r));
  }
  std::stable_sort(out.begin(), out.end(), [](const TraceRequest& a, const TraceRequest& b) {
    return a.timestamp_ms < b.timestamp_ms;
  });
  return out;
}

std::vector<TraceRequest> read_mooncake_trace(const std::string& path, int hash_block_tokens) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, 0, "cannot open the trace file");
  return parse_mooncake_trace(in, path, hash_block_tokens);
}

TokenSequence trace_prompt(const TraceRequest& r, std::size_t index, int hash_block_tokens) {
  TokenSequence seq;
  seq.reserve(r.hash_ids.size());
  const std::int64_t full = r.input_length / hash_block_tokens;
  for (std::int64_t i = 0; i < full && i < static_cast<std::int64_t>(r.hash_ids.size()); ++i) {
    append_tokens(seq,
                  content_id(ContentKind::kTraceBlock,
                             static_cast<std::uint64_t>(r.hash_ids[static_cast<std::size_t>(i)])),
                  hash_block_tokens);
  }
  const std::int64_t tail = r.input_length - full * hash_block_tokens;
  append_tokens(seq, content_id(ContentKind::kUnique, kTraceTailSalt, index), tail);
  return seq;
}

std::uint64_t trace_output_stream(std::size_t index) {
  return content_id(ContentKind::kUnique, kTraceOutputSalt, index);
}

}  // namespace kvsim::workload
