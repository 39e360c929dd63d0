#pragma once
// The MoE block of one decoder layer (router, top-k selection and the fused experts of vLLM's
// FusedMoE) timed from a measured profile: a small linear model fitted to a bundle's moe.csv
// (models/profile_bundle.hpp), used by the fitted and the profile compute models. Microseconds.
//
//   t(T, E) = m0 + m1 E + m2 T + m3 ceil(E / We)
//
//   E  distinct experts the layer activates on this GPU, T tokens it routes per expert-parallel
//      GPU. Each activated expert streams its weights once (m1: memory-bound at small T); each
//      token adds its share of the expert GEMMs (m2: compute-bound at large T); and the Triton
//      fused-MoE kernel launches a fixed number of thread blocks per activated expert, which run
//      in waves over the GPU's SMs: We experts fill one wave (m3 per wave). We is searched
//      among 4 to 32 by the median error. The RTX PRO 6000 profile of Qwen3-30B-A3B shows the
//      waves: a 16-token step costs 57 us with 8 experts and 131 us with 16, more than twice.
//   The fit is a least absolute relative error fit (iteratively reweighted least squares, as
//   the attention fit of models/fitted_model.hpp).
//
// In a served engine (models/compute_model.hpp MoeLayout): of the T_moe = T x tokens_factor
// tokens the layer routes, each of the ep expert-parallel GPUs computes the pairs that fall on
// its E / ep experts: E = E_a(T_moe) / ep (models/model_spec.hpp expected_active_experts) and
// T = T_moe / ep (the same token-expert pairs as T_moe / ep tokens over the whole model's
// experts).
#include <cstddef>
#include <string>
#include <vector>

#include "models/compute_model.hpp"
#include "models/model_spec.hpp"
#include "models/profile_bundle.hpp"

namespace kvsim::models {

inline constexpr std::size_t kMoeTerms = 4;
// Kernels of one MoE block in vLLM's Triton path (vllm/model_executor/layers/fused_moe): the
// router GEMM, top-k softmax, moe_align_block_size, the two expert GEMMs, SiLU-and-mul and the
// weighted sum: the block's launches (models/step_overheads.hpp).
inline constexpr double kMoeBlockKernels = 7;

struct MoeBlockFit {
  std::vector<double> us;       // m0..m3
  double experts_per_wave = 16;  // We
  std::size_t points = 0;
  double median_abs_rel_error = 0;
  double max_abs_rel_error = 0;
};

// The features of t(T, E): 1, E, T, ceil(E / We).
std::vector<double> moe_block_features(double tokens, double experts, double experts_per_wave);

// Fits t(T, E) to the points. Throws InputError when there are fewer points than terms.
MoeBlockFit fit_moe_block(const std::vector<MoePoint>& points);

// One MoE layer's time (us, at least 0) on one GPU of an engine whose own batch has `tokens`
// tokens (the served-engine mapping above).
double moe_layer_us(const std::vector<double>& us, double experts_per_wave, const ModelSpec& model,
                    const MoeLayout& layout, double tokens);

}  // namespace kvsim::models
