#pragma once
// The request a benchmark client sends for one turn of a conversation: the chat-templated
// prompt over messages[0 .. messages_to_use) and the forced answer length.
//
// Prompt layout (Llama 3.1 chat template, token counts in ChatTemplate):
//   preamble                      stream content_id(kTemplate, 0), shared by every request
//   per message: header(role)     stream content_id(kTemplate, 1, role): per_message_tokens - 1
//                content          the message's own streams
//                footer           stream content_id(kTemplate, 2): 1 token (<|eot_id|>)
//   generation prompt             the assistant header stream, generation_prompt_tokens long
// Since the generation prompt is the assistant header and the answer is generated as stream
// `output_content_id` from offset 0, the prompt of turn k followed by its answer is a prefix
// of the prompt of turn k + 1, which re-sends that answer as history (vLLM's prefix cache hits).
//
// Answer length (benchmark_serving_multi_turn.py, send_turn, --limit-min/max-tokens):
//   limit 0   = from the dataset: max(1, tokens of the next assistant message)
//   limit < 0 = no limit;  limit > 0 = that limit (min and max must then both be >= 1)
// The server decides the real length within [min_tokens, max_tokens]; we take the dataset
// answer's length clamped into the limits that are set (with limits from the dataset that is the
// answer length exactly, as the benchmark forces). Without a dataset answer: the max limit if
// set, else the min limit, else 1.
#include <cstdint>

#include "sim/workload/conversation.hpp"
#include "sim/workload/driver.hpp"
#include "sim/workload/workload_spec.hpp"

namespace kvsim::workload {

std::uint64_t template_preamble_stream();
std::uint64_t template_header_stream(Message::Role role);
std::uint64_t template_footer_stream();

// Forced answer length for the request that sends messages[0 .. messages_to_use).
std::int64_t turn_output_tokens(const Conversation& conv, std::size_t messages_to_use,
                                int limit_min_tokens, int limit_max_tokens);

// The request for the turn that sends messages[0 .. messages_to_use) (the benchmark's
// messages_to_use; turn k, 0-based, sends 2k + 1 messages). Fills prompt, output_tokens,
// output_content_id (the stream of message messages_to_use, the answer), conversation_name,
// input_num_turns (= messages_to_use) and input_num_tokens (content tokens of the messages sent,
// template excluded, as the benchmark counts). The caller sets conversation_id, client_id and
// counted. Requires 1 <= messages_to_use <= messages.size() and a user message last
// (KVSIM_ASSERT).
RequestSpec build_turn_request(const Conversation& conv, std::size_t messages_to_use,
                               const ChatTemplate& chat_template, int limit_min_tokens = 0,
                               int limit_max_tokens = 0);

}  // namespace kvsim::workload
