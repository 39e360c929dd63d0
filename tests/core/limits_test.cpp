// Saturating time arithmetic (sim/core/limits.hpp, units.hpp): times computed from doubles
// and sums of times stop at kTimeOverLimit instead of wrapping.
#include "sim/core/limits.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kvsim {
namespace {

TEST(Limits, TimesFromDoublesSaturateInsteadOfWrapping) {
  EXPECT_EQ(from_seconds(1.5), 1'500'000'000);
  EXPECT_EQ(from_seconds(1e10), kTimeOverLimit);  // past 1e9 s
  EXPECT_EQ(from_seconds(1e300), kTimeOverLimit);
  EXPECT_EQ(from_seconds(std::numeric_limits<double>::infinity()), kTimeOverLimit);
  EXPECT_EQ(from_seconds(std::nan("")), kTimeOverLimit);
  EXPECT_EQ(from_ms(-1e300), -kTimeOverLimit);
  EXPECT_EQ(from_us(2.0), 2000);
  // 1 GB at 1 B/s is 1e9 s: just at the limit; 2 GB is past it.
  EXPECT_EQ(transfer_time(Bytes{1'000'000'000}, BytesPerSec{1.0}), kTimeLimit);
  EXPECT_EQ(transfer_time(Bytes{2'000'000'000}, BytesPerSec{1.0}), kTimeOverLimit);
  EXPECT_EQ(transfer_time(Bytes{1000}, BytesPerSec{1e9}), 1000);
}

TEST(Limits, SaturatingAddStopsAtTheLimit) {
  EXPECT_EQ(limits::saturating_add(5, 7), 12);
  EXPECT_EQ(limits::saturating_add(kTimeLimit, 1), kTimeOverLimit);
  EXPECT_EQ(limits::saturating_add(kTimeLimit - 1, 1), kTimeLimit);
  EXPECT_EQ(limits::saturating_add(1, kNever), kTimeOverLimit);
  EXPECT_EQ(limits::saturating_add(kTimeOverLimit, 0), kTimeOverLimit);
  // The limits leave room: the clock plus the longest duration is far inside int64.
  EXPECT_LT(static_cast<double>(kTimeLimit) + static_cast<double>(limits::kMaxDuration),
            static_cast<double>(std::numeric_limits<SimTime>::max()) / 4);
}

}  // namespace
}  // namespace kvsim
