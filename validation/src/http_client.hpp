#pragma once
// HTTP for the validation harness, through libcurl: streamed chat completions run concurrently
// on one curl multi handle driven from the caller's thread, and plain requests (/tokenize,
// /metrics) block. Times are nanoseconds on a WallClock (steady clock since its creation).
//
// Per streamed request:
//  - timeouts: connect (libcurl), first token (from the attempt's send to the first non-empty
//    delta.content), idle (longest silence once tokens flow), total (whole attempt);
//  - retries, up to max_retries, after backoff_s x 2^(attempt - 1) seconds, only while no token
//    has been streamed: connection failures (refused, reset, nothing received) and HTTP 5xx. A
//    4xx, a timeout, a protocol error or a failure after tokens were streamed is final;
//  - every failure ends in a StreamOutcome with its error; nothing throws for a server problem.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/units.hpp"
#include "validation/src/chat_stream.hpp"

namespace kvsim::validation {

class WallClock {
 public:
  WallClock() : start_(std::chrono::steady_clock::now()) {}
  SimTime now() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                start_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

struct HttpTimeouts {
  double connect_s = 10;
  double first_token_s = 120;  // the benchmark's --request-timeout-sec default
  double idle_s = 60;
  double total_s = 600;
};

struct RetryPolicy {
  int max_retries = 2;
  double backoff_s = 1.0;  // the benchmark's retry backoff: 1 s x 2^k
};

struct StreamOutcome {
  std::uint64_t id = 0;
  bool ok = false;
  std::string error;     // empty when ok
  long http_status = 0;  // of the last attempt (0: no response)
  int attempts = 0;
  SimTime first_sent = 0;  // first attempt
  SimTime sent = 0;        // the attempt this outcome is about
  SimTime finished = 0;
  ChatResult chat;
};

class StreamingClient {
 public:
  // `base_url` like http://host:port (a trailing slash is dropped).
  StreamingClient(std::string base_url, HttpTimeouts timeouts, RetryPolicy retry,
                  const WallClock& clock);
  ~StreamingClient();
  StreamingClient(const StreamingClient&) = delete;
  StreamingClient& operator=(const StreamingClient&) = delete;

  // Starts POST base_url + path with a JSON body; returns its id.
  std::uint64_t start(const std::string& path, std::string json_body);
  // Drives the transfers for up to `max_wait` ns; returns as soon as some ended, with those.
  std::vector<StreamOutcome> poll(SimTime max_wait);
  // Ends every transfer now with `reason` as its error.
  std::vector<StreamOutcome> abort_all(const std::string& reason);
  std::size_t active() const { return transfers_.size(); }
  // When transfer `id` (still active) received its first token; -1 before that, or when it is
  // not active.
  SimTime first_token(std::uint64_t id) const;

 private:
  struct Transfer;
  void launch(Transfer& t);
  void detach(Transfer& t);
  void finish(Transfer& t, int curl_code, std::vector<StreamOutcome>& out);
  void fail(Transfer& t, std::string error, std::vector<StreamOutcome>& out);
  void check_timeouts(std::vector<StreamOutcome>& out);
  void start_due_retries();

  std::string base_url_;
  HttpTimeouts timeouts_;
  RetryPolicy retry_;
  const WallClock& clock_;
  void* multi_ = nullptr;
  std::uint64_t next_id_ = 1;
  std::map<std::uint64_t, std::unique_ptr<Transfer>> transfers_;
};

struct HttpResponse {
  long status = 0;  // 0: no response
  std::string body;
  std::string error;  // transport error, empty when a response came
};

// GET base_url + path (post_body empty) or POST it with a JSON body; blocks up to timeout_s.
HttpResponse http_get(const std::string& url, double timeout_s);
HttpResponse http_post_json(const std::string& url, const std::string& body, double timeout_s);

}  // namespace kvsim::validation
