#include "sim/io/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/core/error.hpp"

namespace kvsim::io {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

double Describe::percentile(double q) const {
  for (const auto& [p, v] : percentiles) {
    if (p == q) return v;
  }
  return kNaN;
}

std::vector<double> benchmark_percentiles(std::size_t n) {
  // process_statistics: percentiles = [0.25, 0.5, 0.75, 0.9], then 0.99 / 0.999 / 0.9999 are
  // appended when len(raw_data) reaches 100 / 1000 / 10000.
  std::vector<double> qs{0.25, 0.5, 0.75, 0.9};
  if (n >= 100) qs.push_back(0.99);
  if (n >= 1000) qs.push_back(0.999);
  if (n >= 10000) qs.push_back(0.9999);
  return qs;
}

double percentile_linear(std::span<const double> sorted, double q) {
  KVSIM_ASSERT(!sorted.empty(), "percentile of an empty sample");
  KVSIM_ASSERT(q >= 0.0 && q <= 1.0, "percentile fraction outside [0, 1]");
  const std::size_t n = sorted.size();
  const double last = static_cast<double>(n - 1);
  // numpy _compute_virtual_index with alpha = beta = 1 (method "linear").
  double h = static_cast<double>(n) * q + (1.0 - q) - 1.0;
  h = std::clamp(h, 0.0, last);
  const double lo_f = std::floor(h);
  const auto lo = static_cast<std::size_t>(lo_f);
  const std::size_t hi = std::min(lo + 1, n - 1);
  const double t = h - lo_f;
  const double a = sorted[lo];
  const double b = sorted[hi];
  const double diff = b - a;
  // numpy _lerp: computed from the upper end when t >= 0.5, so q = 1 gives the maximum exactly.
  return t >= 0.5 ? b - diff * (1.0 - t) : a + diff * t;
}

Describe describe(std::span<const double> values) {
  const auto qs = benchmark_percentiles(values.size());
  return describe(values, qs);
}

Describe describe(std::span<const double> values, std::span<const double> percentiles) {
  Describe d;
  d.count = static_cast<std::int64_t>(values.size());
  d.percentiles.reserve(percentiles.size());
  if (values.empty()) {
    d.mean = d.std = d.min = d.max = kNaN;
    for (const double q : percentiles) d.percentiles.emplace_back(q, kNaN);
    return d;
  }
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  const double n = static_cast<double>(sorted.size());

  // Two passes over the samples in their given order, as pandas' nanops.nanvar does.
  double sum = 0.0;
  for (const double v : values) sum += v;
  d.mean = sum / n;
  if (values.size() < 2) {
    d.std = kNaN;
  } else {
    double sq = 0.0;
    for (const double v : values) sq += (v - d.mean) * (v - d.mean);
    d.std = std::sqrt(sq / (n - 1.0));
  }
  d.min = sorted.front();
  d.max = sorted.back();
  for (const double q : percentiles) d.percentiles.emplace_back(q, percentile_linear(sorted, q));
  return d;
}

}  // namespace kvsim::io
