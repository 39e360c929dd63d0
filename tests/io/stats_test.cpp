#include "sim/io/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace kvsim::io {
namespace {

// The sample 1..10, worked by hand:
//   mean = 55 / 10 = 5.5
//   squared deviations: 2 * (4.5^2 + 3.5^2 + 2.5^2 + 1.5^2 + 0.5^2) = 2 * 41.25 = 82.5
//   std (ddof = 1) = sqrt(82.5 / 9) = 3.0276503540974917
//   linear percentiles, rank h = q * 9 on the 0-based sorted sample:
//     25%: h = 2.25 -> 3 + 0.25 * (4 - 3) = 3.25
//     50%: h = 4.5  -> 5.5
//     75%: h = 6.75 -> 7.75
//     90%: h = 8.1  -> 9.1
TEST(Describe, OneToTenByHand) {
  const std::vector<double> v{7, 3, 10, 1, 5, 2, 9, 4, 8, 6};  // shuffled: order must not matter
  const Describe d = describe(v);
  EXPECT_EQ(d.count, 10);
  EXPECT_DOUBLE_EQ(d.mean, 5.5);
  EXPECT_NEAR(d.std, std::sqrt(82.5 / 9.0), 1e-15);
  EXPECT_NEAR(d.std, 3.0276503540974917, 1e-15);
  EXPECT_EQ(d.min, 1.0);
  EXPECT_EQ(d.max, 10.0);
  ASSERT_EQ(d.percentiles.size(), 4u);  // n < 100: no 99% column
  EXPECT_EQ(d.percentiles[0].first, 0.25);
  EXPECT_DOUBLE_EQ(d.percentiles[0].second, 3.25);
  EXPECT_EQ(d.percentiles[1].first, 0.5);
  EXPECT_DOUBLE_EQ(d.percentiles[1].second, 5.5);
  EXPECT_EQ(d.percentiles[2].first, 0.75);
  EXPECT_DOUBLE_EQ(d.percentiles[2].second, 7.75);
  EXPECT_EQ(d.percentiles[3].first, 0.9);
  EXPECT_NEAR(d.percentiles[3].second, 9.1, 1e-12);
  EXPECT_DOUBLE_EQ(d.percentile(0.5), 5.5);
  EXPECT_TRUE(std::isnan(d.percentile(0.99)));
}

// The benchmark appends 99% at 100 samples, 99.9% at 1000 and 99.99% at 10000.
TEST(Describe, BenchmarkPercentileThresholds) {
  EXPECT_EQ(benchmark_percentiles(0), (std::vector<double>{0.25, 0.5, 0.75, 0.9}));
  EXPECT_EQ(benchmark_percentiles(99), (std::vector<double>{0.25, 0.5, 0.75, 0.9}));
  EXPECT_EQ(benchmark_percentiles(100), (std::vector<double>{0.25, 0.5, 0.75, 0.9, 0.99}));
  EXPECT_EQ(benchmark_percentiles(999).size(), 5u);
  EXPECT_EQ(benchmark_percentiles(1000), (std::vector<double>{0.25, 0.5, 0.75, 0.9, 0.99, 0.999}));
  EXPECT_EQ(benchmark_percentiles(9999).size(), 6u);
  EXPECT_EQ(benchmark_percentiles(10000),
            (std::vector<double>{0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999}));
}

// 1..100: 99% has rank 0.99 * 99 = 98.01, between 99 and 100 -> 99.01. describe() adds the 99%
// column by itself at n = 100.
TEST(Describe, NinetyNinthOfOneToHundred) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  const Describe d = describe(v);
  ASSERT_EQ(d.percentiles.size(), 5u);
  EXPECT_EQ(d.percentiles[4].first, 0.99);
  EXPECT_NEAR(d.percentiles[4].second, 99.01, 1e-12);
  EXPECT_DOUBLE_EQ(d.mean, 50.5);
}

// The ends of the linear method are the sample's ends, exactly; an interior point of {0, 10}
// at q = 0.3 is 3.
TEST(Describe, PercentileEndsAndInterpolation) {
  const std::vector<double> sorted{0.0, 10.0};
  EXPECT_EQ(percentile_linear(sorted, 0.0), 0.0);
  EXPECT_EQ(percentile_linear(sorted, 1.0), 10.0);
  EXPECT_NEAR(percentile_linear(sorted, 0.3), 3.0, 1e-12);
  const std::vector<double> odd{1.0, 2.0, 4.0};
  EXPECT_EQ(percentile_linear(odd, 0.5), 2.0);          // rank 1 exactly
  EXPECT_DOUBLE_EQ(percentile_linear(odd, 0.75), 3.0);  // rank 1.5: halfway between 2 and 4
}

// One sample: every statistic is that sample except std, which pandas leaves NaN (ddof = 1).
TEST(Describe, OneSampleHasNaNStd) {
  const std::vector<double> v{42.0};
  const Describe d = describe(v);
  EXPECT_EQ(d.count, 1);
  EXPECT_EQ(d.mean, 42.0);
  EXPECT_TRUE(std::isnan(d.std));
  EXPECT_EQ(d.min, 42.0);
  EXPECT_EQ(d.max, 42.0);
  for (const auto& [q, value] : d.percentiles) EXPECT_EQ(value, 42.0) << q;
}

// No samples: count 0 and NaN elsewhere, as pandas reports an empty column.
TEST(Describe, EmptyIsCountZeroAndNaN) {
  const Describe d = describe(std::vector<double>{});
  EXPECT_EQ(d.count, 0);
  EXPECT_TRUE(std::isnan(d.mean));
  EXPECT_TRUE(std::isnan(d.std));
  EXPECT_TRUE(std::isnan(d.min));
  EXPECT_TRUE(std::isnan(d.max));
  ASSERT_EQ(d.percentiles.size(), 4u);
  for (const auto& [q, value] : d.percentiles) EXPECT_TRUE(std::isnan(value)) << q;
}

// A constant sample has std exactly 0 and every percentile equal to the constant.
TEST(Describe, ConstantSample) {
  const std::vector<double> v(7, 2.5);
  const std::vector<double> qs{0.1, 0.9};
  const Describe d = describe(v, qs);
  EXPECT_EQ(d.std, 0.0);
  ASSERT_EQ(d.percentiles.size(), 2u);
  EXPECT_EQ(d.percentiles[0], (std::pair<double, double>{0.1, 2.5}));
  EXPECT_EQ(d.percentiles[1], (std::pair<double, double>{0.9, 2.5}));
}

}  // namespace
}  // namespace kvsim::io
