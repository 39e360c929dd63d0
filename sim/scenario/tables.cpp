#include "sim/scenario/tables.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <sstream>
#include <string_view>

#include "sim/core/limits.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/suggest.hpp"
#include "sim/scenario/units.hpp"

namespace kvsim::scenario {
namespace {

// Tokens of a request, a message or a context: kvsim's stated limit (docs/limits.md).
constexpr double kMaxTokens = static_cast<double>(limits::kMaxTokens);
const Range kTokenLimit = Range::closed(0, kMaxTokens);

void issue(std::vector<FieldIssue>& issues, std::string path, ProblemClass problem,
           std::string message) {
  issues.push_back(FieldIssue{std::move(path), problem, std::move(message)});
}

StructTable make_host_link_table() {
  return TableBuilder<hw::HostLinkSpec>(
             "HostLinkSpec",
             "The GPU's PCIe link to host memory: measured practical rates per direction with "
             "pinned memory.")
      .enumeration<hw::PcieGen>(
          "gen", &hw::HostLinkSpec::gen,
          {{"3", hw::PcieGen::kGen3}, {"4", hw::PcieGen::kGen4}, {"5", hw::PcieGen::kGen5}},
          "PCIe generation.")
      .integer("lanes", &hw::HostLinkSpec::lanes, "PCIe lanes.", Range::closed(1, 32))
      .byte_rate("h2d", &hw::HostLinkSpec::h2d, "Host-to-device copy rate, one direction alone.",
                 Range::above(0))
      .required()
      .byte_rate("d2h", &hw::HostLinkSpec::d2h, "Device-to-host copy rate, one direction alone.",
                 Range::above(0))
      .required()
      .byte_rate("bidirectional_each", &hw::HostLinkSpec::bidirectional_each,
                 "Rate of each direction while both directions copy at once.", Range::above(0))
      .required()
      .build();
}

StructTable make_pair_collectives_table() {
  using hw::PairCollectives;
  return TableBuilder<PairCollectives>(
             "PairCollectives",
             "NCCL collectives measured between two GPUs of this kind in one server (nccl-tests "
             "sizes: all_reduce its input, all_gather each GPU's input, reduce_scatter each GPU's "
             "output); times of one call, interpolated linearly between sizes.")
      .double_list("bytes", &PairCollectives::bytes, "Message sizes, increasing.", Range::above(0))
      .required()
      .double_list("all_reduce_us", &PairCollectives::all_reduce_us,
                   "All-reduce time at each size, microseconds.", Range::above(0))
      .required()
      .double_list("all_gather_us", &PairCollectives::all_gather_us,
                   "All-gather time at each size, microseconds.", Range::above(0))
      .required()
      .double_list("reduce_scatter_us", &PairCollectives::reduce_scatter_us,
                   "Reduce-scatter time at each size, microseconds.", Range::above(0))
      .required()
      .string("source", &PairCollectives::source, "Where the measurement comes from.")
      .check([](PairCollectives& c, const KeyGiven&, std::vector<FieldIssue>& issues) {
        for (std::size_t i = 1; i < c.bytes.size(); ++i) {
          if (!(c.bytes[i] > c.bytes[i - 1])) {
            issues.push_back({"bytes", ProblemClass::kBadValue,
                              "sizes must increase (entry " + std::to_string(i) + ")"});
            break;
          }
        }
        const auto same = [&](const std::vector<double>& v, const char* key) {
          if (v.size() != c.bytes.size()) {
            issues.push_back({key, ProblemClass::kBadValue,
                              "needs one time per size: " + std::to_string(v.size()) + " for " +
                                  std::to_string(c.bytes.size()) + " sizes"});
          }
        };
        same(c.all_reduce_us, "all_reduce_us");
        same(c.all_gather_us, "all_gather_us");
        same(c.reduce_scatter_us, "reduce_scatter_us");
      })
      .build();
}

const StructTable& pair_collectives_table() {
  static const StructTable t = make_pair_collectives_table();
  return t;
}

StructTable make_gpu_table() {
  return TableBuilder<hw::GpuSpec>(
             "GpuSpec",
             "One GPU. `preset: <name>` copies an entry of the catalog's gpus.yaml; keys beside it "
             "override the entry's values.")
      .preset_catalog("gpus")
      .string("name", &hw::GpuSpec::name, "Catalog name, e.g. rtx4090.")
      .bytes("memory", &hw::GpuSpec::memory, "Total device memory as CUDA reports it.",
             Range::above(0))
      .required()
      .bytes(
          "memory_max", &hw::GpuSpec::memory_max,
          "The most CUDA reports for this card on other hosts (driver, display, WSL), at most "
          "nvidia-smi's total; 0B, or not above memory (a memory given beside a preset): none. A "
          "deployment vLLM refuses at memory but starts at memory_max is sized at the smallest "
          "KV cache that starts, with a note, instead of refused.",
          Range::at_least(0))
      .byte_rate("memory_bandwidth", &hw::GpuSpec::memory_bandwidth, "Peak memory bandwidth.",
                 Range::above(0))
      .required()
      .flop_rate("bf16_dense", &hw::GpuSpec::bf16_dense,
                 "Dense BF16 tensor throughput with PyTorch's accumulate mode (FP32 accumulate; "
                 "half rate on GeForce cards).",
                 Range::above(0))
      .required()
      .flop_rate("fp8_dense", &hw::GpuSpec::fp8_dense,
                 "Dense FP8 tensor throughput; 0FLOPS when the GPU has no FP8 tensor cores.",
                 Range::at_least(0))
      .nested("host_link", &hw::GpuSpec::host_link, host_link_table(), "The PCIe link to the host.")
      .required()
      .boolean("p2p", &hw::GpuSpec::p2p, "GPU peer-to-peer transfers supported.")
      .byte_rate("nvlink", &hw::GpuSpec::nvlink,
                 "NVLink rate per direction between two GPUs of a server (half the marketed "
                 "bidirectional figure); 0B/s: none, tensor-parallel traffic uses PCIe (through "
                 "host memory without p2p).",
                 Range::at_least(0))
      .boolean("gpudirect", &hw::GpuSpec::gpudirect, "GPUDirect RDMA / Storage supported.")
      .integer("num_sms", &hw::GpuSpec::num_sms,
               "Streaming multiprocessors (vLLM's sampler buffer in the memory profile scales "
               "with them); 0: not stated (128 is assumed).",
               Range::at_least(0))
      .string("cuda_name", &hw::GpuSpec::cuda_name,
              "Device name as CUDA and nvidia-smi report it; a measured kernel profile of this "
              "name is what compute.kind auto picks.")
      .nested("nccl_pair", &hw::GpuSpec::nccl_pair, pair_collectives_table(),
              "NCCL collectives measured between two such GPUs; absent: kvsim's ring model "
              "(docs/models.md, Measured NCCL between two GPUs).")
      .string("source", &hw::GpuSpec::source, "Citations for the figures.")
      .build();
}

StructTable make_nvme_drive_table() {
  using hw::NvmeDriveSpec;
  return TableBuilder<NvmeDriveSpec>(
             "NvmeDriveSpec",
             "One NVMe drive. `preset: <name>` copies an entry of the catalog's drives.yaml.")
      .preset_catalog("drives")
      .string("name", &NvmeDriveSpec::name, "Catalog name.")
      .byte_rate("read", &NvmeDriveSpec::read, "Sequential read rate, large I/O.", Range::above(0))
      .required()
      .byte_rate("write", &NvmeDriveSpec::write, "Sequential write rate, large I/O.", Range::above(0))
      .required()
      .time("read_latency", &NvmeDriveSpec::read_latency, "Command to first byte of a read.",
            Range::at_least(0))
      .time("write_latency", &NvmeDriveSpec::write_latency, "Command to acknowledgement of a write.",
            Range::at_least(0))
      .real("read_iops", &NvmeDriveSpec::read_iops, "4 KiB random reads per second.", Range::at_least(0))
      .real("write_iops", &NvmeDriveSpec::write_iops, "4 KiB random writes per second.", Range::at_least(0))
      .integer("queue_depth", &NvmeDriveSpec::queue_depth, "I/Os the host keeps outstanding.",
               Range::at_least(0))
      .string("source", &NvmeDriveSpec::source, "Where the figures come from.")
      .build();
}

StructTable make_storage_node_table() {
  using hw::StorageNodeSpec;
  return TableBuilder<StorageNodeSpec>(
             "StorageNodeSpec",
             "A network-attached KV store: its NIC, controller and NVMe drives. `preset: <name>` "
             "copies an entry of the catalog's storage.yaml.")
      .preset_catalog("storage")
      .string("name", &StorageNodeSpec::name, "Catalog name.")
      .byte_rate("nic", &StorageNodeSpec::nic, "Effective network rate of the node, each direction.",
                 Range::above(0))
      .required()
      .time("nic_latency", &StorageNodeSpec::nic_latency, "Network latency to the first byte.",
            Range::at_least(0))
      .byte_rate("controller", &StorageNodeSpec::controller,
                 "What the node's controller moves, reads and writes together.", Range::above(0))
      .required()
      .integer("num_drives", &StorageNodeSpec::num_drives, "NVMe drives in the node.",
               Range::at_least(1))
      .required()
      .nested("drive", &StorageNodeSpec::drive, nvme_drive_table(), "The node's drive model.")
      .required()
      .time("software_latency", &StorageNodeSpec::software_latency,
            "Target software time per request (NVMe-oF target, KV index).", Range::at_least(0))
      .string("source", &StorageNodeSpec::source, "Where the figures come from, or the assumptions.")
      .build();
}

StructTable make_host_table() {
  return TableBuilder<hw::HostSpec>("HostSpec", "The server's host.")
      .bytes("dram", &hw::HostSpec::dram,
             "Installed DRAM; host_dram KV tiers must fit in it (0: not checked).", Range::at_least(0))
      .byte_rate("dram_bandwidth", &hw::HostSpec::dram_bandwidth,
                 "Memory bandwidth shared by every KV copy into or out of host memory (STREAM-like "
                 "sustained rate, e.g. ~70 GB/s for 2 x DDR5-5600); 0: not a bottleneck.",
                 Range::at_least(0))
      .build();
}

StructTable make_nic_table() {
  return TableBuilder<hw::NicSpec>("NicSpec", "The server's RDMA NIC toward the storage network.")
      .byte_rate("rate", &hw::NicSpec::rate,
                 "Effective rate per direction (~23 GB/s for 200 Gb/s RDMA); 0: no NIC.",
                 Range::at_least(0))
      .time("latency", &hw::NicSpec::latency, "One-sided RDMA latency.", Range::at_least(0))
      .build();
}

StructTable make_local_nvme_table() {
  return TableBuilder<hw::LocalNvmeSpec>("LocalNvmeSpec", "NVMe drives inside the server.")
      .integer("count", &hw::LocalNvmeSpec::count, "Number of drives.", Range::at_least(1))
      .nested("drive", &hw::LocalNvmeSpec::drive, nvme_drive_table(), "The drive model.")
      .required()
      .enumeration<hw::PcieGen>(
          "gen", &hw::LocalNvmeSpec::gen,
          {{"3", hw::PcieGen::kGen3}, {"4", hw::PcieGen::kGen4}, {"5", hw::PcieGen::kGen5}},
          "PCIe generation of each drive's slot.")
      .integer("lanes", &hw::LocalNvmeSpec::lanes, "PCIe lanes per drive.", Range::closed(1, 16))
      .build();
}

StructTable make_server_table() {
  return TableBuilder<hw::ServerSpec>("ServerSpec",
                                      "`count` identical machines, each with `gpus_per_server` "
                                      "GPUs of one kind.")
      .string("name", &hw::ServerSpec::name, "Name of this server group in results.")
      .integer("count", &hw::ServerSpec::count, "Number of identical servers.", Range::at_least(1))
      .integer("gpus_per_server", &hw::ServerSpec::gpus_per_server,
               "GPUs in each server; not given: engine.tensor_parallel_size x "
               "engine.data_parallel_size (one vLLM deployment per server).",
               Range::at_least(1))
      .nested("gpu", &hw::ServerSpec::gpu, gpu_table(), "The GPU model of every GPU here.")
      .required()
      .nested("host", &hw::ServerSpec::host, host_table(), "The host: DRAM.")
      .nested("nic", &hw::ServerSpec::nic, nic_table(), "RDMA NIC to the storage network.")
      .optional_nested("local_nvme", &hw::ServerSpec::local_nvme, local_nvme_table(),
                       "Local NVMe drives (absent: none).")
      .check([](hw::ServerSpec& sv, const KeyGiven& given, std::vector<FieldIssue>&) {
        sv.gpus_per_server_auto = !given("gpus_per_server");
      })
      .build();
}

StructTable make_hardware_table() {
  return TableBuilder<hw::HardwareSpec>("HardwareSpec", "The machines that serve the model.")
      .list("servers", &hw::HardwareSpec::servers, server_table(), "Server groups.",
            Range::at_least(1))
      .required()
      .optional_nested("remote_store", &hw::HardwareSpec::remote_store, storage_node_table(),
                       "The network-attached KV store shared by all servers.")
      .time("switch_latency", &hw::HardwareSpec::switch_latency,
            "Forwarding latency of the network switch between servers and the store.",
            Range::at_least(0))
      .build();
}

StructTable make_model_table() {
  using models::DType;
  using models::ModelSpec;
  const std::vector<std::pair<std::string, DType>> dtypes = {{"bf16", DType::kBf16},
                                                             {"fp16", DType::kFp16},
                                                             {"fp8", DType::kFp8},
                                                             {"int8", DType::kInt8},
                                                             {"int4", DType::kInt4}};
  return TableBuilder<ModelSpec>(
             "ModelSpec",
             "The shape of a decoder-only LLM (Hugging Face config.json names). `preset: <name>` "
             "copies an entry of the catalog's models.yaml, `hf_config: <config.json>` reads a "
             "Hugging Face config (llama, mistral, qwen2, qwen3, qwen3_moe, mixtral, qwen2_moe; "
             "relative to the scenario); keys beside either override it.")
      .preset_catalog("models")
      .file_preset("hf_config")
      .string("name", &ModelSpec::name, "Catalog name, e.g. llama-3.1-8b.")
      .string("hf_id", &ModelSpec::hf_id, "Hugging Face id, e.g. meta-llama/Llama-3.1-8B-Instruct.")
      .integer("num_layers", &ModelSpec::num_layers, "Decoder layers (num_hidden_layers).",
               Range::at_least(1))
      .required()
      .integer("hidden_size", &ModelSpec::hidden_size, "Model width.", Range::at_least(1))
      .required()
      .integer("num_attention_heads", &ModelSpec::num_attention_heads, "Query heads.",
               Range::at_least(1))
      .required()
      .integer("num_kv_heads", &ModelSpec::num_kv_heads,
               "Key/value heads (num_key_value_heads); must divide num_attention_heads.",
               Range::at_least(1))
      .required()
      .integer("head_dim", &ModelSpec::head_dim, "Dimension of one attention head.",
               Range::at_least(1))
      .required()
      .integer("intermediate_size", &ModelSpec::intermediate_size, "MLP inner width.",
               Range::at_least(1))
      .required()
      .integer("vocab_size", &ModelSpec::vocab_size, "Vocabulary size.", Range::at_least(1))
      .required()
      .int64("num_params", &ModelSpec::num_params,
             "Total parameters, embeddings included; derived from the shape (docs/models.md), so "
             "a value given here must equal it.",
             Range::closed(1, 1e15))
      .boolean("tie_word_embeddings", &ModelSpec::tie_word_embeddings,
               "Input and output embeddings share one matrix.")
      .integer("max_position_embeddings", &ModelSpec::max_position_embeddings,
               "Longest context the model supports (engine.max_model_len 0 means this).",
               Range::closed(1, kMaxTokens))
      .required()
      .enumeration<DType>("dtype", &ModelSpec::dtype, dtypes,
                          "Weight dtype of the linear layers: bf16/fp16; fp8 (W8A8, FP8 tensor "
                          "cores where the GPU has them); int8/int4 weight-only with group "
                          "scales (AWQ/GPTQ). Embeddings, lm_head and norms stay 16-bit.")
      .enumeration<DType>("kv_dtype", &ModelSpec::kv_dtype, dtypes,
                          "KV cache dtype (vLLM kv_cache_dtype): bf16, fp16 or fp8; when not "
                          "given, \"auto\": the weight dtype for bf16/fp16 models, bf16 for "
                          "quantized ones (their activations are 16-bit).")
      .integer("quant_group_size", &ModelSpec::quant_group_size,
               "int8/int4 weight-only: input rows per FP16 scale and zero point.",
               Range::at_least(1))
      .boolean("qkv_bias", &ModelSpec::qkv_bias, "q/k/v projections carry biases (Qwen2.5).")
      .boolean("qk_norm", &ModelSpec::qk_norm, "Per-head RMSNorm on q and k (Qwen3).")
      .integer("num_experts", &ModelSpec::num_experts,
               "Routed experts per MoE layer (num_experts, Mixtral's num_local_experts); 0: a "
               "dense model.",
               Range::at_least(0))
      .integer("num_experts_per_tok", &ModelSpec::num_experts_per_tok,
               "Experts each token runs through (top-k).", Range::at_least(0))
      .integer("moe_intermediate_size", &ModelSpec::moe_intermediate_size,
               "Inner width of one expert (Mixtral: its intermediate_size).", Range::at_least(0))
      .integer("shared_expert_intermediate_size", &ModelSpec::shared_expert_intermediate_size,
               "Inner width of a shared expert every token runs through (Qwen2-MoE); 0: none.",
               Range::at_least(0))
      .integer("num_dense_layers", &ModelSpec::num_dense_layers,
               "Layers of an MoE model whose MLP is dense (intermediate_size): mlp_only_layers and "
               "the layers decoder_sparse_step skips.",
               Range::at_least(0))
      .string("source", &ModelSpec::source, "Citations for the figures.")
      .check([](ModelSpec& m, const KeyGiven& given, std::vector<FieldIssue>& issues) {
        if (given("dtype") && !given("kv_dtype")) {
          // vLLM kv_cache_dtype "auto": the model's activation dtype, 16-bit for quantized
          // checkpoints (vllm/config/cache.py; fp8 KV only when asked).
          m.kv_dtype = m.dtype == DType::kFp16 ? DType::kFp16 : DType::kBf16;
        }
        if (m.kv_dtype == DType::kInt8 || m.kv_dtype == DType::kInt4) {
          issue(issues, "kv_dtype", ProblemClass::kBadValue,
                std::string("must be bf16, fp16 or fp8 (vLLM kv_cache_dtype), got ") +
                    models::dtype_name(m.kv_dtype));
        }
        if (m.num_kv_heads > 0 && m.num_attention_heads > 0 &&
            m.num_attention_heads % m.num_kv_heads != 0) {
          issue(issues, "num_kv_heads", ProblemClass::kBadValue,
                "must divide num_attention_heads (" + std::to_string(m.num_attention_heads) +
                    "), got " + std::to_string(m.num_kv_heads));
        }
        if (m.num_experts > 0) {
          if (m.num_experts_per_tok < 1 || m.num_experts_per_tok > m.num_experts) {
            issue(issues, "num_experts_per_tok", ProblemClass::kBadValue,
                  "must lie in [1, num_experts = " + std::to_string(m.num_experts) + "] for an MoE model, got " +
                      std::to_string(m.num_experts_per_tok));
          }
          if (m.moe_intermediate_size < 1) {
            issue(issues, "moe_intermediate_size", ProblemClass::kBadValue, "must be at least 1 for an MoE model");
          }
          if (m.num_dense_layers >= m.num_layers) {
            issue(issues, "num_dense_layers", ProblemClass::kBadValue,
                  "must be less than num_layers (" + std::to_string(m.num_layers) + ") for an MoE model");
          }
        } else if (m.num_experts_per_tok > 0 || m.moe_intermediate_size > 0 || m.num_dense_layers > 0 ||
                   m.shared_expert_intermediate_size > 0) {
          issue(issues, "num_experts", ProblemClass::kBadValue,
                "the MoE keys need num_experts > 0 (0 is a dense model)");
        }
        // Parameters follow from the shape; a number given beside it must agree (a stale count
        // would silently change the weight bytes and so the KV capacity).
        if (issues.empty() && m.num_layers > 0 && m.hidden_size > 0 && m.head_dim > 0) {
          const std::int64_t derived = models::params_from_shape(m);
          if (given("num_params") && m.num_params != derived) {
            issue(issues, "num_params", ProblemClass::kBadValue,
                  "disagrees with the shape: the shape gives " + std::to_string(derived) +
                      " parameters (docs/models.md); remove num_params or fix the shape");
          }
          m.num_params = derived;
        }
      })
      .build();
}

StructTable make_engine_table() {
  using engine::EngineConfig;
  return TableBuilder<EngineConfig>(
             "EngineConfig",
             "vLLM V1 engine arguments with vLLM's names; defaults are `vllm serve`'s for the GPU "
             "and the vLLM version (vllm/engine/arg_utils.py get_batch_defaults).")
      .string("vllm_version", &EngineConfig::vllm_version,
              "The vLLM release modelled (\"major.minor\", 0.10 or later): picks the defaults of "
              "async_scheduling (0.14+), scheduler_reserve_full_isl (0.19+) and the CUDA graph "
              "mode (full graphs for decode steps from 0.11; docs/engine.md \"vLLM versions\").")
      .integer("max_num_seqs", &EngineConfig::max_num_seqs,
               "Most sequences in one step; 0: vllm serve's default (1024 on GPUs with 70 GiB or "
               "more but the A100, else 256).",
               Range::at_least(0))
      .integer(
          "max_num_batched_tokens", &EngineConfig::max_num_batched_tokens,
          "Token budget of one step; 0: vllm serve's default (8192 on GPUs with 70 GiB or more "
          "but the A100, else 2048).",
          Range::closed(0, kMaxTokens))
      .real("gpu_memory_utilization", &EngineConfig::gpu_memory_utilization,
            "Fraction of GPU memory the instance may use (weights, activations, KV cache).",
            Range::open_closed(0, 1))
      .integer("block_size", &EngineConfig::block_size, "Tokens per KV cache block.",
               Range::at_least(1))
      .boolean("enable_prefix_caching", &EngineConfig::enable_prefix_caching,
               "Reuse cached KV blocks of equal prefixes.")
      .integer("prefix_cache_sequences", &EngineConfig::prefix_cache_sequences,
               "Not a vLLM setting: 0 (the default) is vLLM's block prefix cache; N > 0 models an "
               "engine of N context sequences that each keep the last prompt they ran "
               "(llama.cpp's server slots): a request reuses the idle sequence it continues, else "
               "takes an empty one, else erases the least recently used idle one. At least "
               "max_num_seqs (each running request holds one).",
               Range::at_least(0))
      .integer("prepare_max_running", &EngineConfig::prepare_max_running,
               "Not a vLLM setting: -1 (the default) starts a request whenever the scheduler "
               "admits it; N >= 0 models an engine that prepares a request's sequence only "
               "between batches it has to itself (the CPU engine: its batch loop keeps the "
               "context while two or more sequences decode): a request that needs a synchronous "
               "load (kv_offload.connector lmcache) or, with prefix_cache_sequences, a sequence "
               "whose tokens it does not continue waits until a step that at most N other "
               "requests run in; the requests behind it go ahead meanwhile. kvsim probe "
               "--offload measures it.",
               Range::at_least(-1))
      .boolean("enable_chunked_prefill", &EngineConfig::enable_chunked_prefill,
               "Split long prefills over steps.")
      .integer("max_model_len", &EngineConfig::max_model_len,
               "Longest prompt + output; 0 means the model's max_position_embeddings.",
               Range::closed(0, kMaxTokens))
      .boolean("async_scheduling", &EngineConfig::async_scheduling,
               "Schedule step N+1 while step N runs; default: on from vLLM 0.14.")
      .boolean("scheduler_reserve_full_isl", &EngineConfig::scheduler_reserve_full_isl,
               "Admit a waiting request only when its whole prompt beyond its cache hits fits in "
               "the free KV blocks (vllm/config/scheduler.py); default: on from vLLM 0.19.")
      .bytes("non_torch_memory", &EngineConfig::non_torch_memory,
             "Memory outside PyTorch's allocator that vLLM's start-up profile subtracts (its log's "
             "non_torch_memory); 0B: the version's default (0.6GiB from vLLM 0.11 on; for 0.10 "
             "0.13GiB on one GPU, 0.55GiB with tensor parallelism; docs/models.md).",
             Range::at_least(0))
      .int64("num_gpu_blocks_override", &EngineConfig::num_gpu_blocks_override,
             "KV cache blocks; 0 derives them from memory as vLLM does.",
             Range::closed(0, static_cast<double>(limits::kMaxGpuBlocks)))
      .integer("long_prefill_token_threshold", &EngineConfig::long_prefill_token_threshold,
               "Most prefill tokens of one request per step; 0 means no cap.",
               Range::closed(0, kMaxTokens))
      .enumeration<engine::SchedulingPolicy>("scheduling_policy", &EngineConfig::scheduling_policy,
                                             {{"fcfs", engine::SchedulingPolicy::kFcfs},
                                              {"priority", engine::SchedulingPolicy::kPriority}},
                                             "Order of waiting requests.")
      .boolean("enforce_eager", &EngineConfig::enforce_eager, "Run without CUDA graphs.")
      .integer("tensor_parallel_size", &EngineConfig::tensor_parallel_size,
               "GPUs per engine replica (vLLM --tensor-parallel-size); must divide each "
               "server's GPUs and the model's attention heads. Replicas per server = GPUs / "
               "this; docs/models.md \"Tensor parallelism\".",
               Range::closed(1, 8))
      .integer("data_parallel_size", &EngineConfig::data_parallel_size,
               "Data-parallel ranks per deployment (vLLM --data-parallel-size): engines of "
               "tensor_parallel_size GPUs each behind one API server; an MoE model's ranks pass "
               "every MoE layer together. tensor_parallel_size x this must divide each server's "
               "GPUs.",
               Range::closed(1, 64))
      .boolean("enable_expert_parallel", &EngineConfig::enable_expert_parallel,
               "Split an MoE model's experts over tensor_parallel_size x data_parallel_size GPUs "
               "(vLLM --enable-expert-parallel).")
      .time("output_latency", &EngineConfig::output_latency,
            "Time from a token leaving the engine to the client seeing it (API server, "
            "detokenizer, network), added to every streamed token.",
            Range::at_least(0))
      .check([](EngineConfig& e, const KeyGiven& given, std::vector<FieldIssue>& issues) {
        const int v = engine::vllm_version_code(e.vllm_version);
        if (v < 0) {
          issue(issues, "vllm_version", ProblemClass::kBadValue,
                "expected a version like \"0.19\" or \"0.10.1.1\", got \"" + e.vllm_version + "\"");
          return;
        }
        if (v < 10) {
          issue(issues, "vllm_version", ProblemClass::kOutOfRange,
                "kvsim models vLLM V1 from 0.10 on, got " + e.vllm_version);
          return;
        }
        // Defaults that changed between releases (docs/engine.md "vLLM versions").
        if (!given("async_scheduling")) e.async_scheduling = v >= 14;
        if (!given("scheduler_reserve_full_isl")) e.scheduler_reserve_full_isl = v >= 19;
        e.full_cuda_graphs = v >= 11;
        e.max_num_seqs_auto = !given("max_num_seqs") || e.max_num_seqs == 0;
        e.max_num_batched_tokens_auto = !given("max_num_batched_tokens") || e.max_num_batched_tokens == 0;
      })
      .build();
}

StructTable make_roofline_table() {
  using models::RooflineParams;
  return TableBuilder<RooflineParams>("RooflineParams",
                                      "Efficiencies of the roofline compute model "
                                      "(docs/models.md states its equations).")
      .real("gemm_efficiency", &RooflineParams::gemm_efficiency,
            "Fraction of dense tensor peak reached by GEMMs.", Range::open_closed(0, 1))
      .real("attention_efficiency", &RooflineParams::attention_efficiency,
            "Fraction of tensor peak reached by attention math.", Range::open_closed(0, 1))
      .real("memory_efficiency", &RooflineParams::memory_efficiency,
            "Fraction of peak memory bandwidth reached by streaming reads.",
            Range::open_closed(0, 1))
      .build();
}

StructTable make_profile_params_table() {
  using models::ProfileParams;
  return TableBuilder<ProfileParams>(
             "ProfileParams",
             "Measured-profile compute models: the kernel tables of a profile bundle (kind "
             "profile) or coefficients fitted to one by `kvsim calibrate` (kind fitted), and how "
             "the served engine differs from the eager-mode profile.")
      .string("bundle_dir", &ProfileParams::bundle_dir,
              "Profile bundle folder (dense.csv, attention.csv, per_sequence.csv, meta.yaml), "
              "relative to the scenario file; kind profile.")
      .string("fitted_path", &ProfileParams::fitted_path,
              "Fitted coefficients YAML written by `kvsim calibrate`, relative to the scenario "
              "file; kind fitted.")
      .boolean("skew_blend", &ProfileParams::skew_blend,
               "Time decode batches with unequal contexts between their mean and maximum "
               "context, by the profile's skew fit.")
      .build();
}

StructTable make_overheads_table() {
  using models::StepOverheadParams;
  return TableBuilder<StepOverheadParams>(
             "StepOverheadParams",
             "What a served step costs besides its kernels, for every compute kind "
             "(docs/models.md \"Between the kernels\" gives each term's source).")
      .boolean("enabled", &StepOverheadParams::enabled,
               "false: kernel times alone, for a model fitted to measured step times (kvsim "
               "calibrate --measured), which already hold these terms.")
      .real("graph_kernel_gap_us", &StepOverheadParams::graph_kernel_gap_us,
            "GPU idle time between two kernels replayed from one CUDA graph, in microseconds.",
            Range::at_least(0))
      .real("eager_kernel_gap_us", &StepOverheadParams::eager_kernel_gap_us,
            "GPU idle time between two kernels launched one by one while the host runs ahead, "
            "in microseconds.",
            Range::at_least(0))
      .real("eager_launch_us", &StepOverheadParams::eager_launch_us,
            "Host time to launch one kernel outside a CUDA graph, in microseconds: steps of "
            "many short eager kernels are bound by it.",
            Range::at_least(0))
      .real("step_gap_us", &StepOverheadParams::step_gap_us,
            "GPU idle time between two steps under asynchronous scheduling, in microseconds.",
            Range::at_least(0))
      .real("host_step_us", &StepOverheadParams::host_step_us,
            "Host time per step (scheduler, input preparation, output processing), in "
            "microseconds; overlapped with the GPU under asynchronous scheduling.",
            Range::at_least(0))
      .real("host_per_sequence_us", &StepOverheadParams::host_per_sequence_us,
            "Host time per scheduled sequence of a step, in microseconds.", Range::at_least(0))
      .build();
}

const StructTable& overheads_table() {
  static const StructTable t = make_overheads_table();
  return t;
}

StructTable make_compute_table() {
  using models::ComputeSpec;
  return TableBuilder<ComputeSpec>("ComputeSpec", "How long one engine step takes.")
      .enumeration<models::ComputeKind>(
          "kind", &ComputeSpec::kind,
          {{"auto", models::ComputeKind::kAuto},
           {"roofline", models::ComputeKind::kRoofline},
           {"profile", models::ComputeKind::kProfile},
           {"fitted", models::ComputeKind::kFitted}},
          "auto: the shipped calibration (models/profiles/) measured on the scenario's GPU "
          "with a model of the same shape, dtype and tensor-parallel degree, else the "
          "roofline; roofline: from the GPU's and model's figures; profile: interpolated "
          "measured kernel tables; fitted: a compact model fitted to them "
          "(docs/calibration.md). A fit or profile of another tensor-parallel degree or dtype is "
          "rescaled by the roofline, with a note; one of another GPU or model is refused.")
      .nested("roofline", &ComputeSpec::roofline, roofline_table(), "Roofline parameters.")
      .nested("profile", &ComputeSpec::profile, profile_params_table(),
              "Profile and fitted model parameters.")
      .nested("overheads", &ComputeSpec::overheads, overheads_table(),
              "Time between and around the kernels: launch gaps, step gaps, host time.")
      .check([](ComputeSpec& c, const KeyGiven&, std::vector<FieldIssue>& issues) {
        if (c.kind == models::ComputeKind::kProfile && c.profile.bundle_dir.empty()) {
          issue(issues, "compute.profile.bundle_dir", ProblemClass::kMissingRequired,
                "kind profile needs a profile bundle folder");
        }
        if (c.kind == models::ComputeKind::kFitted && c.profile.fitted_path.empty()) {
          issue(issues, "compute.profile.fitted_path", ProblemClass::kMissingRequired,
                "kind fitted needs the YAML written by `kvsim calibrate`");
        }
      })
      .build();
}

StructTable make_prompt_input_table() {
  using workload::GenerationConfig;
  return TableBuilder<GenerationConfig>("prompt_input",
                                        "User-turn token counts (vLLM generation config "
                                        "`prompt_input`).")
      .distribution("num_turns", &GenerationConfig::num_turns,
                    "Messages per conversation (user + assistant), rounded up to even, at least 2.",
                    Range::closed(0, static_cast<double>(limits::kMaxTurns)))
      .required()
      .distribution("common_prefix_num_tokens", &GenerationConfig::common_prefix_num_tokens,
                    "Prefix shared by all conversations, sampled once.", kTokenLimit)
      .distribution("prefix_num_tokens", &GenerationConfig::prefix_num_tokens,
                    "Unique prefix of each conversation's first user turn.", kTokenLimit)
      .required()
      .distribution("num_tokens", &GenerationConfig::num_tokens, "Tokens of each user turn.",
                    kTokenLimit)
      .required()
      .build();
}

StructTable make_prompt_output_table() {
  using workload::GenerationConfig;
  return TableBuilder<GenerationConfig>("prompt_output",
                                        "Assistant-turn token counts (vLLM generation config "
                                        "`prompt_output`).")
      .distribution("num_tokens", &GenerationConfig::output_num_tokens,
                    "Tokens of each assistant answer.", kTokenLimit)
      .required()
      .build();
}

StructTable make_generation_table() {
  using workload::GenerationConfig;
  return TableBuilder<GenerationConfig>(
             "GenerationConfig",
             "vLLM's synthetic conversation generator: the keys of "
             "benchmarks/multi_turn/generate_multi_turn.json without `filetype`.")
      .integer("num_conversations", &GenerationConfig::num_conversations,
               "Conversations to generate.", Range::at_least(1))
      .required()
      .string_list("text_files", &GenerationConfig::text_files,
                   "Corpus files of the benchmark; recorded only (token counts need no text).")
      .boolean("print_stats", &GenerationConfig::print_stats,
               "The benchmark prints conversation statistics.")
      .group("prompt_input", prompt_input_table(), "User-turn distributions.")
      .required()
      .group("prompt_output", prompt_output_table(), "Assistant-turn distributions.")
      .required()
      .build();
}

StructTable make_clients_table() {
  using workload::ClientSpec;
  return TableBuilder<ClientSpec>("ClientSpec",
                                  "The multi-turn benchmark's closed-loop clients "
                                  "(benchmark_serving_multi_turn.py flags).")
      .integer("num_clients", &ClientSpec::num_clients, "Clients; each has one request in flight.",
               Range::at_least(1))
      .integer("max_active_conversations", &ClientSpec::max_active_conversations,
               "Active conversations over all clients; 0 means num_clients.", Range::at_least(0))
      .enumeration<workload::ConversationSampling>(
          "conversation_sampling", &ClientSpec::conversation_sampling,
          {{"round_robin", workload::ConversationSampling::kRoundRobin},
           {"random", workload::ConversationSampling::kRandom}},
          "How a client picks its next active conversation.")
      .real("request_rate", &ClientSpec::request_rate,
            "Per-client Poisson rate in requests/s (sleep after each request); 0 means no delay.",
            Range::at_least(0))
      .int64("max_num_requests", &ClientSpec::max_num_requests,
             "Requests over all clients; 0 means unlimited.", Range::at_least(0))
      .integer("max_turns", &ClientSpec::max_turns,
               "Most messages (user + assistant) per conversation; 0 means unlimited.",
               Range::at_least(0))
      .boolean("warmup_step", &ClientSpec::warmup_step,
               "First send turn 1 of every conversation, uncounted.")
      .boolean("early_stop", &ClientSpec::early_stop,
               "Stop all clients when the first one runs out of conversations.")
      .integer("limit_min_tokens", &ClientSpec::limit_min_tokens,
               "Answer length floor: 0 from the dataset, < 0 none, > 0 this (with "
               "limit_max_tokens).",
               Range{std::nullopt, kMaxTokens})
      .integer("limit_max_tokens", &ClientSpec::limit_max_tokens,
               "Answer length cap: 0 from the dataset, < 0 none, > 0 this (with "
               "limit_min_tokens).",
               Range{std::nullopt, kMaxTokens})
      .check([](ClientSpec& c, const KeyGiven&, std::vector<FieldIssue>& issues) {
        // benchmark_serving_multi_turn.py: positive limits come in pairs; each client needs
        // at least one active conversation (max_active_conversations // num_clients >= 1).
        if ((c.limit_min_tokens > 0) != (c.limit_max_tokens > 0)) {
          issue(issues, c.limit_min_tokens > 0 ? "limit_min_tokens" : "limit_max_tokens",
                ProblemClass::kBadValue,
                "limit_min_tokens and limit_max_tokens must both be > 0 when one is");
        } else if (c.limit_min_tokens > 0 && c.limit_min_tokens > c.limit_max_tokens) {
          issue(issues, "limit_min_tokens", ProblemClass::kBadValue,
                "must be <= limit_max_tokens (" + std::to_string(c.limit_max_tokens) + "), got " +
                    std::to_string(c.limit_min_tokens));
        }
        if (c.max_active_conversations > 0 && c.max_active_conversations < c.num_clients) {
          issue(issues, "max_active_conversations", ProblemClass::kBadValue,
                "must be 0 or >= num_clients (" + std::to_string(c.num_clients) + "), got " +
                    std::to_string(c.max_active_conversations));
        }
      })
      .build();
}

StructTable make_chat_template_table() {
  using workload::ChatTemplate;
  return TableBuilder<ChatTemplate>("ChatTemplate",
                                    "Tokens the server's chat template adds around message "
                                    "contents (defaults: Llama 3.1).")
      .integer("preamble_tokens", &ChatTemplate::preamble_tokens,
               "Once per prompt: begin-of-text and the default system header.", Range::at_least(0))
      .integer("per_message_tokens", &ChatTemplate::per_message_tokens,
               "Per message: role header and end-of-turn.", Range::at_least(0))
      .integer("generation_prompt_tokens", &ChatTemplate::generation_prompt_tokens,
               "Assistant header that opens the answer.", Range::at_least(0))
      .build();
}

StructTable make_sharegpt_table() {
  using workload::ShareGptFilter;
  return TableBuilder<ShareGptFilter>("ShareGptFilter",
                                      "Filters of vLLM's convert_sharegpt_to_openai.py for a raw ShareGPT file; "
                                      "0 means not given.")
      .int64("seed", &ShareGptFilter::seed, "--seed: shuffles the items, then samples max_items.",
             Range::unbounded_above())
      .int64("max_items", &ShareGptFilter::max_items, "--max-items: conversations to sample; 0 keeps all.",
             Range::at_least(0))
      .integer("min_turns", &ShareGptFilter::min_turns, "--min-turns: fewer messages drop the conversation.",
               Range::at_least(0))
      .integer("max_turns", &ShareGptFilter::max_turns, "--max-turns: messages kept per conversation.",
               Range::at_least(0))
      .int64("min_content_len", &ShareGptFilter::min_content_len,
             "--min-content-len: a shorter message (characters) drops the conversation.",
             Range{0.0, std::numeric_limits<double>::infinity()})
      .int64("max_content_len", &ShareGptFilter::max_content_len,
             "--max-content-len: a longer message (characters) drops the conversation.",
             Range{0.0, std::numeric_limits<double>::infinity()})
      .boolean("exclude_non_english", &ShareGptFilter::exclude_non_english,
               "Keep only conversations whose messages are all ASCII (false: --no-exclude-non-english).")
      .check([](ShareGptFilter& f, const KeyGiven&, std::vector<FieldIssue>& issues) {
        if (f.min_turns > 0 && f.max_turns > 0 && f.min_turns > f.max_turns) {
          issue(issues, "min_turns", ProblemClass::kBadValue, "must be <= max_turns");
        }
        if (f.min_content_len > 0 && f.max_content_len > 0 && f.min_content_len > f.max_content_len) {
          issue(issues, "min_content_len", ProblemClass::kBadValue, "must be <= max_content_len");
        }
      })
      .build();
}

// Each trace format with its spelling, in kTraceFormats' order.
std::vector<std::pair<std::string, workload::TraceFormat>> trace_format_values() {
  std::vector<std::pair<std::string, workload::TraceFormat>> out;
  out.reserve(workload::kTraceFormats.size());
  for (const auto f : workload::kTraceFormats) out.emplace_back(workload::trace_format_name(f), f);
  return out;
}

StructTable make_trace_table() {
  using workload::TraceSpec;
  return TableBuilder<TraceSpec>("TraceSpec", "Replay of a request trace (docs/workloads.md).")
      .string("file", &TraceSpec::file,
              "Trace file; a relative path is relative to the scenario file.")
      .enumeration<workload::TraceFormat>("format", &TraceSpec::format, trace_format_values(),
                                          "Trace format; auto detects it from the content.")
      .enumeration<workload::TraceMode>(
          "mode", &TraceSpec::mode,
          {{"open", workload::TraceMode::kOpen}, {"closed", workload::TraceMode::kClosed}},
          "open: each request at its timestamp; closed: a turn also waits for its previous turn's "
          "answer.")
      .real("time_scale", &TraceSpec::time_scale, "Multiplies inter-arrival times.",
            Range::above(0))
      .real("rate_scale", &TraceSpec::rate_scale, "Multiplies the request rate (divides times).",
            Range::above(0))
      .time("start", &TraceSpec::start,
            "Start of the replayed window, in the trace's time; re-based to 0.", Range::at_least(0))
      .time("duration", &TraceSpec::duration, "Length of the replayed window; 0 means to the end.",
            Range::at_least(0))
      .int64("max_requests", &TraceSpec::max_requests, "Requests to replay; 0 means all.",
             Range::at_least(0))
      .integer("hash_block_tokens", &TraceSpec::hash_block_tokens,
               "Tokens per trace hash id; 0 means the format's (Mooncake 512, Bailian 16).",
               Range::at_least(0))
      .build();
}

StructTable make_workload_table() {
  using workload::WorkloadSpec;
  return TableBuilder<WorkloadSpec>(
             "WorkloadSpec",
             "What the clients send: vLLM's multi-turn benchmark (inline generation config or a "
             "vLLM input file) or a trace replay.")
      .enumeration<WorkloadSpec::Kind>(
          "kind", &WorkloadSpec::kind,
          {{"multi_turn", WorkloadSpec::Kind::kMultiTurn}, {"trace", WorkloadSpec::Kind::kTrace}},
          "Workload kind.")
      .optional_nested("generation", &WorkloadSpec::generation, generation_table(),
                       "multi_turn: inline generation config (exactly one of generation and "
                       "input_file).")
      .string("input_file", &WorkloadSpec::input_file,
              "multi_turn: vLLM input file (JSON dict = generation config, list = "
              "conversations); a relative path is relative to the scenario file.")
      .nested("sharegpt", &WorkloadSpec::sharegpt, sharegpt_table(),
              "Filters for a raw ShareGPT input_file or trace.file (vLLM's converter options).")
      .nested("clients", &WorkloadSpec::clients, clients_table(), "multi_turn: client model.")
      .nested("chat_template", &WorkloadSpec::chat_template, chat_template_table(),
              "Chat-template token counts.")
      .nested("trace", &WorkloadSpec::trace, trace_table(), "trace: the trace to replay.")
      .double_list("warmup_percentages", &WorkloadSpec::warmup_percentages,
                   "Percent of the first requests each summary drops (one summary per entry).",
                   Range::half_open(0, 100))
      .check([](WorkloadSpec& w, const KeyGiven&, std::vector<FieldIssue>& issues) {
        if (w.kind == WorkloadSpec::Kind::kMultiTurn) {
          if (w.generation && !w.input_file.empty()) {
            issue(issues, "input_file", ProblemClass::kBadValue,
                  "give either generation or input_file, not both");
          } else if (!w.generation && w.input_file.empty()) {
            issue(issues, "generation", ProblemClass::kMissingRequired,
                  "missing required field: multi_turn needs generation or input_file");
          }
        } else if (w.trace.file.empty()) {
          issue(issues, "trace.file", ProblemClass::kMissingRequired,
                "missing required field: kind trace needs trace.file");
        }
        if (w.warmup_percentages.empty()) {
          issue(issues, "warmup_percentages", ProblemClass::kOutOfRange,
                "needs at least one entry (0 keeps every request)");
        }
      })
      .build();
}

StructTable make_output_table() {
  return TableBuilder<OutputSpec>("OutputSpec", "Where results go.")
      .enumeration<OutputFormat>("format", &OutputSpec::format,
                                 {{"table", OutputFormat::kTable},
                                  {"json", OutputFormat::kJson},
                                  {"csv", OutputFormat::kCsv}},
                                 "Summary format.")
      .string("requests_out", &OutputSpec::requests_out,
              "Per-request JSON array file; empty means none.")
      .string("timeseries_out", &OutputSpec::timeseries_out, "Per-step CSV file; empty means none.")
      .build();
}

StructTable make_kv_tier_table() {
  using engine::KvTierSpec;
  return TableBuilder<KvTierSpec>("KvTierSpec", "One KV-cache tier below the GPU.")
      .enumeration<engine::KvTierKind>(
          "kind", &KvTierSpec::kind,
          {{"host_dram", engine::KvTierKind::kHostDram},
           {"local_nvme", engine::KvTierKind::kLocalNvme},
           {"remote", engine::KvTierKind::kRemote}},
          "host_dram: pinned host memory of each server; local_nvme: each server's NVMe "
          "drives; remote: the network-attached store shared by all servers.")
      .required()
      .bytes("capacity", &KvTierSpec::capacity,
             "KV bytes the tier holds (per server for host_dram and local_nvme).", Range::above(0))
      .required()
      .enumeration<engine::EvictionPolicy>(
          "eviction", &KvTierSpec::eviction,
          {{"lru", engine::EvictionPolicy::kLru}, {"arc", engine::EvictionPolicy::kArc}},
          "Eviction policy.")
      .build();
}

StructTable make_kv_offload_table() {
  using engine::KvOffloadSpec;
  return TableBuilder<KvOffloadSpec>(
             "KvOffloadSpec",
             "KV-cache offload: the connector that moves KV blocks out of and back into the GPU, "
             "and the tiers it uses, fastest first.")
      .enumeration<engine::KvConnector>(
          "connector", &KvOffloadSpec::connector,
          {{"none", engine::KvConnector::kNone},
           {"native", engine::KvConnector::kNative},
           {"lmcache", engine::KvConnector::kLmcache}},
          "none: GPU prefix cache only; native: vLLM's OffloadingConnector (asynchronous "
          "loads, write-through stores of full blocks, lower tiers behind the first); "
          "lmcache: LMCache (256-token chunks, synchronous loads and stores on the step's "
          "critical path).")
      .integer("chunk_tokens", &KvOffloadSpec::chunk_tokens,
               "Tier granularity in tokens, a multiple of block_size; 0: one block (native) or "
               "256 (lmcache).",
               Range::at_least(0))
      .boolean("use_layerwise", &KvOffloadSpec::use_layerwise,
               "lmcache: load layer by layer, pipelined with the forward pass.")
      .list("tiers", &KvOffloadSpec::tiers, kv_tier_table(), "Tiers in lookup order.")
      .boolean("offload_prompt_only", &KvOffloadSpec::offload_prompt_only,
               "Store prompt blocks only, not blocks of generated tokens (vLLM's default).")
      .check([](KvOffloadSpec& k, const KeyGiven&, std::vector<FieldIssue>& issues) {
        if (k.connector != engine::KvConnector::kNone && k.tiers.empty()) {
          issue(issues, "kv_offload.tiers", ProblemClass::kBadValue,
                std::string("connector '") + engine::kv_connector_name(k.connector) +
                    "' needs at least one tier");
        }
        int remote = 0;
        for (const auto& t : k.tiers) remote += t.kind == engine::KvTierKind::kRemote ? 1 : 0;
        if (remote > 1) {
          issue(issues, "kv_offload.tiers", ProblemClass::kBadValue, "at most one remote tier");
        }
      })
      .build();
}

StructTable make_routing_table() {
  return TableBuilder<RouterSpec>("RouterSpec", "How requests are assigned to engines.")
      .enumeration<RoutingPolicy>("policy", &RouterSpec::policy,
              {{"session_affinity", RoutingPolicy::kSessionAffinity}, {"round_robin", RoutingPolicy::kRoundRobin},
               {"least_loaded", RoutingPolicy::kLeastLoaded}, {"prefix_aware", RoutingPolicy::kPrefixAware}},
              "session_affinity: a conversation stays where its first turn went; round_robin: each "
              "request to the next engine; least_loaded: fewest running and waiting requests; "
              "prefix_aware: longest GPU prefix-cache hit, least loaded among equals.")
      .build();
}

StructTable make_scenario_table() {
  return TableBuilder<Scenario>("Scenario", "One simulated run.")
      .string("name", &Scenario::name, "Scenario name, carried by every result.")
      .string("description", &Scenario::description, "Free text.")
      .uint64("seed", &Scenario::seed, "Root seed; every random stream derives from it by name.")
      .nested("hardware", &Scenario::hardware, hardware_table(), "The machines.")
      .required()
      .nested("model", &Scenario::model, model_table(), "The served model.")
      .required()
      .nested("engine", &Scenario::engine, engine_table(), "vLLM engine arguments.")
      .nested("kv_offload", &Scenario::kv_offload, kv_offload_table(), "KV-cache offload tiers.")
      .nested("routing", &Scenario::routing, routing_table(), "Request routing across engines.")
      .nested("compute", &Scenario::compute, compute_table(), "Step-time model.")
      .nested("workload", &Scenario::workload, workload_table(), "What the clients send.")
      .required()
      .nested("output", &Scenario::output, output_table(), "Result sinks.")
      .check([](Scenario& s, const KeyGiven&, std::vector<FieldIssue>& issues) {
        // A server whose GPU count is not given holds one deployment: tensor_parallel_size x
        // data_parallel_size GPUs (vllm serve --tensor-parallel-size k --data-parallel-size d
        // takes k x d GPUs).
        for (auto& sv : s.hardware.servers) {
          if (sv.gpus_per_server_auto) sv.gpus_per_server = s.engine.tensor_parallel_size * s.engine.data_parallel_size;
        }
        // vllm serve's batch limits for the GPU (vllm/engine/arg_utils.py get_batch_defaults,
        // the same rule in 0.10 and 0.19): 8192 tokens and 1024 sequences on a device of 70 GiB
        // or more that is not an A100, else 2048 and 256; then max_num_seqs <= the token budget.
        {
          auto& ew = s.engine;
          if (ew.max_num_seqs_auto || ew.max_num_batched_tokens_auto) {
            const auto& gpu = s.hardware.servers.empty() ? hw::GpuSpec{} : s.hardware.servers.front().gpu;
            std::string name = gpu.name + " " + gpu.cuda_name;
            for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
            const bool large = gpu.memory.value >= 70 * kGiB.value && name.find("a100") == std::string::npos;
            if (ew.max_num_batched_tokens_auto) ew.max_num_batched_tokens = large ? 8192 : 2048;
            if (ew.max_num_seqs_auto) {
              ew.max_num_seqs = std::min(large ? 1024 : 256, ew.max_num_batched_tokens);
            }
          }
        }
        // vLLM refuses these engine settings at start-up: ModelConfig (max_model_len beyond
        // the model's max_position_embeddings) and SchedulerConfig.verify_max_model_len
        // (vllm/config/scheduler.py).
        const auto& e = s.engine;
        const int model_len = s.model.max_position_embeddings;
        if (e.max_model_len > 0 && model_len > 0 && e.max_model_len > model_len) {
          issue(issues, "engine.max_model_len", ProblemClass::kOutOfRange,
                "must be <= the model's max_position_embeddings (" + std::to_string(model_len) +
                    "), got " + std::to_string(e.max_model_len));
        }
        const int effective_len = e.max_model_len > 0 ? e.max_model_len : model_len;
        if (!e.enable_chunked_prefill && effective_len > 0 &&
            e.max_num_batched_tokens < effective_len) {
          issue(issues, "engine.max_num_batched_tokens", ProblemClass::kBadValue,
                "must be >= max_model_len (" + std::to_string(effective_len) +
                    ") when enable_chunked_prefill is false, got " +
                    std::to_string(e.max_num_batched_tokens));
        }
        if (e.max_num_batched_tokens < e.max_num_seqs) {
          issue(issues, "engine.max_num_batched_tokens", ProblemClass::kBadValue,
                "must be >= max_num_seqs (" + std::to_string(e.max_num_seqs) + "), got " +
                    std::to_string(e.max_num_batched_tokens));
        }
      })
      .build();
}

// ---- reference ----------------------------------------------------------------------------

std::string code(std::string_view s) { return "`" + std::string(s) + "`"; }

// Pipes would split a Markdown table cell.
std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\";
    out += c;
  }
  return out;
}

std::string kind_cell(const Field& f) {
  if (f.kind == FieldKind::kEnum) {
    std::string s;
    for (const auto& n : f.enum_names) {
      if (!s.empty()) s += ", ";
      s += code(n);
    }
    return "one of " + s;
  }
  return field_kind_name(f.kind);
}

std::string default_cell(const Field& f, const StructTable& t) {
  if (f.required) return "required";
  const void* d = t.defaults;
  switch (f.kind) {
    case FieldKind::kStruct:
    case FieldKind::kGroup:
      return "see below";
    case FieldKind::kOptionalStruct:
      return "absent";
    case FieldKind::kStructList:
      return "[]";
    case FieldKind::kStringList: {
      std::string s;
      for (const auto& v : *static_cast<const std::vector<std::string>*>(f.get(d))) {
        if (!s.empty()) s += ", ";
        s += v;
      }
      return code("[" + s + "]");
    }
    case FieldKind::kDoubleList: {
      std::string s;
      for (double v : *static_cast<const std::vector<double>*>(f.get(d))) {
        if (!s.empty()) s += ", ";
        s += shortest_double(v);
      }
      return code("[" + s + "]");
    }
    default: {
      const std::string text = scalar_text(f, d);
      return text.empty() ? code("\"\"") : code(text);
    }
  }
}

std::string allowed_cell(const Field& f) {
  if (f.range.empty()) return "";
  std::string s = f.range.describe([&](double b) { return format_bound(f, b); });
  const std::string prefix = "must be ";
  if (s.compare(0, prefix.size(), prefix) == 0) s = s.substr(prefix.size());
  if (f.kind == FieldKind::kStructList) s = "count " + s;
  return s;
}

void reference_section(std::ostringstream& os, const StructTable& t, const std::string& path) {
  os << "\n## " << (path.empty() ? std::string("top level") : code(path)) << " (" << t.type_name
     << ")\n\n"
     << t.doc << "\n";
  if (!t.preset_catalog.empty()) {
    os << "\nAccepts " << code("preset: <name>") << " naming an entry of the catalog's "
       << t.preset_catalog << ".yaml.\n";
  }
  os << "\n| key | kind | default | allowed | meaning |\n|---|---|---|---|---|\n";
  for (const auto& f : t.fields) {
    os << "| " << code(f.key) << " | " << cell(kind_cell(f)) << " | " << cell(default_cell(f, t))
       << " | " << cell(allowed_cell(f)) << " | " << cell(f.doc) << " |\n";
  }
  for (const auto& f : t.fields) {
    if (f.nested == nullptr) continue;
    std::string sub = path.empty() ? f.key : path + "." + f.key;
    if (f.kind == FieldKind::kStructList) sub += "[]";
    reference_section(os, *f.nested, sub);
  }
}

std::string units_line(Quantity q) {
  std::string s;
  for (const auto& n : unit_names(q)) {
    if (!s.empty()) s += ", ";
    s += code(n);
  }
  return s;
}

}  // namespace

const StructTable& host_link_table() {
  static const StructTable t = make_host_link_table();
  return t;
}
const StructTable& gpu_table() {
  static const StructTable t = make_gpu_table();
  return t;
}
const StructTable& server_table() {
  static const StructTable t = make_server_table();
  return t;
}
const StructTable& routing_table() {
  static const StructTable t = make_routing_table();
  return t;
}
const StructTable& kv_tier_table() {
  static const StructTable t = make_kv_tier_table();
  return t;
}
const StructTable& kv_offload_table() {
  static const StructTable t = make_kv_offload_table();
  return t;
}
const StructTable& nvme_drive_table() {
  static const StructTable t = make_nvme_drive_table();
  return t;
}
const StructTable& storage_node_table() {
  static const StructTable t = make_storage_node_table();
  return t;
}
const StructTable& host_table() {
  static const StructTable t = make_host_table();
  return t;
}
const StructTable& nic_table() {
  static const StructTable t = make_nic_table();
  return t;
}
const StructTable& local_nvme_table() {
  static const StructTable t = make_local_nvme_table();
  return t;
}
const StructTable& hardware_table() {
  static const StructTable t = make_hardware_table();
  return t;
}
const StructTable& model_table() {
  static const StructTable t = make_model_table();
  return t;
}
const StructTable& engine_table() {
  static const StructTable t = make_engine_table();
  return t;
}
const StructTable& roofline_table() {
  static const StructTable t = make_roofline_table();
  return t;
}
const StructTable& profile_params_table() {
  static const StructTable t = make_profile_params_table();
  return t;
}
const StructTable& compute_table() {
  static const StructTable t = make_compute_table();
  return t;
}
const StructTable& prompt_input_table() {
  static const StructTable t = make_prompt_input_table();
  return t;
}
const StructTable& prompt_output_table() {
  static const StructTable t = make_prompt_output_table();
  return t;
}
const StructTable& generation_table() {
  static const StructTable t = make_generation_table();
  return t;
}
const StructTable& clients_table() {
  static const StructTable t = make_clients_table();
  return t;
}
const StructTable& chat_template_table() {
  static const StructTable t = make_chat_template_table();
  return t;
}
const StructTable& trace_table() {
  static const StructTable t = make_trace_table();
  return t;
}

const StructTable& sharegpt_table() {
  static const StructTable t = make_sharegpt_table();
  return t;
}
const StructTable& workload_table() {
  static const StructTable t = make_workload_table();
  return t;
}
const StructTable& output_table() {
  static const StructTable t = make_output_table();
  return t;
}
const StructTable& scenario_table() {
  static const StructTable t = make_scenario_table();
  return t;
}

std::string scenario_reference_markdown() {
  std::ostringstream os;
  os << "# Scenario reference\n\n"
     << "<!-- Generated by kvsim::scenario::scenario_reference_markdown() from the field tables "
        "in sim/scenario/tables.cpp; tests/scenario/reference_test.cpp fails when this file "
        "differs (run it with KVSIM_WRITE_REFERENCE=1 to rewrite it). -->\n\n"
     << "A scenario is one YAML file; each section below is one map. Unknown keys are errors "
        "(with a \"did you mean\"), and all problems are reported at once as "
        "`file:line:col: error: path: message`.\n\n"
     << "## Values\n\n"
     << "- Counts are bare integers; booleans are `true` or `false`.\n"
     << "- Sizes, rates and times carry a unit (a bare number is an error); unit names are "
        "case-sensitive. Decimal prefixes are powers of 1000, binary ones powers of 1024, and "
        "bit rates divide by 8.\n"
     << "  - bytes: " << units_line(Quantity::kBytes) << " (rounded to a whole byte)\n"
     << "  - byte rate: " << units_line(Quantity::kByteRate) << "\n"
     << "  - FLOP rate: " << units_line(Quantity::kFlopRate) << "\n"
     << "  - time: " << units_line(Quantity::kTime) << " (rounded to a whole nanosecond)\n"
     << "- A distribution is a map `{distribution: <kind>, ...}` as in vLLM's "
        "generate_multi_turn.json:\n"
     << "  - `constant`: `value`\n"
     << "  - `uniform`: `min`, `max` (inclusive; `min` > 0; integers when both are written as "
        "integers, else reals)\n"
     << "  - `lognormal`: either `average` (>= 1) with optional `median_ratio` in (0, 1), "
        "default 0.85, or `mean` (> 0) and `sigma` (>= 0) of the underlying normal; optional "
        "`max`\n"
     << "  - `zipf`: `alpha` (> 1), optional `max`\n"
     << "  - `poisson`: `alpha` (the mean, >= 0), optional `max`\n\n"
     << "## Presets and overrides\n\n"
     << "- `preset: <name>` in `gpu:` or `model:` copies the catalog entry (gpus.yaml, "
        "models.yaml); keys beside it override its values. The catalog folder is the first of: "
        "`--catalog` (the loader's catalog_dir option), the `KVSIM_CATALOG_DIR` environment "
        "variable (read by the kvsim program, kvsim-gui and the Python module, which pass it "
        "as catalog_dir), a `scenarios/catalog` folder in the scenario file's folder or any folder "
        "above it, an "
        "installed kvsim's `share/kvsim/scenarios/catalog` (found from where the `kvsim` program "
        "or the Python module lies, so an installed kvsim works from any folder), and the "
        "catalog of the kvsim source tree it was built from. Catalog entries use the same keys "
        "as below, keyed by name.\n"
     << "- `--set path=value` patches the tree before decoding: `path` is dotted, list items "
        "are numbered from 0 (`hardware.servers.0.count=2`), missing maps are created, and the "
        "value is read as YAML (`--set engine.enable_prefix_caching=false`, "
        "`--set workload.generation=~` removes a section).\n"
     << "- The resolved scenario (presets expanded, overrides applied, relative file paths made "
        "absolute) is written back with every key; loading it again gives the same scenario.\n";
  reference_section(os, scenario_table(), "");
  return os.str();
}

}  // namespace kvsim::scenario
