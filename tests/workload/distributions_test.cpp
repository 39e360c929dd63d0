#include "sim/workload/distributions.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

namespace kvsim::workload {
namespace {

Distribution uniform(double lo, double hi, bool integer = true) {
  Distribution d;
  d.kind = DistKind::kUniform;
  d.min = lo;
  d.max = hi;
  d.has_max = true;
  d.integer_bounds = integer;
  return d;
}

Distribution lognormal_average(double average, double max = 0, bool has_max = false,
                               double ratio = 0.85) {
  Distribution d;
  d.kind = DistKind::kLognormal;
  d.has_average = true;
  d.average = average;
  d.median_ratio = ratio;
  d.max = max;
  d.has_max = has_max;
  return d;
}

double mean_of(const std::vector<std::int64_t>& v) {
  return static_cast<double>(std::accumulate(v.begin(), v.end(), std::int64_t{0})) /
         static_cast<double>(v.size());
}

// vLLM: integer bounds sample numpy randint(min, max + 1), so both bounds occur and nothing else.
TEST(Distributions, UniformIntegerBoundsAreInclusive) {
  Rng rng(1);
  const auto s = sample_distribution(uniform(12, 18), 5000, rng);
  ASSERT_EQ(s.size(), 5000u);
  const std::set<std::int64_t> seen(s.begin(), s.end());
  EXPECT_EQ(seen, (std::set<std::int64_t>{12, 13, 14, 15, 16, 17, 18}));
}

// Real bounds sample uniform(min, max) in [min, max); we truncate like int(): [1.5, 3.5) -> 1,
// 2, 3.
TEST(Distributions, UniformRealBoundsTruncate) {
  Rng rng(2);
  const auto s = sample_distribution(uniform(1.5, 3.5, false), 3000, rng);
  const std::set<std::int64_t> seen(s.begin(), s.end());
  EXPECT_EQ(seen, (std::set<std::int64_t>{1, 2, 3}));
}

// With `average`, the batch is rescaled so its mean is the average exactly, then rounded: a
// batch of one is the average itself, and a batch's rounded mean is within 0.5 of it.
TEST(Distributions, LognormalAverageRescalesTheBatchToTheExactMean) {
  Rng rng(3);
  EXPECT_EQ(sample_distribution(lognormal_average(1000), 1, rng), std::vector<std::int64_t>{1000});
  const auto s = sample_distribution(lognormal_average(1000), 1000, rng);
  EXPECT_NEAR(mean_of(s), 1000.0, 0.5);
  EXPECT_GT(*std::max_element(s.begin(), s.end()), 1500);  // it is a spread, not a constant
}

// The cap applies after the rescale (vLLM: scale to average, then np.minimum, then round): the
// same draws with a cap are min(uncapped, max), and the capped batch mean falls below the average.
TEST(Distributions, LognormalCapAppliesAfterTheRescale) {
  Rng a(4), b(4);
  const auto uncapped = sample_distribution(lognormal_average(1000), 2000, a);
  const auto capped = sample_distribution(lognormal_average(1000, 1100, true), 2000, b);
  ASSERT_EQ(uncapped.size(), capped.size());
  for (std::size_t i = 0; i < capped.size(); ++i)
    EXPECT_EQ(capped[i], std::min<std::int64_t>(uncapped[i], 1100));
  EXPECT_LT(mean_of(capped), 990.0);
}

// median/mean = exp(-sigma^2/2) = median_ratio, so the sample median is about 0.85 * 1000 = 850.
TEST(Distributions, LognormalMedianFollowsTheRatio) {
  Rng rng(5);
  auto s = sample_distribution(lognormal_average(1000), 20001, rng);
  std::nth_element(s.begin(), s.begin() + 10000, s.end());
  EXPECT_NEAR(static_cast<double>(s[10000]), 850.0, 25.0);
}

// mean/sigma form: sigma 0 gives exp(mean) every time; exp(6) = 403.43 rounds to 403.
TEST(Distributions, LognormalMeanSigmaForm) {
  Distribution d;
  d.kind = DistKind::kLognormal;
  d.mean = 6;
  d.sigma = 0;
  Rng rng(6);
  EXPECT_EQ(sample_distribution(d, 3, rng), (std::vector<std::int64_t>{403, 403, 403}));
}

// numpy.round rounds halves to even.
TEST(Distributions, RoundHalfToEven) {
  EXPECT_EQ(round_half_even(0.5), 0.0);
  EXPECT_EQ(round_half_even(1.5), 2.0);
  EXPECT_EQ(round_half_even(2.5), 2.0);
  EXPECT_EQ(round_half_even(3.5), 4.0);
  EXPECT_EQ(round_half_even(2.4999), 2.0);
  EXPECT_EQ(round_half_even(2.5001), 3.0);
}

TEST(Distributions, ConstantRepeatsTheValue) {
  Distribution d;
  d.value = 500;
  Rng rng(7);
  EXPECT_EQ(sample_distribution(d, 4, rng), (std::vector<std::int64_t>(4, 500)));
}

// Zipf and Poisson are capped at `max`; the cap value itself is reached.
TEST(Distributions, ZipfAndPoissonAreCapped) {
  Distribution z;
  z.kind = DistKind::kZipf;
  z.alpha = 1.5;
  z.has_max = true;
  z.max = 10;
  Rng rng(8);
  const auto zs = sample_distribution(z, 2000, rng);
  EXPECT_EQ(*std::min_element(zs.begin(), zs.end()), 1);
  EXPECT_EQ(*std::max_element(zs.begin(), zs.end()), 10);
  Distribution p;
  p.kind = DistKind::kPoisson;
  p.alpha = 50;
  p.has_max = true;
  p.max = 45;
  const auto ps = sample_distribution(p, 2000, rng);
  EXPECT_EQ(*std::max_element(ps.begin(), ps.end()), 45);
  // P(X >= 45) for Poisson(50) is about 0.79: most samples sit at the cap.
  EXPECT_GT(std::count(ps.begin(), ps.end(), 45), 1400);
}

// vLLM caps only `if self.max_val:`, so max 0 means no cap.
TEST(Distributions, MaxZeroDoesNotCap) {
  Distribution z;
  z.kind = DistKind::kZipf;
  z.alpha = 1.2;
  z.has_max = true;
  z.max = 0;
  Rng rng(9);
  const auto zs = sample_distribution(z, 2000, rng);
  EXPECT_GT(*std::max_element(zs.begin(), zs.end()), 1000);
}

// The argument checks of bench_dataset.py (and numpy's for zipf/poisson).
TEST(Distributions, ValidationMirrorsVllm) {
  EXPECT_EQ(distribution_error(uniform(12, 18)), "");
  EXPECT_EQ(distribution_error(uniform(0, 18)), "uniform min must be > 0");
  EXPECT_EQ(distribution_error(uniform(19, 18)), "uniform min must be <= max");
  EXPECT_EQ(distribution_error(lognormal_average(0.5)), "Lognormal average must be positive");
  EXPECT_EQ(distribution_error(lognormal_average(100, 0, false, 1.0)),
            "median_ratio must be in range (0, 1)");
  Distribution ln;
  ln.kind = DistKind::kLognormal;
  ln.mean = 0;
  ln.sigma = 1;
  EXPECT_EQ(distribution_error(ln),
            "Lognormal mean must be positive and sigma must be non-negative");
  Distribution z;
  z.kind = DistKind::kZipf;
  z.alpha = 1.0;
  EXPECT_NE(distribution_error(z), "");
  Distribution p;
  p.kind = DistKind::kPoisson;
  p.alpha = -1;
  EXPECT_NE(distribution_error(p), "");
}

// The reprs the benchmark prints in its parameter header (bench_dataset.py __repr__).
TEST(Distributions, ReprLikeVllm) {
  EXPECT_EQ(distribution_repr(uniform(12, 18)), "UniformDistribution[12, 18]");
  Distribution c;
  c.value = 500;
  EXPECT_EQ(distribution_repr(c), "Constant[500]");
  EXPECT_EQ(distribution_repr(lognormal_average(1000, 5000, true)),
            "LognormalDistribution[1000, 0.85, 5000]");
  EXPECT_EQ(distribution_repr(lognormal_average(1000)), "LognormalDistribution[1000, 0.85, None]");
  Distribution ln;
  ln.kind = DistKind::kLognormal;
  ln.mean = 6;
  ln.sigma = 4;
  ln.has_max = true;
  ln.max = 1500;
  EXPECT_EQ(distribution_repr(ln), "LognormalDistribution[6, 4, 1500]");
  Distribution z;
  z.kind = DistKind::kZipf;
  z.alpha = 1.5;
  EXPECT_EQ(distribution_repr(z), "ZipfDistribution[1.5]");
  Distribution p;
  p.kind = DistKind::kPoisson;
  p.alpha = 2;
  EXPECT_EQ(distribution_repr(p), "PoissonDistribution[2]");
}

// Python's float repr: shortest round-trip digits, fixed in [1e-4, 1e16), else d.ddde+XX.
TEST(Distributions, PythonFloatRepr) {
  EXPECT_EQ(python_float_repr(0.85), "0.85");
  EXPECT_EQ(python_float_repr(0.1), "0.1");
  EXPECT_EQ(python_float_repr(123.0), "123.0");
  EXPECT_EQ(python_float_repr(0.0001), "0.0001");
  EXPECT_EQ(python_float_repr(0.00001), "1e-05");
  EXPECT_EQ(python_float_repr(1e16), "1e+16");
  EXPECT_EQ(python_float_repr(1.5e300), "1.5e+300");
  EXPECT_EQ(python_float_repr(-2.5), "-2.5");
  EXPECT_EQ(python_float_repr(1234567.125), "1234567.125");
  EXPECT_EQ(python_number_repr(500.0), "500");
  EXPECT_EQ(python_number_repr(2.5), "2.5");
}

// The same seed gives the same batch.
TEST(Distributions, Deterministic) {
  Rng a(10), b(10);
  EXPECT_EQ(sample_distribution(lognormal_average(300, 900, true), 50, a),
            sample_distribution(lognormal_average(300, 900, true), 50, b));
}

}  // namespace
}  // namespace kvsim::workload
