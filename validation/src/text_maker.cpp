#include "validation/src/text_maker.hpp"

#include <array>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/core/rng.hpp"
#include "sim/workload/token_count.hpp"
#include "validation/src/http_client.hpp"

namespace kvsim::validation {
namespace {

// Lower case, at most 8 letters: one token each after a space in the Llama-3 estimate.
constexpr std::array<const char*, 64> kWords{
    "the",     "time",    "people", "water",   "house",   "light",   "world",  "story",
    "river",   "garden",  "music",  "paper",   "table",   "window",  "market", "letter",
    "family",  "number",  "school", "animal",  "summer",  "winter",  "city",   "road",
    "friend",  "answer",  "moment", "morning", "evening", "country", "island", "forest",
    "village", "kitchen", "doctor", "teacher", "history", "picture", "little", "small",
    "green",   "bright",  "quiet",  "early",   "open",    "simple",  "strong", "warm",
    "walk",    "read",    "write",  "sing",    "build",   "carry",   "listen", "travel",
    "bread",   "stone",   "field",  "horse",   "ship",    "cloud",   "sound",  "door"};

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Words index..index+n-1 of a stream, space separated (a leading space when asked).
std::string words(std::uint64_t stream, std::int64_t index, std::int64_t n, bool leading_space) {
  std::string out;
  for (std::int64_t i = 0; i < n; ++i) {
    if (i > 0 || leading_space) out.push_back(' ');
    out += text_word(stream, index + i);
  }
  return out;
}

}  // namespace

std::string text_word(std::uint64_t stream, std::int64_t index) {
  const std::uint64_t h = mix(stream ^ mix(static_cast<std::uint64_t>(index)));
  return kWords[h % kWords.size()];
}

std::int64_t EstimateTokenizer::count(const std::string& text) {
  return workload::estimate_tokens(text);
}

ServerTokenizer::ServerTokenizer(std::string base_url, std::string model, double timeout_s)
    : base_url_(std::move(base_url)), model_(std::move(model)), timeout_s_(timeout_s) {
  while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
  std::string error;
  const std::int64_t empty = raw_count("", &error);
  if (empty < 0)
    throw InputError("", 0, 0, "--tokenize: " + base_url_ + "/tokenize does not work: " + error);
  special_ = empty;
}

std::int64_t ServerTokenizer::raw_count(const std::string& text, std::string* error) {
  ++calls_;
  const nlohmann::json body{{"model", model_}, {"prompt", text}, {"add_special_tokens", false}};
  const HttpResponse r = http_post_json(base_url_ + "/tokenize", body.dump(), timeout_s_);
  if (!r.error.empty() || r.status != 200) {
    if (error != nullptr) *error = r.error.empty() ? "HTTP " + std::to_string(r.status) : r.error;
    return -1;
  }
  const auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (!j.is_object()) {
    if (error != nullptr) *error = "the answer is not a JSON object";
    return -1;
  }
  if (const auto c = j.find("count"); c != j.end() && c->is_number_integer())
    return c->get<std::int64_t>();
  if (const auto t = j.find("tokens"); t != j.end() && t->is_array())
    return static_cast<std::int64_t>(t->size());
  if (error != nullptr) *error = "the answer has neither count nor tokens";
  return -1;
}

std::int64_t ServerTokenizer::count(const std::string& text) {
  const std::int64_t c = raw_count(text, nullptr);
  return c < 0 ? -1 : std::max<std::int64_t>(0, c - special_);
}

const std::string& TextMaker::segment_text(std::uint64_t stream, std::int64_t offset,
                                           std::int64_t length, bool leading_space) {
  const auto key = std::make_tuple(stream, offset, length, leading_space);
  auto it = cache_.find(key);
  if (it == cache_.end())
    it = cache_.emplace(key, make(stream, offset, length, leading_space)).first;
  return it->second;
}

std::string TextMaker::make(std::uint64_t stream, std::int64_t offset, std::int64_t length,
                            bool leading_space) {
  if (length <= 0) return {};
  if (dynamic_cast<EstimateTokenizer*>(&tokenizer_) != nullptr) {
    // One word per token; correct by whole words if the estimate disagrees.
    std::int64_t n = length;
    std::string text = words(stream, offset, n, leading_space);
    for (int i = 0; i < 4; ++i) {
      const std::int64_t c = tokenizer_.count(text);
      if (c == length || n + length - c < 1) break;
      n += length - c;
      text = words(stream, offset, n, leading_space);
    }
    return text;
  }
  // A real tokenizer: cut a long word text to the character length that counts `length`.
  if (chars_per_token_ <= 0) {
    const std::string sample = words(stream, offset, 100, false);
    const std::int64_t c = tokenizer_.count(sample);
    chars_per_token_ = c > 0 ? static_cast<double>(sample.size()) / static_cast<double>(c) : 4.0;
  }
  std::string base;
  const auto ensure = [&](std::size_t chars) {
    // Words have at least 3 letters and a space: chars / 3 + 16 words are longer than chars.
    if (base.size() < chars + 1) {
      base = words(stream, offset, static_cast<std::int64_t>(chars / 3) + 16, leading_space);
    }
  };
  auto len =
      static_cast<std::int64_t>(std::llround(static_cast<double>(length) * chars_per_token_));
  std::string best;
  std::int64_t best_err = -1;
  for (int i = 0; i < 8; ++i) {
    len = std::max<std::int64_t>(len, leading_space ? 2 : 1);
    ensure(static_cast<std::size_t>(len));
    std::string text = base.substr(0, static_cast<std::size_t>(len));
    while (text.size() > 1 && text.back() == ' ') text.pop_back();
    const std::int64_t c = tokenizer_.count(text);
    if (c < 0) break;
    const std::int64_t err = std::llabs(c - length);
    if (best_err < 0 || err < best_err) {
      best_err = err;
      best = text;
    }
    if (c == length) break;
    auto step =
        static_cast<std::int64_t>(std::llround(static_cast<double>(length - c) * chars_per_token_));
    if (step == 0) step = length > c ? 1 : -1;
    len = static_cast<std::int64_t>(text.size()) + step;
  }
  if (best_err < 0)
    return words(stream, offset, length, leading_space);  // tokenizer failed: estimate
  return best;
}

std::string TextMaker::message_text(const workload::Message& m) {
  std::string out;
  bool first = true;
  for (const TokenSegment& s : m.content) {
    if (s.length <= 0) continue;
    out += segment_text(s.content_id, s.offset, s.length, !first);
    first = false;
  }
  return out;
}

}  // namespace kvsim::validation
