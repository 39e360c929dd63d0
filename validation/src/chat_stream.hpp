#pragma once
// Reads the streamed answer of an OpenAI-compatible chat completion (vLLM's
// /v1/chat/completions with "stream": true): Server-Sent Events whose data is a JSON chunk
// {"choices": [{"delta": {"content": "..."}, "finish_reason": ...}], "usage": {...}} and a
// final "data: [DONE]". Records when the first and the last non-empty content arrived (the
// benchmark's TTFT is the first non-empty delta.content), the answer text, the number of content
// chunks and when each arrived, and usage (prompt_tokens, completion_tokens,
// prompt_tokens_details.cached_tokens) when the server sends it. A chunk that is not JSON, an
// {"error": ...} chunk or data after [DONE] is a protocol error: the first one is kept and the
// reader ignores the rest. Times are nanoseconds on the caller's clock.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/units.hpp"
#include "validation/src/sse_parser.hpp"

namespace kvsim::validation {

struct ChatResult {
  bool done = false;  // "data: [DONE]" seen
  std::string content;
  std::int64_t content_chunks = 0;  // chunks with non-empty delta.content
  bool usage_reported = false;
  std::int64_t prompt_tokens = -1;      // usage.prompt_tokens, -1 when not reported
  std::int64_t completion_tokens = -1;  // usage.completion_tokens
  std::int64_t cached_tokens = -1;      // usage.prompt_tokens_details.cached_tokens
  std::string finish_reason;
  std::string error;  // first protocol error, empty when none
  SimTime first_token = -1;
  SimTime last_token = -1;
  std::vector<SimTime> chunk_times;  // arrival of each non-empty content chunk, in order
};

class ChatStreamReader {
 public:
  ChatStreamReader();
  ChatStreamReader(const ChatStreamReader&) = delete;
  ChatStreamReader& operator=(const ChatStreamReader&) = delete;
  // Bytes of the response body received at time `now`.
  void feed(std::string_view bytes, SimTime now);
  const ChatResult& result() const { return result_; }
  ChatResult& result() { return result_; }
  // True when the stream holds bytes of an event that never completed.
  bool has_pending() const { return parser_.has_pending(); }

 private:
  void on_event(const SseEvent& e);
  ChatResult result_;
  SimTime now_ = 0;
  SseParser parser_;
};

// The "error" message of an OpenAI-style error body ({"error": {"message": ...}} or
// {"message": ...}), else the body itself cut to 200 characters.
std::string error_message_of(std::string_view body);

}  // namespace kvsim::validation
