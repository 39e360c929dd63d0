#include "models/memory.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "models/quantization.hpp"
#include "models/tensor_parallel.hpp"
#include "sim/core/error.hpp"

namespace kvsim::models {
namespace {

constexpr double kActivationBytes = 2.0;  // BF16 activations, whatever the weight dtype
constexpr double kLogitBytes = 4.0;       // the sampler works on FP32 logits
// vllm/v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p: the Triton kernel from 8 rows up,
// the PyTorch sort below.
constexpr std::int64_t kTritonTopKTopPMinRows = 8;

std::string gib(Bytes b) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f GiB", b.as_double() / kGiB.as_double());
  return buf;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

Bytes to_bytes(double b) { return Bytes{static_cast<std::int64_t>(std::floor(b))}; }

void check(std::vector<Diagnostic>& errors, bool ok, const char* path, const char* message) {
  if (!ok) errors.push_back(Diagnostic{"", 0, 0, path, message});
}

}  // namespace

Bytes profile_forward_peak(const ModelSpec& model, std::int64_t tokens, bool eager_layout,
                           int tensor_parallel_size, int expert_parallel_size) {
  const double hidden_buffers = eager_layout ? 3.0 : 2.0;
  const int tp = std::max(tensor_parallel_size, 1);
  double per_token = 0;
  const int inter_per_gpu = model.intermediate_size / tp;  // vLLM shards by whole columns
  if (model.mlp_layers() > 0) per_token = 3.0 * inter_per_gpu;
  if (model.is_moe()) {
    // vllm/model_executor/layers/fused_moe/fused_moe.py fused_experts_impl: one workspace of
    // tokens x top_k x max(2 x moe_inter, hidden) for the first GEMM's output and the second's,
    // and tokens x top_k x moe_inter for the activation between them (per GPU: moe_inter / tp
    // without expert parallelism).
    const double mi = expert_parallel_size > 1 ? model.moe_intermediate_size : model.moe_intermediate_size / tp;
    const double k = model.num_experts_per_tok;
    per_token = std::max(per_token, k * (std::max(2.0 * mi, static_cast<double>(model.hidden_size)) + mi));
  }
  return to_bytes(static_cast<double>(tokens) * kActivationBytes *
                  (per_token + hidden_buffers * model.hidden_size));
}

Bytes profile_sampler_peak(const ModelSpec& model, std::int64_t tokens, std::int64_t sequences,
                           SamplerProfile profile, int num_sms) {
  KVSIM_ASSERT(sequences >= 0 && num_sms > 0, "profile sequences and SM count");
  const double s = static_cast<double>(sequences);
  const double vocab = model.vocab_size;
  const double hidden_states =
      static_cast<double>(tokens + sequences) * model.hidden_size * kActivationBytes;
  double per_logit = kActivationBytes + kLogitBytes;  // BF16 logits and their FP32 upcast
  double buffer = 0;
  if (profile == SamplerProfile::kFlashInferTopKTopP) {
    // vllm/v1/sample/ops/topk_topp_sampler.py forward_cuda with FlashInfer (on by default in
    // 0.10 when installed): BF16 logits, the FP32 upcast, probabilities and FlashInfer's
    // sampling workspace of one FP32 value per logit.
    per_logit += kLogitBytes + kLogitBytes;
  } else if (profile == SamplerProfile::kV1TopKTopP) {
    if (sequences >= kTritonTopKTopPMinRows) {
      per_logit += kLogitBytes + kLogitBytes;  // softmax probs, exponential q
      // topk_topp_triton.py: NUM_PROGRAMS = min(num_sms, S) programs; the cached buffer has
      // min(next_power_of_2(NUM_PROGRAMS), num_sms) rows of vocab FP32 values.
      const std::int64_t programs = std::min<std::int64_t>(num_sms, sequences);
      std::int64_t rows = 1;
      while (rows < programs) rows *= 2;
      rows = std::min<std::int64_t>(rows, num_sms);
      buffer = static_cast<double>(rows) * vocab * kLogitBytes;
    } else {
      // apply_top_k_top_p_pytorch: sorted FP32 values and int64 indices, two bool masks, the
      // softmax of the sorted values and the scatter's output.
      per_logit += kLogitBytes + 8.0 + 1.0 + 1.0 + kLogitBytes + kLogitBytes;
    }
  }
  return to_bytes(hidden_states + s * vocab * per_logit + buffer);
}

Bytes profile_activation_peak(const ModelSpec& model, std::int64_t tokens, std::int64_t sequences,
                              bool eager_layout, SamplerProfile profile, int num_sms,
                              int tensor_parallel_size, int expert_parallel_size) {
  return std::max(profile_forward_peak(model, tokens, eager_layout, tensor_parallel_size, expert_parallel_size),
                  profile_sampler_peak(model, tokens, sequences, profile, num_sms));
}

namespace {

Bytes rotary_cache_bytes(const ModelSpec& model) {
  // vllm/model_executor/layers/rotary_embedding: cos_sin_cache is a buffer of
  // max_position_embeddings x rotary_dim (= head_dim) in the model dtype (BF16).
  return to_bytes(static_cast<double>(model.max_position_embeddings) * model.head_dim *
                  kActivationBytes);
}

}  // namespace

Bytes weights_memory(const ModelSpec& model, int tensor_parallel_size, int expert_parallel_size) {
  return weight_bytes_per_gpu(model, tensor_parallel_size, expert_parallel_size) + rotary_cache_bytes(model);
}

MemoryBreakdown kv_capacity(const MemoryInputs& in) {
  const ModelSpec& m = in.model;
  const std::int64_t max_model_len = in.max_model_len > 0
                                         ? in.max_model_len
                                         : static_cast<std::int64_t>(m.max_position_embeddings);

  std::vector<Diagnostic> errors;
  check(errors, in.total_memory.value > 0, "gpu.memory", "must be positive");
  check(errors, in.gpu_memory_utilization > 0 && in.gpu_memory_utilization <= 1,
        "engine.gpu_memory_utilization", "must lie in (0, 1]");
  check(errors, in.max_num_batched_tokens > 0, "engine.max_num_batched_tokens", "must be positive");
  check(errors, in.max_num_seqs > 0, "engine.max_num_seqs", "must be positive");
  check(errors, max_model_len > 0, "engine.max_model_len",
        "must be positive (or the model's max_position_embeddings must be set)");
  check(errors, in.block_size > 0, "engine.block_size", "must be positive");
  check(errors, in.non_torch_memory.value >= 0, "engine.non_torch_memory", "must not be negative");
  check(errors, in.cuda_graph_memory.value >= 0, "engine.cuda_graph_memory",
        "must not be negative");
  check(errors, in.gpu_num_sms > 0, "gpu.num_sms", "must be positive");
  check(errors, in.num_gpu_blocks_override >= 0, "engine.num_gpu_blocks_override",
        "must not be negative");
  check(errors, in.kv_cache_memory.value >= 0, "engine.kv_cache_memory", "must not be negative");
  check(errors,
        m.num_layers > 0 && m.num_kv_heads > 0 && m.head_dim > 0 && m.hidden_size > 0 &&
            (m.intermediate_size > 0 || m.mlp_layers() == 0) && m.vocab_size > 0 && m.num_params > 0,
        "model", "layers, heads, sizes and num_params must be positive");
  check(errors, in.tensor_parallel_size >= 1, "engine.tensor_parallel_size", "must be at least 1");
  check(errors, in.expert_parallel_size >= 1, "engine.data_parallel_size", "must be at least 1");
  if (!errors.empty()) throw InputError(std::move(errors));
  const int tp = in.tensor_parallel_size;
  const int ep = m.is_moe() ? in.expert_parallel_size : 1;
  check_tensor_parallel(m, tp, ep);

  MemoryBreakdown out;
  out.max_model_len = max_model_len;
  out.requested = Bytes{static_cast<std::int64_t>(
      std::ceil(in.total_memory.as_double() * in.gpu_memory_utilization))};  // vLLM rounds up
  out.rotary_cache = rotary_cache_bytes(m);
  out.weights = weight_bytes_per_gpu(m, tp, ep) + out.rotary_cache;

  // The profile run: vLLM V1 gpu_model_runner.profile_run -> _dummy_run(max_num_tokens) with
  // min(max_num_tokens, max_num_seqs) requests, then _dummy_sampler_run.
  out.profile_tokens = in.profile_rule == ProfileRule::kV1
                           ? in.max_num_batched_tokens
                           : std::max(in.max_num_batched_tokens, max_model_len);
  out.profile_sequences = std::min(out.profile_tokens, in.max_num_seqs);
  const bool eager_layout = in.profile_rule == ProfileRule::kV0NoChunkedPrefill || in.enforce_eager;
  out.forward_peak = profile_forward_peak(m, out.profile_tokens, eager_layout, tp, ep);
  out.sampler_peak = profile_sampler_peak(m, out.profile_tokens, out.profile_sequences,
                                          in.sampler_profile, in.gpu_num_sms);
  out.activation_peak = std::max(out.forward_peak, out.sampler_peak);
  out.non_torch = in.non_torch_memory;
  out.cuda_graphs = in.enforce_eager ? Bytes{0} : in.cuda_graph_memory;
  out.cuda_graphs_subtracted = in.subtract_cuda_graphs && !in.enforce_eager;

  if (in.kv_cache_memory.value > 0) {
    out.available_kv = in.kv_cache_memory;
  } else {
    out.available_kv = out.requested - out.weights - out.activation_peak - out.non_torch;
    if (out.cuda_graphs_subtracted) out.available_kv -= out.cuda_graphs;
  }

  const std::int64_t kv_per_token = kv_bytes_per_token_per_gpu(m, tp).value;
  const std::int64_t block_bytes = kv_per_token * in.block_size;
  if (in.num_gpu_blocks_override > 0) {
    out.num_blocks = in.num_gpu_blocks_override;
  } else if (out.available_kv.value > 0) {
    out.num_blocks = out.available_kv.value / block_bytes;
  }
  out.usable_blocks = std::max<std::int64_t>(out.num_blocks - 1, 0);
  out.kv_tokens = out.num_blocks * in.block_size;
  out.max_concurrency = static_cast<double>(out.kv_tokens) / static_cast<double>(max_model_len);
  out.fits_max_model_len = out.num_blocks > 0 && out.kv_tokens >= max_model_len;
  const std::int64_t derived_blocks = out.num_blocks;
  const std::int64_t derived_tokens = out.kv_tokens;
  std::int64_t most_tokens = 0;  // at total_memory_max, when that decides
  if (!out.fits_max_model_len && in.total_memory_max > in.total_memory &&
      in.num_gpu_blocks_override == 0 && in.kv_cache_memory.value == 0) {
    MemoryInputs most = in;
    most.total_memory = in.total_memory_max;
    most.total_memory_max = Bytes{0};
    most_tokens = kv_capacity(most).kv_tokens;
    if (most_tokens >= max_model_len) {
      out.num_blocks = (max_model_len + in.block_size - 1) / in.block_size;
      out.usable_blocks = out.num_blocks - 1;
      out.kv_tokens = out.num_blocks * in.block_size;
      out.max_concurrency = static_cast<double>(out.kv_tokens) / static_cast<double>(max_model_len);
      out.fits_max_model_len = true;
      out.started_note = "vLLM refuses max_model_len " + std::to_string(max_model_len) +
                         " at the catalog's total of " + gib(in.total_memory) + " (" +
                         std::to_string(derived_tokens) + " tokens of KV) but starts at the " +
                         gib(in.total_memory_max) + " CUDA reports for this card on other hosts (" +
                         std::to_string(most_tokens) +
                         " tokens): sized at the least that starts, " +
                         std::to_string(out.kv_tokens) +
                         " tokens; set hardware.servers.*.gpu.memory to your card's total "
                         "(torch.cuda.mem_get_info()[1]) to decide";
    }
  }

  auto& e = out.explanation;
  if (tp > 1) {
    e.push_back("tensor parallel " + std::to_string(tp) + ": every figure below is per GPU; the " +
                std::to_string(tp) + " GPUs of the replica hold the same number of blocks");
  }
  e.push_back("requested = total " + gib(in.total_memory) + " x gpu_memory_utilization " +
              fixed(in.gpu_memory_utilization, 3) + " = " + gib(out.requested));
  if (ep > 1) {
    e.push_back("expert parallel " + std::to_string(ep) + ": each GPU holds " +
                std::to_string(experts_per_gpu(m, ep)) + " of the " + std::to_string(m.num_experts) +
                " experts of every MoE layer and a whole copy of everything else");
  }
  if (tp == 1 && ep == 1 && (m.dtype == DType::kBf16 || m.dtype == DType::kFp16)) {
    e.push_back("weights = " + std::to_string(m.num_params) + " params x " + dtype_name(m.dtype) +
                " + rotary cache " + gib(out.rotary_cache) + " = " + gib(out.weights));
  } else {
    e.push_back("weights = " + std::to_string(linear_params_per_gpu(m, tp, ep)) + " linear params x " +
                fixed(linear_bytes_per_param(m.dtype, m.quant_group_size), 4) + " B (" + dtype_name(m.dtype) +
                (weight_only(m.dtype) ? ", group " + std::to_string(m.quant_group_size) : std::string()) + ") + " +
                std::to_string(vocab_params_per_gpu(m, tp) + small_params(m)) +
                " embedding, lm_head and norm params x 2 B + rotary cache " + gib(out.rotary_cache) + " = " +
                gib(out.weights));
  }
  e.push_back("activation peak = profile run of " + std::to_string(out.profile_tokens) +
              " tokens over " + std::to_string(out.profile_sequences) + " sequences (" +
              (eager_layout ? "eager" : "compiled") + " layout) = max(forward " +
              gib(out.forward_peak) + ", sampler " + gib(out.sampler_peak) +
              ") = " + gib(out.activation_peak));
  e.push_back("non-torch = " + gib(out.non_torch));
  if (in.enforce_eager) {
    e.push_back("cuda graphs = none (enforce_eager)");
  } else {
    e.push_back("cuda graphs = " + gib(out.cuda_graphs) +
                (out.cuda_graphs_subtracted
                     ? ", subtracted from the KV budget (vLLM >= 0.21)"
                     : ", outside the KV budget (vLLM <= 0.20: captured after the KV cache)"));
  }
  if (in.kv_cache_memory.value > 0) {
    e.push_back("available KV = kv_cache_memory " + gib(out.available_kv) +
                " (utilization ignored)");
  } else {
    e.push_back("available KV = requested - weights - activation peak - non-torch" +
                std::string(out.cuda_graphs_subtracted ? " - cuda graphs" : "") + " = " +
                gib(out.available_kv));
  }
  if (in.num_gpu_blocks_override > 0) {
    e.push_back("num_blocks = num_gpu_blocks_override " + std::to_string(out.num_blocks));
  } else {
    e.push_back("num_blocks = available KV // (" + std::to_string(in.block_size) + " tokens x " +
                std::to_string(kv_per_token) + " bytes) = " + std::to_string(derived_blocks) +
                " (" + std::to_string(std::max<std::int64_t>(derived_blocks - 1, 0)) +
                " usable; block 0 is the null block)");
  }
  if (!out.started_note.empty()) {
    e.push_back("at " + gib(in.total_memory) + ": " + std::to_string(derived_tokens) +
                " tokens, less than max_model_len; at memory_max " + gib(in.total_memory_max) +
                ": " + std::to_string(most_tokens) + " tokens");
    e.push_back("GPU KV cache size = " + std::to_string(out.kv_tokens) +
                " tokens (the least that starts: one max_model_len request)");
  } else {
    e.push_back("GPU KV cache size = " + std::to_string(out.kv_tokens) +
                " tokens; max concurrency " + fixed(out.max_concurrency, 2) +
                "x at max_model_len " + std::to_string(max_model_len));
  }
  if (out.num_blocks <= 0) {
    e.push_back("vLLM would stop: no available memory for the cache blocks");
  } else if (!out.fits_max_model_len) {
    e.push_back("vLLM would stop: max_model_len exceeds the tokens the KV cache can store");
  }
  return out;
}

}  // namespace kvsim::models
