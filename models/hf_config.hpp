#pragma once
// A ModelSpec from a Hugging Face config.json (HF transformers configuration_llama.py,
// configuration_mistral.py, configuration_qwen2.py, configuration_qwen3.py,
// configuration_qwen3_moe.py, configuration_mixtral.py, configuration_qwen2_moe.py names):
//   num_layers = num_hidden_layers, num_kv_heads = num_key_value_heads (default
//   num_attention_heads), head_dim = head_dim or hidden_size / num_attention_heads,
//   hidden_size, num_attention_heads, intermediate_size, vocab_size, max_position_embeddings,
//   tie_word_embeddings (default false).
// Weight dtype from torch_dtype (or dtype): bfloat16 and float32 -> bf16 (vLLM serves float32
// checkpoints in 16 bits), float16 -> fp16; quantization_config fp8 -> fp8, awq / gptq with
// 4 or 8 bits -> int4 / int8 with quant_group_size = group_size. The KV cache stays in the
// 16-bit activation dtype.
// Qwen2 / Qwen2-MoE attention always has q/k/v biases; Llama, Mistral, Qwen3 and Qwen3-MoE have
// them when attention_bias is true; Qwen3 and Qwen3-MoE have per-head q/k RMSNorm.
// Mixture of experts: Mixtral's num_local_experts experts of intermediate_size in every layer;
// Qwen3-MoE / Qwen2-MoE num_experts of moe_intermediate_size, where layer l (0-based) keeps a
// dense MLP when l is in mlp_only_layers or (l + 1) % decoder_sparse_step != 0 (vLLM
// qwen3_moe.py / qwen2_moe.py). num_params = params_from_shape().
#include <string>

#include "models/model_spec.hpp"

namespace kvsim::models {

// Reads a Hugging Face config.json (its text; `file` names it in diagnostics) into a ModelSpec.
// Supported model_type values: llama, mistral, qwen2, qwen3, qwen3_moe, mixtral, qwen2_moe.
// Throws InputError with file:line:col (line and column of the offending value when the JSON
// parser or a key gives one; 0:0 otherwise) and the key path, e.g. "num_hidden_layers", for:
// malformed JSON, a missing required key, a value of the wrong type or out of range, an
// unsupported model_type (the message lists the supported ones).
ModelSpec model_from_hf_config(const std::string& json_text, const std::string& file);

// The same from a file path; a file that cannot be read is an InputError naming it.
ModelSpec load_hf_config(const std::string& path);

}  // namespace kvsim::models
