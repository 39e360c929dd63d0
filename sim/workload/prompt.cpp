#include "sim/workload/prompt.hpp"

#include <algorithm>
#include <optional>
#include <string>

#include "sim/core/error.hpp"

namespace kvsim::workload {
namespace {

constexpr std::uint64_t kPreamblePiece = 0;
constexpr std::uint64_t kHeaderPiece = 1;
constexpr std::uint64_t kFooterPiece = 2;

std::uint64_t role_code(Message::Role role) { return role == Message::Role::kUser ? 1 : 2; }

}  // namespace

std::uint64_t template_preamble_stream() {
  return content_id(ContentKind::kTemplate, kPreamblePiece);
}

std::uint64_t template_header_stream(Message::Role role) {
  return content_id(ContentKind::kTemplate, kHeaderPiece, role_code(role));
}

std::uint64_t template_footer_stream() { return content_id(ContentKind::kTemplate, kFooterPiece); }

std::int64_t turn_output_tokens(const Conversation& conv, std::size_t messages_to_use,
                                int limit_min_tokens, int limit_max_tokens) {
  const bool has_answer = messages_to_use < conv.messages.size() &&
                          conv.messages[messages_to_use].role == Message::Role::kAssistant;
  const std::int64_t answer =
      has_answer ? std::max<std::int64_t>(1, conv.messages[messages_to_use].content_tokens) : 0;
  // None = no limit; 0 means "from the dataset" (only when there is an answer to measure).
  const auto limit = [&](int flag) -> std::optional<std::int64_t> {
    if (flag > 0) return flag;
    if (flag == 0 && has_answer) return answer;
    return std::nullopt;
  };
  const std::optional<std::int64_t> lo = limit(limit_min_tokens);
  const std::optional<std::int64_t> hi = limit(limit_max_tokens);
  if (!has_answer) return hi ? *hi : (lo ? *lo : 1);
  std::int64_t out = answer;
  if (lo) out = std::max(out, *lo);
  if (hi) out = std::min(out, *hi);
  return std::max<std::int64_t>(out, 1);
}

RequestSpec build_turn_request(const Conversation& conv, std::size_t messages_to_use,
                               const ChatTemplate& chat_template, int limit_min_tokens,
                               int limit_max_tokens) {
  KVSIM_ASSERT(messages_to_use >= 1 && messages_to_use <= conv.messages.size(),
               "turn of conversation " + conv.id + " sends " + std::to_string(messages_to_use) +
                   " of " + std::to_string(conv.messages.size()) + " messages");
  KVSIM_ASSERT(conv.messages[messages_to_use - 1].role == Message::Role::kUser,
               "the last message sent must be a user message (conversation " + conv.id + ")");
  const std::int64_t header = std::max(chat_template.per_message_tokens - 1, 0);
  const std::int64_t footer = std::min(chat_template.per_message_tokens, 1);

  RequestSpec spec;
  append_tokens(spec.prompt, template_preamble_stream(), chat_template.preamble_tokens);
  std::int64_t content_tokens = 0;
  for (std::size_t i = 0; i < messages_to_use; ++i) {
    const Message& m = conv.messages[i];
    append_tokens(spec.prompt, template_header_stream(m.role), header);
    for (const TokenSegment& s : m.content)
      append_tokens(spec.prompt, s.content_id, s.length, s.offset);
    append_tokens(spec.prompt, template_footer_stream(), footer);
    content_tokens += m.content_tokens;
  }
  append_tokens(spec.prompt, template_header_stream(Message::Role::kAssistant),
                chat_template.generation_prompt_tokens);

  spec.output_tokens =
      turn_output_tokens(conv, messages_to_use, limit_min_tokens, limit_max_tokens);
  spec.output_content_id =
      message_stream_id(Message::Role::kAssistant, conversation_key(conv.id), messages_to_use);
  spec.conversation_name = conv.id;
  spec.input_num_turns = static_cast<int>(messages_to_use);
  spec.input_num_tokens = content_tokens;
  return spec;
}

}  // namespace kvsim::workload
