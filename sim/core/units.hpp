#pragma once
// Simulated time and the unit types every module shares.
// SimTime counts integer nanoseconds from the start of a run; Bytes counts bytes;
// BytesPerSec is a rate in bytes per second. transfer_time() is the one place that
// turns a byte count and a rate into time (rounded up to the next nanosecond).
#include <cmath>
#include <cstdint>
#include <limits>

namespace kvsim {

using SimTime = std::int64_t;  // nanoseconds

inline constexpr SimTime kNanosecond = 1;
inline constexpr SimTime kMicrosecond = 1'000;
inline constexpr SimTime kMillisecond = 1'000'000;
inline constexpr SimTime kSecond = 1'000'000'000;
inline constexpr SimTime kNever = std::numeric_limits<SimTime>::max();

// The simulated clock's limit (sim/core/limits.hpp): 1e9 s, about 31.7 years. A time computed
// from a double saturates at kTimeOverLimit (never wraps); the simulation stops with an error
// when an event would pass kTimeLimit.
inline constexpr SimTime kTimeLimit = 1'000'000'000LL * kSecond;
inline constexpr SimTime kTimeOverLimit = kTimeLimit + 1;

// Nanoseconds as a double to SimTime, rounded to nearest; saturates at +-kTimeOverLimit (NaN
// gives kTimeOverLimit).
inline SimTime saturating_ns(double ns) {
  if (!(ns <= static_cast<double>(kTimeLimit))) return kTimeOverLimit;
  if (!(ns >= -static_cast<double>(kTimeLimit))) return -kTimeOverLimit;
  return static_cast<SimTime>(std::llround(ns));
}

inline constexpr double to_seconds(SimTime t) { return static_cast<double>(t) / 1e9; }
inline constexpr double to_ms(SimTime t) { return static_cast<double>(t) / 1e6; }
inline constexpr double to_us(SimTime t) { return static_cast<double>(t) / 1e3; }
// Rounds to the nearest nanosecond (saturating, as saturating_ns).
inline SimTime from_seconds(double s) { return saturating_ns(s * 1e9); }
inline SimTime from_ms(double ms) { return saturating_ns(ms * 1e6); }
inline SimTime from_us(double us) { return saturating_ns(us * 1e3); }

// A count of bytes.
struct Bytes {
  std::int64_t value = 0;
  constexpr Bytes() = default;
  constexpr explicit Bytes(std::int64_t v) : value(v) {}
  constexpr double as_double() const { return static_cast<double>(value); }
  friend constexpr Bytes operator+(Bytes a, Bytes b) { return Bytes{a.value + b.value}; }
  friend constexpr Bytes operator-(Bytes a, Bytes b) { return Bytes{a.value - b.value}; }
  friend constexpr Bytes operator*(Bytes a, std::int64_t k) { return Bytes{a.value * k}; }
  friend constexpr Bytes operator*(std::int64_t k, Bytes a) { return Bytes{a.value * k}; }
  constexpr Bytes& operator+=(Bytes b) { value += b.value; return *this; }
  constexpr Bytes& operator-=(Bytes b) { value -= b.value; return *this; }
  friend constexpr auto operator<=>(Bytes, Bytes) = default;
};

inline constexpr Bytes kKiB{1024};
inline constexpr Bytes kMiB{1024LL * 1024};
inline constexpr Bytes kGiB{1024LL * 1024 * 1024};

// A rate in bytes per second.
struct BytesPerSec {
  double value = 0.0;
  constexpr BytesPerSec() = default;
  constexpr explicit BytesPerSec(double v) : value(v) {}
  friend constexpr auto operator<=>(BytesPerSec, BytesPerSec) = default;
};

// A rate in floating-point operations per second.
struct FlopsPerSec {
  double value = 0.0;
  constexpr FlopsPerSec() = default;
  constexpr explicit FlopsPerSec(double v) : value(v) {}
  friend constexpr auto operator<=>(FlopsPerSec, FlopsPerSec) = default;
};

// Time to move `bytes` at `rate`, rounded up to the next whole nanosecond (never early);
// saturates at kTimeOverLimit.
inline SimTime transfer_time(Bytes bytes, BytesPerSec rate) {
  if (bytes.value <= 0) return 0;
  const double ns = bytes.as_double() * 1e9 / rate.value;
  return saturating_ns(std::ceil(ns - 1e-9));
}

// Seconds as a double from a work amount and a rate; used by compute models.
inline double seconds_for(double work, double rate_per_s) { return rate_per_s > 0 ? work / rate_per_s : 0.0; }

}  // namespace kvsim
