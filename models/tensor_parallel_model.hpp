#pragma once
// A compute model for one GPU of a tensor-parallel group (and of a data-parallel MoE deployment),
// built around another compute model: it adds the collective communication to every step and,
// where the inner model was measured on a different configuration (a BF16 profile, another TP
// degree, another GPU or model), rescales its kernel times.
// Seconds; bytes.
//
// Communication per step (Megatron-LM, Shoeybi et al. 2019: each decoder layer ends its
// attention block and its MLP with a row-parallel linear whose partial sums are all-reduced;
// vLLM: RowParallelLinear reduce_results, VocabParallelEmbedding's all-reduce of the masked
// lookup, LogitsProcessor's all-gather of the vocabulary-split logits):
//   communication = (2 x layers + 1) x all_reduce(T x hidden x 2 B)
//                 + all_gather(S x vocab x 2 B)
//                 + the MoE layers' dispatch and combine (ExpertCollectives)
//   all_reduce is vLLM's choice of custom all-reduce or NCCL (hw/collective.hpp).
//   with T the step's new tokens, S its sequences; activations and logits in BF16. The
//   all-reduce and all-gather times come from the caller (hw/collective.hpp: ring algorithm over
//   the real link rates). Compute and communication do not overlap (vLLM runs the collectives on
//   the compute stream between the layers' GEMMs).
//
// Rescaling (when `profiled` and `target` rooflines are given): each kernel component of the
// inner model's breakdown (dense, attention, lm_head) is multiplied by
//   target roofline component / profiled roofline component
// for the same batch: the measured profile keeps the shape it measured (kernel floors, tile
// steps, attention waves) and the roofline carries what changes with the configuration (1/k of
// the FLOPs and weight bytes per GPU, quantized weight bytes, FP8 tensor rate, FP8 KV bytes).
// Overheads are not rescaled. The lm_head component of a fitted model includes the sampler,
// which does not shrink with k: an approximation (the sampler is ~3 us per sequence against a
// ~1.1 ms lm_head on the 4090 profile).
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "models/compute_model.hpp"
#include "models/model_spec.hpp"
#include "models/roofline.hpp"

namespace kvsim::models {

// Seconds of one collective over the group for a message of the given bytes.
using CollectiveTime = std::function<double(double bytes)>;

// The data-parallel ranks of an MoE model pass every MoE layer together (vLLM 0.19's default
// all2all backend, allgather_reducescatter: vllm/distributed/device_communicators/
// all2all.py): each MoE layer all-gathers every rank's hidden states and router logits, runs
// its experts on all of them, and reduce-scatters the result:
//   per step  moe_layers x (all_gather(T x d x (2 hidden + 2 experts) B)
//                           + reduce_scatter(T x d x 2 hidden B))
// over the d ranks, T the tokens of this rank's batch (balanced ranks assumed, as in
// models/compute_model.hpp MoeLayout). BF16 activations and router logits.
struct ExpertCollectives {
  int data_parallel_size = 1;
  CollectiveTime all_gather;      // over the data-parallel ranks
  CollectiveTime reduce_scatter;  // over the data-parallel ranks
};

class TensorParallelModel final : public ComputeModel {
 public:
  // `all_reduce` and `all_gather` may be empty (no communication: k = 1). `profiled` and
  // `target` are both given or both null.
  TensorParallelModel(std::unique_ptr<ComputeModel> inner, const ModelSpec& model,
                      int tensor_parallel_size, CollectiveTime all_reduce,
                      CollectiveTime all_gather, std::unique_ptr<RooflineModel> profiled = nullptr,
                      std::unique_ptr<RooflineModel> target = nullptr, ExpertCollectives experts = {},
                      std::string rescale_note = "");

  StepBreakdown step_time(const BatchShape& batch) const override;
  std::string describe() const override;

  // The communication term of a step (equation above).
  double communication_s(const BatchShape& batch) const;

 private:
  std::unique_ptr<ComputeModel> inner_;
  int tp_;
  double layers_;
  double hidden_;
  double vocab_;
  CollectiveTime all_reduce_;
  CollectiveTime all_gather_;
  std::unique_ptr<RooflineModel> profiled_;
  std::unique_ptr<RooflineModel> target_;
  ExpertCollectives experts_;
  double moe_layers_ = 0;
  double num_experts_ = 0;
  std::string rescale_note_;
};

}  // namespace kvsim::models
