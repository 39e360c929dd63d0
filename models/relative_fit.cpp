#include "models/relative_fit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "sim/core/error.hpp"

namespace kvsim::models {

std::vector<double> weighted_fit(const Samples& s, std::size_t terms, int l1_rounds, double trim) {
  const auto rows = static_cast<Eigen::Index>(s.y.size());
  const auto cols = static_cast<Eigen::Index>(terms);
  Eigen::MatrixXd a(rows, cols);
  for (Eigen::Index r = 0; r < rows; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    KVSIM_ASSERT(s.y[ur] > 0, "fit target must be positive");
    for (Eigen::Index c = 0; c < cols; ++c) {
      a(r, c) = s.x[ur][static_cast<std::size_t>(c)] / s.y[ur];
    }
  }
  Eigen::VectorXd scale(cols);
  for (Eigen::Index c = 0; c < cols; ++c) {
    const double m = a.col(c).cwiseAbs().maxCoeff();
    scale(c) = m > 0 ? m : 1.0;
    a.col(c) /= scale(c);
  }
  Eigen::VectorXd w = Eigen::VectorXd::Ones(rows);
  Eigen::VectorXd sol(cols);
  Eigen::VectorXd keep = Eigen::VectorXd::Ones(rows);
  for (int round = 0; round <= l1_rounds; ++round) {
    const Eigen::MatrixXd aw = (w.array() * keep.array()).matrix().asDiagonal() * a;
    Eigen::MatrixXd normal = a.transpose() * aw;
    normal.diagonal().array() += 1e-12;  // keeps an all-zero column solvable
    sol = normal.ldlt().solve(aw.transpose() * Eigen::VectorXd::Ones(rows));
    const Eigen::VectorXd rel = ((a * sol).array() - 1.0).abs().matrix();
    w = (1.0 / rel.array().max(1e-3)).matrix();
    if (trim > 0 && round == l1_rounds / 2) {
      std::vector<double> sorted(rel.data(), rel.data() + rows);
      std::sort(sorted.begin(), sorted.end());
      const double cut =
          sorted[static_cast<std::size_t>((1.0 - trim) * static_cast<double>(rows - 1))];
      for (Eigen::Index r = 0; r < rows; ++r) keep(r) = rel(r) <= cut ? 1.0 : 0.0;
    }
  }
  std::vector<double> out(terms);
  for (Eigen::Index c = 0; c < cols; ++c) out[static_cast<std::size_t>(c)] = sol(c) / scale(c);
  return out;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

std::vector<double> relative_errors(const Samples& s, const std::vector<double>& coef) {
  std::vector<double> e;
  e.reserve(s.y.size());
  for (std::size_t i = 0; i < s.y.size(); ++i) {
    e.push_back(std::abs(dot(s.x[i], coef) - s.y[i]) / s.y[i]);
  }
  return e;
}

ErrorSummary summarise_errors(std::vector<double> e) {
  ErrorSummary out;
  if (e.empty()) return out;
  std::sort(e.begin(), e.end());
  const std::size_t m = e.size() / 2;
  out.median = e.size() % 2 == 1 ? e[m] : 0.5 * (e[m - 1] + e[m]);
  out.max = e.back();
  return out;
}

}  // namespace kvsim::models
