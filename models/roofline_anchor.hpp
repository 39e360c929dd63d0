#pragma once
// The roofline's efficiencies measured on a GPU with a kernel profile, and how well one GPU's
// efficiencies predict another GPU's kernels (leave-one-GPU-out). Seconds and fractions.
//
// Anchors (models/roofline.hpp's equations solved for the efficiency, on the fitted profile's
// kernel times with no step overheads):
//   memory     batch-1 decode at 512 tokens of context: the roofline's bytes / (the kernels'
//              time x peak bandwidth)
//   gemm       one 2,048-token prefill chunk: dense FLOPs / (dense time x tensor peak)
//   attention  a 2,048-token chunk after 8,192 cached tokens: attention FLOPs / (attention
//              time x tensor peak)
// The defaults of RooflineParams are the mean of the anchors of the GPUs with a measured profile
// of the same model (RTX 4090 and RTX PRO 6000 Server Edition, Llama-3.1-8B, vLLM 0.19), so a
// GPU without a profile is predicted from both, not from one.
//
// Leave-one-GPU-out: a roofline with one GPU's anchored efficiencies and the other GPU's figures
// times a fixed set of batches (decodes of 1-256 sequences at 512-8,192 tokens of context,
// prefill chunks of 128-2,048 tokens over 0-8,192 cached, mixed steps), and each component and
// the whole kernel time is compared with the other GPU's fitted profile.
#include <string>
#include <vector>

#include "models/compute_model.hpp"
#include "models/compute_spec.hpp"
#include "models/fitted_model.hpp"
#include "models/roofline.hpp"

namespace kvsim::models {

struct Efficiencies {
  double memory = 0;
  double gemm = 0;
  double attention = 0;
};

// The anchors of a fitted profile measured on a GPU with the given figures.
Efficiencies anchor_efficiencies(const FittedCoefficients& profile, const ModelSpec& model, const DeviceFigures& gpu);

// The batches the leave-one-GPU-out comparison times.
std::vector<BatchShape> comparison_batches();

struct CrossError {
  std::string component;  // dense, attention, lm_head, kernels (their sum)
  double median_abs_rel_error = 0;
  double median_signed_rel_error = 0;  // (roofline - profile) / profile
};

// The roofline with `efficiencies` on `gpu` against the fitted profile `profile` of that GPU,
// over comparison_batches().
std::vector<CrossError> roofline_against_profile(const Efficiencies& efficiencies, const FittedCoefficients& profile,
                                                 const ModelSpec& model, const DeviceFigures& gpu);

}  // namespace kvsim::models
