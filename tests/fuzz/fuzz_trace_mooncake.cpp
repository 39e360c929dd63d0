// Mooncake JSONL trace reader (sim/workload/mooncake_trace.hpp), as `kvsim run --trace` and
// `kvsim trace-stats` read a Mooncake file. Also checks the header's promise about the fast row
// reader: a line read_mooncake_row() takes gives the row the general (JSON) reader would give.
#include <sstream>

#include "sim/workload/mooncake_trace.hpp"
#include "sim/workload/trace_jsonl.hpp"
#include "tests/fuzz/fuzz_common.hpp"

namespace {

using kvsim::workload::TraceRequest;

// The general reader's row (parse_mooncake's JSON path).
TraceRequest general_row(const std::string& text, int block) {
  const kvsim::workload::detail::JsonLine row("fuzz", 1, text);
  TraceRequest r;
  r.timestamp_ms = row.non_negative("timestamp", "milliseconds");
  r.input_length = row.integer("input_length", 1);
  r.output_length = row.integer("output_length", 1);
  r.hash_ids = kvsim::workload::detail::hash_ids(row, r.input_length, block);
  return r;
}

void check_fast_rows(const std::string& text, int block) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto fast = kvsim::workload::read_mooncake_row(line, block);
    if (!fast) continue;
    TraceRequest slow;
    try {
      slow = general_row(line, block);
    } catch (const kvsim::InputError& e) {
      kvsim::fuzz::property_failed("read_mooncake_row took a line the JSON reader refuses (" +
                                   std::string(e.what()) + "): " + line);
    }
    if (fast->timestamp_ms != slow.timestamp_ms || fast->input_length != slow.input_length ||
        fast->output_length != slow.output_length || fast->hash_ids != slow.hash_ids) {
      kvsim::fuzz::property_failed("read_mooncake_row and the JSON reader differ on: " + line);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = kvsim::fuzz::as_text(data, size);
  kvsim::fuzz::expect_input_errors([&] {
    std::istringstream in(text);
    (void)kvsim::workload::parse_mooncake(in, "fuzz.jsonl");
  });
  check_fast_rows(text, kvsim::workload::kMooncakeBlockTokens);
  return 0;
}
