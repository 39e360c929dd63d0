#pragma once
// Which compute model a scenario uses and its parameters (the `compute:` section).
#include <cstdint>
#include <string>

namespace kvsim::models {

// Efficiencies of the roofline model (models/roofline.hpp states the equations), anchored on
// the two GPUs with measured kernel profiles of the same model (Llama-3.1-8B under vLLM 0.19.0):
// each is the value that makes the roofline's bound equal the kernel time of the model fitted
// to that GPU's tables (models/roofline_anchor.hpp; `kvsim calibrate --roofline`), and the
// default is the mean of the two:
//   memory     0.892 (RTX 4090) and 0.873 (RTX PRO 6000 Server): batch-1 decode streaming the
//              weights; published streams: clpeak 86-91 % on a 4090, 97 % for matvecs on a PRO 6000
//   gemm       0.954 and 0.785: a 2,048-token prefill's dense layers (a measured PyTorch BF16
//              GEMM reaches 417 of the PRO 6000 Server's ~480 TFLOP/s, 0.87)
//   attention  0.773 and 0.574: a 2,048-token chunk after 8,192 cached tokens
// A GPU without a profile of its own uses the means; leaving one GPU out, the other's
// efficiencies predict its kernel times within a median 10-16 % (docs/validation.md). Overheads:
//  - step overheads 300 + 1,000 us: published single-request decode on a 4090 is ~55-57 tok/s
//    (docs/sources.md A3), ~17.5-18 ms per step against ~16.6 ms of kernels, so ~1.3 ms per step
//    is time outside the kernels. We split it into a GPU-side part (CUDA graph launch,
//    end-of-step synchronisation, sampled tokens copied to the host: 300 us, an assumption) that
//    async scheduling cannot hide, and a host-side part (scheduling, input preparation, output
//    processing: 1,000 us) that it hides while the GPU is busy.
//  - per sequence 1 us: the 4090 profile's sampler grows from 25 us (1 sequence) to 311 us
//    (256), ~1.1 us per sequence (per_sequence.csv).
// The kernel profiles: LLMServingSim (github.com/casys-kaist/LLMServingSim, MIT licence),
// profiler/perf/{RTX4090,RTXPRO6000}/meta-llama/Llama-3.1-8B/bf16, vLLM 0.19.0.
struct RooflineParams {
  double gemm_efficiency = 0.87;       // fraction of dense tensor peak reached by GEMMs
  double attention_efficiency = 0.674;  // fraction of tensor peak reached by attention math
  double memory_efficiency = 0.883;  // fraction of peak memory bandwidth reached by streaming reads
  double gpu_step_overhead_us = 300;  // GPU-side time per step outside the kernels
  double step_overhead_us = 1000;  // host-side time per engine step (hidden by async scheduling)
  double per_sequence_overhead_us = 1;  // time per scheduled sequence (sampler, input preparation)
};

// How a kernel profile taken in eager mode maps onto a served engine (models/profile_model.hpp
// states the equations; docs/calibration.md gives the reasons for the defaults):
//  - cuda_graph_decode_factor 0.5: a pure-decode batch runs as one captured CUDA graph in vLLM
//    V1, which removes the CPU launch gap between kernels but not the kernels' own minimum run
//    time; we take half of the eager per-kernel floor (the profile's smallest op, ~1.85 us) as
//    removed for every dense and attention kernel of the step.
//  - gpu_step_overhead_us 300 and step_overhead_us 1,000: the same split as RooflineParams
//    (above): GPU-side per-step time outside the kernels, and host-side time per step that
//    async scheduling hides while the GPU is busy.
//  - skew_blend true: decodes with unequal contexts are timed at mean + alpha x (max - mean)
//    with alpha the median of the bundle's skew_fit.csv; false uses the mean context alone.
struct ProfileParams {
  std::string bundle_dir;                // profile bundle folder (models/profile_bundle.hpp)
  std::string fitted_path;               // fitted coefficients YAML (models/fitted_model.hpp)
  double cuda_graph_decode_factor = 0.5;  // fraction of the eager launch floor removed, [0, 1]
  double gpu_step_overhead_us = 300;     // GPU-side time per step outside the kernels
  double step_overhead_us = 1000;  // host-side time per engine step (hidden by async scheduling)
  bool skew_blend = true;          // blend unequal decode contexts toward the maximum
  // Decode-only steps run as one full CUDA graph (vLLM >= 0.11, FULL_AND_PIECEWISE): the launch
  // floor is removed from every dense, attention and MoE kernel. false: piecewise graphs only
  // (vLLM 0.10), whose attention runs eagerly: the floor is removed from the dense and MoE
  // kernels only. Set from engine.vllm_version; engine.enforce_eager removes nothing.
  bool full_cuda_graphs = true;
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
};

}  // namespace kvsim::models
