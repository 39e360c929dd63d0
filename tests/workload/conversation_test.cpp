#include "sim/workload/conversation.hpp"

#include <gtest/gtest.h>

#include <set>

#include "sim/core/error.hpp"

namespace kvsim::workload {
namespace {

Distribution constant(double v) {
  Distribution d;
  d.kind = DistKind::kConstant;
  d.value = v;
  return d;
}

Distribution uniform(double lo, double hi) {
  Distribution d;
  d.kind = DistKind::kUniform;
  d.min = lo;
  d.max = hi;
  d.has_max = true;
  return d;
}

GenerationConfig constant_config(int n, double turns, double common, double prefix, double user,
                                 double answer) {
  GenerationConfig g;
  g.num_conversations = n;
  g.num_turns = constant(turns);
  g.common_prefix_num_tokens = constant(common);
  g.prefix_num_tokens = constant(prefix);
  g.num_tokens = constant(user);
  g.output_num_tokens = constant(answer);
  return g;
}

// bench_dataset.py: nturns = max(sample, 2) rounded up to even, so uniform 12..18 messages
// gives 12, 14, 16 or 18 messages: 6..9 user turns, each followed by an answer.
TEST(Conversation, TurnCountsAreRoundedUpToEven) {
  GenerationConfig g = constant_config(2000, 0, 0, 0, 140, 100);
  g.num_turns = uniform(12, 18);
  Rng rng(1);
  const auto convs = generate_conversations(g, rng);
  ASSERT_EQ(convs.size(), 2000u);
  std::set<std::size_t> user_turns;
  for (const auto& c : convs) {
    ASSERT_EQ(c.messages.size() % 2, 0u);
    user_turns.insert(c.messages.size() / 2);
    for (std::size_t i = 0; i < c.messages.size(); ++i) {
      EXPECT_EQ(c.messages[i].role, i % 2 == 0 ? Message::Role::kUser : Message::Role::kAssistant);
    }
  }
  EXPECT_EQ(user_turns, (std::set<std::size_t>{6, 7, 8, 9}));
}

// max(sample, 2): a constant 1 gives 2 messages; 3 rounds up to 4.
TEST(Conversation, AtLeastOneUserTurnAndAnswer) {
  Rng rng(2);
  EXPECT_EQ(generate_conversations(constant_config(1, 1, 0, 0, 140, 10), rng)[0].messages.size(),
            2u);
  EXPECT_EQ(generate_conversations(constant_config(1, 3, 0, 0, 140, 10), rng)[0].messages.size(),
            4u);
}

// Token arithmetic by hand (Llama-3 counts: base prompt 11, "{c} is a nice number... " 7 for
// c < 1000 and 8 for 1000 <= c < 10^6, "{c}, " 3 or 4), with common 500 (-> 499 tokens:
// 498 corpus tokens + "."), prefix 300, user 140, answer 100:
//   first user = 499 + 7 + 3 + 300 + 11 + max(0, 140 - (499 + 7) - 11) = 820
//   later user = 7 + 11 + (140 - 7 - 11) = 140;  answers = 100
//   conversation 1000: 499 + 8 + 4 + 300 + 11 = 822
TEST(Conversation, TokenArithmeticFollowsVllm) {
  Rng rng(3);
  const auto convs = generate_conversations(constant_config(1001, 4, 500, 300, 140, 100), rng);
  const Conversation& c0 = convs[0];
  EXPECT_EQ(c0.id, "CONV_ID_0");
  ASSERT_EQ(c0.messages.size(), 4u);
  EXPECT_EQ(c0.messages[0].content_tokens, 820);
  EXPECT_EQ(c0.messages[1].content_tokens, 100);
  EXPECT_EQ(c0.messages[2].content_tokens, 140);
  EXPECT_EQ(c0.messages[3].content_tokens, 100);
  EXPECT_EQ(convs[1000].id, "CONV_ID_1000");
  EXPECT_EQ(convs[1000].messages[0].content_tokens, 822);
  // Later user turn of conversation 1000: 8 + 11 + (140 - 8 - 11) = 140.
  EXPECT_EQ(convs[1000].messages[2].content_tokens, 140);
  for (const auto& c : convs) {
    for (const auto& m : c.messages) EXPECT_EQ(m.content_tokens, total_tokens(m.content));
  }
}

// Without a common prefix the first turn is the phrase, "{c}, ", the unique prefix (not
// subtracted from the target), the base prompt and the filler: 7 + 3 + 300 + 11 + (140-7-11) = 443.
// Without a unique prefix there is no "{c}, " either: 7 + 11 + 122 = 140.
TEST(Conversation, UniquePrefixIsNotSubtracted) {
  Rng rng(4);
  EXPECT_EQ(generate_conversations(constant_config(1, 2, 0, 300, 140, 10), rng)[0]
                .messages[0]
                .content_tokens,
            443);
  EXPECT_EQ(generate_conversations(constant_config(1, 2, 0, 0, 140, 10), rng)[0]
                .messages[0]
                .content_tokens,
            140);
}

// The user target is at least the base prompt (11): a target of 5 leaves no filler, so a later
// turn is the phrase plus the base prompt, 7 + 11 = 18. Answers are at least 1 token.
TEST(Conversation, LowerLimits) {
  Rng rng(5);
  const auto c = generate_conversations(constant_config(1, 4, 0, 0, 5, 0), rng)[0];
  EXPECT_EQ(c.messages[2].content_tokens, 18);
  EXPECT_EQ(c.messages[1].content_tokens, 1);
}

// The common prefix is one stream shared by all conversations, so their first user messages
// share its full blocks: 499 tokens = 31 full 16-token blocks; block 32 mixes in each
// conversation's own tokens and differs.
TEST(Conversation, CommonPrefixIsShared) {
  Rng rng(6);
  const auto convs = generate_conversations(constant_config(5, 2, 500, 100, 140, 10), rng);
  const auto h0 = block_hashes(convs[0].messages[0].content, 16);
  for (std::size_t c = 1; c < convs.size(); ++c) {
    const auto h = block_hashes(convs[c].messages[0].content, 16);
    ASSERT_GT(h.size(), 32u);
    for (std::size_t b = 0; b < 31; ++b)
      EXPECT_EQ(h[b], h0[b]) << "conversation " << c << " block " << b;
    EXPECT_NE(h[31], h0[31]);
  }
  // Later turns share nothing across conversations.
  EXPECT_NE(convs[0].messages[0].content.back().content_id,
            convs[1].messages[0].content.back().content_id);
}

// Streams derive from the conversation id and message index only.
TEST(Conversation, StreamsDeriveFromIdAndIndex) {
  const Message a = make_message(Message::Role::kUser, conversation_key("abc"), 2, 50);
  const Message b = make_message(Message::Role::kUser, conversation_key("abc"), 2, 50);
  const Message c = make_message(Message::Role::kUser, conversation_key("abd"), 2, 50);
  EXPECT_EQ(a.content, b.content);
  EXPECT_NE(a.content, c.content);
  EXPECT_EQ(a.content.front().offset, 0);
  EXPECT_NE(message_stream_id(Message::Role::kUser, 1, 1),
            message_stream_id(Message::Role::kAssistant, 1, 1));
}

TEST(Conversation, NumberTokensGroupDigitsByThree) {
  EXPECT_EQ(number_tokens(0), 1);
  EXPECT_EQ(number_tokens(999), 1);
  EXPECT_EQ(number_tokens(1000), 2);
  EXPECT_EQ(number_tokens(123456), 2);
  EXPECT_EQ(number_tokens(1234567), 3);
}

TEST(Conversation, SameSeedSameConversations) {
  GenerationConfig g = constant_config(20, 0, 0, 0, 0, 0);
  g.num_turns = uniform(2, 20);
  g.num_tokens = uniform(10, 500);
  g.output_num_tokens = uniform(10, 500);
  Rng a(7), b(7), c(8);
  const auto x = generate_conversations(g, a);
  const auto y = generate_conversations(g, b);
  const auto z = generate_conversations(g, c);
  bool differs = false;
  for (std::size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(x[i].messages.size(), y[i].messages.size());
    for (std::size_t m = 0; m < x[i].messages.size(); ++m)
      EXPECT_EQ(x[i].messages[m].content, y[i].messages[m].content);
    differs = differs || x[i].messages.size() != z[i].messages.size();
  }
  EXPECT_TRUE(differs);
}

TEST(Conversation, InvalidConfigNamesTheField) {
  GenerationConfig g = constant_config(3, 4, 0, 0, 140, 100);
  g.num_turns = uniform(0, 4);
  Rng rng(9);
  try {
    generate_conversations(g, rng);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].path, "prompt_input.num_turns");
  }
  g = constant_config(0, 4, 0, 0, 140, 100);
  EXPECT_THROW(generate_conversations(g, rng), InputError);
}

// The benchmark's "Conversations Generation Parameters" lines.
TEST(Conversation, GenerationParamLines) {
  GenerationConfig g = constant_config(24, 0, 500, 0, 0, 0);
  g.text_files = {"pg1184.txt"};
  g.num_turns = uniform(12, 18);
  EXPECT_EQ(
      generation_param_lines(g),
      (std::vector<std::string>{
          "text_files=pg1184.txt", "input_num_turns=UniformDistribution[12, 18]",
          "input_common_prefix_num_tokens=Constant[500]", "input_prefix_num_tokens=Constant[0]",
          "input_num_tokens=Constant[0]", "output_num_tokens=Constant[0]"}));
}

}  // namespace
}  // namespace kvsim::workload

namespace kvsim::workload {
namespace {

// docs/limits.md: a parameter past the field's limit is refused before anything is sampled; a
// heavy tail without max is refused at the first sample past the limit (zipf with alpha near 1
// gives samples of ~1e12 and more); too many messages in all are refused before generation.
TEST(ConversationLimits, ParametersAndSamplesPastTheLimitsAreRefused) {
  Rng rng(1);
  GenerationConfig big_output = constant_config(2, 2, 0, 0, 140, 10);
  big_output.output_num_tokens = uniform(200, 1e18);
  EXPECT_THROW(generate_conversations(big_output, rng), InputError);

  GenerationConfig tail = constant_config(2, 2, 0, 0, 140, 10);
  tail.output_num_tokens.kind = DistKind::kZipf;
  tail.output_num_tokens.alpha = 1.0000001;
  try {
    generate_conversations(tail, rng);
    ADD_FAILURE() << "a zipf sample past 2^24 tokens was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().front().path, "prompt_output.num_tokens");
    EXPECT_NE(std::string(e.what()).find("give the distribution a max"), std::string::npos);
  }
  // The same tail capped by max is within the limit.
  tail.output_num_tokens.has_max = true;
  tail.output_num_tokens.max = 1000;
  EXPECT_NO_THROW(generate_conversations(tail, rng));

  // 300 conversations of 100,000 messages: 3e7 messages, past 2e7 in all.
  GenerationConfig many = constant_config(300, 100000, 0, 0, 140, 10);
  EXPECT_THROW(generate_conversations(many, rng), InputError);
  GenerationConfig too_many_turns = constant_config(1, 100002, 0, 0, 140, 10);
  EXPECT_THROW(generate_conversations(too_many_turns, rng), InputError);
}

}  // namespace
}  // namespace kvsim::workload
