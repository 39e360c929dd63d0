#include "kvsim/models/memory.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "kvsim/core/error.hpp"

namespace kvsim::models {
namespace {

constexpr double kActivationBytes = 2.0;  // BF16 activations, whatever the weight dtype
constexpr double kLogitBytes = 4.0;       // the sampler works on FP32 logits

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

Bytes profile_activation_peak(const ModelSpec& model, std::int64_t tokens, std::int64_t sequences,
                              bool eager_layout, double sampler_logit_copies) {
  const double t = static_cast<double>(tokens);
  const double hidden = model.hidden_size;
  const double hidden_buffers = eager_layout ? 3.0 : 2.0;
  const double forward =
      t * kActivationBytes * (3.0 * model.intermediate_size + hidden_buffers * hidden);
  const double sampler = t * hidden * kActivationBytes + static_cast<double>(sequences) *
                                                             model.vocab_size * kLogitBytes *
                                                             sampler_logit_copies;
  return to_bytes(std::max(forward, sampler));
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
  check(errors, in.sampler_logit_copies >= 0, "engine.sampler_logit_copies",
        "must not be negative");
  check(errors, in.num_gpu_blocks_override >= 0, "engine.num_gpu_blocks_override",
        "must not be negative");
  check(errors, in.kv_cache_memory.value >= 0, "engine.kv_cache_memory", "must not be negative");
  check(errors,
        m.num_layers > 0 && m.num_kv_heads > 0 && m.head_dim > 0 && m.hidden_size > 0 &&
            m.intermediate_size > 0 && m.vocab_size > 0 && m.num_params > 0,
        "model", "layers, heads, sizes and num_params must be positive");
  if (!errors.empty()) throw InputError(std::move(errors));

  MemoryBreakdown out;
  out.max_model_len = max_model_len;
  out.requested = Bytes{static_cast<std::int64_t>(
      std::ceil(in.total_memory.as_double() * in.gpu_memory_utilization))};  // vLLM rounds up
  out.weights = m.weight_bytes();

  // The profile run: vLLM V1 gpu_model_runner.profile_run -> _dummy_run(max_num_tokens) with
  // min(max_num_tokens, max_num_seqs) requests, then _dummy_sampler_run.
  out.profile_tokens = in.profile_rule == ProfileRule::kV1
                           ? in.max_num_batched_tokens
                           : std::max(in.max_num_batched_tokens, max_model_len);
  out.profile_sequences = std::min(out.profile_tokens, in.max_num_seqs);
  const bool eager_layout = in.profile_rule == ProfileRule::kV0NoChunkedPrefill || in.enforce_eager;
  out.activation_peak = profile_activation_peak(m, out.profile_tokens, out.profile_sequences,
                                                eager_layout, in.sampler_logit_copies);
  out.non_torch = in.non_torch_memory;
  out.cuda_graphs = in.enforce_eager ? Bytes{0} : in.cuda_graph_memory;
  out.cuda_graphs_subtracted = in.subtract_cuda_graphs && !in.enforce_eager;

  if (in.kv_cache_memory.value > 0) {
    out.available_kv = in.kv_cache_memory;
  } else {
    out.available_kv = out.requested - out.weights - out.activation_peak - out.non_torch;
    if (out.cuda_graphs_subtracted) out.available_kv -= out.cuda_graphs;
  }

  const std::int64_t kv_per_token = m.kv_bytes_per_token().value;
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

  auto& e = out.explanation;
  e.push_back("requested = total " + gib(in.total_memory) + " x gpu_memory_utilization " +
              fixed(in.gpu_memory_utilization, 3) + " = " + gib(out.requested));
  e.push_back("weights = " + std::to_string(m.num_params) + " params x " + dtype_name(m.dtype) +
              " = " + gib(out.weights));
  e.push_back("activation peak = profile run of " + std::to_string(out.profile_tokens) +
              " tokens over " + std::to_string(out.profile_sequences) + " sequences (" +
              (eager_layout ? "eager" : "compiled") + " layout) = " + gib(out.activation_peak));
  e.push_back("non-torch = " + gib(out.non_torch));
  if (in.enforce_eager) {
    e.push_back("cuda graphs = none (enforce_eager)");
  } else {
    e.push_back("cuda graphs = " + gib(out.cuda_graphs) +
                (out.cuda_graphs_subtracted ? ", subtracted from the KV budget (vLLM >= 0.21)"
                                            : ", outside the KV budget (vLLM <= 0.20)"));
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
                std::to_string(kv_per_token) + " bytes) = " + std::to_string(out.num_blocks) +
                " (" + std::to_string(out.usable_blocks) + " usable; block 0 is the null block)");
  }
  e.push_back("GPU KV cache size = " + std::to_string(out.kv_tokens) + " tokens; max concurrency " +
              fixed(out.max_concurrency, 2) + "x at max_model_len " +
              std::to_string(max_model_len));
  if (out.num_blocks <= 0) {
    e.push_back("vLLM would stop: no available memory for the cache blocks");
  } else if (!out.fits_max_model_len) {
    e.push_back("vLLM would stop: max_model_len exceeds the tokens the KV cache can store");
  }
  return out;
}

}  // namespace kvsim::models
