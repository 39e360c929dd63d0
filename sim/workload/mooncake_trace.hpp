#pragma once
// Reader of Mooncake FAST'25 request traces (github.com/kvcache-ai/Mooncake,
// FAST25-release/traces/*.jsonl; schema in scenarios/traces/README.md): one JSON object a line,
//   {"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, 48, 2353]}
// timestamp = arrival in milliseconds from the trace start; input_length / output_length in
// tokens; hash_ids = one id per block of `hash_block_tokens` (512) prompt tokens, the last
// block partial, so len(hash_ids) == ceil(input_length / 512). Equal leading ids = shared prefix.
// No conversation structure (conversation = parent = -1).
//
// Each line is checked (JSON syntax, an object, the four keys with their types, timestamp >= 0,
// input_length >= 1, output_length >= 1, ids >= 0, the id count); a bad line throws InputError
// file:LINE:COL naming the key. Blank lines are skipped. Rows are sorted stably by timestamp, so
// a file out of order replays in time order with ties in file order.
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/workload/trace.hpp"

namespace kvsim::workload {

inline constexpr int kMooncakeBlockTokens = 512;

Trace parse_mooncake(std::istream& in, const std::string& display_name,
                     int hash_block_tokens = kMooncakeBlockTokens);

// A row in the form Mooncake's traces use (the four keys once each, in any order, separated by
// JSON whitespace; integer values without sign, fraction, exponent or leading zeros, up to 18
// digits; input_length, output_length >= 1; the id count right), read without a JSON parser:
// the row the general reader would give. Anything else, valid or not: nullopt, and the general
// reader takes the line (with its checks and error messages). Fields other than the four and
// `line` are left at their defaults.
std::optional<TraceRequest> read_mooncake_row(std::string_view text, int hash_block_tokens);

// The requests alone (thin wrappers of parse_mooncake).
std::vector<TraceRequest> read_mooncake_trace(const std::string& path,
                                              int hash_block_tokens = kMooncakeBlockTokens);
std::vector<TraceRequest> parse_mooncake_trace(std::istream& in, const std::string& display_name,
                                               int hash_block_tokens = kMooncakeBlockTokens);

}  // namespace kvsim::workload
