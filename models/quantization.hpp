#pragma once
// Quantized weights: what a parameter of a linear layer weighs in each weight format, and what
// stays in 16 bits. Bytes per parameter (double) and parameter counts.
//
// Which parameters are quantized: the linear layers of the decoder (q, k, v, o, gate, up, down;
// HF transformers modeling_llama.py layout):
//   linear_params = num_layers x (hidden x q + 2 x hidden x kv + q x hidden)
//                 + dense MLP layers x 3 x hidden x inter
//                 + MoE layers x (experts x 3 x hidden x moe_inter + 3 x hidden x shared_inter)
//   (q = heads x head_dim, kv = kv_heads x head_dim). MoE routers stay 16-bit (vLLM builds the
//   Qwen3-MoE and Mixtral gate as a ReplicatedLinear without the checkpoint's quantization).
// The embedding table, the lm_head, the RMSNorm weights and biases stay in BF16/FP16 in the
// checkpoints planners use (AutoAWQ and GPTQ keep `embed_tokens` and `lm_head` in FP16; the
// compressed-tensors FP8 checkpoints quantize "only the weights and activations of the linear
// operators within transformers blocks": RedHatAI/Meta-Llama-3.1-70B-Instruct-FP8 model card).
//
// Bytes per linear parameter, g = quant_group_size:
//   bf16, fp16   2
//   fp8          1 (W8A8; one FP32 scale per tensor or per output channel, < 0.01 %: ignored)
//   int8         1 + (2 + 1) / g     weight-only, asymmetric (GPTQ 8-bit): per group of g input
//                                    rows and one output column, an FP16 scale and an 8-bit zero
//                                    point (qzeros packs 4 per int32)
//   int4         0.5 + (2 + 0.5) / g weight-only, asymmetric (AWQ GEMM and GPTQ 4-bit): an FP16
//                                    scale and a 4-bit zero point per group (qweight and qzeros
//                                    pack 8 per int32; AutoAWQ WQLinear_GEMM: qweight [in, out/8],
//                                    qzeros [in/g, out/8], scales [in/g, out] FP16)
// Symmetric GPTQ checkpoints still store qzeros, so the same bytes apply.
// Llama-3.1-70B at int4, g = 128: 68,451,041,280 linear parameters x 0.51953125 B
// + 2,102,665,216 16-bit parameters x 2 B = 39.77 GB (hugging-quants/Meta-Llama-3.1-70B-Instruct-
// AWQ-INT4 ships ~39.8 GB of safetensors).
#include <cstdint>

#include "models/model_spec.hpp"

namespace kvsim::models {

// Bytes every 16-bit (unquantized) parameter takes.
inline constexpr double kSixteenBitBytes = 2.0;

// Bytes per linear-layer parameter in the model's weight dtype, group scales included (table
// above).
double linear_bytes_per_param(DType weight_dtype, int group_size);

// Parameters of the decoder's linear layers (equation above), whole model.
std::int64_t linear_params(const ModelSpec& m);

// Parameters that stay in 16 bits besides the embedding table and lm_head: num_params minus the
// linear layers, the embedding table and the lm_head (RMSNorm weights, biases).
std::int64_t small_params(const ModelSpec& m);

// True when the dtype is a weight-only integer format (int8, int4) that dequantizes to BF16/FP16
// for its GEMMs.
bool weight_only(DType weight_dtype);

}  // namespace kvsim::models
