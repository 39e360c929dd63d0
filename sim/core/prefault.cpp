#include "sim/core/prefault.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <limits>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace kvsim {

namespace {

#if defined(__linux__)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14 (uapi asm-generic/mman-common.h)
#endif
// Faults in the whole pages inside [p, p + n); false when the kernel does not take the advice.
bool populate(char* p, std::size_t n) {
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t begin = (a + page - 1) & ~(page - 1);
  const std::uintptr_t end = (a + n) & ~(page - 1);
  if (end <= begin) return true;
  // NOLINTNEXTLINE(performance-no-int-to-ptr): the page-aligned address of the owner's memory
  if (madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE) == 0) return true;
  return errno != EINVAL;  // EINVAL: advice unknown to this kernel
}
#else
bool populate(char*, std::size_t) { return false; }
#endif

}  // namespace

PagePrefaulter::PagePrefaulter(void* base, std::size_t bytes, std::size_t window, std::size_t start)
    : base_(static_cast<char*>(base)), bytes_(bytes), window_(std::max<std::size_t>(window, 2)), next_(start) {}

PagePrefaulter::~PagePrefaulter() {
  {
    const std::lock_guard<std::mutex> lock(m_);
    stop_ = true;
  }
  cv_.notify_all();
  if (helper_.joinable()) helper_.join();
}

bool PagePrefaulter::supported() {
#if defined(__linux__)
  // Advice on no pages at all: the kernel still checks that it knows the advice.
  static const bool ok = madvise(nullptr, 0, MADV_POPULATE_WRITE) == 0 || errno != EINVAL;
  return ok;
#else
  return false;
#endif
}

void PagePrefaulter::ask(std::size_t written) {
  const std::size_t upto = std::min(written + window_, bytes_);
  const bool advised = supported();
  // At the region's end, or without the advice, nothing more will be asked.
  next_ = upto >= bytes_ || !advised ? std::numeric_limits<std::size_t>::max() : written + window_ / 2;
  if (!advised) return;
  {
    const std::lock_guard<std::mutex> lock(m_);
    // The first window starts at the written part's end: what is written is resident already.
    if (!helper_.joinable()) done_ = std::min(written, upto);
    target_ = std::max(target_, upto);
  }
  if (!helper_.joinable()) helper_ = std::thread([this] { run(); });
  cv_.notify_all();
}

void PagePrefaulter::wait_idle() {
  std::unique_lock<std::mutex> lock(m_);
  cv_.wait(lock, [this] { return stop_ || done_ >= target_; });
}

void PagePrefaulter::run() {
  // In steps of 2 MiB (one huge page), so that a stop is seen soon.
  constexpr std::size_t kStep = std::size_t{1} << 21;
  std::unique_lock<std::mutex> lock(m_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || done_ < target_; });
    if (stop_) return;
    const std::size_t from = done_;
    const std::size_t to = std::min(target_, from + kStep);
    lock.unlock();
    const bool ok = populate(base_ + from, to - from);
    lock.lock();
    done_ = ok ? to : target_;
    if (done_ >= target_) cv_.notify_all();
  }
}

}  // namespace kvsim
