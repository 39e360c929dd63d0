#pragma once
// Which compute model a scenario uses and its parameters (the `compute:` section).
#include <string>

namespace kvsim::models {

// Efficiencies of the roofline model (models/roofline.hpp states the equations).
struct RooflineParams {
  double gemm_efficiency = 0.6;       // fraction of dense tensor peak reached by GEMMs
  double attention_efficiency = 0.4;  // fraction of tensor peak reached by attention math
  double memory_efficiency = 0.9;     // fraction of peak memory bandwidth reached by streaming reads
  double step_overhead_us = 400;      // host-side time per engine step not hidden by the GPU
  double per_sequence_overhead_us = 0;  // host-side time per scheduled sequence
};

struct ComputeSpec {
  std::string kind = "roofline";  // roofline (profile and fitted come with calibration)
  RooflineParams roofline;
};

}  // namespace kvsim::models
