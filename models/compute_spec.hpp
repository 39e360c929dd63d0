#pragma once
// Which compute model a scenario uses and its parameters (the `compute:` section).
#include <cstdint>
#include <string>

#include "models/step_overheads.hpp"

namespace kvsim::models {

// Efficiencies of the roofline model (models/roofline.hpp states the equations), anchored on
// the two GPUs with measured kernel profiles of the same model (Llama-3.1-8B under vLLM 0.19.0):
// each is the value that makes the roofline's bound equal the kernel time of the model fitted
// to that GPU's tables (models/roofline_anchor.hpp; `kvsim calibrate --roofline`), and the
// default is the mean of the two:
//   memory     0.878 (RTX 4090) and 0.846 (RTX PRO 6000 Server): batch-1 decode streaming the
//              weights; published streams: clpeak 86-91 % on a 4090, 97 % for matvecs on a PRO 6000
//   gemm       0.954 and 0.785: a 2,048-token prefill's dense layers (a measured PyTorch BF16
//              GEMM reaches 417 of the PRO 6000 Server's ~480 TFLOP/s, 0.87)
//   attention  0.773 and 0.574: a 2,048-token chunk after 8,192 cached tokens
// A GPU without a profile of its own uses the means; leaving one GPU out, the other's
// efficiencies predict its kernel times within a median 9-15 % (docs/validation.md).
// The kernel profiles: LLMServingSim (github.com/casys-kaist/LLMServingSim, MIT licence),
// profiler/perf/{RTX4090,RTXPRO6000}/meta-llama/Llama-3.1-8B/bf16, vLLM 0.19.0.
struct RooflineParams {
  double gemm_efficiency = 0.87;       // fraction of dense tensor peak reached by GEMMs
  double attention_efficiency = 0.674;  // fraction of tensor peak reached by attention math
  double memory_efficiency = 0.862;  // fraction of peak memory bandwidth reached by streaming reads
};

// A kernel profile (kind profile) or a model fitted to one (kind fitted). The tables hold kernel
// durations measured in eager mode; what a served engine adds between and around them (CUDA
// graphs, launch gaps, host time) is models/step_overheads.hpp, the same for every kind.
//  - skew_blend true: decodes with unequal contexts are timed at mean + alpha x (max - mean)
//    with alpha the median of the bundle's skew_fit.csv; false uses the mean context alone.
struct ProfileParams {
  std::string bundle_dir;                // profile bundle folder (models/profile_bundle.hpp)
  std::string fitted_path;               // fitted coefficients YAML (models/fitted_model.hpp)
  bool skew_blend = true;          // blend unequal decode contexts toward the maximum
};

// Which compute model times the engine's steps. auto: the shipped calibration matching the
// scenario's GPU, model, dtype and TP degree, the roofline otherwise
// (sim/cluster/compute_factory.hpp); roofline; profile: measured kernel tables; fitted: a
// compact model fitted to them.
enum class ComputeKind : std::uint8_t { kAuto, kRoofline, kProfile, kFitted };

// The scenario's spelling: "auto", "roofline", "profile", "fitted".
constexpr const char* compute_kind_name(ComputeKind k) {
  switch (k) {
    case ComputeKind::kAuto:
      return "auto";
    case ComputeKind::kRoofline:
      return "roofline";
    case ComputeKind::kProfile:
      return "profile";
    case ComputeKind::kFitted:
      return "fitted";
  }
  return "auto";
}

struct ComputeSpec {
  ComputeKind kind = ComputeKind::kAuto;
  RooflineParams roofline;
  ProfileParams profile;  // used by kinds profile and fitted
  StepOverheadParams overheads;  // every kind (models/step_overheads.hpp)
};

}  // namespace kvsim::models
