#include "sim/workload/prompt.hpp"

#include <gtest/gtest.h>

namespace kvsim::workload {
namespace {

Conversation four_messages(const std::string& id) {
  const std::uint64_t key = conversation_key(id);
  Conversation c;
  c.id = id;
  c.messages = {make_message(Message::Role::kUser, key, 0, 10),
                make_message(Message::Role::kAssistant, key, 1, 20),
                make_message(Message::Role::kUser, key, 2, 30),
                make_message(Message::Role::kAssistant, key, 3, 40)};
  return c;
}

// Llama 3.1 template defaults: preamble 26, 4-token header + 1-token footer per message, 4-token
// generation prompt. Turn 0 sends 1 message: 26 + (4 + 10 + 1) + 4 = 45 tokens; turn 1 sends 3:
// 26 + (4+10+1) + (4+20+1) + (4+30+1) + 4 = 105. The benchmark counts content only: 10 and 60.
TEST(Prompt, LayoutAndCounts) {
  const Conversation c = four_messages("c");
  const RequestSpec t0 = build_turn_request(c, 1, ChatTemplate{});
  EXPECT_EQ(total_tokens(t0.prompt), 45);
  EXPECT_EQ(t0.input_num_turns, 1);
  EXPECT_EQ(t0.input_num_tokens, 10);
  EXPECT_EQ(t0.output_tokens, 20);
  EXPECT_EQ(t0.conversation_name, "c");
  EXPECT_EQ(t0.output_content_id, c.messages[1].content.front().content_id);
  const RequestSpec t1 = build_turn_request(c, 3, ChatTemplate{});
  EXPECT_EQ(total_tokens(t1.prompt), 105);
  EXPECT_EQ(t1.input_num_turns, 3);
  EXPECT_EQ(t1.input_num_tokens, 60);
  EXPECT_EQ(t1.output_tokens, 40);
}

// The prompt of turn k followed by its generated answer (stream output_content_id from offset 0)
// is exactly the start of turn k+1's prompt, token by token (block size 1) and in 16-token
// blocks, so a vLLM prefix cache holding turn k's KV serves all of it to turn k+1.
TEST(Prompt, NextTurnStartsWithThisTurnAndItsAnswer) {
  const Conversation c = four_messages("history");
  const RequestSpec t0 = build_turn_request(c, 1, ChatTemplate{});
  const RequestSpec t1 = build_turn_request(c, 3, ChatTemplate{});
  TokenSequence with_answer = t0.prompt;
  append_tokens(with_answer, t0.output_content_id, t0.output_tokens);
  const std::int64_t n = total_tokens(with_answer);  // 65
  EXPECT_EQ(n, 65);
  const auto a1 = block_hashes(with_answer, 1);
  const auto b1 = block_hashes(t1.prompt, 1);
  ASSERT_GE(b1.size(), a1.size());
  for (std::size_t i = 0; i < a1.size(); ++i) ASSERT_EQ(a1[i], b1[i]) << "token " << i;
  EXPECT_NE(a1.size(), b1.size());
  const auto a16 = block_hashes(with_answer, 16);
  const auto b16 = block_hashes(t1.prompt, 16);
  ASSERT_EQ(a16.size(), 4u);  // 65 tokens: 4 full blocks
  for (std::size_t i = 0; i < a16.size(); ++i) EXPECT_EQ(a16[i], b16[i]);
}

// Template pieces are the same streams in every conversation: the preamble and the user header
// (26 + 4 = 30 tokens) hash alike for two different conversations; their contents do not.
TEST(Prompt, TemplateIsSharedAcrossConversations) {
  const RequestSpec a = build_turn_request(four_messages("a"), 1, ChatTemplate{});
  const RequestSpec b = build_turn_request(four_messages("b"), 1, ChatTemplate{});
  const auto ha = block_hashes(a.prompt, 30);
  const auto hb = block_hashes(b.prompt, 30);
  ASSERT_EQ(ha.size(), 1u);
  EXPECT_EQ(ha[0], hb[0]);
  EXPECT_NE(block_hashes(a.prompt, 31)[0], block_hashes(b.prompt, 31)[0]);
}

// --limit-min/max-tokens: 0 = the dataset answer (max(1, tokens)), < 0 = no limit, > 0 = that
// limit; the dataset length is clamped into the limits that are set.
TEST(Prompt, OutputLimits) {
  const Conversation c = four_messages("c");  // answer to turn 0: 20 tokens
  EXPECT_EQ(turn_output_tokens(c, 1, 0, 0), 20);
  EXPECT_EQ(turn_output_tokens(c, 1, -1, -1), 20);
  EXPECT_EQ(turn_output_tokens(c, 1, 50, 60), 50);
  EXPECT_EQ(turn_output_tokens(c, 1, 5, 15), 15);
  EXPECT_EQ(turn_output_tokens(c, 1, 5, 25), 20);
  EXPECT_EQ(turn_output_tokens(c, 1, 0, -1), 20);
  // No answer in the dataset (a trailing user message): the max limit, else the min, else 1.
  Conversation open = c;
  open.messages.resize(3);
  EXPECT_EQ(turn_output_tokens(open, 3, 0, 0), 1);
  EXPECT_EQ(turn_output_tokens(open, 3, 5, 9), 9);
  // An empty dataset answer still asks for one token.
  Conversation empty = c;
  empty.messages[1] = make_message(Message::Role::kAssistant, conversation_key("c"), 1, 0);
  EXPECT_EQ(turn_output_tokens(empty, 1, 0, 0), 1);
}

// A template without per-message tokens: the prompt is the preamble, the contents and the
// generation prompt only.
TEST(Prompt, CustomTemplate) {
  ChatTemplate t;
  t.preamble_tokens = 0;
  t.per_message_tokens = 0;
  t.generation_prompt_tokens = 0;
  EXPECT_EQ(total_tokens(build_turn_request(four_messages("c"), 3, t).prompt), 60);
}

}  // namespace
}  // namespace kvsim::workload
