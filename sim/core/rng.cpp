#include "sim/core/rng.hpp"

#include <cmath>

namespace kvsim {
namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }


}  // namespace

Rng::Rng(std::uint64_t seed) {
  std::uint64_t x = seed;
  for (auto& s : s_) s = splitmix64(x);
}

std::uint64_t Rng::next_u64() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform01() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

std::int64_t Rng::uniform_int(std::int64_t lo, std::int64_t hi) {
  if (hi <= lo) return lo;
  const std::uint64_t range = static_cast<std::uint64_t>(hi - lo) + 1;
  if (range == 0) return static_cast<std::int64_t>(next_u64());
  const std::uint64_t limit = (~std::uint64_t{0}) - ((~std::uint64_t{0}) % range);
  std::uint64_t r = next_u64();
  while (r >= limit) r = next_u64();
  return lo + static_cast<std::int64_t>(r % range);
}

double Rng::uniform_real(double lo, double hi) { return lo + (hi - lo) * uniform01(); }

double Rng::exponential(double mean) { return -mean * std::log1p(-uniform01()); }

double Rng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double u = 0.0, v = 0.0, s = 0.0;
  do {
    u = 2.0 * uniform01() - 1.0;
    v = 2.0 * uniform01() - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  const double f = std::sqrt(-2.0 * std::log(s) / s);
  spare_ = v * f;
  has_spare_ = true;
  return u * f;
}

double Rng::lognormal(double mu, double sigma) { return std::exp(mu + sigma * normal()); }

std::int64_t Rng::poisson(double lambda) {
  if (lambda <= 0.0) return 0;
  if (lambda < 10.0) {
    const double limit = std::exp(-lambda);
    std::int64_t k = 0;
    double p = uniform01();
    while (p > limit) {
      ++k;
      p *= uniform01();
    }
    return k;
  }
  // PTRS (Hormann 1993), as used by numpy for lambda >= 10.
  const double slam = std::sqrt(lambda);
  const double loglam = std::log(lambda);
  const double b = 0.931 + 2.53 * slam;
  const double a = -0.059 + 0.02483 * b;
  const double invalpha = 1.1239 + 1.1328 / (b - 3.4);
  const double vr = 0.9277 - 3.6224 / (b - 2.0);
  while (true) {
    const double u = uniform01() - 0.5;
    const double v = uniform01();
    const double us = 0.5 - std::fabs(u);
    const double k = std::floor((2.0 * a / us + b) * u + lambda + 0.43);
    if (us >= 0.07 && v <= vr) return static_cast<std::int64_t>(k);
    if (k < 0.0 || (us < 0.013 && v > us)) continue;
    if (std::log(v) + std::log(invalpha) - std::log(a / (us * us) + b) <=
        -lambda + k * loglam - std::lgamma(k + 1.0)) {
      return static_cast<std::int64_t>(k);
    }
  }
}

std::int64_t Rng::zipf(double alpha) {
  const double am1 = alpha - 1.0;
  const double b = std::pow(2.0, am1);
  while (true) {
    const double u = 1.0 - uniform01();
    const double v = uniform01();
    const double x = std::floor(std::pow(u, -1.0 / am1));
    if (x > 9.0e18 || x < 1.0) continue;
    const double t = std::pow(1.0 + 1.0 / x, am1);
    if (v * x * (t - 1.0) / (b - 1.0) <= t / b) return static_cast<std::int64_t>(x);
  }
}

std::uint64_t stable_hash(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return splitmix64(h);
}

Rng RngFactory::stream(std::string_view name) const { return stream(name, 0); }

Rng RngFactory::stream(std::string_view name, std::uint64_t index) const {
  std::uint64_t x = root_ ^ stable_hash(name);
  std::uint64_t mixed = splitmix64(x);
  x = mixed ^ (index * 0xD1B54A32D192ED03ULL);
  return Rng(splitmix64(x));
}

}  // namespace kvsim
