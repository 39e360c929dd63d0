#include "sim/workload/distributions.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "sim/core/error.hpp"

namespace kvsim::workload {
namespace {

bool finite_all(std::initializer_list<double> xs) {
  return std::all_of(xs.begin(), xs.end(), [](double x) { return std::isfinite(x); });
}

// vLLM caps only when `max` is given and truthy (non-zero).
bool caps(const Distribution& d) { return d.has_max && d.max != 0.0; }

std::int64_t to_count(double x) {
  // Counts beyond 2^62 are meaningless here; clamp so the conversion is defined.
  constexpr double kLimit = 4.6e18;
  return static_cast<std::int64_t>(std::clamp(std::trunc(x), -kLimit, kLimit));
}

// mu and sigma of the underlying normal for the `average` form:
// median/mean = exp(-sigma^2/2) => sigma = sqrt(2 ln(1/r)), mu = ln(A r).
void lognormal_params(const Distribution& d, double& mu, double& sigma) {
  if (d.has_average) {
    const double median = d.average * d.median_ratio;
    sigma = std::sqrt(2.0 * std::log(d.average / median));
    mu = std::log(median);
  } else {
    mu = d.mean;
    sigma = d.sigma;
  }
}

}  // namespace

double round_half_even(double x) {
  const double r = std::round(x);  // halves away from zero
  if (std::fabs(x - std::trunc(x)) == 0.5) return 2.0 * std::round(x / 2.0);
  return r;
}

std::string distribution_error(const Distribution& d) {
  switch (d.kind) {
    case DistKind::kConstant:
      if (!std::isfinite(d.value)) return "constant value must be a finite number";
      return {};
    case DistKind::kUniform:
      if (!finite_all({d.min, d.max})) return "uniform min and max must be finite numbers";
      // bench_dataset.py: assert min_value > 0; assert min_value <= max_value
      if (!(d.min > 0)) return "uniform min must be > 0";
      if (!(d.min <= d.max)) return "uniform min must be <= max";
      return {};
    case DistKind::kLognormal:
      if (d.has_max && !std::isfinite(d.max)) return "lognormal max must be a finite number";
      if (d.has_average) {
        if (!finite_all({d.average, d.median_ratio}))
          return "lognormal average and median_ratio must be finite";
        if (d.average < 1) return "Lognormal average must be positive";
        if (d.median_ratio <= 0 || d.median_ratio >= 1)
          return "median_ratio must be in range (0, 1)";
        return {};
      }
      if (!finite_all({d.mean, d.sigma})) return "lognormal mean and sigma must be finite";
      if (d.mean <= 0 || d.sigma < 0)
        return "Lognormal mean must be positive and sigma must be non-negative";
      return {};
    case DistKind::kZipf:
      if (d.has_max && !std::isfinite(d.max)) return "zipf max must be a finite number";
      // numpy.random.zipf raises ValueError("a <= 1.0")
      if (!std::isfinite(d.alpha) || d.alpha <= 1.0)
        return "zipf alpha must be > 1 (numpy: a <= 1.0)";
      return {};
    case DistKind::kPoisson:
      if (d.has_max && !std::isfinite(d.max)) return "poisson max must be a finite number";
      // numpy.random.poisson raises ValueError("lam < 0") and ("lam value too large")
      if (!std::isfinite(d.alpha) || d.alpha < 0)
        return "poisson alpha must be >= 0 (numpy: lam < 0)";
      if (d.alpha > 1e15) return "poisson alpha is too large (numpy: lam value too large)";
      return {};
  }
  return "unknown distribution";
}

std::vector<std::int64_t> sample_distribution(const Distribution& d, std::size_t n, Rng& rng) {
  KVSIM_ASSERT(distribution_error(d).empty(), "invalid distribution: " + distribution_error(d));
  std::vector<std::int64_t> out;
  out.reserve(n);
  switch (d.kind) {
    case DistKind::kConstant:
      out.assign(n, to_count(d.value));
      break;
    case DistKind::kUniform:
      for (std::size_t i = 0; i < n; ++i) {
        if (d.integer_bounds) {
          // numpy randint(int(min), int(max + 1)): both bounds inclusive
          out.push_back(rng.uniform_int(to_count(d.min), to_count(d.max)));
        } else {
          out.push_back(to_count(rng.uniform_real(d.min, d.max)));
        }
      }
      break;
    case DistKind::kLognormal: {
      double mu = 0, sigma = 0;
      lognormal_params(d, mu, sigma);
      std::vector<double> x(n);
      for (auto& v : x) v = rng.lognormal(mu, sigma);
      if (d.has_average && n > 0) {
        // samples *= average / samples.mean(): the batch mean becomes `average` exactly
        double sum = 0;
        for (const double v : x) sum += v;
        const double scale = d.average / (sum / static_cast<double>(n));
        for (auto& v : x) v *= scale;
      }
      for (const double v : x) {
        const double capped = caps(d) ? std::min(v, d.max) : v;
        out.push_back(to_count(round_half_even(capped)));
      }
      break;
    }
    case DistKind::kZipf:
      for (std::size_t i = 0; i < n; ++i) {
        const double v = static_cast<double>(rng.zipf(d.alpha));
        out.push_back(to_count(caps(d) ? std::min(v, d.max) : v));
      }
      break;
    case DistKind::kPoisson:
      for (std::size_t i = 0; i < n; ++i) {
        const double v = static_cast<double>(rng.poisson(d.alpha));
        out.push_back(to_count(caps(d) ? std::min(v, d.max) : v));
      }
      break;
  }
  return out;
}

std::string python_float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0.0) return std::signbit(v) ? "-0.0" : "0.0";
  // Shortest round-trip digits in scientific form: [-]d[.ddd]e[+-]XX
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));
  const std::size_t epos = sci.find('e');
  std::string_view mant = sci.substr(0, epos);
  const int exp = std::atoi(std::string(sci.substr(epos + 1)).c_str());
  std::string sign;
  if (!mant.empty() && mant.front() == '-') {
    sign.push_back('-');
    mant.remove_prefix(1);
  }
  std::string digits;
  for (const char c : mant) {
    if (c != '.') digits.push_back(c);
  }
  // Built with append calls: GCC 12 misreports -Wrestrict on "literal" + std::string here.
  std::string s = sign;
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      s.append("0.");
      s.append(static_cast<std::size_t>(-exp - 1), '0');
      s.append(digits);
    } else {
      const auto int_len = static_cast<std::size_t>(exp) + 1;
      if (digits.size() <= int_len) {
        s.append(digits);
        s.append(int_len - digits.size(), '0');
        s.append(".0");
      } else {
        s.append(digits, 0, int_len);
        s.push_back('.');
        s.append(digits, int_len, std::string::npos);
      }
    }
    return s;
  }
  s.push_back(digits.front());
  if (digits.size() > 1) {
    s.push_back('.');
    s.append(digits, 1, std::string::npos);
  }
  const int a = std::abs(exp);
  s.append(exp < 0 ? "e-" : "e+");
  if (a < 10) s.push_back('0');
  s.append(std::to_string(a));
  return s;
}

std::string python_number_repr(double v) {
  if (std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 1e16) {
    return std::to_string(static_cast<std::int64_t>(v));
  }
  return python_float_repr(v);
}

std::string distribution_repr(const Distribution& d) {
  const auto num = [](double v) { return python_number_repr(v); };
  const std::string max_repr = d.has_max ? num(d.max) : "None";
  switch (d.kind) {
    case DistKind::kConstant:
      return "Constant[" + num(d.value) + "]";
    case DistKind::kUniform:
      return "UniformDistribution[" + num(d.min) + ", " + num(d.max) + "]";
    case DistKind::kLognormal:
      if (d.has_average) {
        return "LognormalDistribution[" + num(d.average) + ", " +
               python_float_repr(d.median_ratio) + ", " + max_repr + "]";
      }
      return "LognormalDistribution[" + num(d.mean) + ", " + num(d.sigma) + ", " + max_repr + "]";
    case DistKind::kZipf:
      return "ZipfDistribution[" + num(d.alpha) + "]";
    case DistKind::kPoisson:
      return "PoissonDistribution[" + num(d.alpha) + "]";
  }
  return "?";
}

}  // namespace kvsim::workload
