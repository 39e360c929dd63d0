#pragma once
// Whether two fits of the same kernel tables are the same fit: a refit on this machine against
// the shipped file, or two machines' calibrations of one bundle.
//
// A fit is not reproducible bit for bit across machines. Each component is solved from its
// normal equations, whose product A^T W A Eigen computes with a blocked matrix product whose
// block sizes follow the CPU's cache sizes (read from cpuid at run time): another cache
// hierarchy sums the same products in another order, and the solution moves by the rounding
// of that order amplified by the system's conditioning. Measured on the RTX 4090 bundle over 48
// cache configurations (L1 16-64 KiB, L2 256 KiB-2 MiB, L3 8-256 MiB; tests/models/
// fitted_model_test.cpp repeats one): the attention coefficients differ by up to 1.4e-11
// relative, the other components not at all. The tolerance below leaves a factor of 70 above
// that and stays five orders of magnitude under a change that matters (one unit in a
// coefficient's 4th significant digit moves a kernel time by 0.01-0.1 %).
//
// The discrete parts of a fit (knees, wave sizes, the decode split) are chosen among grid values
// and must be equal; so must the launch floor, which is read from the tables, not computed.
#include <string>
#include <vector>

#include "models/fitted_model.hpp"

namespace kvsim::models {

// Relative tolerance of a refit's coefficients: |a - b| <= kRefitRelTolerance x max(|a|, |b|).
inline constexpr double kRefitRelTolerance = 1e-9;

// One coefficient on which two fits disagree, named as in the fitted YAML
// ("attention_layer_us[3]", "dense_knee_tokens").
struct FitDifference {
  std::string coefficient;
  double a = 0;
  double b = 0;
};

// Every coefficient of `a` and `b` that disagrees (empty: the same fit). Lists of different
// lengths disagree at their length ("attention_layer_us.size").
std::vector<FitDifference> compare_fits(const FittedCoefficients& a, const FittedCoefficients& b,
                                        double rel_tolerance = kRefitRelTolerance);

// "name: a vs b" lines, one per difference, for a test's or a tool's message.
std::string describe(const std::vector<FitDifference>& differences);

}  // namespace kvsim::models
