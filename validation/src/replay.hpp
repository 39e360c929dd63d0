#pragma once
// Replays a scenario's workload against a live OpenAI-compatible server (vLLM's
// /v1/chat/completions), as vLLM's benchmarks/multi_turn/benchmark_serving_multi_turn.py drives
// it. The request stream is the simulator's own: the scenario's Driver (MultiTurnDriver for the
// multi-turn benchmark, TraceDriver for open-loop traces) runs unchanged on a real-time
// WorkloadContext, whose now() is the wall clock since the start, submit() starts a streamed HTTP
// request, wake_at() a timer, and on_complete() reports a request when its stream ends. So the
// conversations (same seed, same token counts), the N closed-loop clients, round-robin or random
// conversation sampling, early stop and --warmup-step are the simulator's by construction.
//
// Each request sends the conversation's messages so far: user texts made to the simulated token
// counts (text_maker.hpp), assistant messages = the server's real earlier answers; "stream":
// true, "temperature": 0, "seed": 0, "min_tokens" = "max_tokens" = the answer length, like the
// benchmark; and "stream_options": {"include_usage": true} (the benchmark sends false: we need
// usage for the server's token counts and cached_tokens). A trace request is one user message
// of its prompt's token count.
// Failed requests are recorded with their error and reported to the driver as failed (the
// benchmark drops that conversation); the run goes on. A stop request (SIGINT) or the time limit
// aborts the requests in flight, records them as such, and returns what was measured.
#include <atomic>
#include <functional>
#include <string>

#include "sim/scenario/scenario.hpp"
#include "validation/src/http_client.hpp"
#include "validation/src/replay_file.hpp"

namespace kvsim::validation {

enum class TokenizeMode { kAuto, kServer, kEstimate };

struct ReplayOptions {
  std::string url;    // e.g. http://127.0.0.1:8000
  std::string model;  // the served model name
  TokenizeMode tokenize = TokenizeMode::kAuto;
  HttpTimeouts timeouts;
  RetryPolicy retry;
  double max_duration_s = 0;  // 0: no limit
  std::string journal_path;   // records appended as JSON lines as they finish ("" = none)
  const std::atomic<bool>* stop = nullptr;  // set (e.g. from a SIGINT handler) to end early
  std::function<void(const std::string&)> progress;  // progress lines (the CLI prints them)
  // Sees each record as its request ends (completion order), after the journal has it: e.g. a
  // results database that commits it at once.
  std::function<void(const ReplayRecord&)> on_record;
};

// Throws InputError unless `url` is http:// or https:// followed by a host.
void check_base_url(const std::string& url);

// Throws InputError for a workload it cannot drive or an unreachable tokenizer when one is
// required; server failures during the run are recorded, not thrown.
ReplayRun run_replay(const scenario::Scenario& scenario, const ReplayOptions& options);

}  // namespace kvsim::validation
