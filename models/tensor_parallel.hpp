#pragma once
// Tensor parallelism (Megatron-LM: Shoeybi et al. 2019, "Megatron-LM: Training Multi-Billion
// Parameter Language Models Using Model Parallelism"; vLLM's ColumnParallelLinear,
// RowParallelLinear, QKVParallelLinear and VocabParallelEmbedding): one engine replica spans
// k GPUs and each GPU holds a 1/k shard of every layer. What one GPU of the group holds and
// computes. Counts of parameters and heads; bytes.
//
//   heads per GPU        = heads / k
//   KV heads per GPU     = kv_heads / k            when k <= kv_heads
//                        = 1 (replicated k / kv_heads times) when k > kv_heads
//                          (vLLM QKVParallelLinear: num_kv_head_replicas)
//   KV bytes per token   = 2 x layers x kv_heads_per_gpu x head_dim x kv dtype bytes
//                          (Llama-3.1-70B at k = 4: 2 x 80 x 2 x 128 x 2 B = 80 KiB in BF16,
//                          40 KiB in FP8)
//   linear per GPU       = layers x (hidden x q / k + 2 x hidden x kv_heads_per_gpu x head_dim
//                          + q / k x hidden) + dense MLP layers x 3 x hidden x inter / k
//                          (q, gate, up split by output column, o and down by input row)
//                          + MoE layers x (experts per GPU x 3 x hidden x moe_inter per GPU
//                          + 3 x hidden x shared_inter / k)
//   experts (vLLM FusedMoE): without expert parallelism every GPU holds every expert, each split
//                          like the MLP (moe_inter / k); with it (--enable-expert-parallel, over
//                          ep = tp x dp GPUs) each GPU holds experts / ep whole experts.
//   embedding, lm_head   = ceil(vocab / k) x hidden each (VocabParallelEmbedding and
//                          ParallelLMHead split the vocabulary)
//   norms, biases        replicated on every GPU (counted whole; a few MB)
//   weight bytes per GPU = linear per GPU x linear_bytes_per_param (models/quantization.hpp)
//                          + (embedding + lm_head per GPU + norms) x 2 B
// vLLM's checks at start-up: heads % k == 0; k % kv_heads == 0 when k >= kv_heads, else
// kv_heads % k == 0 (vllm/config/model.py verify_with_parallel_config, QKVParallelLinear);
// weight-only quantized row-parallel layers need whole groups per GPU (input rows q / k and
// inter / k multiples of quant_group_size; vLLM's GPTQ/AWQ-Marlin "input_size_per_partition"
// check).
#include <cstdint>

#include "models/model_spec.hpp"
#include "sim/core/units.hpp"

namespace kvsim::models {

// Throws InputError (path engine.tensor_parallel_size) when vLLM would refuse the split; with
// `ep` > 1 (path engine.enable_expert_parallel) when the experts do not split evenly.
void check_tensor_parallel(const ModelSpec& m, int tp, int ep = 1);

int heads_per_gpu(const ModelSpec& m, int tp);
int kv_heads_per_gpu(const ModelSpec& m, int tp);

// KV cache bytes of one token on one GPU of the group.
Bytes kv_bytes_per_token_per_gpu(const ModelSpec& m, int tp);

// Linear-layer parameters on one GPU; `ep` > 1 splits the experts over ep GPUs (equation above).
std::int64_t linear_params_per_gpu(const ModelSpec& m, int tp, int ep = 1);
// Routed-expert parameters on one GPU (part of linear_params_per_gpu), and of one expert there.
std::int64_t expert_params_per_gpu(const ModelSpec& m, int tp, int ep = 1);
std::int64_t one_expert_params_per_gpu(const ModelSpec& m, int tp, int ep = 1);
// Experts each MoE layer keeps on one GPU: num_experts / ep.
int experts_per_gpu(const ModelSpec& m, int ep);

// Embedding and lm_head parameters on one GPU (lm_head absent when tied).
std::int64_t vocab_params_per_gpu(const ModelSpec& m, int tp);

// Parameters one GPU multiplies every token through (linear layers but the routed experts,
// norms, routers): the roofline's dense part.
std::int64_t dense_params_per_gpu(const ModelSpec& m, int tp);

// Weight bytes on one GPU (equation above; the rotary cache is memory.hpp's).
Bytes weight_bytes_per_gpu(const ModelSpec& m, int tp, int ep = 1);

}  // namespace kvsim::models
