#pragma once
// Progress of a sweep on a stream the caller gives (the CLI passes stderr): on a terminal one
// line rewritten in place with \r (done/total, runs per second, ETA); otherwise plain lines,
// about twenty over the sweep. Wall-clock time here is for display only.
#include <chrono>
#include <cstdint>
#include <mutex>
#include <ostream>

namespace kvsim::planner {

class Progress {
 public:
  Progress(std::ostream& os, bool tty, std::int64_t total);
  // One run finished (ran = it was simulated now, not skipped); failed counts those that failed.
  void advance(bool ran, bool failed);
  // Ends the line on a terminal.
  void finish();

 private:
  void draw(bool force);

  std::ostream& os_;
  bool tty_;
  std::int64_t total_;
  std::int64_t done_ = 0;
  std::int64_t ran_ = 0;
  std::int64_t failed_ = 0;
  std::int64_t last_line_ = -1;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  std::mutex mu_;
};

}  // namespace kvsim::planner
