#pragma once
// The compute model of a scenario (the `compute:` section): which step-time model times its
// engines, built for the scenario's GPU, model, tensor- and data-parallel layout.
//
// compute.kind auto (the default) picks the shipped calibration that matches the scenario: a
// fitted profile (models/profiles/*.yaml) measured on a GPU whose CUDA name is the scenario GPU's
// cuda_name, with the GPU's figures as the catalog gives them, of a model of the same shape, in
// the same weight and KV dtype (BF16), at the same tensor-parallel degree, with an MoE block when
// the model has experts; the roofline otherwise. kind fitted / profile use the named file; when
// it was measured on another GPU, model or degree, its kernel times are rescaled per component
// by the roofline's ratio of the two configurations (models/tensor_parallel_model.hpp), and a
// note says so; a profile that records too little to rescale is refused. A profile fitted to a
// live deployment's measurements (kvsim calibrate --measured: no GPU figures, no model shape)
// describes that deployment and is used as it is.
//
// A dense BF16 model without a fit of its own on a GPU that has fits of other dense models
// (Qwen3-8B on the RTX 4090, whose shipped fit is Llama-3.1-8B's): auto takes the nearest
// model's fit (same degree first, then the closest hidden and intermediate sizes and head size)
// and rescales each kernel component to this model by the roofline's ratio of the two models on
// this GPU, so the GPU's measured efficiencies carry over; its note prints the rescale's
// leave-one-model-out error over the GPU's shipped fits (cross_model_error), or says none can be
// measured. A pinned fit of another model is still refused.
#include <memory>
#include <string>
#include <vector>

#include "models/compute_model.hpp"
#include "models/roofline.hpp"
#include "models/step_overheads.hpp"
#include "sim/scenario/scenario.hpp"

namespace kvsim::cluster {

struct ComputeChoice {
  std::unique_ptr<models::ComputeModel> model;
  models::ComputeKind kind = models::ComputeKind::kRoofline;  // what runs: never kAuto
  std::string source;              // the fitted or profile file, empty for the roofline
  std::string description;         // one line: what was used and why
  std::vector<std::string> notes;  // warnings: rescaled, no match found, ...
};

// Throws InputError (with the scenario's file) for a file that cannot be read or used.
ComputeChoice make_compute_model(const scenario::Scenario& sc);

// Leave-one-model-out: every dense fit in `profiles_dir` measured on the GPU of CUDA name
// `cuda_name` (empty: on any GPU) rescaled to each other dense model fitted on the same GPU at the
// same degree, against that model's own fit, in kernel time of a 128-sequence decode at 1,024
// tokens and a 2,048-token prefill. Fractions; pairs 0 when no GPU has two dense models.
struct CrossModelError {
  int pairs = 0;
  double median_abs = 0;
  double max_abs = 0;
};
CrossModelError cross_model_error(const std::string& profiles_dir, const std::string& cuda_name,
                                  const models::RooflineParams& rp);

// How the scenario's engine launches its kernels: CUDA graph mode from enforce_eager and
// vllm_version, capture sizes from max_num_seqs, async scheduling (models/step_overheads.hpp).
models::GraphPolicy graph_policy(const engine::EngineConfig& e);

// Where the time of two reference steps goes, one line each: a decode of min(128, max_num_seqs)
// sequences at 1,024 tokens of context, and a 2,048-token prefill chunk with nothing cached.
// Kernels (dense, attention, MoE, logits), collectives, GPU overheads, host time and the step.
std::vector<std::string> describe_step_times(const models::ComputeModel& model, const engine::EngineConfig& e);

// The roofline's view of the scenario's GPU for the model's weight dtype.
models::DeviceFigures device_figures(const hw::GpuSpec& gpu, const models::ModelSpec& model);

// A path of the scenario made absolute against the scenario file's folder.
std::string scenario_relative(const scenario::Scenario& sc, const std::string& path);
std::string scenario_dir(const scenario::Scenario& sc);

}  // namespace kvsim::cluster
