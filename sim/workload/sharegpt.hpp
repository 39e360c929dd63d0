#pragma once
// Raw ShareGPT conversations (a JSON list of {"id": "<conversation>_<part>", "conversations":
// [{"from": "human"|"user"|"gpt"|"bing"|"chatgpt"|"bard"|"system", "value": "<text>"}]}, e.g.
// philschmid/sharegpt-raw sharegpt_20230401_clean_lang_split.json) converted to the
// OpenAI-messages conversation file exactly as vLLM's
// benchmarks/multi_turn/convert_sharegpt_to_openai.py does:
//   1. random.seed(seed); random.shuffle(items)   (CPython's Mersenne Twister, reproduced here)
//   2. merge the parts of a conversation (id split at its single '_') in shuffled order; a part
//      whose first turn has the same `from` as the previous part's last turn loses that turn
//   3. per conversation (merged turns): skip it when turns < min_turns; map `from` to a role;
//      drop the first turn when it is not a user turn; stop at turn index max_turns
//   4. keep it when the roles alternate user/assistant from a user turn and every content is
//      valid: min_content_len <= characters <= max_content_len (code points, as Python's len),
//      and all-ASCII when exclude_non_english (newer vLLM's default, turned off by
//      --no-exclude-non-english; revision 045d7575 of the script had this test inverted)
//   5. when more than max_items are kept: random.sample(kept, max_items)
// Options that are 0 are "not given", as the script's `if x:` tests treat them. Errors (not a
// list, an item without id or conversations, an id without exactly one '_', an unknown `from`,
// no conversation left) are InputError located in the JSON text.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/workload/conversation.hpp"
#include "sim/workload/trace.hpp"
#include "sim/workload/workload_spec.hpp"

namespace kvsim::workload {

// CPython's random.Random for the calls the converter makes: seed(int), shuffle, sample.
// Mersenne Twister MT19937 (Matsumoto and Nishimura 1998) seeded by init_by_array with the
// 32-bit words of |seed| (CPython Modules/_randommodule.c random_seed); _randbelow draws
// getrandbits(n.bit_length()) until below n (Lib/random.py).
class PyRandom {
 public:
  explicit PyRandom(std::int64_t seed);
  std::uint32_t next_u32();
  std::uint64_t getrandbits(int k);  // 1 <= k <= 64
  std::uint64_t randbelow(std::uint64_t n);
  // random.shuffle of positions 0 .. n-1: the permutation applied to a list of n items.
  std::vector<std::size_t> shuffle(std::size_t n);
  // random.sample(range(n), k): the chosen positions in order.
  std::vector<std::size_t> sample(std::size_t n, std::size_t k);

 private:
  std::uint32_t mt_[624] = {};
  int index_ = 624;
};

struct OpenAiMessage {
  std::string role;  // user | assistant
  std::string content;
};
struct OpenAiConversation {
  std::string id;
  std::vector<OpenAiMessage> messages;
};

// Converts raw ShareGPT JSON text; `display_name` names the file in diagnostics.
std::vector<OpenAiConversation> convert_sharegpt(const std::string& text,
                                                 const std::string& display_name,
                                                 const ShareGptFilter& filter);
std::vector<OpenAiConversation> read_sharegpt(const std::string& path,
                                              const ShareGptFilter& filter);

// The converter's output file: json.dump(conversations, f, ensure_ascii=False, indent=2).
std::string openai_conversations_json(const std::vector<OpenAiConversation>& conversations);

// Conversations for the multi-turn workload: each message's text becomes estimate_tokens()
// tokens (token_count.hpp). The benchmark's client needs an answer after every user message,
// so a trailing unanswered user message is dropped (and a conversation left empty with it).
std::vector<Conversation> to_conversations(const std::vector<OpenAiConversation>& conversations);

// A conversation list as a trace (for trace statistics and cache curves): user turn k of a
// conversation is one request whose prompt is the chat-templated history (prompt.hpp), with
// the assistant answer as its output; hash ids are the prompt's `hash_block_tokens`-token
// blocks (equal blocks get equal ids; the partial last block an id of its own); timestamps 0;
// each turn's parent is the previous turn.
Trace conversations_to_trace(const std::vector<Conversation>& conversations,
                             const ChatTemplate& chat_template, int hash_block_tokens,
                             const std::string& format, const std::string& source);

}  // namespace kvsim::workload
