#pragma once
// The request traces kvsim reads, in one model: a Trace is a list of requests (arrival time in
// milliseconds, prompt and answer lengths in tokens, optional prefix-block hash ids of
// `hash_block_tokens` tokens each, optional conversation structure), sorted stably by arrival.
// Formats (docs/workloads.md, section 2, gives each schema, an example and its source):
//   mooncake  Mooncake FAST'25 JSONL, 512-token hash blocks          (mooncake_trace.hpp)
//   bailian   Alibaba Bailian "KVCache in the wild" JSONL, 16-token  (bailian_trace.hpp)
//   azure     Azure LLM inference CSV, 2023 and 2024, no prefix info (azure_trace.hpp)
//   burstgpt  BurstGPT CSV, no prefix info                           (burstgpt_trace.hpp)
//   sharegpt  raw ShareGPT JSON, converted as vLLM's converter does  (sharegpt.hpp)
//   openai    vLLM's OpenAI-messages conversation file               (vllm_input.hpp)
// "auto" detects the format from the file's content (first non-blank line, CSV header, or the
// first key of a JSON list's first object). Every reader throws InputError
// `file:LINE[:COL]: error: <field>: <reason>` for a malformed line or row.
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "sim/core/tokens.hpp"
#include "sim/workload/workload_spec.hpp"

namespace kvsim::workload {

struct TraceRequest {
  double timestamp_ms = 0;  // arrival, milliseconds from the trace start
  std::int64_t input_length = 0;
  std::int64_t output_length = 0;
  std::vector<std::int64_t> hash_ids;  // one per hash block, the last one partial; may be empty
  int line = 0;                        // 1-based line (row) in the file; 0 when not from a line
  std::int64_t conversation = -1;      // conversation/session id, -1 when the format has none
  std::int64_t parent = -1;            // index (in the sorted trace) of the previous turn, -1: none
  int turn = 0;                        // 1-based turn in its conversation; 0 when unknown
};

struct Trace {
  std::string format;         // mooncake | bailian | azure | burstgpt | sharegpt | openai
  std::string source;         // the file it was read from
  int hash_block_tokens = 0;  // tokens per hash id; 0: no prefix information
  std::vector<TraceRequest> requests;
  std::int64_t skipped_rows = 0;  // rows dropped by the format's rule (BurstGPT failures)
};

struct TraceReadOptions {
  TraceFormat format = TraceFormat::kAuto;
  int hash_block_tokens = 0;   // 0: the format's own (Mooncake 512, Bailian 16, conversations 16)
  ShareGptFilter sharegpt;     // filters of vLLM's converter, for raw ShareGPT input
  ChatTemplate chat_template;  // templated prompts of conversation files
};

// The names of the formats read_trace() accepts, "auto" first (trace_format_name of each of
// kTraceFormats).
const std::vector<std::string>& trace_formats();

// The format named `name` (an option's value, e.g. `--trace-format`); throws InputError at
// `where` listing the valid names when there is none.
TraceFormat parse_trace_format(const std::string& name, const std::string& where);

// The format of a trace file by its content (never kAuto); throws InputError when none fits.
TraceFormat detect_trace_format(const std::string& path);

// Reads a trace of any format; `opt.format` kAuto detects it.
Trace read_trace(const std::string& path, const TraceReadOptions& opt = {});

// Which part of a trace to replay and how fast. Times are the trace's own, in seconds.
//   1. keep requests with start_s <= t < start_s + duration_s (duration_s 0: to the end);
//   2. re-base: t' = (t - start_s) * time_scale / rate_scale;
//   3. keep the first max_requests (0: all).
// Parent links into the dropped part become -1 (that turn starts its conversation's window).
struct TraceWindow {
  double time_scale = 1.0;  // multiply inter-arrival times
  double rate_scale = 1.0;  // multiply the request rate (divide times)
  double start_s = 0;
  double duration_s = 0;
  std::int64_t max_requests = 0;
};

// Throws InputError (paths under `prefix`, e.g. "workload.trace") for a bad window.
void validate_window(const TraceWindow& w, const std::string& prefix = "trace");
Trace select(const Trace& trace, const TraceWindow& window);

// Sorts requests stably by timestamp and rewrites `parent` from file positions to positions in
// the sorted order. `parent_by_position[i]` is the file-order index of request i's parent or -1.
// A parent that arrives after its child throws InputError at the child's line.
void sort_trace(Trace& trace, std::vector<std::int64_t> parent_by_position);

// The prompt of request number `index`: one `hash_block_tokens`-token segment of stream
// content_id(kTraceBlock, id) per FULL block that has an id, then the rest (the partial last
// block, and every token when hash_block_tokens is 0) as a stream of its own
// (content_id(kUnique, <trace tail salt>, index)), never shared with another request.
TokenSequence trace_prompt(const TraceRequest& r, std::size_t index, int hash_block_tokens);
// The content ids of trace_prompt()'s whole hash blocks, in order.
std::vector<std::uint64_t> trace_block_streams(const TraceRequest& r, int hash_block_tokens);
// The answer stream of request `index`.
std::uint64_t trace_output_stream(std::size_t index);

}  // namespace kvsim::workload
