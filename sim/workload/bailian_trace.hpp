#pragma once
// Reader of the Alibaba Bailian anonymised KVCache traces (github.com/alibaba-edu/
// qwen-bailian-usagetraces-anon, Apache-2.0; Wang et al., "KVCache Cache in the Wild:
// Characterizing and Optimizing KVCache Cache at a Large Cloud Provider", USENIX ATC'25):
// one JSON object a line,
//   {"chat_id": 159, "parent_chat_id": 55, "timestamp": 61.114, "input_length": 521,
//    "output_length": 132, "type": "text", "turn": 2, "hash_ids": [1089, 1090, ...]}
// chat_id = this request; parent_chat_id = the previous turn's chat_id (-1: first turn; absent
// means -1, as NVIDIA AIPerf reads it); timestamp in SECONDS from the trace start; lengths in
// tokens; type = text | search | image | file (optional, not used); turn = 1-based turn
// (optional: counted along the parent links); hash_ids = salted SipHash ids of 16-token blocks
// of the whole prompt (history included). The last block is partial and hashed with its padding
// (the repository's docs/qa-context-growth-pattern.md, Q2), so len(hash_ids) ==
// ceil(input_length / 16); its id is never shared. A row's conversation is the chat_id at the
// root of its parent chain (a parent missing from the file ends the chain: its id is the root).
// Checks: as Mooncake's, plus chat_id >= 0 and unique, parent_chat_id >= -1, output_length >= 0
// (replayed as at least 1 token), a parent arriving after its child is an error.
#include <istream>
#include <string>

#include "sim/workload/trace.hpp"

namespace kvsim::workload {

inline constexpr int kBailianBlockTokens = 16;

Trace parse_bailian(std::istream& in, const std::string& display_name,
                    int hash_block_tokens = kBailianBlockTokens);

}  // namespace kvsim::workload
