#include "models/roofline_anchor.hpp"

#include <algorithm>
#include <cmath>

#include "models/relative_fit.hpp"

namespace kvsim::models {
namespace {

// The inner compute models time kernels only (overheads: models/step_overheads.hpp).
ProfileParams kernels_only() { return ProfileParams{}; }

RooflineParams kernels_only(const Efficiencies& e) {
  RooflineParams p;
  p.memory_efficiency = e.memory;
  p.gemm_efficiency = e.gemm;
  p.attention_efficiency = e.attention;
  return p;
}

double median(std::vector<double> v) { return summarise_errors(std::move(v)).median; }

}  // namespace

Efficiencies anchor_efficiencies(const FittedCoefficients& profile, const ModelSpec& model, const DeviceFigures& gpu) {
  const FittedModel fitted(profile, model, kernels_only());
  const RooflineModel roof(model, gpu, RooflineParams{}, 1);
  BatchShape decode;
  decode.decode_contexts = {512};
  BatchShape prefill;
  prefill.prefills = {PrefillChunk{2048, 0}};
  BatchShape long_chunk;
  long_chunk.prefills = {PrefillChunk{2048, 8192}};
  const auto fd = fitted.step_time(decode);
  const auto fp = fitted.step_time(prefill);
  const auto fa = fitted.step_time(long_chunk);
  Efficiencies e;
  e.memory = roof.step_time(decode).bytes / ((fd.dense_s + fd.lm_head_s + fd.attention_s) * gpu.memory_bandwidth.value);
  e.gemm = roof.dense_flops(prefill) / (fp.dense_s * gpu.tensor_flops.value);
  const double bf16 = gpu.bf16_flops.value > 0 ? gpu.bf16_flops.value : gpu.tensor_flops.value;
  e.attention = roof.attention_flops(long_chunk) / (fa.attention_s * bf16);
  return e;
}

std::vector<BatchShape> comparison_batches() {
  std::vector<BatchShape> out;
  for (const std::int64_t n : {1, 8, 32, 128, 256}) {
    for (const std::int64_t ctx : {512, 2048, 8192}) {
      BatchShape b;
      b.decode_contexts.assign(static_cast<std::size_t>(n), ctx);
      out.push_back(std::move(b));
    }
  }
  for (const std::int64_t chunk : {128, 512, 2048}) {
    for (const std::int64_t cached : {0, 2048, 8192}) {
      BatchShape b;
      b.prefills = {PrefillChunk{chunk, cached}};
      out.push_back(b);
      b.decode_contexts.assign(32, 2048);  // the same chunk beside 32 decodes
      out.push_back(std::move(b));
    }
  }
  return out;
}

std::vector<CrossError> roofline_against_profile(const Efficiencies& efficiencies, const FittedCoefficients& profile,
                                                 const ModelSpec& model, const DeviceFigures& gpu) {
  const FittedModel fitted(profile, model, kernels_only());
  const RooflineModel roof(model, gpu, kernels_only(efficiencies), 1);
  std::vector<double> abs_d, abs_a, abs_l, abs_k, sig_d, sig_a, sig_l, sig_k;
  auto add = [](std::vector<double>& abs, std::vector<double>& sig, double r, double f) {
    if (!(f > 0)) return;
    abs.push_back(std::abs(r - f) / f);
    sig.push_back((r - f) / f);
  };
  for (const auto& b : comparison_batches()) {
    const auto f = fitted.step_time(b);
    const auto r = roof.step_time(b);
    add(abs_d, sig_d, r.dense_s, f.dense_s);
    add(abs_a, sig_a, r.attention_s, f.attention_s);
    add(abs_l, sig_l, r.lm_head_s, f.lm_head_s);
    add(abs_k, sig_k, r.dense_s + r.attention_s + r.lm_head_s + r.moe_s,
        f.dense_s + f.attention_s + f.lm_head_s + f.moe_s);
  }
  auto signed_median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.empty() ? 0.0 : (v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]));
  };
  return {CrossError{"dense", median(abs_d), signed_median(sig_d)},
          CrossError{"attention", median(abs_a), signed_median(sig_a)},
          CrossError{"lm_head", median(abs_l), signed_median(sig_l)},
          CrossError{"kernels", median(abs_k), signed_median(sig_k)}};
}

}  // namespace kvsim::models
