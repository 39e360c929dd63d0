#include "sim/scenario/deployment.hpp"

#include <algorithm>
#include <sstream>

#include "models/tensor_parallel.hpp"
#include "sim/core/error.hpp"
#include "sim/core/limits.hpp"
#include "sim/engine/engine_config.hpp"

namespace kvsim::scenario {
namespace {

std::string gib(Bytes b) {
  std::ostringstream os;
  os.precision(2);
  os << std::fixed << b.as_double() / static_cast<double>(kGiB.value) << " GiB";
  return os.str();
}

std::int64_t total_gpus(const Scenario& sc) {
  std::int64_t gpus = 0;
  for (const auto& server : sc.hardware.servers)
    gpus += static_cast<std::int64_t>(server.count) * server.gpus_per_server;
  return gpus;
}

models::MemoryInputs memory_inputs(const Scenario& sc, std::int64_t max_model_len) {
  const auto& gpu = sc.hardware.servers.front().gpu;
  models::MemoryInputs mem;
  mem.total_memory = gpu.memory;
  mem.total_memory_max = gpu.memory_max;
  mem.gpu_memory_utilization = sc.engine.gpu_memory_utilization;
  mem.model = sc.model;
  mem.max_num_batched_tokens = sc.engine.max_num_batched_tokens;
  mem.max_num_seqs = sc.engine.max_num_seqs;
  mem.max_model_len = max_model_len;
  mem.block_size = sc.engine.block_size;
  mem.enforce_eager = sc.engine.enforce_eager;
  mem.num_gpu_blocks_override = sc.engine.num_gpu_blocks_override;
  mem.tensor_parallel_size = sc.engine.tensor_parallel_size;
  mem.expert_parallel_size = moe_layout(sc).expert_parallel_size;
  // What changed between vLLM releases (docs/models.md "vLLM versions"): 0.10 profiles no CUDA
  // graph memory before its last reading and samples with FlashInfer in the profile run.
  const bool v010 = engine::vllm_version_code(sc.engine.vllm_version) < 11;
  // 0.10 takes its last memory reading before any CUDA graph exists, so its non-torch growth is
  // kernel modules and library state: 0.13 GiB on one GPU, 0.55 GiB with NCCL's buffers at TP 2
  // (vLLM V1 debug memory profiles, llm-d/llm-d-benchmark config_explorer; docs/models.md).
  const double v010_non_torch_gib = sc.engine.tensor_parallel_size > 1 ? 0.55 : 0.13;
  mem.non_torch_memory = sc.engine.non_torch_memory.value > 0
                             ? sc.engine.non_torch_memory
                             : (v010 ? Bytes{static_cast<std::int64_t>(
                                           v010_non_torch_gib * static_cast<double>(kGiB.value))}
                                     : mem.non_torch_memory);
  if (v010) mem.sampler_profile = models::SamplerProfile::kFlashInferTopKTopP;
  if (gpu.num_sms > 0) mem.gpu_num_sms = gpu.num_sms;
  return mem;
}

std::optional<ScenarioProblem> check_servers_and_layout(const Scenario& sc) {
  if (sc.hardware.servers.empty())
    return ScenarioProblem{"hardware.servers", "at least one server is needed"};
  if (sc.engine.scheduling_policy != engine::SchedulingPolicy::kFcfs) {
    return ScenarioProblem{"engine.scheduling_policy",
                           "only 'fcfs' is modelled (requests carry no priorities)"};
  }
  if (sc.engine.prefix_cache_sequences > 0 &&
      sc.engine.prefix_cache_sequences < sc.engine.max_num_seqs) {
    return ScenarioProblem{"engine.prefix_cache_sequences",
                           "each running request holds a sequence: at least max_num_seqs (" +
                               std::to_string(sc.engine.max_num_seqs) + ")"};
  }
  if (sc.engine.prepare_max_running >= 0 && sc.engine.prefix_cache_sequences == 0 &&
      sc.kv_offload.connector != engine::KvConnector::kLmcache) {
    return ScenarioProblem{"engine.prepare_max_running",
                           "gates synchronous loads and sequence erases: needs "
                           "kv_offload.connector lmcache or engine.prefix_cache_sequences"};
  }
  const std::int64_t gpus = total_gpus(sc);
  if (gpus > limits::kMaxGpus) {
    return ScenarioProblem{
        "hardware.servers",
        std::to_string(gpus) + " GPUs (count x gpus_per_server) are past kvsim's limit of " +
            std::to_string(limits::kMaxGpus) + " GPUs in one run (docs/limits.md)"};
  }
  const auto& gpu = sc.hardware.servers.front().gpu;
  for (const auto& server : sc.hardware.servers) {
    if (server.gpu.name != gpu.name || server.gpu.memory != gpu.memory) {
      return ScenarioProblem{"hardware.servers", "all servers must have the same GPU for now"};
    }
  }
  // Tensor parallelism: each replica spans tp GPUs of one server (models/tensor_parallel.hpp).
  const int tp = sc.engine.tensor_parallel_size;
  const int dp = sc.engine.data_parallel_size;
  for (std::size_t i = 0; i < sc.hardware.servers.size(); ++i) {
    const int per_server = sc.hardware.servers[i].gpus_per_server;
    if (per_server % tp != 0) {
      return ScenarioProblem{"engine.tensor_parallel_size",
                             "must divide hardware.servers." + std::to_string(i) +
                                 ".gpus_per_server (" + std::to_string(per_server) + "), got " +
                                 std::to_string(tp)};
    }
    if (per_server % (tp * dp) != 0) {
      return ScenarioProblem{
          "engine.data_parallel_size",
          "tensor_parallel_size x data_parallel_size (" + std::to_string(tp * dp) +
              ") must divide hardware.servers." + std::to_string(i) + ".gpus_per_server (" +
              std::to_string(per_server) + "): a deployment's ranks share one server"};
    }
  }
  if (sc.engine.enable_expert_parallel && !sc.model.is_moe()) {
    return ScenarioProblem{"engine.enable_expert_parallel",
                           sc.model.name + " has no experts (num_experts 0)"};
  }
  try {
    models::check_tensor_parallel(sc.model, tp,
                                  sc.model.is_moe() ? moe_layout(sc).expert_parallel_size : 1);
  } catch (const InputError& e) {
    const Diagnostic& d = e.diagnostics().front();
    return ScenarioProblem{d.path, d.message};
  }
  return std::nullopt;
}

std::optional<ScenarioProblem> check_kv_cache(const Scenario& sc, const EngineSizing& s) {
  const auto& kv = s.kv;
  if (sc.engine.num_gpu_blocks_override > 0 && kv.num_blocks < 2) {
    return ScenarioProblem{
        "engine.num_gpu_blocks_override",
        "num_gpu_blocks_override " + std::to_string(kv.num_blocks) +
            " leaves no block for requests: vLLM keeps one as its null block, so give at least 2"};
  }
  if (kv.num_blocks > limits::kMaxGpuBlocks) {
    return ScenarioProblem{"engine.block_size",
                           "the GPU's free memory holds " + std::to_string(kv.num_blocks) +
                               " KV blocks, past kvsim's limit of " +
                               std::to_string(limits::kMaxGpuBlocks) +
                               " blocks per GPU (docs/limits.md): raise engine.block_size or "
                               "set engine.num_gpu_blocks_override"};
  }
  if (kv.num_blocks < 2) {
    return ScenarioProblem{"engine.gpu_memory_utilization",
                           "no memory is left for the KV cache: weights " + gib(kv.weights) +
                               " + activations " + gib(kv.activation_peak) + " + non-torch " +
                               gib(kv.non_torch) + " exceed " + gib(kv.requested) +
                               " (vLLM: \"No available memory for the cache blocks\")"};
  }
  if (!kv.fits_max_model_len) {
    // vLLM's _check_enough_kv_cache_memory refuses to start in this case.
    const int tp = sc.engine.tensor_parallel_size;
    std::ostringstream os;
    os << "to serve one request at max_model_len " << s.max_model_len << ", "
       << gib(models::kv_bytes_per_token_per_gpu(sc.model, tp) * s.max_model_len) << " of KV cache"
       << (tp > 1 ? " per GPU" : "") << " is needed, more than the available "
       << gib(models::kv_bytes_per_token_per_gpu(sc.model, tp) * kv.kv_tokens)
       << "; the estimated maximum model length is " << kv.kv_tokens
       << ". Increase gpu_memory_utilization or decrease max_model_len (as vLLM says at start-up)";
    return ScenarioProblem{"engine.max_model_len", os.str()};
  }
  // Every engine holds its block pool for the whole run.
  if (s.replicas * kv.num_blocks > limits::kMaxTotalGpuBlocks) {
    return ScenarioProblem{
        "hardware.servers",
        std::to_string(s.replicas) + " engines of " + std::to_string(kv.num_blocks) +
            " KV blocks hold " + std::to_string(s.replicas * kv.num_blocks) +
            " blocks, past kvsim's limit of " + std::to_string(limits::kMaxTotalGpuBlocks) +
            " blocks in one run (docs/limits.md): simulate fewer servers or set "
            "engine.num_gpu_blocks_override"};
  }
  return std::nullopt;
}

std::optional<ScenarioProblem> check_offload(const Scenario& sc) {
  const auto& ko = sc.kv_offload;
  if (ko.connector == engine::KvConnector::kNone) return std::nullopt;
  const bool need_network = has_remote_tier(ko);
  if (need_network && !sc.hardware.remote_store) {
    return ScenarioProblem{"kv_offload.tiers", "a remote tier needs hardware.remote_store"};
  }
  if (need_network) {
    for (std::size_t group = 0; group < sc.hardware.servers.size(); ++group) {
      if (sc.hardware.servers[group].nic.rate.value <= 0) {
        return ScenarioProblem{"hardware.servers." + std::to_string(group) + ".nic.rate",
                               "a remote tier needs every server's NIC"};
      }
    }
  }
  const int chunk_tokens = offload_chunk_tokens(sc);
  if (chunk_tokens % sc.engine.block_size != 0) {
    return ScenarioProblem{
        "kv_offload.chunk_tokens",
        "must be a multiple of engine.block_size (" + std::to_string(sc.engine.block_size) + ")"};
  }
  const std::int64_t chunk_bytes =
      replica_block_bytes(sc).value * (chunk_tokens / sc.engine.block_size);
  for (std::size_t t = 0; t < ko.tiers.size(); ++t) {
    const auto& ts = ko.tiers[t];
    const std::string tpath = "kv_offload.tiers." + std::to_string(t);
    if (ts.capacity.value / chunk_bytes < 1)
      return ScenarioProblem{tpath + ".capacity", "smaller than one KV chunk"};
    for (const auto& server : sc.hardware.servers) {
      switch (ts.kind) {
        case engine::KvTierKind::kHostDram:
          if (server.host.dram.value > 0 && ts.capacity > server.host.dram)
            return ScenarioProblem{tpath + ".capacity", "more than the host's DRAM"};
          break;
        case engine::KvTierKind::kLocalNvme:
          if (!server.local_nvme) {
            return ScenarioProblem{tpath,
                                   "a local_nvme tier needs local_nvme drives in every server"};
          }
          break;
        case engine::KvTierKind::kRemote:
          break;  // the store and the NICs are checked above
      }
    }
  }
  return std::nullopt;
}

}  // namespace

models::MoeLayout moe_layout(const Scenario& sc) {
  models::MoeLayout l;
  if (!sc.model.is_moe()) return l;
  const int tp = sc.engine.tensor_parallel_size;
  const int dp = sc.engine.data_parallel_size;
  // With d > 1 ranks vLLM splits the experts over tp x d GPUs whether or not expert parallelism
  // is on (without it each expert is split, with it the experts are): the same weights and work
  // per GPU. Each rank's MoE layers see every rank's tokens.
  if (dp > 1 || sc.engine.enable_expert_parallel) l.expert_parallel_size = tp * dp;
  l.tokens_factor = dp;
  return l;
}

Bytes replica_block_bytes(const Scenario& sc) {
  const int tp = sc.engine.tensor_parallel_size;
  return models::kv_bytes_per_token_per_gpu(sc.model, tp) *
         (static_cast<std::int64_t>(tp) * sc.engine.block_size);
}

int offload_chunk_tokens(const Scenario& sc) {
  const auto& ko = sc.kv_offload;
  if (ko.chunk_tokens > 0) return ko.chunk_tokens;
  switch (ko.connector) {
    case engine::KvConnector::kLmcache:
      return 256;  // LMCache's chunk_size default
    case engine::KvConnector::kNone:
    case engine::KvConnector::kNative:
      break;
  }
  return sc.engine.block_size;
}

EngineSizing size_engines(const Scenario& sc) {
  EngineSizing s;
  s.max_model_len =
      sc.engine.max_model_len > 0 ? sc.engine.max_model_len : sc.model.max_position_embeddings;
  s.gpus = total_gpus(sc);
  s.replicas = s.gpus / sc.engine.tensor_parallel_size;
  s.kv = models::kv_capacity(memory_inputs(sc, s.max_model_len));
  if (!s.kv.started_note.empty()) s.notes.push_back(s.kv.started_note);
  return s;
}

bool has_remote_tier(const engine::KvOffloadSpec& ko) {
  return std::any_of(ko.tiers.begin(), ko.tiers.end(),
                     [](const auto& t) { return t.kind == engine::KvTierKind::kRemote; });
}

CheckedDeployment check_and_size(const Scenario& sc) {
  CheckedDeployment c;
  if ((c.problem = check_servers_and_layout(sc))) return c;
  try {
    c.sizing = size_engines(sc);
    if ((c.problem = check_kv_cache(sc, c.sizing))) return c;
  } catch (const InputError& e) {
    const Diagnostic& d = e.diagnostics().front();
    c.problem = ScenarioProblem{d.path, d.message};
    return c;
  }
  c.problem = check_offload(sc);
  return c;
}

std::optional<ScenarioProblem> check_deployment(const Scenario& sc) {
  return check_and_size(sc).problem;
}

}  // namespace kvsim::scenario
