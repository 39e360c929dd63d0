#pragma once
// The contract between a workload and the simulation. A Driver decides what is sent when:
// the simulation calls start() once at time 0, on_wake() when a timer set with wake_at()
// fires, and on_complete() when a request's last token reaches the client. The Driver
// submits requests through the WorkloadContext, which the simulation implements.
// Contract:
//  - submit() sends the request at ctx.now(); the returned id identifies it in on_complete().
//  - wake_at(t) with t >= now(); timers fire in time order, ties in the order they were set.
//  - the run ends when no request is in flight and no timer is pending.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/tokens.hpp"
#include "sim/core/units.hpp"

namespace kvsim::workload {

// One request as the server receives it.
struct RequestSpec {
  TokenSequence prompt;                  // full prompt, chat template included
  std::int64_t output_tokens = 1;        // forced answer length (min_tokens = max_tokens)
  std::uint64_t output_content_id = 0;   // content stream of the answer (re-sent as history)
  std::int64_t conversation_id = -1;     // -1 for requests without a conversation
  std::string conversation_name;         // e.g. CONV_ID_3
  int client_id = -1;
  int input_num_turns = 0;               // messages sent (the benchmark's len(messages))
  std::int64_t input_num_tokens = 0;     // content tokens, as the benchmark counts them
  bool counted = true;                   // false for the warmup step's requests
};

struct Completion {
  std::uint64_t request_id = 0;
  bool ok = true;
  SimTime sent = 0;
  SimTime first_token = 0;
  SimTime finished = 0;
  std::int64_t output_tokens = 0;
};

class WorkloadContext {
 public:
  virtual ~WorkloadContext() = default;
  virtual SimTime now() const = 0;
  virtual std::uint64_t submit(RequestSpec spec) = 0;
  virtual void wake_at(SimTime t, std::int64_t tag) = 0;
};

class Driver {
 public:
  virtual ~Driver() = default;
  virtual void start(WorkloadContext& ctx) = 0;
  virtual void on_wake(std::int64_t tag, WorkloadContext& ctx) = 0;
  virtual void on_complete(const Completion& c, WorkloadContext& ctx) = 0;
  // Header lines describing the workload (the benchmark prints its parameters).
  virtual std::vector<std::string> describe() const = 0;
  // Names for the blocks of streams that stand for their whole prefix in every prompt this
  // workload sends (FixedPrefixNames, with every prompt's chain registered), or nullptr.
  virtual std::unique_ptr<FixedPrefixNames> prefix_names(std::int64_t /*block_size*/) const { return nullptr; }
};

}  // namespace kvsim::workload
