#pragma once
// Conversations of vLLM's multi-turn benchmark as token identities: each message is a token
// sequence (content streams, see sim/core/tokens.hpp) with its content token count, and
// generate_conversations() reproduces bench_dataset.py's synthetic generator
// (generate_conversations) with token counts in place of corpus text.
//
// Content streams: message i of conversation `id` is the stream
// content_id(kUserTurn | kAssistantTurn, stable_hash(id), i), so the same history always hashes
// the same; the generator's common prefix is ONE stream content_id(kCommonPrefix, 0) shared by
// every conversation (it leads the first user message).
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/rng.hpp"
#include "sim/core/tokens.hpp"
#include "sim/workload/workload_spec.hpp"

namespace kvsim::workload {

struct Message {
  enum class Role { kUser, kAssistant } role = Role::kUser;
  TokenSequence content;
  std::int64_t content_tokens = 0;  // = total_tokens(content)
};

struct Conversation {
  std::string id;  // e.g. CONV_ID_3
  std::vector<Message> messages;
};

// Key of a conversation's content streams: stable_hash(id).
std::uint64_t conversation_key(const std::string& id);
// Stream of message `index` of the conversation with key `key`.
std::uint64_t message_stream_id(Message::Role role, std::uint64_t key, std::size_t index);
// A message that is `tokens` tokens of its own stream.
Message make_message(Message::Role role, std::uint64_t key, std::size_t index, std::int64_t tokens);

// Token counts of the generator's fixed English phrases, measured with the Llama-3 tokenizer
// (llama3-tokenizer-js 1.2.0, Meta's 128K vocabulary; special tokens not added). Llama 3 splits
// digit runs into groups of up to three digits, so a number n costs ceil(digits(n) / 3) tokens.
struct PhraseTokens {
  // "Please rewrite the following text and add more content: " = Please| rewrite| the|
  // following| text| and| add| more| content|:| (space) -> 11
  std::int64_t base_prompt = 11;
  // "{c} is a nice number... " = {c}| is| a| nice| number|...| (space) -> number + 6
  std::int64_t nice_number_words = 6;
  // "{c}, " = {c}|,| (space) -> number + 2
  std::int64_t comma_words = 2;
};
std::int64_t number_tokens(std::int64_t n);

// Validates a generation config as vLLM's parse_input_json_file and the Distribution
// constructors do; throws InputError naming the field (no file location: the caller has it).
void validate_generation_config(const GenerationConfig& config);

// vLLM's generate_conversations with token counts. Draw order as vLLM's (one Rng in place of
// numpy's global generator): num_turns for all conversations, prefix_num_tokens for all, the
// common prefix once, then per conversation num_tokens and output_num_tokens, each a batch of
// the conversation's message count. Per conversation c with m messages:
//   m = max(num_turns, 2), plus 1 if odd
//   user target u_t = max(num_tokens_t, base_prompt); answer a_t = max(output_num_tokens_t, 1)
//   common prefix text = corpus[:common - 2] + "." -> common - 1 tokens (when common > 0)
//   first user message = common prefix + "{c} is a nice number... " + "{c}, " + prefix tokens
//       + base prompt + filler, filler = u_0 - (common prefix + nice-number phrase) - base > 0
//       (the unique prefix and "{c}, " are NOT subtracted; "{c}, " only when prefix > 0)
//   later user messages = nice-number phrase + base prompt + filler, filler = u_t - phrase - base
//   assistant messages = a_t tokens (used by the client only as the forced answer length)
// Content token counts add the phrases' separate counts; re-tokenizing the joined text merges a
// separating space now and then, so vLLM's own counts can differ by one or two tokens a message.
// Throws InputError for an invalid config.
std::vector<Conversation> generate_conversations(const GenerationConfig& config, Rng& rng,
                                                 const PhraseTokens& phrases = {});

// Header lines of the generation parameters as the benchmark prints them, e.g.
// "input_num_turns=UniformDistribution[12, 18]".
std::vector<std::string> generation_param_lines(const GenerationConfig& config);

}  // namespace kvsim::workload
