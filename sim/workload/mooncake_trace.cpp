#include "kvsim/workload/mooncake_trace.hpp"

#include <fstream>

#include "kvsim/core/error.hpp"
#include "kvsim/workload/trace_jsonl.hpp"

namespace kvsim::workload {

Trace parse_mooncake(std::istream& in, const std::string& display_name, int hash_block_tokens) {
  Trace trace = detail::hashed_trace("mooncake", display_name, hash_block_tokens);
  detail::for_each_jsonl_row(in, display_name, [&](const detail::JsonLine& row, int line) {
    TraceRequest r;
    r.line = line;
    r.timestamp_ms = row.non_negative("timestamp", "milliseconds");
    r.input_length = row.integer("input_length", 1);
    r.output_length = row.integer("output_length", 1);
    r.hash_ids = detail::hash_ids(row, r.input_length, hash_block_tokens);
    trace.requests.push_back(std::move(r));
  });
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
