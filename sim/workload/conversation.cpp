#include "sim/workload/conversation.hpp"

#include <algorithm>
#include <cmath>

#include "sim/core/error.hpp"
#include "sim/core/limits.hpp"
#include "sim/workload/distributions.hpp"

namespace kvsim::workload {
namespace {

struct NamedDistribution {
  const char* path;
  const Distribution* dist;
  std::int64_t limit;  // the most one sample may be (docs/limits.md)
  const char* what;    // what a sample counts
};

std::vector<NamedDistribution> named_fields(const GenerationConfig& c) {
  return {{"prompt_input.num_turns", &c.num_turns, limits::kMaxTurns, "messages per conversation"},
          {"prompt_input.common_prefix_num_tokens", &c.common_prefix_num_tokens, limits::kMaxTokens,
           "tokens"},
          {"prompt_input.prefix_num_tokens", &c.prefix_num_tokens, limits::kMaxTokens, "tokens"},
          {"prompt_input.num_tokens", &c.num_tokens, limits::kMaxTokens, "tokens"},
          {"prompt_output.num_tokens", &c.output_num_tokens, limits::kMaxTokens, "tokens"}};
}

// A parameter that lets the distribution give more than `limit` for certain; empty when none.
std::string parameter_past_limit(const Distribution& d, std::int64_t limit, const char* what) {
  const double top = static_cast<double>(limit);
  const auto past = [&](const char* key, double v) {
    return std::string(key) + " " + python_number_repr(v) + " is past kvsim's limit of " +
           std::to_string(limit) + " " + what + " (docs/limits.md)";
  };
  if (d.has_max && d.kind != DistKind::kUniform && d.max > top) return past("max", d.max);
  switch (d.kind) {
    case DistKind::kConstant:
      return d.value > top ? past("value", d.value) : std::string();
    case DistKind::kUniform:
      return d.max > top ? past("max", d.max) : std::string();
    case DistKind::kLognormal:
      if (d.has_average) return d.average > top ? past("average", d.average) : std::string();
      return d.mean > std::log(top) ? past("mean (of the logarithm)", d.mean) : std::string();
    case DistKind::kPoisson:
      return d.alpha > top ? past("alpha", d.alpha) : std::string();
    case DistKind::kZipf:
      return {};
  }
  return {};
}

// Samples beyond the limit (a heavy tail without a max) stop the run with the field named.
void check_samples(const NamedDistribution& f, const std::vector<std::int64_t>& values) {
  for (const std::int64_t v : values) {
    if (v <= f.limit) continue;
    throw InputError(Diagnostic{
        "", 0, 0, f.path,
        "a sample of " + distribution_repr(*f.dist) + " gave " + std::to_string(v) + " " + f.what +
            ", past kvsim's limit of " + std::to_string(f.limit) +
            " (docs/limits.md); give the distribution a max"});
  }
}

}  // namespace

std::uint64_t conversation_key(const std::string& id) { return stable_hash(id); }

std::uint64_t message_stream_id(Message::Role role, std::uint64_t key, std::size_t index) {
  return content_id(
      role == Message::Role::kUser ? ContentKind::kUserTurn : ContentKind::kAssistantTurn, key,
      static_cast<std::uint64_t>(index));
}

Message make_message(Message::Role role, std::uint64_t key, std::size_t index,
                     std::int64_t tokens) {
  Message m;
  m.role = role;
  append_tokens(m.content, message_stream_id(role, key, index), tokens);
  m.content_tokens = total_tokens(m.content);
  return m;
}

std::int64_t number_tokens(std::int64_t n) {
  std::int64_t digits = 1;
  for (std::int64_t v = n < 0 ? -n : n; v >= 10; v /= 10) ++digits;
  return (digits + 2) / 3 + (n < 0 ? 1 : 0);
}

void validate_generation_config(const GenerationConfig& config) {
  std::vector<Diagnostic> errors;
  if (config.num_conversations <= 0) {
    errors.push_back(
        Diagnostic{"", 0, 0, "num_conversations", "num_conversations should be larger than zero"});
  } else if (config.num_conversations > limits::kMaxCount) {
    errors.push_back(Diagnostic{"", 0, 0, "num_conversations",
                                "num_conversations " + std::to_string(config.num_conversations) +
                                    " is past kvsim's limit of " + std::to_string(limits::kMaxCount) +
                                    " (docs/limits.md)"});
  }
  for (const auto& f : named_fields(config)) {
    std::string msg = distribution_error(*f.dist);
    if (msg.empty()) msg = parameter_past_limit(*f.dist, f.limit, f.what);
    if (!msg.empty()) errors.push_back(Diagnostic{"", 0, 0, f.path, msg});
  }
  if (!errors.empty()) throw InputError(std::move(errors));
}

std::vector<Conversation> generate_conversations(const GenerationConfig& config, Rng& rng,
                                                 const PhraseTokens& phrases) {
  validate_generation_config(config);
  const auto n = static_cast<std::size_t>(config.num_conversations);

  // Message counts: at least one user prompt and its answer, rounded up to even.
  const std::vector<NamedDistribution> fields = named_fields(config);
  std::vector<std::int64_t> turn_count = sample_distribution(config.num_turns, n, rng);
  check_samples(fields[0], turn_count);
  std::int64_t messages = 0;
  for (auto& t : turn_count) {
    t = std::max<std::int64_t>(t, 2);
    t += t % 2;
    messages += t;
  }
  // Every message's token list is held in memory for the whole run.
  if (messages > limits::kMaxMessages) {
    throw InputError(Diagnostic{
        "", 0, 0, fields[0].path,
        std::to_string(config.num_conversations) + " conversations of " +
            distribution_repr(config.num_turns) + " messages hold " + std::to_string(messages) +
            " messages, past kvsim's limit of " + std::to_string(limits::kMaxMessages) +
            " generated messages (docs/limits.md)"});
  }
  const std::vector<std::int64_t> prefix_tokens =
      sample_distribution(config.prefix_num_tokens, n, rng);
  check_samples(fields[2], prefix_tokens);
  const std::vector<std::int64_t> common_sample = sample_distribution(config.common_prefix_num_tokens, 1, rng);
  check_samples(fields[1], common_sample);
  const std::int64_t common = common_sample.front();
  // decode(corpus[:common - 2]) + "." re-tokenizes to common - 2 tokens plus the period.
  // (For common == 1 vLLM's slice [:-1] takes the whole corpus; we take the period alone.)
  const std::int64_t common_tokens = common <= 0 ? 0 : std::max<std::int64_t>(common - 2, 0) + 1;
  const std::uint64_t common_stream = content_id(ContentKind::kCommonPrefix, 0);

  std::vector<Conversation> out;
  out.reserve(n);
  for (std::size_t c = 0; c < n; ++c) {
    Conversation conv;
    conv.id = "CONV_ID_" + std::to_string(c);
    const std::uint64_t key = conversation_key(conv.id);
    const auto nturns = static_cast<std::size_t>(turn_count[c]);
    std::vector<std::int64_t> input_tokens = sample_distribution(config.num_tokens, nturns, rng);
    check_samples(fields[3], input_tokens);
    for (auto& v : input_tokens) v = std::max(v, phrases.base_prompt);
    std::vector<std::int64_t> output_tokens =
        sample_distribution(config.output_num_tokens, nturns, rng);
    check_samples(fields[4], output_tokens);
    for (auto& v : output_tokens) v = std::max<std::int64_t>(v, 1);

    const auto cid = static_cast<std::int64_t>(c);
    const std::int64_t nice = number_tokens(cid) + phrases.nice_number_words;
    conv.messages.reserve(nturns);
    for (std::size_t t = 0; t < nturns; ++t) {
      if (t % 2 == 1) {
        conv.messages.push_back(make_message(Message::Role::kAssistant, key, t, output_tokens[t]));
        continue;
      }
      const bool with_common = t == 0 && common_tokens > 0;
      std::int64_t left = input_tokens[t] - (with_common ? common_tokens + nice : nice);
      std::int64_t own = nice;  // tokens of this message's own stream
      if (t == 0 && prefix_tokens[c] > 0)
        own += number_tokens(cid) + phrases.comma_words + prefix_tokens[c];
      own += phrases.base_prompt;
      left -= phrases.base_prompt;
      if (left > 0) own += left;
      Message m;
      m.role = Message::Role::kUser;
      if (with_common) append_tokens(m.content, common_stream, common_tokens);
      append_tokens(m.content, message_stream_id(Message::Role::kUser, key, t), own);
      m.content_tokens = total_tokens(m.content);
      conv.messages.push_back(std::move(m));
    }
    out.push_back(std::move(conv));
  }
  return out;
}

std::vector<std::string> generation_param_lines(const GenerationConfig& config) {
  std::string files;
  for (const auto& f : config.text_files) {
    if (!files.empty()) files += ", ";
    files += f;
  }
  return {"text_files=" + files,
          "input_num_turns=" + distribution_repr(config.num_turns),
          "input_common_prefix_num_tokens=" + distribution_repr(config.common_prefix_num_tokens),
          "input_prefix_num_tokens=" + distribution_repr(config.prefix_num_tokens),
          "input_num_tokens=" + distribution_repr(config.num_tokens),
          "output_num_tokens=" + distribution_repr(config.output_num_tokens)};
}

}  // namespace kvsim::workload
