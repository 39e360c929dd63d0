#pragma once
// Reader of the input file of vLLM's multi-turn benchmark (benchmark_serving_multi_turn.py -i):
//   - a JSON object: a synthetic generation config; "filetype" must be
//     "generate_conversations" (bench_dataset.py parse_input_json_file);
//   - a JSON list: conversations in OpenAI messages format,
//     [{"id": "<unique string>", "messages": [{"role": "user"|"assistant", "content": "<text>"}]}]
//     (bench_dataset.py conversations_list_to_dict plus the client's per-message checks).
// Message text becomes a token count by estimate_tokens() (token_count.hpp); message i of
// conversation `id` is its own content stream (conversation.hpp). Keys vLLM does not read are
// ignored, as vLLM ignores them.
// Errors are InputError diagnostics file:line:col naming the JSON path, e.g.
//   gen.json:7:20: error: prompt_input.num_turns.min: uniform min must be > 0
#include <optional>
#include <string>
#include <vector>

#include "sim/workload/conversation.hpp"
#include "sim/workload/workload_spec.hpp"

namespace kvsim::workload {

struct VllmInput {
  std::optional<GenerationConfig> generation;  // set for a generation config
  std::vector<Conversation> conversations;     // set for a conversations list
};

// Reads and validates a file; throws InputError (also when the file cannot be read).
VllmInput read_vllm_input(const std::string& path);
// The same for JSON text; `display_name` is the file name used in diagnostics.
VllmInput parse_vllm_input(const std::string& text, const std::string& display_name);

}  // namespace kvsim::workload
