#pragma once
// Sampling of the five numeric distributions of vLLM's multi-turn generation config
// (benchmarks/multi_turn/bench_dataset.py: ConstantDistribution, UniformDistribution,
// LognormalDistribution, ZipfDistribution, PoissonDistribution). Values are token or message
// counts (integers). Like vLLM, a field is sampled as one batch of `n` values
// (Distribution.sample(size=n)), which matters for the lognormal `average` form, whose batch is
// rescaled to the exact average:
//   constant   x = value
//   uniform    integer bounds: x ~ U{min..max} (numpy randint(min, max + 1)); else x ~ U[min, max)
//   lognormal  x = exp(N(mu, sigma)); with `average` A and `median_ratio` r (default 0.85):
//              mu = ln(A r), sigma = sqrt(2 ln(1/r)) (since median/mean = exp(-sigma^2/2)),
//              then x_i *= A / mean(x) over the batch, then x = min(x, max), then rounded half
//              to even (numpy round); else mu = `mean`, sigma = `sigma` of the normal
//   zipf       x ~ Zipf(alpha) on {1, 2, ...}, then min(x, max)
//   poisson    x ~ Poisson(alpha), then min(x, max)
// `max` caps only when present and non-zero (vLLM tests `if self.max_val:`). Draws come from
// kvsim::Rng, not numpy: a seed gives different samples than vLLM with the same distribution.
// Non-integer samples (a real uniform, a non-integer constant) are truncated toward zero, as
// int() would; vLLM itself fails on them when it slices its token corpus.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/rng.hpp"
#include "sim/workload/workload_spec.hpp"

namespace kvsim::workload {

// vLLM's validation of one distribution: the message of the error it raises (ValueError or
// assertion), or an empty string when the distribution is valid. numpy's own argument checks
// (zipf alpha > 1, poisson lambda >= 0) are included, since vLLM would fail on them when sampling.
std::string distribution_error(const Distribution& d);

// `n` samples drawn as one batch, as vLLM's Distribution.sample(size=n). Requires a valid
// distribution (KVSIM_ASSERT otherwise; check with distribution_error first).
std::vector<std::int64_t> sample_distribution(const Distribution& d, std::size_t n, Rng& rng);

// vLLM's __repr__ of the distribution, e.g. "UniformDistribution[12, 18]", "Constant[500]",
// "LognormalDistribution[1000, 0.85, 5000]". Integral values print as Python ints, others as
// Python float reprs (vLLM keeps the JSON type; we keep only the value, so 500.0 prints 500).
std::string distribution_repr(const Distribution& d);

// Python's repr() of a float (shortest round-trip digits, ".0" for integral values, exponent
// outside [1e-4, 1e16)), used by distribution_repr and describe() lines.
std::string python_float_repr(double v);
// A number as Python prints the value read from JSON: an int when integral, else a float repr.
std::string python_number_repr(double v);

// Numpy's round(): to the nearest integer, halves to even.
double round_half_even(double x);

}  // namespace kvsim::workload
