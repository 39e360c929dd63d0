#pragma once
// Reader of Mooncake FAST'25 request traces (github.com/kvcache-ai/Mooncake,
// FAST25-release/traces/*.jsonl; schema in shared data/traces/README.md): one JSON object a line,
//   {"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, 48, 2353]}
// timestamp = arrival in milliseconds from the trace start; input_length / output_length in
// tokens; hash_ids = one id per block of `hash_block_tokens` (512) prompt tokens, the last
// block partial, so len(hash_ids) == ceil(input_length / 512). Equal leading ids = shared prefix.
//
// Each line is checked (JSON syntax, an object, the four keys with their types, timestamp >= 0,
// input_length >= 1, output_length >= 1, ids >= 0, the id count); a bad line throws InputError
// file:LINE:COL naming the key. Blank lines are skipped. Rows are sorted stably by timestamp, so
// a file out of order replays in time order with ties in file order.
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "kvsim/core/tokens.hpp"

namespace kvsim::workload {

struct TraceRequest {
  double timestamp_ms = 0;
  std::int64_t input_length = 0;
  std::int64_t output_length = 0;
  std::vector<std::int64_t> hash_ids;
  int line = 0;  // 1-based line in the file
};

std::vector<TraceRequest> read_mooncake_trace(const std::string& path, int hash_block_tokens = 512);
std::vector<TraceRequest> parse_mooncake_trace(std::istream& in, const std::string& display_name,
                                               int hash_block_tokens = 512);

// The prompt of trace request number `index`: one `hash_block_tokens`-token segment of stream
// content_id(kTraceBlock, id) per full block, then the partial last block as a stream of its own
// (content_id(kUnique, <trace tail salt>, index)), never shared with another request.
TokenSequence trace_prompt(const TraceRequest& r, std::size_t index, int hash_block_tokens = 512);
// The answer stream of trace request `index`.
std::uint64_t trace_output_stream(std::size_t index);

}  // namespace kvsim::workload
