#pragma once
// The workload a replay measured, rebuilt for the simulator (kvsim validate): the requests the
// server answered successfully, each with the client that sent it, in the order it was sent, with
// the server's own token counts (usage.prompt_tokens and completion_tokens).
//
// Multi-turn replays (closed loop, workload::ReplayedDriver kClosedLoop):
//   - the first turn of a conversation is the scenario's own first-turn prompt (shared template
//     preamble and common prefix, built by workload::build_turn_request from the same seed's
//     conversations), cut or extended to the measured prompt_tokens;
//   - turn k > 1 is prompt(k - 1) + answer(k - 1) + new tokens, new = P(k) - P(k - 1) - A(k - 1),
//     so its first P(k - 1) + A(k - 1) tokens are exactly the previous request's tokens and
//     vLLM's prefix cache can hit them, as it could on the server. When the measured counts do
//     not grow that way (a template that rewrites history), new is clamped to 1 and a note says
//     how many turns were affected;
//   - each client's requests go in the recorded order; a request waits, after the client's
//     previous one completed, the gap the replay left there (start_time - previous end_ms: the
//     client model's think time plus the harness's overhead; the first one: its start time).
// Trace replays (open loop, kOpenLoop): each request at its recorded send time, with the prompt
// the scenario's trace gives it (same hash blocks), cut or extended to the measured count.
// Failed requests are left out and counted in a note.
#include <string>
#include <vector>

#include "sim/scenario/scenario.hpp"
#include "sim/workload/replayed_driver.hpp"
#include "validation/src/replay_file.hpp"

namespace kvsim::validation {

struct ReplayedWorkload {
  std::vector<workload::ReplayedRequest> requests;  // in send order
  workload::ReplayedDriver::Mode mode = workload::ReplayedDriver::Mode::kClosedLoop;
  std::vector<std::string> notes;
};

// `scenario` supplies the first-turn prompts (multi-turn) or the trace prompts; its workload
// must be the replayed one (the same seed). Throws InputError when the replay has no usable
// request.
ReplayedWorkload rebuild_workload(const ReplayRun& run, const scenario::Scenario& scenario);

// The prompt cut to `tokens`, or extended with `tokens - length` tokens of stream `fill`.
TokenSequence resize_prompt(TokenSequence prompt, std::int64_t tokens, std::uint64_t fill);

}  // namespace kvsim::validation
