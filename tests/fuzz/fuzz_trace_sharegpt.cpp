// Raw ShareGPT JSON (sim/workload/sharegpt.hpp), as `kvsim run --trace`, `kvsim trace-stats`
// (read_trace: convert, then conversations as a trace) and `kvsim convert-sharegpt` read it.
#include "sim/workload/sharegpt.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return kvsim::fuzz::expect_input_errors([&] {
    namespace w = kvsim::workload;
    const auto converted = w::convert_sharegpt(kvsim::fuzz::as_text(data, size), "fuzz.json", {});
    (void)w::openai_conversations_json(converted);
    (void)w::conversations_to_trace(w::to_conversations(converted), w::ChatTemplate{}, 16,
                                    "sharegpt", "fuzz.json");
  });
}
