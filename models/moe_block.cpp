#include "models/moe_block.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/relative_fit.hpp"
#include "sim/core/error.hpp"

namespace kvsim::models {
namespace {

constexpr int kIrlsRounds = 40;

}  // namespace

std::vector<double> moe_block_features(double tokens, double experts, double experts_per_wave) {
  return {1.0, experts, tokens, std::ceil(experts / experts_per_wave)};
}

MoeBlockFit fit_moe_block(const std::vector<MoePoint>& points) {
  if (points.size() < kMoeTerms) {
    throw InputError("", 0, 0, "moe.csv: the MoE fit needs at least " + std::to_string(kMoeTerms) + " points");
  }
  MoeBlockFit best;
  best.median_abs_rel_error = std::numeric_limits<double>::infinity();
  for (int we = 4; we <= 32; ++we) {
    Samples s;
    for (const auto& p : points) {
      s.x.push_back(moe_block_features(static_cast<double>(p.tokens), static_cast<double>(p.activated_experts), we));
      s.y.push_back(p.time_us);
    }
    const auto coef = weighted_fit(s, kMoeTerms, kIrlsRounds);
    const ErrorSummary e = summarise_errors(relative_errors(s, coef));
    if (e.median < best.median_abs_rel_error) {
      best.us = coef;
      best.experts_per_wave = we;
      best.points = points.size();
      best.median_abs_rel_error = e.median;
      best.max_abs_rel_error = e.max;
    }
  }
  return best;
}

double moe_layer_us(const std::vector<double>& us, double experts_per_wave, const ModelSpec& model,
                    const MoeLayout& layout, double tokens) {
  KVSIM_ASSERT(us.size() == kMoeTerms, "MoE block coefficients");
  const double ep = std::max(layout.expert_parallel_size, 1);
  const double routed = tokens * layout.tokens_factor;
  const double experts = expected_active_experts(model.num_experts, model.num_experts_per_tok, routed) / ep;
  const auto f = moe_block_features(routed / ep, experts, experts_per_wave);
  double t = 0;
  for (std::size_t i = 0; i < kMoeTerms; ++i) t += f[i] * us[i];
  return std::max(0.0, t);
}

}  // namespace kvsim::models
