#pragma once
// Profile compute model: the time of one engine step composed from a measured kernel profile
// (models/profile_bundle.hpp), in seconds. Table times are microseconds per decoder layer.
// Equations (docs/calibration.md gives the reasons):
//
//   Let T = new tokens of the step, S = sequences, L = ModelSpec::num_layers.
//   dense      = embedding(T) + final_layernorm(T) + L x sum over layer ops of count x op(T)
//                (op(T): piecewise linear in T between grid points, the last doubling's slope
//                beyond the grid; layernorm counts twice per layer)
//   attention  = L x A, with A from attention.csv (prefill_chunk, kv_prefill, n_decode,
//                kv_decode), interpolated multilinearly in log2 of each coordinate (linearly on
//                a segment that starts at 0), linearly extrapolated beyond the grid's end and
//                clamped at its start. Decodes are timed at one context:
//                  c_eff = mean(c) + alpha x (max(c) - mean(c)), alpha = median of skew_fit.csv
//                Several prefill chunks: the chunk with most query-key pairs is the lead and is
//                timed with all decodes (the mixed grid); each other chunk adds its prefill-only
//                time minus the profile's smallest prefill time (the fixed per-launch part),
//                because vLLM's FlashAttention backend runs every sequence of a step in one
//                varlen kernel launch per layer, so the fixed cost is paid once while each
//                chunk's work adds up.
//   moe        = MoE layers x t(T, E) of models/moe_block.hpp, fitted to the bundle's moe.csv
//                (its grid is triangular, E <= T x top_k, so it is not interpolated)
//   lm_head    = lm_head(S) + sampler(S)                          (once per step)
//   launches   = L x (the layer ops' kernels) + 2 forward (+ kMoeBlockKernels per MoE layer),
//                L attention, kLogitsKernels after the forward pass: counted here, timed by
//                models/step_overheads.hpp with the gaps and host time (the tables hold kernel
//                durations only); gpu_overhead and overhead stay 0 in this model.
//   flops and bytes follow models/roofline.hpp's counts (2 P_d T dense, A x pairs attention,
//                2 hidden vocab S lm_head; weights once plus the KV read and written).
//   An empty batch takes 0.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "models/compute_model.hpp"
#include "models/compute_spec.hpp"
#include "models/model_spec.hpp"
#include "models/moe_block.hpp"
#include "models/profile_bundle.hpp"

namespace kvsim::models {

// A table on a full rectangular grid of up to four axes, interpolated as described above.
class ProfileGrid {
 public:
  static constexpr std::size_t kMaxAxes = 4;
  ProfileGrid() = default;
  explicit ProfileGrid(std::vector<std::vector<double>> axes);

  std::size_t num_axes() const { return axes_.size(); }
  const std::vector<double>& axis(std::size_t i) const { return axes_[i]; }
  // Sets the value at grid coordinates (each must be a grid value); false if not on the grid.
  bool set(const std::array<double, kMaxAxes>& at, double value);
  // True when every grid point has a value.
  bool complete() const;
  double at(const std::array<double, kMaxAxes>& at) const;

 private:
  std::vector<std::vector<double>> axes_;
  std::vector<double> values_;  // row-major, NaN where unset
};

// The per-model factors of add_step_work(), computed once (a model times every engine step).
struct StepWorkTerms {
  explicit StepWorkTerms(const ModelSpec& model);
  double dense_params;  // weights read and multiplied per token
  double attention;     // FLOPs per attention pair: 4 x layers x heads x head_dim
  double lm_head;       // hidden x vocab
  double weight_bytes;  // bytes per weight
  double kv_bytes;      // KV bytes per token
};

// Adds FLOP and byte counts of the batch to `b` (the roofline's counts; models/roofline.hpp).
void add_step_work(const StepWorkTerms& terms, const BatchShape& batch, StepBreakdown& b);
// The same from the batch's sums: attention pairs and KV tokens read.
void add_step_work(const StepWorkTerms& terms, double tokens, double seqs, double pairs, double kv_tokens,
                   StepBreakdown& b);
void add_step_work(const ModelSpec& model, const BatchShape& batch, StepBreakdown& b);

// Decode context used to time a batch of decodes: mean + alpha x (max - mean).
double effective_decode_context(const std::vector<std::int64_t>& contexts, double alpha);

// Step times of one model from a kernel profile; immutable after construction.
class ProfileModel final : public ComputeModel {
 public:
  // Throws InputError when the attention grid is incomplete, num_layers is not positive or a
  // parameter lies outside its range.
  ProfileModel(const ProfileBundle& bundle, ModelSpec model, ProfileParams params = {}, MoeLayout moe = {});

  StepBreakdown step_time(const BatchShape& batch) const override;
  std::string describe() const override;

  // Per-layer attention time (us) of one prefill chunk with `n_decode` decodes at context
  // `kv_decode` (either part may be absent: chunk 0 or n_decode 0).
  double attention_layer_us(double prefill_chunk, double kv_prefill, double n_decode,
                            double kv_decode) const;
  // The eager per-kernel floor (us) and the decode-context blend factor in use.
  double launch_floor_us() const { return launch_floor_us_; }
  double skew_alpha() const { return alpha_; }

 private:
  ModelSpec model_;
  ProfileParams params_;
  StepWorkTerms work_;
  std::string source_;
  std::vector<std::pair<ProfileCurve, int>> layer_ops_;  // curve, count per layer
  std::vector<ProfileCurve> step_ops_;
  ProfileCurve lm_head_;
  ProfileCurve sampler_;
  ProfileGrid prefill_;  // (chunk, kv_prefill)
  ProfileGrid decode_;   // (n_decode, kv_decode)
  ProfileGrid mixed_;    // (chunk, kv_prefill, n_decode, kv_decode)
  MoeLayout moe_layout_;
  MoeBlockFit moe_;  // the MoE block fitted to moe.csv (its grid is triangular: E <= T x top_k)
  double prefill_floor_us_ = 0;
  double launch_floor_us_ = 0;
  double forward_kernels_ = 0;  // launches outside attention per step (models/step_overheads.hpp)
  double alpha_ = 0;
};

}  // namespace kvsim::models
