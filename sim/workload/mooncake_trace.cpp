#include "kvsim/workload/mooncake_trace.hpp"

#include <fstream>

#include "kvsim/core/error.hpp"
#include "kvsim/workload/trace_jsonl.hpp"

namespace kvsim::workload {

Trace parse_mooncake(std::istream& in, const std::string& display_name, int hash_block_tokens) {
  if (hash_block_tokens <= 0) {
    throw InputError(Diagnostic{"", 0, 0, "trace.hash_block_tokens", "must be >= 1"});
  }
  Trace trace;
  trace.format = "mooncake";
  trace.source = display_name;
  trace.hash_block_tokens = hash_block_tokens;
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (detail::blank_line(text)) continue;
    const detail::JsonLine row(display_name, line, text);
    TraceRequest r;
    r.line = line;
    r.timestamp_ms = row.non_negative("timestamp", "milliseconds");
    r.input_length = row.integer("input_length", 1);
    r.output_length = row.integer("output_length", 1);
    r.hash_ids = row.id_list("hash_ids");
    const std::int64_t blocks = (r.input_length + hash_block_tokens - 1) / hash_block_tokens;
    if (static_cast<std::int64_t>(r.hash_ids.size()) != blocks) {
      row.fail({JsonPathItem::member("hash_ids")},
               "has " + std::to_string(r.hash_ids.size()) + " ids; input_length " +
                   std::to_string(r.input_length) + " needs ceil(" +
                   std::to_string(r.input_length) + "/" + std::to_string(hash_block_tokens) +
                   ") = " + std::to_string(blocks));
    }
    trace.requests.push_back(std::move(r));
  }
  sort_trace(trace, {});
  return trace;
}

std::vector<TraceRequest> parse_mooncake_trace(std::istream& in, const std::string& display_name,
                                               int hash_block_tokens) {
  return parse_mooncake(in, display_name, hash_block_tokens).requests;
}

std::vector<TraceRequest> read_mooncake_trace(const std::string& path, int hash_block_tokens) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, 0, "cannot open the trace file");
  return parse_mooncake_trace(in, path, hash_block_tokens);
}

}  // namespace kvsim::workload
