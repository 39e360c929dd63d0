#include "models/fit_compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kvsim::models {
namespace {

bool close(double a, double b, double rel) {
  if (a == b) return true;
  return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b));
}

void compare_list(const char* name, const std::vector<double>& a, const std::vector<double>& b,
                  double rel, std::vector<FitDifference>& out) {
  if (a.size() != b.size()) {
    out.push_back({std::string(name) + ".size", static_cast<double>(a.size()), static_cast<double>(b.size())});
    return;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!close(a[i], b[i], rel)) out.push_back({std::string(name) + "[" + std::to_string(i) + "]", a[i], b[i]});
  }
}

void compare_exact(const char* name, double a, double b, std::vector<FitDifference>& out) {
  if (a != b) out.push_back({name, a, b});
}

}  // namespace

std::vector<FitDifference> compare_fits(const FittedCoefficients& a, const FittedCoefficients& b,
                                        double rel_tolerance) {
  std::vector<FitDifference> out;
  compare_exact("launch_floor_us", a.launch_floor_us, b.launch_floor_us, out);
  compare_exact("dense_knee_tokens", a.dense_knee_tokens, b.dense_knee_tokens, out);
  compare_exact("dense_step_knee_tokens", a.dense_step_knee_tokens, b.dense_step_knee_tokens, out);
  compare_exact("attention_decode_wave", a.attention_decode_wave, b.attention_decode_wave, out);
  compare_exact("attention_prefill_wave_tokens", a.attention_prefill_wave_tokens,
                b.attention_prefill_wave_tokens, out);
  compare_exact("attention_split_decodes", a.attention_split_decodes, b.attention_split_decodes, out);
  compare_exact("moe_experts_per_wave", a.moe_experts_per_wave, b.moe_experts_per_wave, out);
  compare_list("dense_layer_us", a.dense_layer_us, b.dense_layer_us, rel_tolerance, out);
  compare_list("dense_step_us", a.dense_step_us, b.dense_step_us, rel_tolerance, out);
  compare_list("attention_layer_us", a.attention_layer_us, b.attention_layer_us, rel_tolerance, out);
  compare_list("per_sequence_us", a.per_sequence_us, b.per_sequence_us, rel_tolerance, out);
  compare_list("moe_layer_us", a.moe_layer_us, b.moe_layer_us, rel_tolerance, out);
  return out;
}

std::string describe(const std::vector<FitDifference>& differences) {
  std::string out;
  for (const auto& d : differences) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s: %.17g vs %.17g\n", d.coefficient.c_str(), d.a, d.b);
    out += buf;
  }
  return out;
}

}  // namespace kvsim::models
