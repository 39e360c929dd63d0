#include "sim/workload/bailian_trace.hpp"

#include <map>

#include "sim/core/error.hpp"
#include "sim/workload/trace_jsonl.hpp"

namespace kvsim::workload {

Trace parse_bailian(std::istream& in, const std::string& display_name, int hash_block_tokens) {
  Trace trace = detail::hashed_trace("bailian", display_name, hash_block_tokens);
  std::vector<std::int64_t> chat_ids;
  std::vector<std::int64_t> parent_ids;
  std::vector<int> turns;  // 0: not given
  std::map<std::int64_t, std::size_t> by_chat_id;
  detail::for_each_jsonl_row(in, display_name, [&](const detail::JsonLine& row, int line) {
    TraceRequest r;
    r.line = line;
    const std::int64_t chat_id = row.integer("chat_id", 0);
    const std::int64_t parent =
        row.row().contains("parent_chat_id") ? row.integer("parent_chat_id", -1) : -1;
    r.timestamp_ms = row.non_negative("timestamp", "seconds") * 1000.0;
    r.input_length = row.integer("input_length", 1);
    r.output_length = row.integer("output_length", 0);
    if (row.row().contains("type") && !row.row().at("type").is_string()) {
      row.fail({JsonPathItem::member("type")}, "must be a string (text, search, image or file)");
    }
    const int turn = row.row().contains("turn")
                         ? static_cast<int>(std::min<std::int64_t>(row.integer("turn", 1),
                                                                   std::numeric_limits<int>::max()))
                         : 0;
    r.hash_ids = detail::hash_ids(row, r.input_length, hash_block_tokens);
    if (parent == chat_id)
      row.fail({JsonPathItem::member("parent_chat_id")}, "is the row's own chat_id");
    const auto [it, inserted] = by_chat_id.emplace(chat_id, trace.requests.size());
    if (!inserted) {
      row.fail({JsonPathItem::member("chat_id")},
               "chat_id " + std::to_string(chat_id) + " is already on line " +
                   std::to_string(trace.requests[it->second].line));
    }
    chat_ids.push_back(chat_id);
    parent_ids.push_back(parent);
    turns.push_back(turn);
    trace.requests.push_back(std::move(r));
  });
  const std::size_t n = trace.requests.size();
  std::vector<std::int64_t> parent_pos(n, -1);
  for (std::size_t i = 0; i < n; ++i) {
    if (const auto it = by_chat_id.find(parent_ids[i]);
        parent_ids[i] >= 0 && it != by_chat_id.end()) {
      parent_pos[i] = static_cast<std::int64_t>(it->second);
    }
  }
  // Conversation = root of the parent chain; turn counted along it when not given. A chain
  // longer than the trace is a cycle.
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t at = i;
    std::size_t depth = 1;
    while (parent_pos[at] >= 0) {
      at = static_cast<std::size_t>(parent_pos[at]);
      if (++depth > n) {
        throw InputError(Diagnostic{display_name, trace.requests[i].line, 0, "parent_chat_id",
                                    "the parent_chat_id links of this row form a cycle"});
      }
    }
    TraceRequest& r = trace.requests[i];
    r.conversation = parent_ids[at] >= 0 ? parent_ids[at] : chat_ids[at];
    r.turn =
        turns[i] > 0 ? turns[i] : static_cast<int>(std::min<std::size_t>(depth, 1'000'000'000));
  }
  sort_trace(trace, std::move(parent_pos));
  return trace;
}

}  // namespace kvsim::workload
