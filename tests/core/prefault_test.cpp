#include "sim/core/prefault.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <thread>
#include <vector>

namespace kvsim {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

// Anonymous memory, untouched; 4 KiB pages only, so residency is counted page by page.
struct Region {
  explicit Region(std::size_t n) : bytes(n) {
    void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    base = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
    if (base != nullptr) madvise(base, n, MADV_NOHUGEPAGE);
  }
  ~Region() {
    if (base != nullptr) munmap(base, bytes);
  }
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
  // Resident pages in [from, to).
  std::size_t resident(std::size_t from, std::size_t to) const {
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> v((to - from) / page);
    if (mincore(base + from, to - from, v.data()) != 0) return 0;
    std::size_t n = 0;
    for (const unsigned char c : v) n += c & 1U;
    return n;
  }
  std::size_t pages(std::size_t from, std::size_t to) const {
    return (to - from) / static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  }
  char* base = nullptr;
  std::size_t bytes;
};

TEST(PagePrefaulter, FaultsInAWindowAheadOfTheWrittenPartAndNoFurther) {
  if (!PagePrefaulter::supported()) GTEST_SKIP() << "optional: this kernel lacks MADV_POPULATE_WRITE (Linux 5.14)";
  Region r(64 * kMiB);
  ASSERT_NE(r.base, nullptr);
  ASSERT_EQ(r.resident(0, r.bytes), 0U);
  PagePrefaulter pf(r.base, r.bytes, 8 * kMiB);
  pf.written(0);
  pf.wait_idle();
  EXPECT_EQ(r.resident(0, 8 * kMiB), r.pages(0, 8 * kMiB));
  EXPECT_EQ(r.resident(8 * kMiB, r.bytes), 0U);
  // Writing within the first half of the window asks for nothing more.
  pf.written(3 * kMiB);
  pf.wait_idle();
  EXPECT_EQ(r.resident(8 * kMiB, r.bytes), 0U);
  // Past it, the window moves on with the written part.
  pf.written(20 * kMiB);
  pf.wait_idle();
  EXPECT_EQ(r.resident(0, 28 * kMiB), r.pages(0, 28 * kMiB));
  EXPECT_EQ(r.resident(28 * kMiB, r.bytes), 0U);
  // Never past the region's end.
  pf.written(60 * kMiB);
  pf.wait_idle();
  EXPECT_EQ(r.resident(0, r.bytes), r.pages(0, r.bytes));
}

TEST(PagePrefaulter, AsksNothingBeforeItsStartThenFaultsInFromTheWrittenEnd) {
  if (!PagePrefaulter::supported()) GTEST_SKIP() << "optional: this kernel lacks MADV_POPULATE_WRITE (Linux 5.14)";
  Region r(64 * kMiB);
  ASSERT_NE(r.base, nullptr);
  PagePrefaulter pf(r.base, r.bytes, 8 * kMiB, 16 * kMiB);
  pf.written(8 * kMiB);
  pf.wait_idle();
  EXPECT_EQ(r.resident(0, r.bytes), 0U);
  pf.written(16 * kMiB);
  pf.wait_idle();
  EXPECT_EQ(r.resident(0, 16 * kMiB), 0U);  // written by the owner (here: left alone), not asked for
  EXPECT_EQ(r.resident(16 * kMiB, 24 * kMiB), r.pages(16 * kMiB, 24 * kMiB));
  EXPECT_EQ(r.resident(24 * kMiB, r.bytes), 0U);
}

TEST(PagePrefaulter, ChangesNoByte) {
  Region r(16 * kMiB);
  ASSERT_NE(r.base, nullptr);
  // Some pages written before the helper reaches them, the rest left as the kernel gives them.
  for (std::size_t i = 0; i < 4 * kMiB; i += 4096) r.base[i] = static_cast<char>(1 + (i >> 12) % 250);
  {
    PagePrefaulter pf(r.base, r.bytes, 16 * kMiB);
    pf.written(0);
    pf.wait_idle();
  }
  for (std::size_t i = 0; i < 4 * kMiB; i += 4096) {
    ASSERT_EQ(r.base[i], static_cast<char>(1 + (i >> 12) % 250)) << i;
  }
  std::vector<char> zero(4096, 0);
  for (std::size_t i = 4 * kMiB; i < r.bytes; i += 4096) {
    ASSERT_EQ(std::memcmp(r.base + i, zero.data(), zero.size()), 0) << i;
  }
}

TEST(PagePrefaulter, TheHelperStopsWhenItsOwnerGoes) {
  // Destroyed with a window still to fault in: the helper is joined, so no page becomes
  // resident afterwards.
  if (!PagePrefaulter::supported()) GTEST_SKIP() << "optional: this kernel lacks MADV_POPULATE_WRITE (Linux 5.14)";
  Region r(256 * kMiB);
  ASSERT_NE(r.base, nullptr);
  {
    PagePrefaulter pf(r.base, r.bytes, 256 * kMiB);
    pf.written(0);
  }
  const std::size_t after = r.resident(0, r.bytes);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(r.resident(0, r.bytes), after);
}

}  // namespace
}  // namespace kvsim
