#pragma once
// Shared helpers for the engine tests: a compute model with a fixed, simple cost, and request
// builders whose tokens are identities (sim/core/tokens.hpp).
#include <algorithm>
#include <cstdint>
#include <string>

#include "models/compute_model.hpp"
#include "sim/core/tokens.hpp"
#include "sim/engine/block_ids.hpp"
#include "sim/engine/request.hpp"

namespace kvsim::engine::testing {

// 1 ms per step plus 1 us per token: simple enough that tests can predict times by hand.
class FixedCompute : public models::ComputeModel {
 public:
  models::StepBreakdown step_time(const models::BatchShape& b) const override {
    models::StepBreakdown out;
    out.dense_s = 1e-3 + 1e-6 * static_cast<double>(b.num_tokens());
    return out;
  }
  std::string describe() const override { return "fixed"; }
};

// A step time that depends on every decode's context as well (1 ms, plus 1 us per token, 10 ns
// per context token and 3 ns per token of the longest context): a step timed with a wrong
// context shows.
class ContextCompute : public models::ComputeModel {
 public:
  models::StepBreakdown step_time(const models::BatchShape& b) const override {
    models::StepBreakdown out;
    std::int64_t sum = 0;
    std::int64_t longest = 0;
    for (const std::int64_t c : b.decode_contexts) {
      sum += c;
      longest = std::max(longest, c);
    }
    out.dense_s = 1e-3 + 1e-6 * static_cast<double>(b.num_tokens());
    out.attention_s = 1e-8 * static_cast<double>(sum) + 3e-9 * static_cast<double>(longest);
    return out;
  }
  std::string describe() const override { return "context"; }
};

// A request whose prompt is the first `prompt_tokens` tokens of `prompt` and whose answer is the
// stream kAssistantTurn of its id (a next turn holds an earlier request's prompt and answer).
inline Request make_turn(std::uint64_t id, const TokenSequence& prompt, std::int64_t prompt_tokens,
                         std::int64_t output, int block_size = 16) {
  TokenSequence seq = prompt;
  append_tokens(seq, content_id(ContentKind::kAssistantTurn, id), output);
  Request r;
  r.id = id;
  r.prompt_tokens = prompt_tokens;
  r.max_output_tokens = output;
  // The engine keys its prefix cache by dense block ids (BlockIds), as Simulation hands them out.
  static BlockIds ids(false);
  r.block_hashes = block_hashes(seq, block_size);
  for (std::uint64_t& h : r.block_hashes) h = ids.intern(h);
  return r;
}

// A request whose prompt is `prompt` tokens of stream `stream` and whose answer is its own stream.
inline Request make_request(std::uint64_t id, std::int64_t prompt, std::int64_t output, std::uint64_t stream,
                            int block_size = 16) {
  TokenSequence seq;
  append_tokens(seq, content_id(ContentKind::kUnique, stream), prompt);
  return make_turn(id, seq, prompt, output, block_size);
}

}  // namespace kvsim::engine::testing
