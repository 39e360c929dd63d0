#include "sim/core/rng.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace kvsim {
namespace {

// The same seed and stream name give the same numbers; a different name gives others.
TEST(Rng, NamedStreamsAreReproducibleAndIndependent) {
  RngFactory f(42);
  Rng a = f.stream("clients", 1);
  Rng b = f.stream("clients", 1);
  Rng c = f.stream("clients", 2);
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    EXPECT_NE(x, c.next_u64());
  }
}

// uniform_int covers both bounds and nothing outside them.
TEST(Rng, UniformIntIsInclusive) {
  Rng r(7);
  std::set<std::int64_t> seen;
  for (int i = 0; i < 10000; ++i) {
    const auto v = r.uniform_int(12, 18);
    ASSERT_GE(v, 12);
    ASSERT_LE(v, 18);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 7u);
}

// Sample means converge to the analytic means: exponential(mean) -> mean; poisson(l) -> l;
// lognormal(mu, s) -> exp(mu + s^2/2). Tolerances are several standard errors.
TEST(Rng, DistributionMeansMatchTheory) {
  Rng r(1);
  const int n = 200000;
  double se = 0, sp = 0, spl = 0, sl = 0;
  for (int i = 0; i < n; ++i) {
    se += r.exponential(2.0);
    sp += static_cast<double>(r.poisson(3.5));
    spl += static_cast<double>(r.poisson(40.0));
    sl += r.lognormal(0.5, 0.5);
  }
  EXPECT_NEAR(se / n, 2.0, 0.03);
  EXPECT_NEAR(sp / n, 3.5, 0.03);
  EXPECT_NEAR(spl / n, 40.0, 0.1);
  EXPECT_NEAR(sl / n, std::exp(0.5 + 0.125), 0.02);
}

// Zipf(alpha=2): P(X=1) = 1/zeta(2) = 6/pi^2 = 0.6079.
TEST(Rng, ZipfMassAtOneMatchesZeta) {
  Rng r(3);
  const int n = 200000;
  int ones = 0;
  for (int i = 0; i < n; ++i) ones += r.zipf(2.0) == 1 ? 1 : 0;
  EXPECT_NEAR(static_cast<double>(ones) / n, 6.0 / (M_PI * M_PI), 0.005);
}

}  // namespace
}  // namespace kvsim
