// `kvsim trace-stats` on a file of any format: format detection from the content
// (detect_trace_format), the reader it picks (read_trace), the default window (select) and the
// statistics (sim/analysis/trace_stats.hpp). read_trace takes a path only: the input goes
// through an in-memory file.
#include "sim/analysis/trace_stats.hpp"
#include "sim/workload/trace.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static kvsim::fuzz::MemFile file;
  const std::string& path = file.write(data, size);
  return kvsim::fuzz::expect_input_errors([&] {
    namespace w = kvsim::workload;
    const w::Trace trace = w::select(w::read_trace(path, {}), w::TraceWindow{});
    (void)kvsim::analysis::trace_stats(trace, 60);
  });
}
