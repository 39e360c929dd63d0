#pragma once
// Shared by the libFuzzer targets in this folder (docs/fuzzing.md). A target feeds its input to
// one reader of untrusted text and treats kvsim::InputError as the expected answer to bad
// input. Everything else is a finding: a sanitizer report, a crash, any other exception
// (std::bad_alloc, kvsim::InternalError, ...) escaping LLVMFuzzerTestOneInput, which
// std::terminate turns into an abort that libFuzzer reports with the input, and a hang or an
// allocation past -rss_limit_mb, which libFuzzer reports itself.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "sim/core/error.hpp"

namespace kvsim::fuzz {

inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Runs `body`; a kvsim::InputError is the reader refusing bad input: fine. With
// KVSIM_FUZZ_VERBOSE=1 in the environment it is printed (to see why a seed is refused).
template <class Body>
int expect_input_errors(Body&& body) {
  static const bool verbose = [] {
    const char* v = std::getenv("KVSIM_FUZZ_VERBOSE");
    return v != nullptr && *v != '\0' && *v != '0';
  }();
  try {
    body();
    if (verbose) std::fprintf(stderr, "kvsim fuzz: accepted\n");
  } catch (const kvsim::InputError& e) {
    if (verbose) std::fprintf(stderr, "kvsim fuzz: InputError: %s\n", e.what());
  }
  return 0;
}

// A property the code promises does not hold: print and abort (libFuzzer reports a crash).
[[noreturn]] inline void property_failed(const std::string& what) {
  std::fprintf(stderr, "kvsim fuzz: property failed: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

// An in-memory file (memfd) for readers that take only a path: rewritten with each input and
// read back through /proc/self/fd/N, so nothing is left behind in /tmp and runs in parallel
// do not collide.
class MemFile {
 public:
  MemFile() : fd_(memfd_create("kvsim-fuzz-input", 0)) {
    if (fd_ < 0) {
      std::perror("kvsim fuzz: memfd_create");
      std::abort();
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;

  // Replaces the content; returns the path to open.
  const std::string& write(const std::uint8_t* data, std::size_t size) {
    if (ftruncate(fd_, 0) != 0) std::abort();
    std::size_t done = 0;
    while (done < size) {
      const ssize_t n = pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (n <= 0) std::abort();
      done += static_cast<std::size_t>(n);
    }
    return path_;
  }

 private:
  int fd_;
  std::string path_;
};

}  // namespace kvsim::fuzz
