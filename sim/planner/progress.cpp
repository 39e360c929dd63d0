#include "sim/planner/progress.hpp"

#include <cmath>
#include <cstdio>
#include <string>

namespace kvsim::planner {
namespace {

std::string clock_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  const auto s = static_cast<long long>(std::llround(seconds));
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, (s / 60) % 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
  }
  return buf;
}

}  // namespace

Progress::Progress(std::ostream& os, bool tty, std::int64_t total)
    : os_(os),
      tty_(tty),
      total_(total),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {
  draw(true);
}

void Progress::advance(bool ran, bool failed) {
  const std::lock_guard<std::mutex> lock(mu_);
  ++done_;
  if (ran) ++ran_;
  if (failed) ++failed_;
  draw(done_ == total_);
}

void Progress::finish() {
  const std::lock_guard<std::mutex> lock(mu_);
  if (tty_) os_ << '\n';
  os_.flush();
}

void Progress::draw(bool force) {
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (tty_) {
    if (!force && now - last_draw_ < std::chrono::milliseconds(100)) return;
  } else {
    // Plain lines: at every twentieth of the sweep.
    const std::int64_t line = total_ > 0 ? done_ * 20 / total_ : 0;
    if (!force && line == last_line_) return;
    last_line_ = line;
  }
  last_draw_ = now;
  const double rate = elapsed > 0 ? static_cast<double>(ran_) / elapsed : 0.0;
  const double eta = rate > 0 ? static_cast<double>(total_ - done_) / rate : std::nan("");
  const int width = 30;
  const int filled = total_ > 0 ? static_cast<int>(done_ * width / total_) : width;
  std::string text = "sweep ";
  if (tty_)
    text = "\r[" + std::string(static_cast<std::size_t>(filled), '#') +
           std::string(static_cast<std::size_t>(width - filled), '.') + "] ";
  char buf[160];
  std::snprintf(buf, sizeof buf, "%lld/%lld runs (%lld failed)  %.2f runs/s  elapsed %s  ETA %s",
                static_cast<long long>(done_), static_cast<long long>(total_),
                static_cast<long long>(failed_), rate, clock_text(elapsed).c_str(),
                done_ == total_ ? "0:00" : clock_text(eta).c_str());
  text += buf;
  if (tty_) {
    text += "\033[K";  // clear the rest of the line
    os_ << text;
  } else {
    os_ << text << '\n';
  }
  os_.flush();
}

}  // namespace kvsim::planner
