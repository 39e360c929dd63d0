// Raw ShareGPT conversion as vLLM's convert_sharegpt_to_openai.py does it, including CPython's
// random module (expected draws printed by CPython 3.11 itself).
#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "sim/workload/make_driver.hpp"
#include "sim/workload/sharegpt.hpp"
#include "sim/workload/token_count.hpp"
#include "tests/workload/fake_context.hpp"

namespace kvsim::workload {
namespace {

const std::string kSample =
    std::string(KVSIM_SOURCE_DIR) + "/scenarios/traces/sharegpt_example.json";

// python3 -c "import random; random.seed(0); x=list(range(10)); random.shuffle(x); print(x);
//             print(random.sample(range(100), 7)); print(random.sample(range(10), 3))"
TEST(PyRandom, MatchesCPython) {
  PyRandom r(0);
  EXPECT_EQ(r.shuffle(10), (std::vector<std::size_t>{7, 8, 1, 5, 3, 4, 2, 0, 9, 6}));
  EXPECT_EQ(r.sample(100, 7),
            (std::vector<std::size_t>{45, 74, 27, 64, 17, 36, 96}));  // set method
  EXPECT_EQ(r.sample(10, 3), (std::vector<std::size_t>{1, 4, 2}));    // pool method
  PyRandom r99(99);
  EXPECT_EQ(r99.shuffle(5), (std::vector<std::size_t>{1, 2, 0, 4, 3}));
  // random.seed(2**40 + 5).getrandbits(32); random.seed(-3) seeds as 3.
  EXPECT_EQ(PyRandom((1LL << 40) + 5).getrandbits(32), 2166296868u);
  EXPECT_EQ(PyRandom(-3).getrandbits(32), 1022050301u);
  EXPECT_EQ(PyRandom(3).getrandbits(32), 1022050301u);
}

std::vector<std::string> ids(const std::vector<OpenAiConversation>& cs) {
  std::vector<std::string> out;
  for (const auto& c : cs) out.push_back(c.id);
  return out;
}

std::vector<std::string> contents(const OpenAiConversation& c) {
  std::vector<std::string> out;
  for (const auto& m : c.messages) out.push_back(m.content);
  return out;
}

// Seed 0 shuffles the 5 items to [2, 1, 0, 4, 3] (CPython): b_0, a_1, a_0, d_0, c_0. Parts of
// "a" merge in that order (a_1 then a_0); leading assistant turns ("lead", "dup") are dropped;
// d (user, user) does not alternate; c has a non-ASCII message.
TEST(ShareGpt, ConvertSeedZero) {
  const auto out = read_sharegpt(kSample, ShareGptFilter{});
  ASSERT_EQ(ids(out), (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(contents(out[0]), (std::vector<std::string>{"Q", "A"}));
  EXPECT_EQ(contents(out[1]), (std::vector<std::string>{"More?", "Sure.", "Hi", "Hello!"}));
  EXPECT_EQ(out[1].messages[0].role, "user");
  EXPECT_EQ(out[1].messages[1].role, "assistant");
}

// Seed 1 shuffles to [2, 3, 4, 0, 1]: a_0 comes before a_1, whose first turn ("gpt") repeats
// the previous part's last speaker and is dropped.
TEST(ShareGpt, ConvertSeedOneMergesInShuffledOrder) {
  ShareGptFilter f;
  f.seed = 1;
  const auto out = read_sharegpt(kSample, f);
  ASSERT_EQ(ids(out), (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(contents(out[1]), (std::vector<std::string>{"Hi", "Hello!", "More?", "Sure."}));
}

// Without the ASCII filter c is kept: [b, a, c]; max_items 2 then takes random.sample(range(3), 2)
// after the shuffle, which CPython gives as [2, 1]: c, a.
TEST(ShareGpt, FiltersAndSample) {
  ShareGptFilter f;
  f.exclude_non_english = false;
  EXPECT_EQ(ids(read_sharegpt(kSample, f)), (std::vector<std::string>{"b", "a", "c"}));
  f.max_items = 2;
  EXPECT_EQ(ids(read_sharegpt(kSample, f)), (std::vector<std::string>{"c", "a"}));
  // "Q" and "A" have 1 character: min_content_len 2 drops b. "Café?" is 5 characters (6 bytes).
  ShareGptFilter g;
  g.exclude_non_english = false;
  g.min_content_len = 2;
  EXPECT_EQ(ids(read_sharegpt(kSample, g)), (std::vector<std::string>{"a", "c"}));
  g.max_content_len = 5;
  EXPECT_EQ(ids(read_sharegpt(kSample, g)), (std::vector<std::string>{"c"}));
  // min_turns counts merged turns before truncation: b has 3, a 5, c 2.
  ShareGptFilter h;
  h.min_turns = 4;
  EXPECT_EQ(ids(read_sharegpt(kSample, h)), (std::vector<std::string>{"a"}));
  // max_turns 2 stops at turn index 2 (the dropped leading turn counts): a keeps "More?" only.
  h = ShareGptFilter{};
  h.max_turns = 2;
  const auto out = read_sharegpt(kSample, h);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(contents(out[1]), (std::vector<std::string>{"More?"}));
  // ... and the multi-turn workload drops those unanswered user messages (and so both
  // conversations).
  EXPECT_EQ(to_conversations(out).size(), 0u);
  h = ShareGptFilter{};
  h.min_turns = 6;
  EXPECT_THROW(read_sharegpt(kSample, h), InputError);  // nothing left
}

// The output file is json.dump(..., ensure_ascii=False, indent=2), byte for byte.
TEST(ShareGpt, OutputJsonAsPython) {
  const std::vector<OpenAiConversation> cs = {
      {"x", {{"user", "Caf\xC3\xA9 \"quoted\"\n\ttab\x01"}, {"assistant", "ok\\"}}}};
  EXPECT_EQ(
      openai_conversations_json(cs),
      "[\n  {\n    \"id\": \"x\",\n    \"messages\": [\n      {\n        \"role\": \"user\",\n"
      "        \"content\": \"Caf\xC3\xA9 \\\"quoted\\\"\\n\\ttab\\u0001\"\n      },\n      {\n"
      "        \"role\": \"assistant\",\n        \"content\": \"ok\\\\\"\n      }\n    ]\n  }\n]");
  EXPECT_EQ(openai_conversations_json({}), "[]");
}

// Token counts come from estimate_tokens(); message streams are the conversation's own.
TEST(ShareGpt, ToConversationsCountsTokens) {
  const auto convs = to_conversations(read_sharegpt(kSample, ShareGptFilter{}));
  ASSERT_EQ(convs.size(), 2u);
  ASSERT_EQ(convs[1].messages.size(), 4u);
  EXPECT_EQ(convs[1].messages[0].content_tokens, estimate_tokens("More?"));
  EXPECT_EQ(convs[1].messages[3].content_tokens, estimate_tokens("Hello!"));
}

// A raw ShareGPT file as the multi-turn workload's input_file: converted with the scenario's
// filters, then driven by the benchmark's client: b has 1 user turn, a has 2 -> 3 requests.
TEST(ShareGpt, MultiTurnInputFile) {
  WorkloadSpec spec;
  spec.kind = WorkloadSpec::Kind::kMultiTurn;
  spec.input_file = kSample;
  auto driver = make_driver(spec, "", 1);
  testing::FakeContext ctx;
  ctx.run(*driver);
  EXPECT_EQ(ctx.sent.size(), 3u);
  spec.sharegpt.min_turns = 4;  // only a
  auto only_a = make_driver(spec, "", 1);
  testing::FakeContext ctx2;
  ctx2.run(*only_a);
  EXPECT_EQ(ctx2.sent.size(), 2u);
}

}  // namespace
}  // namespace kvsim::workload
