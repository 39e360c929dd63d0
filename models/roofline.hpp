#pragma once
// Roofline compute model: the time of one engine step from FLOP and byte counts of the batch,
// each part bounded by either the tensor peak or the memory bandwidth. Times in seconds,
// rates in FLOP/s and bytes/s. Equations (docs/models.md gives the derivations and sources):
//
//   Let T = new tokens of the step (prefill chunk tokens + one per decode), S = sequences,
//   P_d = ModelSpec::dense_params() (no embeddings, no lm_head), w = weight dtype bytes,
//   kv = kv_bytes_per_token, A = 4 x layers x heads x head_dim.
//
//   dense      FLOPs = 2 x P_d x T                       (one multiply-add per weight per token;
//                                                         Kaplan et al. 2020, "2N" per token)
//              bytes = P_d x w                           (weights read once per step)
//              t     = max(FLOPs / (F x gemm_eff), bytes / (B x mem_eff))
//   attention  per sequence: a prefill chunk of n new tokens over p cached ones has new token i
//              attending to p + i + 1 keys (causal), so pairs = n x p + n (n + 1) / 2;
//              a decode with context c (its KV length including the new token) has pairs = c.
//              FLOPs = A x pairs                         (QK^T and PV: 2 x 2 x head_dim per
//                                                         query-key pair per head per layer)
//              bytes = kv x (p + n) + kv x n             (read the whole context once, write the
//                                                         new tokens' K and V; decode: kv x c + kv)
//              t     = sum over sequences of max(FLOPs / (F x attn_eff), bytes / (B x mem_eff))
//              Each sequence is its own roofline and the sequences add up: the measured 4090
//              kernel profile (attention.csv) shows a mixed batch of one 2,048-token chunk and
//              32 decodes at 2k taking longer than the two parts alone (967 us per layer
//              against 336 + 325).
//   moe        (MoE models) per MoE layer, with k = num_experts_per_tok, E = num_experts and the
//              step's routed tokens T_moe = T x MoeLayout::tokens_factor:
//              active experts  E_a = E (1 - (1 - k / E)^T_moe) / ep      (models/model_spec.hpp:
//                                                         uniform routing; ep = expert-parallel
//                                                         GPUs, each holding E / ep experts)
//              assignments     A = T_moe x k / ep        (token-expert pairs computed here)
//              FLOPs = 2 x P_e x A, bytes = P_e x w x E_a (P_e: one expert's parameters on
//                                                         this GPU, 3 x hidden x moe_inter
//                                                         / (tp without expert parallelism))
//              t     = MoE layers x max(FLOPs / (F x gemm_eff), bytes / (B x mem_eff))
//              The router and any shared expert are dense parameters: every token runs them.
//   lm_head    FLOPs = 2 x hidden x vocab x S            (one logit row per sequence: vLLM
//                                                         computes logits at each request's last
//                                                         scheduled position only)
//              bytes = hidden x vocab x w
//              t     = max(FLOPs / (F x gemm_eff), bytes / (B x mem_eff))
//   overhead   t     = step_overhead + per_sequence_overhead x S
//   total      dense + attention + lm_head + overhead; an empty batch takes 0.
//
// Tensor parallelism and quantization (models/tensor_parallel.hpp, models/quantization.hpp):
// with k GPUs the roofline times one GPU's shard: P_d becomes dense_params_per_gpu (linear layers
// / k, norms whole), heads / k in A, kv the KV bytes per token per GPU, vocab / k in lm_head.
// The dense weight bytes are linear_params_per_gpu x linear_bytes_per_param + norms x 2 B (int4
// and int8 weight-only and FP8 weights read fewer bytes in decode); lm_head stays BF16.
// GEMM rate F for the linear layers: fp8_dense for FP8 (W8A8 on Ada and Hopper FP8 tensor
// cores, cutlass scaled_mm); bf16_dense for BF16 and for int8/int4 weight-only, whose kernels
// (Marlin: Frantar et al. 2024, "MARLIN: Mixed-Precision Auto-Regressive Parallel Inference on
// Large Language Models"; AWQ GEMM) dequantize to FP16 and run FP16 tensor-core MMAs with FP32
// accumulate, so they reach the 16-bit rate when compute-bound and the weight-byte rate when
// memory-bound (Marlin reports close to the ideal 4x over FP16 up to batch 16-32 and FP16
// speed beyond). The 4090-anchored efficiencies are applied unchanged to these kernels: an
// assumption, no quantized-kernel profile is shipped. Attention and lm_head run at the BF16 rate.
// Communication between the k GPUs is models/tensor_parallel_model.hpp's.
//
// The split follows the vLLM layer layout: the token-parallel GEMMs (QKV, O, gate/up, down) and
// their element-wise companions are "dense"; the attention kernel with its KV-cache write is
// "attention"; lm_head and sampling run once per sequence. Embedding lookups (T x hidden reads)
// and activation traffic are ignored: about 0.1 % of a step's bytes (2,048 tokens x 4,096 x 2 B
// = 17 MB against 15 GB of weights for Llama-3.1-8B).
#include <cstdint>
#include <string>

#include "models/compute_model.hpp"
#include "models/compute_spec.hpp"
#include "models/model_spec.hpp"
#include "sim/core/units.hpp"

namespace kvsim::models {

// What the roofline needs from a GPU. The scenario layer fills it from hw::GpuSpec: the tensor
// peak for the model's weight dtype (bf16_dense for BF16/FP16 weights, fp8_dense for FP8 W8A8),
// the peak memory bandwidth and the device memory.
struct DeviceFigures {
  FlopsPerSec tensor_flops{0};      // dense tensor peak for the weight dtype (linear layers)
  BytesPerSec memory_bandwidth{0};  // peak device memory bandwidth
  Bytes memory{0};                  // device memory (not used by the roofline; kept for reports)
  FlopsPerSec bf16_flops{0};        // BF16 tensor peak for attention and lm_head; 0: tensor_flops
};

// Query-key pairs of one prefill chunk (n new tokens over p cached: n p + n (n + 1) / 2) and of
// one decode (context c: c); attention FLOPs are A x pairs.
double attention_pairs_prefill(std::int64_t new_tokens, std::int64_t cached_tokens);
double attention_pairs_decode(std::int64_t context_tokens);

// Step times of one model on one GPU from the equations above; seconds, FLOPs and bytes.
// Immutable after construction; step_time() allocates nothing.
class RooflineModel final : public ComputeModel {
 public:
  // Throws InputError when a figure is not positive or an efficiency lies outside (0, 1].
  // tensor_parallel_size k > 1 times one GPU of a k-way tensor-parallel group (see below).
  RooflineModel(ModelSpec model, DeviceFigures device, RooflineParams params = {},
                int tensor_parallel_size = 1, MoeLayout moe = {});

  StepBreakdown step_time(const BatchShape& batch) const override;
  std::string describe() const override;

  const ModelSpec& model() const { return model_; }
  const DeviceFigures& device() const { return device_; }
  const RooflineParams& params() const { return params_; }

  // The FLOP counts of the three parts for a batch (equations above).
  double dense_flops(const BatchShape& batch) const;
  double attention_flops(const BatchShape& batch) const;
  double lm_head_flops(const BatchShape& batch) const;

 private:
  double bounded(double flops, double flop_rate, double bytes) const;

  ModelSpec model_;
  DeviceFigures device_;
  RooflineParams params_;
  int tp_ = 1;
  MoeLayout moe_;
  // Per-step constants derived once.
  double dense_flops_per_token_ = 0;     // 2 x P_d
  double dense_weight_bytes_ = 0;        // P_d x w
  double attention_flops_per_pair_ = 0;  // 4 x layers x heads x head_dim
  double kv_bytes_per_token_ = 0;
  double lm_head_flops_per_seq_ = 0;  // 2 x hidden x vocab
  double lm_head_weight_bytes_ = 0;   // hidden x vocab x w
  double gemm_rate_ = 0;              // F x gemm_eff (linear layers)
  double lm_head_rate_ = 0;           // F_bf16 x gemm_eff
  double attention_rate_ = 0;         // F_bf16 x attn_eff
  double memory_rate_ = 0;            // B x mem_eff
  double expert_params_ = 0;          // P_e, one expert's parameters on this GPU
  double expert_bytes_ = 0;           // P_e x w
};

}  // namespace kvsim::models
