#pragma once
// Descriptive statistics as pandas' DataFrame.describe() computes them, which is what vLLM's
// multi-turn benchmark prints (benchmarks/multi_turn/benchmark_serving_multi_turn.py,
// process_statistics). Values carry whatever unit the caller's samples have.
//
//   mean = sum(x) / n
//   std  = sqrt(sum((x - mean)^2) / (n - 1))        sample deviation, ddof = 1 (pandas default)
//   percentile(q): numpy's default "linear" method (Hyndman & Fan type 7) on the sorted sample:
//     h = n*q + (1 - q) - 1  (= q*(n-1), evaluated as numpy's _compute_virtual_index does)
//     lo = floor(h), hi = min(lo + 1, n - 1), t = h - lo
//     value = x[lo] + (x[hi] - x[lo]) * t   for t <  0.5
//           = x[hi] - (x[hi] - x[lo]) * (1 - t) for t >= 0.5   (numpy's _lerp)
//
// Empty samples give count 0 and NaN everywhere else; one sample gives std NaN (pandas does
// the same: the ddof = 1 estimate is undefined for n < 2). NaN inputs are not supported.
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace kvsim::io {

struct Describe {
  std::int64_t count = 0;
  double mean = 0;
  double std = 0;
  double min = 0;
  double max = 0;
  // (q, value) pairs with q a fraction in [0, 1] (0.25 is the 25% column), in the order asked.
  std::vector<std::pair<double, double>> percentiles;

  // The value for fraction q, or NaN when q was not computed.
  double percentile(double q) const;
};

// The percentile fractions the benchmark asks describe() for, given its sample count:
// 0.25, 0.5, 0.75, 0.9, plus 0.99 if n >= 100, 0.999 if n >= 1000, 0.9999 if n >= 10000.
std::vector<double> benchmark_percentiles(std::size_t n);

// describe() with the benchmark's percentile set for values.size().
Describe describe(std::span<const double> values);
// describe() with explicit percentile fractions (each in [0, 1]).
Describe describe(std::span<const double> values, std::span<const double> percentiles);

// One percentile (fraction q in [0, 1]) of an ascending-sorted, non-empty sample, by the
// linear method above.
double percentile_linear(std::span<const double> sorted, double q);

}  // namespace kvsim::io
