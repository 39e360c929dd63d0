#pragma once
// Deterministic random numbers. One root seed; each component asks for a named stream,
// so adding a stream never shifts the draws of another. The generator is xoshiro256**
// seeded through SplitMix64; every distribution here is our own code (no std:: distributions),
// so a seed gives the same numbers on every platform and compiler.
#include <cstdint>
#include <string_view>

namespace kvsim {

class Rng {
 public:
  explicit Rng(std::uint64_t seed);

  std::uint64_t next_u64();
  // Uniform in [0, 1) with 53 bits.
  double uniform01();
  // Uniform integer in [lo, hi], both inclusive; unbiased (rejection).
  std::int64_t uniform_int(std::int64_t lo, std::int64_t hi);
  // Uniform real in [lo, hi).
  double uniform_real(double lo, double hi);
  // Exponential with the given mean (inverse CDF).
  double exponential(double mean);
  // Standard normal (Marsaglia polar method, one value cached).
  double normal();
  // exp(N(mu, sigma)).
  double lognormal(double mu, double sigma);
  // Poisson with mean lambda (Knuth for small lambda, PTRS transformed rejection for large).
  std::int64_t poisson(double lambda);
  // Zipf (zeta) distribution with exponent alpha > 1 on {1, 2, ...} (Devroye's rejection method,
  // the algorithm numpy uses).
  std::int64_t zipf(double alpha);

 private:
  std::uint64_t s_[4];
  bool has_spare_ = false;
  double spare_ = 0.0;
};

// 64-bit mixing of a string, stable across platforms (FNV-1a then SplitMix finaliser).
std::uint64_t stable_hash(std::string_view s);

// Derives named streams from one root seed.
class RngFactory {
 public:
  explicit RngFactory(std::uint64_t root_seed) : root_(root_seed) {}
  Rng stream(std::string_view name) const;
  Rng stream(std::string_view name, std::uint64_t index) const;
  std::uint64_t root_seed() const { return root_; }

 private:
  std::uint64_t root_;
};

}  // namespace kvsim
