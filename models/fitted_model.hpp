#pragma once
// Fitted compute model: a few linear terms per component, fitted by weighted least squares
// (Eigen, each row divided by its measured time so that relative errors are minimised) to the
// grid points of a kernel profile bundle (models/profile_bundle.hpp). Coefficients are in
// microseconds per unit of their feature; step times come out in seconds.
//
//   Let T = new tokens of the step, S = sequences, L = ModelSpec::num_layers.
//   dense per layer (the bundle's layer ops: 2 x layernorm, qkv, rotary, o, gate_up, act, down
//   for Llama; Qwen3 adds qk_norm; an MoE model has no gate_up, act, down: its MLP is the MoE
//   block below), with T128 and T256 the tokens rounded up to multiples of 128 and 256:
//       a0 + a1 T + a2 max(0, T128 - K) + a3 max(0, T256 - K)
//     a GEMM streams its weights whatever T is (the floor a0, a small slope a1 below the knee)
//     and becomes compute-bound past the roofline ridge; there it computes whole tiles of
//     tokens, so the profile climbs in steps at multiples of 128 and 256 tokens. K is chosen
//     among the grid's token counts by the smallest median error of the least absolute
//     relative error fit (as the attention fit below, without trimming).
//   dense per step (embedding + final_layernorm):
//       b0 + b1 T + b2 [T <= 16] + b3 [T <= 16] T + b4 max(0, T - Ks)
//     vLLM's embedding lookup runs another kernel up to 16 tokens (both measured GPUs: 3.1 us
//     at 1 token rising to 6.6 us at 16, 2.9 us at 20 on the RTX PRO 6000), and the final norm
//     turns bandwidth-bound past a knee Ks (searched like K).
//   attention per layer. The profile's attention kernel (FlashAttention varlen in vLLM) runs
//   one thread block per query block and head, each streaming its sequence's whole KV, so the
//   kernel time is set by waves of blocks over the SMs and by the longest sequence, not by the
//   total work alone. With a prefill in the step (n decodes with contexts summing to D, mean
//   m = D / n; chunks of `new` tokens over `cached`):
//       e0 + e1 sum new + e2 sum pairs + e3 sum cached + e4 n + e5 ceil(n / Wd) m
//          + e6 sum ceil(new / Wp) (cached + new / 2) + e7 longest context + e8 n^2 m + e13 D
//          + e14 n sum new + e15 [n >= Ns] m
//     (launch; K/V writes; causal query-key pairs new x cached + new (new + 1) / 2;
//     cached-context reads; per-decode blocks; decode waves of Wd decodes; prefill waves of Wp
//     new tokens; the longest sequence's stream; KV traffic beyond the L2 cache when many
//     decodes stream at once; the decodes' KV bytes; the prefill's query blocks scheduled
//     against the decodes' blocks; the kernel's split of the decodes' KV, which changes at Ns
//     decodes). Decode-only steps (vLLM's split-KV decode path) have their own terms:
//       e9 + e10 n + e11 D + e12 longest context
//     Wd, Wp and Ns are chosen among {1, 2, 4, 8} decodes, {64, 128, 256, 512} tokens and
//     {16, 32, 64} decodes by the smallest median error (profiles fitted before e14 and e15
//     existed read with both 0).
//     The attention fit is a trimmed least absolute relative error fit: iteratively reweighted
//     least squares (weights 1 / |relative error|), and half-way the 10 % worst points are left
//     out. The table holds steps from kernel-tile and split choices (9.4 -> 13.0 us from 64 to
//     128 tokens of context) and a cliff at 128 decodes of >= 2k context that no smooth model
//     follows; a squared-error fit lets them pull every other point.
//   MoE block per MoE layer (router, top-k and the fused experts; a bundle's moe.csv):
//       m0 + m1 E + m2 T + m3 ceil(E / We)            (models/moe_block.hpp)
//   lm_head + sampler per step:  c0 + c1 S
//   launches: as in models/profile_model.hpp; gaps and host time: models/step_overheads.hpp.
// Sum over the components as in ComputeModel; an empty batch takes 0.
#include <cstddef>
#include <optional>
#include <string>
#include <span>
#include <vector>

#include "models/compute_model.hpp"
#include "models/compute_spec.hpp"
#include "models/model_spec.hpp"
#include "models/moe_block.hpp"
#include "models/profile_bundle.hpp"
#include "models/profile_model.hpp"

namespace kvsim::models {

// An offload tier's load path as measured on a live deployment (kvsim probe --offload, fitted by
// kvsim calibrate --measured): loading B bytes of KV back into the GPU adds
// latency_us + B / load_bytes_per_s to a request's TTFT. Bytes per second and microseconds.
struct MeasuredTier {
  double load_bytes_per_s = 0;  // > 0
  double latency_us = 0;        // >= 0
};

// Coefficients of the fitted model with their provenance (microseconds).
struct FittedCoefficients {
  std::string source_dir;                      // the bundle folder the fit was made from
  std::string model;                           // meta.yaml model
  std::string gpu;                             // meta.yaml gpu
  std::string vllm_version;                    // meta.yaml vllm_version
  std::string profiled_at;                     // meta.yaml profiled_at
  std::string attribution;                     // licence and source line of the profile
  double launch_floor_us = 0;                  // eager per-kernel floor (smallest op at 1 token)
  double dense_knee_tokens = 0;                // K
  double attention_decode_wave = 4;            // Wd, decodes per wave
  double attention_prefill_wave_tokens = 512;  // Wp, new tokens per wave
  double attention_split_decodes = 32;         // Ns
  double dense_step_knee_tokens = 1e12;        // Ks (older files: no knee)
  std::vector<double> dense_layer_us;          // a0..a3
  std::vector<double> dense_step_us;           // b0..b4
  std::vector<double> attention_layer_us;      // e0..e15
  std::vector<double> per_sequence_us;         // c0..c1
  // Optional (older files lack them; the defaults are the RTX 4090 Llama bundle's):
  int tensor_parallel_size = 1;    // the degree of the tables fitted (each GPU's shard)
  double dense_layer_kernels = 8;  // dense kernels per layer (the bundle's layer ops)
  // The model the bundle measured: num_layers, hidden, heads, kv_heads, head_dim,
  // intermediate, vocab, experts, top_k, moe_intermediate (empty: not recorded).
  std::vector<double> model_shape;
  // The profiled GPU: its catalog name and memory_bandwidth (B/s), bf16_dense and fp8_dense
  // (FLOP/s) as the catalog gives them (empty: not recorded). A profile used on another GPU is
  // rescaled by the roofline ratio of the two GPUs' figures.
  std::string gpu_preset;
  std::vector<double> gpu_figures;
  std::vector<double> moe_layer_us;  // m0..m3; empty: no MoE block
  double moe_experts_per_wave = 16;  // We
  double moe_kernels = kMoeBlockKernels;  // kernels of the MoE block (launch count)
  // Optional section `offload_tier: {load_bytes_per_s: R, latency_us: L}`: the measured tier.
  // The step-time model does not use it; it travels with the deployment's profile (a
  // simulation takes its tier rates from the scenario's hardware, docs/calibration.md).
  std::optional<MeasuredTier> offload_tier;
};

// Residuals of one component over the bundle points it was fitted to: |fit - measured| /
// measured.
struct ComponentResidual {
  std::string component;  // dense_layer, dense_step, attention_layer, per_sequence
  std::size_t points = 0;
  double median_abs_rel_error = 0;
  double max_abs_rel_error = 0;
};

struct FitReport {
  FittedCoefficients coefficients;
  std::vector<ComponentResidual> residuals;
};

// Number of coefficients of each component.
inline constexpr std::size_t kDenseLayerTerms = 4;
inline constexpr std::size_t kDenseStepTerms = 5;
inline constexpr std::size_t kAttentionTerms = 16;
// Earlier files' list lengths, read with the later terms 0.
inline constexpr std::size_t kLegacyDenseStepTerms = 2;
inline constexpr std::size_t kLegacyAttentionTerms = 14;
inline constexpr std::size_t kPerSequenceTerms = 2;
inline constexpr std::size_t kModelShapeFields = 10;
inline constexpr std::size_t kGpuFigureFields = 3;

// A model of the shape a fitted profile records (the parameters derived from it); throws
// InputError when the profile records none.
ModelSpec model_of_shape(const FittedCoefficients& c);

// The model_shape list of a model (FittedCoefficients::model_shape's order).
std::vector<double> model_shape_of(const ModelSpec& m);
// True when a fitted profile's per-layer coefficients apply to `m`: the same shape (the number
// of layers may differ: coefficients are per layer). `why` names the first difference.
bool shape_matches(const FittedCoefficients& c, const ModelSpec& m, std::string* why = nullptr);

// The attention features e0..e15 of a non-empty batch (equation above).
std::vector<double> attention_features(const BatchShape& batch, double decode_wave,
                                       double prefill_wave_tokens, double split_decodes);
// The same, written into `f` (no allocation; the engine calls it once per step).
void attention_features(const BatchShape& batch, double decode_wave, double prefill_wave_tokens,
                        double split_decodes, std::span<double, kAttentionTerms> f);
// The dense-per-step features b0..b4 (equation above).
std::vector<double> dense_step_features(double tokens, double knee);

// Fits every component to the bundle's grid points. The model supplies its shape (recorded in
// the coefficients) and validation (num_layers > 0); the coefficients are per layer or per
// step. An MoE block is fitted when the bundle has a moe.csv.
FitReport fit_profile(const ProfileBundle& bundle, const ModelSpec& model);

// The residuals of fitted coefficients against a bundle's tables (the same components, points
// and errors fit_profile reports), without fitting: `kvsim calibrate --residuals`. The MoE block
// is checked only when both have one.
std::vector<ComponentResidual> evaluate_fit(const FittedCoefficients& c, const ProfileBundle& bundle);

// The coefficients as a small YAML text (keys in a fixed order, numbers in shortest round-trip
// form), and back. read throws InputError with file:line:col for an unknown key, a bad number,
// a list of the wrong length or a missing key; the optional offload_tier line must be a flow map
// with exactly load_bytes_per_s (> 0) and latency_us (>= 0).
std::string write_fitted_yaml(const FittedCoefficients& c);
FittedCoefficients read_fitted_yaml(const std::string& text, const std::string& file_name);
void save_fitted_yaml(const std::string& path, const FittedCoefficients& c);
FittedCoefficients load_fitted_yaml(const std::string& path);

// Step times from fitted coefficients; immutable after construction.
class FittedModel final : public ComputeModel {
 public:
  // Throws InputError when num_layers is not positive, a coefficient list has the wrong length
  // or a parameter lies outside its range.
  FittedModel(FittedCoefficients coefficients, ModelSpec model, ProfileParams params = {},
              MoeLayout moe = {});

  StepBreakdown step_time(const BatchShape& batch) const override;
  std::string describe() const override;

  const FittedCoefficients& coefficients() const { return c_; }
  // Per-layer attention time (us) of a batch.
  double attention_layer_us(const BatchShape& batch) const;

 private:
  FittedCoefficients c_;
  ModelSpec model_;
  ProfileParams params_;
  StepWorkTerms work_;
  double decode_dense_kernels_ = 0;  // dense launches per step: layers x layer ops + step ops
  MoeLayout moe_;
  // MoE block time of one layer (us) for a step of `tokens` tokens (equation above).
  double moe_layer_us(double tokens) const;
};

}  // namespace kvsim::models
