#pragma once
// Faults in, on a helper thread, the pages of a large array just ahead of the part written so
// far, so that the kernel's zeroing of fresh pages (and, in a virtual machine, the host's
// backing of them) overlaps the simulation instead of stalling it at each first touch. On the
// Mooncake benchmark the tier entries of an 8 TB store (3.7 million, 89 MB) cost 10-17 % of the
// run in that zeroing (docs/performance.md).
//
// It changes no value: the helper calls madvise(MADV_POPULATE_WRITE), which maps the pages
// writable as a write would but writes nothing, and never touches the memory itself, so the
// owner's reads and writes see what they would without it. Where the kernel lacks that advice
// (before Linux 5.14, or not Linux) it does nothing. A window ahead of the written part is kept
// faulted in, so at most `window` bytes more are resident than written; nothing is asked (and no
// thread started) until `start` bytes are written, so a small run pays nothing.
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>

namespace kvsim {

class PagePrefaulter {
 public:
  // [base, base + bytes) is written from its start; once `start` bytes are written, keep
  // `window` bytes beyond the written part faulted in. The region must outlive this object (the
  // destructor waits for the helper).
  PagePrefaulter(void* base, std::size_t bytes, std::size_t window, std::size_t start = 0);
  ~PagePrefaulter();
  PagePrefaulter(const PagePrefaulter&) = delete;
  PagePrefaulter& operator=(const PagePrefaulter&) = delete;

  // The first `written` bytes are written now. Cheap unless the window must move on (past
  // `start`, once per window / 2 bytes written): then the helper is asked to fault in up to
  // written + window.
  void written(std::size_t written) {
    if (written >= next_) ask(written);
  }
  // Blocks until the helper has faulted in everything asked for so far (tests).
  void wait_idle();
  // Whether this kernel takes the advice (tests).
  static bool supported();

 private:
  void ask(std::size_t written);
  void run();

  char* base_;
  std::size_t bytes_;
  std::size_t window_;
  std::size_t next_;  // owner's thread only: ask again once this much is written
  std::mutex m_;
  std::condition_variable cv_;
  std::size_t target_ = 0;  // guarded by m_: fault in [0, target_)
  std::size_t done_ = 0;    // guarded by m_: faulted in [0, done_)
  bool stop_ = false;       // guarded by m_
  std::thread helper_;      // started on the first ask()
};

}  // namespace kvsim
