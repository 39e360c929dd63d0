#include "sim/workload/burstgpt_trace.hpp"

#include "sim/workload/trace_csv.hpp"

namespace kvsim::workload {

Trace parse_burstgpt(std::istream& in, const std::string& display_name) {
  detail::CsvTable csv(in, display_name, {"Timestamp", "Request tokens", "Response tokens"});
  Trace trace;
  trace.format = "burstgpt";
  trace.source = display_name;
  trace.hash_block_tokens = 0;
  while (csv.next()) {
    TraceRequest r;
    r.line = csv.line();
    r.timestamp_ms = csv.number(0, 0) * 1000.0;
    r.input_length = csv.integer(1, 0);
    r.output_length = csv.integer(2, 0);
    if (r.input_length == 0 || r.output_length == 0) {
      ++trace.skipped_rows;
      continue;
    }
    trace.requests.push_back(std::move(r));
  }
  sort_trace(trace, {});
  return trace;
}

}  // namespace kvsim::workload
