// Alibaba Bailian JSONL trace reader (sim/workload/bailian_trace.hpp), as `kvsim run --trace`
// and `kvsim trace-stats` read a Bailian file.
#include <sstream>

#include "sim/workload/bailian_trace.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return kvsim::fuzz::expect_input_errors([&] {
    std::istringstream in(kvsim::fuzz::as_text(data, size));
    (void)kvsim::workload::parse_bailian(in, "fuzz.jsonl");
  });
}
