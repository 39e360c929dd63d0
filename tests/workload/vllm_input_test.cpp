#include "sim/workload/vllm_input.hpp"

#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "sim/workload/distributions.hpp"

namespace kvsim::workload {
namespace {

const std::string kFixtures = std::string(KVSIM_TEST_DATA_DIR) + "/fixtures/workload/";

Diagnostic first_error(const std::string& text, const std::string& name = "in.json") {
  try {
    parse_vllm_input(text, name);
  } catch (const InputError& e) {
    return e.diagnostics().at(0);
  }
  ADD_FAILURE() << "expected InputError";
  return {};
}

// vLLM's default generate_multi_turn.json: a JSON object with filetype generate_conversations
// becomes a generation config with the same distributions (common prefix constant 500, unique
// prefix lognormal average 1000 capped at 5000 with the default median ratio 0.85).
TEST(VllmInput, GenerationConfigFile) {
  const VllmInput in = read_vllm_input(kFixtures + "generate_multi_turn.json");
  ASSERT_TRUE(in.generation.has_value());
  const GenerationConfig& g = *in.generation;
  EXPECT_EQ(g.num_conversations, 24);
  EXPECT_EQ(g.text_files, std::vector<std::string>{"pg1184.txt"});
  EXPECT_FALSE(g.print_stats);
  EXPECT_EQ(distribution_repr(g.num_turns), "UniformDistribution[12, 18]");
  EXPECT_TRUE(g.num_turns.integer_bounds);
  EXPECT_EQ(distribution_repr(g.common_prefix_num_tokens), "Constant[500]");
  EXPECT_EQ(distribution_repr(g.prefix_num_tokens), "LognormalDistribution[1000, 0.85, 5000]");
  EXPECT_EQ(distribution_repr(g.num_tokens), "UniformDistribution[120, 160]");
  EXPECT_EQ(distribution_repr(g.output_num_tokens), "UniformDistribution[80, 120]");
  EXPECT_TRUE(in.conversations.empty());
}

std::string config_with(const std::string& num_turns) {
  return R"({
  "filetype": "generate_conversations",
  "num_conversations": 4,
  "text_files": ["a.txt"],
  "prompt_input": {
    "num_turns": )" +
         num_turns + R"(,
    "num_tokens": {"distribution": "constant", "value": 100},
    "prefix_num_tokens": {"distribution": "constant", "value": 0}
  },
  "prompt_output": {"num_tokens": {"distribution": "constant", "value": 50}}
})";
}

// Other distribution forms: absent common prefix = Constant[0]; lognormal mean/sigma; a real
// uniform bound; zipf/poisson with a null max (no cap).
TEST(VllmInput, DistributionForms) {
  auto parse = [](const std::string& d) {
    return *parse_vllm_input(config_with(d), "x.json").generation;
  };
  EXPECT_EQ(distribution_repr(
                parse(R"({"distribution": "constant", "value": 6})").common_prefix_num_tokens),
            "Constant[0]");
  EXPECT_EQ(
      distribution_repr(
          parse(R"({"distribution": "lognormal", "mean": 6, "sigma": 4, "max": 1500})").num_turns),
      "LognormalDistribution[6, 4, 1500]");
  const GenerationConfig u = parse(R"({"distribution": "uniform", "min": 2, "max": 8.5})");
  EXPECT_FALSE(u.num_turns.integer_bounds);
  const GenerationConfig z = parse(R"({"distribution": "zipf", "alpha": 1.5, "max": null})");
  EXPECT_EQ(z.num_turns.kind, DistKind::kZipf);
  EXPECT_FALSE(z.num_turns.has_max);
  const GenerationConfig r =
      parse(R"({"distribution": "lognormal", "average": 20, "median_ratio": 0.5})");
  EXPECT_EQ(distribution_repr(r.num_turns), "LognormalDistribution[20, 0.5, None]");
}

// A schema error is reported at the offending value: line 6, column 53 is the 0 after "min".
TEST(VllmInput, SchemaErrorHasLineAndColumn) {
  const Diagnostic d =
      first_error(config_with(R"({"distribution": "uniform", "min": 0, "max": 4})"), "gen.json");
  EXPECT_EQ(d.file, "gen.json");
  EXPECT_EQ(d.line, 6);
  EXPECT_EQ(d.column, 53);
  EXPECT_EQ(d.path, "prompt_input.num_turns.min");
  EXPECT_EQ(d.message, "uniform min must be > 0");
  EXPECT_EQ(d.to_string(),
            "gen.json:6:53: error: prompt_input.num_turns.min: uniform min must be > 0");
}

TEST(VllmInput, GenerationConfigErrors) {
  EXPECT_EQ(first_error(config_with(R"({"distribution": "normal"})")).message,
            "Unknown distribution: normal (valid: constant, uniform, lognormal, zipf, poisson)");
  EXPECT_EQ(first_error(config_with(R"({"distribution": "normal"})")).path,
            "prompt_input.num_turns.distribution");
  EXPECT_EQ(first_error(config_with(R"({"distribution": "constant"})")).message,
            "Missing field 'value' in section='prompt_input' and subsection='num_turns'");
  EXPECT_EQ(first_error(config_with(R"({"distribution": "lognormal", "average": 0})")).message,
            "Lognormal average must be positive");
  EXPECT_EQ(first_error(config_with(R"({"distribution": "lognormal", "mean": 6})")).message,
            "Missing field 'sigma' in section='prompt_input' and subsection='num_turns'");
  EXPECT_EQ(first_error(config_with(R"({"value": 3})")).message,
            "Missing field 'distribution' in section='prompt_input' and subsection='num_turns'");
  EXPECT_EQ(first_error(config_with(R"({"distribution": "constant", "value": "3"})")).message,
            "must be a number, got a string");
  // Missing top-level fields are reported at the object, line 1 column 1.
  const Diagnostic d = first_error(
      R"({"filetype": "generate_conversations", "num_conversations": 2, "text_files": ["a"],
      "prompt_input": {}})");
  EXPECT_EQ(d.message, "Missing field prompt_output in the generation config");
  EXPECT_EQ(d.line, 1);
  EXPECT_EQ(d.column, 1);
  EXPECT_EQ(first_error(R"({"num_conversations": 2})").message,
            "Input file in.json is invalid (missing 'filetype')");
  std::string bad = config_with(R"({"distribution": "constant", "value": 6})");
  bad.replace(bad.find("\"generate_conversations\""), 24, "\"sharegpt\"");
  EXPECT_EQ(first_error(bad).path, "filetype");
  bad = config_with(R"({"distribution": "constant", "value": 6})");
  bad.replace(bad.find("[\"a.txt\"]"), 9, "[]");
  EXPECT_EQ(first_error(bad).message, "Field 'text_files' should be a list with at least one file");
  bad = config_with(R"({"distribution": "constant", "value": 6})");
  bad.replace(bad.find("4,"), 1, "0");
  EXPECT_EQ(first_error(bad).message, "num_conversations should be larger than zero");
}

// Malformed JSON: the library's byte offset becomes line:column (the '}' on line 4 where a
// value was expected).
TEST(VllmInput, SyntaxErrorHasLineAndColumn) {
  const Diagnostic d = first_error("{\n  \"a\": 1,\n  \"b\": \n}", "broken.json");
  EXPECT_EQ(d.line, 4);
  EXPECT_EQ(d.column, 1);
  EXPECT_NE(d.message.find("invalid JSON"), std::string::npos);
}

// A conversations list: ids, roles and token counts (Llama-3 tokenizer counts of these texts:
// "What is the capital of France?" 7, "The capital of France is Paris." 7, "Hello world!" 3,
// "I'm fine, thanks" 5). Extra keys of assistant messages are ignored, as the client does.
TEST(VllmInput, ConversationsFile) {
  const VllmInput in = read_vllm_input(kFixtures + "conversations.json");
  EXPECT_FALSE(in.generation.has_value());
  ASSERT_EQ(in.conversations.size(), 2u);
  const Conversation& a = in.conversations[0];
  EXPECT_EQ(a.id, "conv-a");
  ASSERT_EQ(a.messages.size(), 4u);
  EXPECT_EQ(a.messages[0].role, Message::Role::kUser);
  EXPECT_EQ(a.messages[1].role, Message::Role::kAssistant);
  EXPECT_EQ(a.messages[0].content_tokens, 7);
  EXPECT_EQ(a.messages[1].content_tokens, 7);
  EXPECT_EQ(a.messages[2].content_tokens, 3);
  EXPECT_EQ(a.messages[3].content_tokens, 5);
  // Message i of conversation id is stream message_stream_id(role, stable_hash(id), i).
  EXPECT_EQ(a.messages[2].content,
            (TokenSequence{TokenSegment{
                message_stream_id(Message::Role::kUser, conversation_key("conv-a"), 2), 0, 3}}));
  EXPECT_EQ(in.conversations[1].id, "conv-b");
  // Equal text in different conversations is not the same stream.
  EXPECT_NE(in.conversations[1].messages[0].content, a.messages[2].content);
}

std::string two_convs(const std::string& second) {
  return "[\n  {\"id\": \"a\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}, "
         "{\"role\": \"assistant\", \"content\": \"yo\"}]},\n  " +
         second + "\n]";
}

// conversations_list_to_dict and the client's per-message asserts, reported where they occur.
TEST(VllmInput, ConversationErrors) {
  const std::string ok_msgs =
      R"([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}])";
  Diagnostic d = first_error(two_convs(R"({"id": "a", "messages": )" + ok_msgs + "}"), "x.json");
  EXPECT_EQ(d.to_string(),
            "x.json:3:10: error: [1].id: Conversation ID a found more than once in the input");
  d = first_error(two_convs(R"({"id": 7, "messages": )" + ok_msgs + "}"));
  EXPECT_EQ(d.path, "[1].id");
  d = first_error(two_convs(R"({"id": "b", "messages": []})"));
  EXPECT_EQ(d.message, "Conversation with no messages (ID: b)");
  d = first_error(two_convs(R"({"id": "b", "messages": "hi"})"));
  EXPECT_EQ(d.message, "Conversation messages should be a list (ID: b)");
  d = first_error(two_convs(
      R"({"id": "b", "messages": [{"role": "user", "content": "x"}, {"role": "user", "content": "y"}]})"));
  EXPECT_EQ(d.path, "[1].messages[1].role");
  EXPECT_EQ(d.line, 3);
  d = first_error(two_convs(
      R"({"id": "b", "messages": [{"role": "assistant", "content": "x"}, {"role": "user", "content": "y"}]})"));
  EXPECT_EQ(d.path, "[1].messages[0].role");
  d = first_error(two_convs(R"({"id": "b", "messages": [{"role": "user", "content": "x"}]})"));
  EXPECT_EQ(d.path, "[1].messages");
  d = first_error(two_convs(
      R"({"id": "b", "messages": [{"role": "user", "content": "x", "name": "n"}, {"role": "assistant", "content": "y"}]})"));
  EXPECT_EQ(d.path, "[1].messages[0]");
  d = first_error(two_convs(
      R"({"id": "b", "messages": [{"role": "user", "content": null}, {"role": "assistant", "content": "y"}]})"));
  EXPECT_EQ(d.path, "[1].messages[0].content");
  d = first_error(two_convs(R"(["not", "an", "object"])"));
  EXPECT_EQ(d.path, "[1]");
  EXPECT_EQ(first_error("42").line, 1);
}

// Every problem is reported at once.
TEST(VllmInput, ErrorsAreCollected) {
  try {
    parse_vllm_input(R"([{"id": "a", "messages": []}, {"id": "b", "messages": []}])", "m.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().size(), 2u);
  }
}

TEST(VllmInput, MissingFile) {
  EXPECT_THROW(read_vllm_input(kFixtures + "no_such_file.json"), InputError);
}

}  // namespace
}  // namespace kvsim::workload
