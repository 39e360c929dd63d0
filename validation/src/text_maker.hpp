#pragma once
// Text of a given token count, for sending a simulated conversation to a real server. A
// message's content is a list of token segments (content stream, offset, length; see
// sim/core/tokens.hpp); each segment becomes text made of common English words picked by a
// hash of (stream, word index), so the same segment always becomes the same text and a prefix
// shared in the simulation (the generator's common prefix, a conversation's history) is shared
// by the server too.
//
// Token counts come from a Tokenizer:
//  - EstimateTokenizer: kvsim's Llama-3 estimate (sim/workload/token_count.hpp). The words are
//    lower case and at most 8 letters, so each " word" counts one token there: N words make N
//    tokens (checked, and corrected word by word if the estimate disagrees).
//  - ServerTokenizer: the server's POST /tokenize (vLLM and the CPU engine have it), with
//    "add_special_tokens": false and the count of the empty text subtracted (servers that add
//    a BOS token anyway). The text is cut to a character length found by secant steps on the
//    measured count (at most 8 /tokenize calls a segment); the closest cut is kept.
// A segment that does not start its message begins with a space, so joining segments adds no
// separator tokens a tokenizer would have to merge.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "sim/workload/conversation.hpp"

namespace kvsim::validation {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // Tokens of `text` (content only, no special tokens); -1 when it cannot tell.
  virtual std::int64_t count(const std::string& text) = 0;
  virtual std::string describe() const = 0;
};

class EstimateTokenizer final : public Tokenizer {
 public:
  std::int64_t count(const std::string& text) override;
  std::string describe() const override { return "estimate (Llama-3 token count estimate)"; }
};

class ServerTokenizer final : public Tokenizer {
 public:
  // Throws InputError when the server has no working /tokenize.
  ServerTokenizer(std::string base_url, std::string model, double timeout_s = 30);
  std::int64_t count(const std::string& text) override;
  std::string describe() const override { return "server (" + base_url_ + "/tokenize)"; }
  std::int64_t calls() const { return calls_; }

 private:
  std::int64_t raw_count(const std::string& text, std::string* error);
  std::string base_url_;
  std::string model_;
  double timeout_s_;
  std::int64_t special_ = 0;
  std::int64_t calls_ = 0;
};

// The words text is made of, stream and word index chosen: same arguments, same word.
std::string text_word(std::uint64_t stream, std::int64_t index);

class TextMaker {
 public:
  explicit TextMaker(Tokenizer& tokenizer) : tokenizer_(tokenizer) {}
  // Text of `length` tokens of stream `stream` from token `offset`; with leading_space it starts
  // with a space (counted in its tokens). Cached: the same arguments give the same text.
  const std::string& segment_text(std::uint64_t stream, std::int64_t offset, std::int64_t length,
                                  bool leading_space);
  // A message's content: its segments' texts joined.
  std::string message_text(const workload::Message& m);
  Tokenizer& tokenizer() { return tokenizer_; }

 private:
  std::string make(std::uint64_t stream, std::int64_t offset, std::int64_t length,
                   bool leading_space);
  Tokenizer& tokenizer_;
  double chars_per_token_ = 0;
  std::map<std::tuple<std::uint64_t, std::int64_t, std::int64_t, bool>, std::string> cache_;
};

}  // namespace kvsim::validation
