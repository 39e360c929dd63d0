#pragma once
// What a served vLLM step costs besides its kernels: the time between the kernels, between the
// steps and on the host (docs/models.md "Between the kernels" states every term with its source).
//
// The kernel tables (models/profile_bundle.hpp) hold CUDA kernel durations only: the profiler
// sums each kernel's device interval (LLMServingSim profiler/core/hooks/eager_measurement.py),
// so no launch gap, no graph launch and no host time is in them, and the fitted and roofline
// models are anchored on them. A served engine adds, per step:
//
//   Which kernels run inside a CUDA graph (vLLM 0.19, compilation mode VLLM_COMPILE with
//   cudagraph_mode FULL_AND_PIECEWISE; vllm/config/compilation.py): a step of T <= max capture
//   size (512) tokens replays a captured graph: a decode-only batch one full graph (attention
//   included), any other batch the piecewise graphs between the attention layers, whose
//   attention runs eagerly. A step of more tokens, and every step under enforce_eager, runs
//   eagerly. vLLM 0.10 captures piecewise graphs only. The logits (lm_head) and the sampler
//   run after the graph, eagerly (vllm/v1/worker/gpu_model_runner.py execute_model).
//
//   kernel phase  = max(K + n_graph x graph_gap + n_eager x eager_gap,  n_eager x eager_launch)
//     K the step's kernel time (every component of the inner model's breakdown), n_graph and
//     n_eager the kernels launched inside and outside a graph. graph_gap 0.5 us and eager_gap
//     0.9 us: NVIDIA, "Getting Started with CUDA Graphs" (developer.nvidia.com/blog/cuda-graphs,
//     V100, CUDA 10.1): 2.9 us kernels take 3.8 us each launched back to back on a stream while
//     the host runs ahead, 3.4 us each replayed from a graph. eager_launch 5 us: the host's
//     cost of one launch, measured 4-6 us per launch on an RTX 5070 Ti with CUDA 13
//     (susun-blog.com/blog/pegainfer-3-cuda-graph); PyTorch's dispatcher adds to it, so eager
//     steps of small kernels are host-bound.
//   gpu_overhead  = kernel phase - K + step_gap (async scheduling only)
//     step_gap 160 us: GPU idle between two steps with asynchronous scheduling and CUDA graphs,
//     measured 150-170 us (Llama-2-7B, batch 256, ShareGPT; vllm PR #11133).
//   overhead      = host_step + host_per_sequence x S        (host, S = sequences of the step)
//     the scheduler, input preparation and output processing of one step. Without asynchronous
//     scheduling the GPU waits for it: measured 5-6 ms between two decode steps at batch 256
//     (Llama-2-7B, ShareGPT; vllm issue #10634), which host_step 300 us + 20 us per sequence
//     reproduces (5.4 ms); the split between the two is not measured (docs/models.md shows the
//     sensitivity). With asynchronous scheduling the engine overlaps it with the GPU's step
//     (sim/engine/engine.cpp time_plan).
#include <cstdint>
#include <memory>
#include <string>

#include "models/compute_model.hpp"

namespace kvsim::models {

struct StepOverheadParams {
  // false: the kernel times alone, for a model fitted to measured step times, which hold these
  // terms already (`kvsim calibrate --measured`).
  bool enabled = true;
  double graph_kernel_gap_us = 0.5;  // between two kernels replayed from one CUDA graph
  double eager_kernel_gap_us = 0.9;  // between two kernels launched one by one, host ahead
  double eager_launch_us = 5;        // host time to launch one kernel outside a graph
  double step_gap_us = 160;          // GPU idle between steps under async scheduling
  double host_step_us = 300;         // host time per step (scheduler, inputs, outputs)
  double host_per_sequence_us = 20;  // host time per scheduled sequence
};

// How the engine launches a step's kernels (vLLM's cudagraph_mode).
enum class GraphMode : std::uint8_t {
  kFullAndPiecewise,  // vLLM >= 0.11 default: full graph for decode-only batches
  kPiecewise,         // vLLM 0.10: piecewise graphs only, attention eager
  kEager,             // enforce_eager: no graphs
};

struct GraphPolicy {
  GraphMode mode = GraphMode::kFullAndPiecewise;
  std::int64_t max_capture_tokens = 512;  // larger steps run eagerly
  bool async_scheduling = true;
};

// The launches of one step, by how they run (counted by the inner compute model).
struct StepLaunches {
  double graph = 0;  // kernels replayed from a CUDA graph
  double eager = 0;  // kernels launched one by one
};

// Which of the breakdown's kernels run inside a graph for this batch (equations above).
StepLaunches step_launches(const GraphPolicy& policy, const BatchShape& batch, const StepBreakdown& b);

// Sets b.gpu_overhead_s and b.overhead_s from the kernel counts and times already in `b`
// (equations above). An empty batch is left as it is.
void add_step_overheads(const StepOverheadParams& params, const GraphPolicy& policy, const BatchShape& batch,
                        StepBreakdown& b);

// Throws InputError naming compute.overheads.<key> when a parameter is negative or not finite.
void validate(const StepOverheadParams& params);

// The served step: an inner model's kernel times plus the overheads above. The outermost model
// of every engine (sim/cluster/compute_factory.hpp).
class ServedStepModel final : public ComputeModel {
 public:
  ServedStepModel(std::unique_ptr<ComputeModel> inner, StepOverheadParams params, GraphPolicy policy);
  StepBreakdown step_time(const BatchShape& batch) const override;
  std::string describe() const override;
  const ComputeModel& inner() const { return *inner_; }
  const StepOverheadParams& params() const { return params_; }
  const GraphPolicy& policy() const { return policy_; }

 private:
  std::unique_ptr<ComputeModel> inner_;
  StepOverheadParams params_;
  GraphPolicy policy_;
};

}  // namespace kvsim::models
