// vLLM multi-turn benchmark input (sim/workload/vllm_input.hpp): an OpenAI-messages
// conversation list, as `kvsim run --trace` and `kvsim trace-stats` read it (then as a trace),
// or a generation config, as a scenario's workload.input_file names it (parsed and validated).
#include "sim/workload/sharegpt.hpp"
#include "sim/workload/vllm_input.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return kvsim::fuzz::expect_input_errors([&] {
    namespace w = kvsim::workload;
    const w::VllmInput input = w::parse_vllm_input(kvsim::fuzz::as_text(data, size), "fuzz.json");
    if (input.generation) {
      (void)w::generation_param_lines(*input.generation);
      return;
    }
    (void)w::conversations_to_trace(input.conversations, w::ChatTemplate{}, 16, "openai",
                                    "fuzz.json");
  });
}
