#pragma once
// Weighted least squares on relative errors, for fitting step-time models to measured kernel
// times (models/fitted_model.hpp, models/moe_block.hpp). Times are positive; features are any
// real numbers.
#include <cstddef>
#include <vector>

namespace kvsim::models {

// Rows of features with their measured times.
struct Samples {
  std::vector<std::vector<double>> x;
  std::vector<double> y;
};

// Minimises sum w_i ((x_i . a - y_i) / y_i)^2 with w_i = 1 first. With `l1_rounds` > 0 the
// fit is repeated with w_i = 1 / max(|relative error_i|, 1e-3) (iteratively reweighted least
// squares), which moves it toward the least absolute relative error, the robust fit whose
// median error is smallest; a few points far off the model then no longer pull the rest. With
// `trim` > 0, half-way through the rounds the share `trim` of worst points is left out.
// Columns are scaled to unit maximum and the normal equations solved by LDLT, so that features
// of very different size (1 and 10^7 pairs) stay well conditioned.
std::vector<double> weighted_fit(const Samples& s, std::size_t terms, int l1_rounds = 0, double trim = 0);

double dot(const std::vector<double>& a, const std::vector<double>& b);

// |x_i . coef - y_i| / y_i for every row.
std::vector<double> relative_errors(const Samples& s, const std::vector<double>& coef);

// Median and largest of a list of non-negative errors (0 and 0 for an empty list).
struct ErrorSummary {
  double median = 0;
  double max = 0;
};
ErrorSummary summarise_errors(std::vector<double> errors);

}  // namespace kvsim::models
