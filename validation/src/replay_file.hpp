#pragma once
// What `kvsim replay` measured, and its JSON file. The "requests" list holds one object per
// request, in completion order, with the keys of `kvsim run --requests-out`
// (sim/io/sinks.hpp write_requests_json: ttft_ms, tpot_ms, latency_ms, start_time_ms,
// input_num_turns, input_num_tokens, output_num_tokens, ..., prompt_tokens, cached_tokens,
// counted) plus what only a real server shows: the error, send/first-token/last-token/end times
// (ms since the run started), usage as reported, attempts and HTTP status. Times follow the
// benchmark (benchmark_serving_multi_turn.py): TTFT = first non-empty delta.content - send,
// latency = end of stream - send, TPOT = (latency - TTFT) / (output tokens - 1).
#include <cstdint>
#include <string>
#include <vector>

#include "sim/io/results.hpp"
#include "validation/src/prometheus.hpp"

namespace kvsim::validation {

struct ReplayRecord {
  io::RequestRecord request;                // the benchmark's keys and ours (server = 0)
  std::string error;                        // empty for a request that succeeded
  std::int64_t submit_index = 0;            // order in which the client model sent it (0-based)
  std::int64_t conversation_index = -1;     // index in the workload's conversation list, -1: trace
  std::int64_t expected_output_tokens = 0;  // min_tokens = max_tokens sent
  std::int64_t last_user_tokens = 0;        // content tokens of the last user message sent
  double first_token_ms = -1;               // since the run started; -1 when no token came
  double last_token_ms = -1;
  double end_ms = 0;
  bool usage_reported = false;
  std::int64_t usage_prompt_tokens = -1;
  std::int64_t usage_completion_tokens = -1;
  std::int64_t usage_cached_tokens = -1;  // -1 when the server did not report it
  std::int64_t content_chunks = 0;
  int attempts = 1;
  long http_status = 0;
};

struct ReplayRun {
  std::string kvsim_version;
  std::string scenario_file;
  std::string scenario_name;
  std::uint64_t seed = 0;
  std::string workload_kind;  // multi_turn | trace
  std::string url;
  std::string model;
  std::string tokenizer;  // how text was sized
  bool interrupted = false;
  std::string stop_reason;  // why the run ended early, empty when it ran to its end
  std::string run_key;      // the run's key in a results database (kvsim replay --db), or empty
  double duration_s = 0;
  std::vector<std::string> header_lines;  // the workload's parameters (the benchmark's header)
  MetricValues metrics_before;            // /metrics before the first request (empty: none)
  MetricValues metrics_after;
  std::vector<ReplayRecord> records;  // completion order

  std::int64_t failed() const;
};

// One record as a single-line JSON object (the journal format, also used inside the file).
std::string record_json(const ReplayRecord& r);
// The whole run as JSON text.
std::string replay_json(const ReplayRun& run);
// Reads a replay file; throws InputError naming the file (and the JSON path) for bad content.
ReplayRun read_replay_json(const std::string& text, const std::string& file_name);
ReplayRun load_replay(const std::string& path);

}  // namespace kvsim::validation
