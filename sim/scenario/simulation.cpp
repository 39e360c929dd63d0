#include "sim/scenario/simulation.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include "hw/collective.hpp"
#include "hw/flow_network.hpp"
#include "hw/storage.hpp"
#include "hw/topology.hpp"
#include "models/fitted_model.hpp"
#include "models/memory.hpp"
#include "models/profile_bundle.hpp"
#include "models/profile_model.hpp"
#include "models/roofline.hpp"
#include "models/tensor_parallel.hpp"
#include "models/tensor_parallel_model.hpp"
#include "sim/core/error.hpp"
#include "sim/core/event_queue.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/tokens.hpp"
#include "sim/core/version.hpp"
#include "sim/engine/block_ids.hpp"
#include "sim/engine/engine.hpp"
#include "sim/engine/offload.hpp"
#include "sim/scenario/compute_factory.hpp"
#include "sim/workload/make_driver.hpp"

namespace kvsim::scenario {
namespace {

enum class EventKind : std::uint8_t { kWake, kKick, kStepEnd, kComplete, kNetwork };

struct Event {
  EventKind kind;
  std::int64_t arg;  // wake tag, engine index or request id
};

// The kind of a link of the offload topology, from the kinds of its ends (io::LinkInfo::kind).
const char* link_kind(const hw::Topology& topo, hw::LinkId l) {
  const auto a = topo.kind(topo.link_a(l));
  const auto b = topo.kind(topo.link_b(l));
  auto has = [&](hw::NodeKind k) { return a == k || b == k; };
  if (has(hw::NodeKind::kGpu)) return "pcie";
  if (has(hw::NodeKind::kNvmeDrive)) return "nvme";
  if (has(hw::NodeKind::kStorageNode)) return "store";
  return "nic";
}

std::string gib(Bytes b) {
  std::ostringstream os;
  os.precision(2);
  os << std::fixed << b.as_double() / static_cast<double>(kGiB.value) << " GiB";
  return os.str();
}

}  // namespace

struct Simulation::Impl : workload::WorkloadContext {
  // Built.
  Scenario scenario;
  // Block ids for block hashes (the GPU prefix caches and the tiers index them); never reclaimed
  // on the plain path (engine.fast_paths off), so the fast-path test checks reclaiming against it.
  engine::BlockIds block_ids{scenario.engine.fast_paths};
  std::unique_ptr<models::ComputeModel> compute;
  std::vector<std::unique_ptr<engine::Engine>> engines;
  // KV offload: the hardware topology, the transfers over it and the tiers.
  std::unique_ptr<hw::Topology> topology;
  std::unique_ptr<hw::FlowNetwork> network;
  std::unique_ptr<engine::OffloadSystem> offload;
  std::vector<hw::Completed> completed;
  SimTime network_event = kNever;  // earliest network event in the queue
  std::unordered_map<const engine::Engine*, int> engine_index;
  std::unique_ptr<workload::Driver> driver;
  io::RunInfo info;

  // Running.
  struct InFlight {
    workload::RequestSpec spec;
    SimTime sent = 0;
    SimTime first_token = -1;
    int server = 0;
    std::int64_t prompt_tokens = 0;
  };
  EventQueue<Event> events;
  SimTime clock = 0;
  std::uint64_t next_request_id = 0;
  // Each conversation's last prompt+output hashes: its next turn re-hashes only new blocks.
  BlockHashCache hash_cache{scenario.engine.block_size};
  // Trace blocks that name their prefix are named by position instead (ids below the first
  // that block_ids hands out); not on the plain path, so the fast-path test checks them.
  std::unique_ptr<FixedPrefixNames> prefix_names;
  std::unordered_map<std::uint64_t, InFlight> in_flight;
  std::unordered_map<std::int64_t, int> conversation_server;
  int next_server = 0;
  std::vector<bool> kick_pending;
  std::vector<engine::Engine*> to_retry;  // idle engines whose deferred match may now succeed
  std::unordered_map<std::uint64_t, engine::FinishedRequest> finished_by_id;
  RunResult result;
  const StepCallback* on_step = nullptr;
  const RecordCallback* on_record = nullptr;
  // Usage sampler and cancellation (RunControl); next_sample is kNever without a sampler.
  const RunControl* control = nullptr;
  SimTime sample_interval = 0;
  SimTime next_sample = kNever;
  SimTime last_sample = 0;
  bool sampled = false;
  std::vector<std::int64_t> last_link_bytes;       // per link direction at last_sample
  std::vector<std::vector<int>> tier_instances;    // per scenario tier: its OffloadSystem tiers
  void take_sample(SimTime t);
  // Timelines (RunControl::on_request, on_transfer); null without them.
  const RequestEventCallback* on_request = nullptr;
  void note_request(io::RequestEvent::Kind kind, std::uint64_t id, int server, SimTime t, int transfers = 0) {
    io::RequestEvent ev;
    ev.kind = kind;
    ev.request_id = id;
    ev.server = server;
    ev.time_ns = t;
    ev.transfers = transfers;
    (*on_request)(ev);
  }
  // Each engine's request events, relayed to on_request with the engine's index.
  struct EngineObserver : engine::RequestObserver {
    Impl* impl = nullptr;
    int server = 0;
    void on_request_event(std::uint64_t id, engine::RequestEventKind kind, SimTime now, int transfers) override {
      using K = io::RequestEvent::Kind;
      K k = K::kScheduled;
      switch (kind) {
        case engine::RequestEventKind::kScheduled: k = K::kScheduled; break;
        case engine::RequestEventKind::kPreempted: k = K::kPreempted; break;
        case engine::RequestEventKind::kLoadStarted: k = K::kLoadStarted; break;
        case engine::RequestEventKind::kLoadDone: k = K::kLoadDone; break;
      }
      impl->note_request(k, id, server, now, transfers);
    }
  };
  std::vector<EngineObserver> engine_observers;
  std::vector<io::TransferEvent::Hop> hop_scratch;
  void relay_transfer(const engine::TransferRecord& t, const TransferCallback& cb);

  explicit Impl(const Scenario& s, std::unique_ptr<workload::Driver> custom_driver = nullptr);

  // WorkloadContext.
  SimTime now() const override { return clock; }
  std::uint64_t submit(workload::RequestSpec spec) override;
  int route(const workload::RequestSpec& spec, const engine::Request& r);
  int least_loaded(const std::vector<int>& candidates) const;
  int load(int u) const;  // requests running and waiting on unit u (an engine or a DP group)
  int rank_in_group(int u) const;
  enum class Routing { kSessionAffinity, kRoundRobin, kLeastLoaded, kPrefixAware };
  static Routing routing_of(const std::string& policy);
  Routing routing = routing_of(scenario.routing.policy);
  std::vector<int> route_scratch;  // the engines route() chooses among (no allocation per request)
  void wake_at(SimTime t, std::int64_t tag) override {
    KVSIM_ASSERT(t >= clock, "a timer was set in the past");
    events.push(t, Event{EventKind::kWake, tag});
  }

  void kick(int e) {
    if (kick_pending[static_cast<std::size_t>(e)]) return;
    kick_pending[static_cast<std::size_t>(e)] = true;
    events.push(clock, Event{EventKind::kKick, e});
  }
  void try_start_step(int e);
  [[noreturn]] void throw_time_limit(EventKind kind) const;
  // A step of `duration` compute starts now on engine `e`: it ends then, unless it waits for
  // synchronous connector transfers first.
  void step_started(int e, SimTime duration) {
    if (engines[static_cast<std::size_t>(e)]->blocked()) {
      pending_compute[static_cast<std::size_t>(e)] = duration;
    } else {
      events.push(clock + duration, Event{EventKind::kStepEnd, e});
    }
  }
  std::vector<SimTime> pending_compute;  // per engine: compute time of a step waiting for transfers
  void handle_step_end(int e);
  // Counts the step that ended last on engine `e` and hands it to on_step.
  void record_step(int e);
  // Takes the usage samples due before `t`, checks for cancellation, and sets the clock to t.
  void advance_to(SimTime t);
  bool stoppable = false;
  std::uint32_t since_stop_check = 0;
  void complete(const engine::FinishedRequest& f, int server);
  void run_loop();
  void build_offload();
  // Frees the block ids no engine, tier or hash cache holds (between requests only).
  void collect_block_ids() {
    block_ids.collect([this](auto mark) {
      for (const auto& e : engines) e->for_each_block_hash(mark);
      if (offload) offload->for_each_key(mark);
      hash_cache.for_each_key(mark);
    });
  }
  void schedule_network();
  void report_offload();
  void handle_network();
  // KV bytes of one block of an engine replica (all its GPUs' shards).
  Bytes offload_block_bytes() const {
    const int tp = scenario.engine.tensor_parallel_size;
    return models::kv_bytes_per_token_per_gpu(scenario.model, tp) *
           (static_cast<std::int64_t>(tp) * scenario.engine.block_size);
  }
};

Simulation::Impl::Impl(const Scenario& s, std::unique_ptr<workload::Driver> custom_driver) : scenario(s) {
  const auto& sc = scenario;
  // Requests carry block ids instead of raw hashes (a renaming: same results).
  hash_cache.set_interner(&block_ids);
  if (sc.hardware.servers.empty()) {
    throw InputError(Diagnostic{sc.source_file, 0, 0, "hardware.servers", "at least one server is needed"});
  }
  if (sc.engine.scheduling_policy != "fcfs") {
    throw InputError(Diagnostic{sc.source_file, 0, 0, "engine.scheduling_policy",
                                "only 'fcfs' is modelled (requests carry no priorities)"});
  }
  std::int64_t gpus = 0;
  for (const auto& server : sc.hardware.servers) {
    gpus += static_cast<std::int64_t>(server.count) * server.gpus_per_server;
  }
  if (gpus > limits::kMaxGpus) {
    throw InputError(Diagnostic{sc.source_file, 0, 0, "hardware.servers",
                                std::to_string(gpus) + " GPUs (count x gpus_per_server) are past kvsim's limit of " +
                                    std::to_string(limits::kMaxGpus) + " GPUs in one run (docs/limits.md)"});
  }
  const auto& gpu = sc.hardware.servers.front().gpu;
  for (const auto& server : sc.hardware.servers) {
    if (server.gpu.name != gpu.name || server.gpu.memory != gpu.memory) {
      throw InputError(Diagnostic{sc.source_file, 0, 0, "hardware.servers",
                                  "all servers must have the same GPU for now"});
    }
  }
  const std::int64_t max_model_len =
      sc.engine.max_model_len > 0 ? sc.engine.max_model_len : sc.model.max_position_embeddings;
  // Tensor parallelism: each replica spans tp GPUs of one server (models/tensor_parallel.hpp).
  const int tp = sc.engine.tensor_parallel_size;
  const int dp = sc.engine.data_parallel_size;
  for (std::size_t i = 0; i < sc.hardware.servers.size(); ++i) {
    if (sc.hardware.servers[i].gpus_per_server % tp != 0) {
      throw InputError(Diagnostic{sc.source_file, 0, 0, "engine.tensor_parallel_size",
                                  "must divide hardware.servers." + std::to_string(i) + ".gpus_per_server (" +
                                      std::to_string(sc.hardware.servers[i].gpus_per_server) + "), got " +
                                      std::to_string(tp)});
    }
    if (sc.hardware.servers[i].gpus_per_server % (tp * dp) != 0) {
      throw InputError(Diagnostic{sc.source_file, 0, 0, "engine.data_parallel_size",
                                  "tensor_parallel_size x data_parallel_size (" + std::to_string(tp * dp) +
                                      ") must divide hardware.servers." + std::to_string(i) +
                                      ".gpus_per_server (" + std::to_string(sc.hardware.servers[i].gpus_per_server) +
                                      "): a deployment's ranks share one server"});
    }
  }
  if (sc.engine.enable_expert_parallel && !sc.model.is_moe()) {
    throw InputError(Diagnostic{sc.source_file, 0, 0, "engine.enable_expert_parallel",
                                sc.model.name + " has no experts (num_experts 0)"});
  }
  const models::MoeLayout layout = moe_layout(sc);
  try {
    models::check_tensor_parallel(sc.model, tp, sc.model.is_moe() ? layout.expert_parallel_size : 1);
  } catch (const InputError& e) {
    std::vector<Diagnostic> ds = e.diagnostics();
    for (auto& d : ds) d.file = sc.source_file;
    throw InputError(std::move(ds));
  }

  models::MemoryInputs mem;
  mem.total_memory = gpu.memory;
  mem.gpu_memory_utilization = sc.engine.gpu_memory_utilization;
  mem.model = sc.model;
  mem.max_num_batched_tokens = sc.engine.max_num_batched_tokens;
  mem.max_num_seqs = sc.engine.max_num_seqs;
  mem.max_model_len = max_model_len;
  mem.block_size = sc.engine.block_size;
  mem.enforce_eager = sc.engine.enforce_eager;
  mem.num_gpu_blocks_override = sc.engine.num_gpu_blocks_override;
  mem.tensor_parallel_size = tp;
  mem.expert_parallel_size = layout.expert_parallel_size;
  // What changed between vLLM releases (docs/models.md "vLLM versions"): 0.10 profiles no CUDA
  // graph memory before its last reading and samples with FlashInfer in the profile run.
  const bool v010 = engine::vllm_version_code(sc.engine.vllm_version) < 11;
  mem.non_torch_memory = sc.engine.non_torch_memory.value > 0
                             ? sc.engine.non_torch_memory
                             : (v010 ? Bytes{static_cast<std::int64_t>(0.35 * static_cast<double>(kGiB.value))}
                                     : mem.non_torch_memory);
  if (v010) mem.sampler_profile = models::SamplerProfile::kFlashInferTopKTopP;
  if (gpu.num_sms > 0) mem.gpu_num_sms = gpu.num_sms;
  const models::MemoryBreakdown kv = models::kv_capacity(mem);
  if (sc.engine.num_gpu_blocks_override > 0 && kv.num_blocks < 2) {
    throw InputError(Diagnostic{sc.source_file, 0, 0, "engine.num_gpu_blocks_override",
                                "num_gpu_blocks_override " + std::to_string(kv.num_blocks) +
                                    " leaves no block for requests: vLLM keeps one as its null "
                                    "block, so give at least 2"});
  }
  if (kv.num_blocks > limits::kMaxGpuBlocks) {
    throw InputError(Diagnostic{
        sc.source_file, 0, 0, "engine.block_size",
        "the GPU's free memory holds " + std::to_string(kv.num_blocks) +
            " KV blocks, past kvsim's limit of " + std::to_string(limits::kMaxGpuBlocks) +
            " blocks per GPU (docs/limits.md): raise engine.block_size or set "
            "engine.num_gpu_blocks_override"});
  }
  if (kv.num_blocks < 2) {
    throw InputError(Diagnostic{sc.source_file, 0, 0, "engine.gpu_memory_utilization",
                                "no memory is left for the KV cache: weights " + gib(kv.weights) +
                                    " + activations " + gib(kv.activation_peak) + " + non-torch " +
                                    gib(kv.non_torch) + " exceed " + gib(kv.requested) +
                                    " (vLLM: \"No available memory for the cache blocks\")"});
  }
  const std::int64_t kv_tokens = kv.kv_tokens;
  if (!kv.fits_max_model_len) {
    // vLLM's _check_enough_kv_cache_memory refuses to start in this case.
    std::ostringstream os;
    os << "to serve one request at max_model_len " << max_model_len << ", "
       << gib(models::kv_bytes_per_token_per_gpu(sc.model, tp) * max_model_len)
       << " of KV cache" << (tp > 1 ? " per GPU" : "") << " is needed, more than the available "
       << gib(models::kv_bytes_per_token_per_gpu(sc.model, tp) * kv_tokens)
       << "; the estimated maximum model length is " << kv_tokens
       << ". Increase gpu_memory_utilization or decrease max_model_len (as vLLM says at start-up)";
    throw InputError(Diagnostic{sc.source_file, 0, 0, "engine.max_model_len", os.str()});
  }

  // Every engine holds its block pool for the whole run.
  const std::int64_t engines_total = gpus / tp;
  if (engines_total * kv.num_blocks > limits::kMaxTotalGpuBlocks) {
    throw InputError(Diagnostic{
        sc.source_file, 0, 0, "hardware.servers",
        std::to_string(engines_total) + " engines of " + std::to_string(kv.num_blocks) +
            " KV blocks hold " + std::to_string(engines_total * kv.num_blocks) +
            " blocks, past kvsim's limit of " + std::to_string(limits::kMaxTotalGpuBlocks) +
            " blocks in one run (docs/limits.md): simulate fewer servers or set "
            "engine.num_gpu_blocks_override"});
  }
  ComputeChoice choice = make_compute_model(sc);
  compute = std::move(choice.model);
  info.compute_model = choice.description;
  info.notes = std::move(choice.notes);
  for (const auto& server : sc.hardware.servers) {
    for (int c = 0; c < server.count; ++c) {
      for (int g = 0; g < server.gpus_per_server / tp; ++g) {
        engines.push_back(std::make_unique<engine::Engine>(sc.engine, kv.num_blocks, max_model_len, *compute));
      }
    }
  }
  kick_pending.assign(engines.size(), false);
  pending_compute.assign(engines.size(), -1);
  for (std::size_t i = 0; i < engines.size(); ++i) engine_index[engines[i].get()] = static_cast<int>(i);
  if (sc.kv_offload.connector != "none") build_offload();

  try {
    driver = custom_driver ? std::move(custom_driver) : workload::make_driver(sc.workload, scenario_dir(sc), sc.seed);
  } catch (const InputError& e) {
    // Problems the workload finds in the scenario's own keys name the scenario file and the
    // workload section; problems inside an input file keep that file's location.
    std::vector<Diagnostic> ds = e.diagnostics();
    for (auto& d : ds) {
      if (!d.file.empty()) continue;
      d.file = sc.source_file;
      if (!d.path.empty() && d.path.rfind("workload.", 0) != 0) d.path = "workload." + d.path;
    }
    throw InputError(std::move(ds));
  }

  if (sc.engine.fast_paths) {
    prefix_names = driver->prefix_names(sc.engine.block_size);
    if (prefix_names) block_ids.set_first_id(prefix_names->size());
  }

  info.scenario_name = sc.name;
  info.kvsim_version = kVersion;
  info.seed = sc.seed;
  info.header_lines = driver->describe();
  info.gpu_kv_cache_tokens = kv.kv_tokens;
  info.num_gpu_blocks = kv.num_blocks;
  info.max_model_len = max_model_len;
  info.max_concurrency = static_cast<double>(kv.kv_tokens) / static_cast<double>(max_model_len);
  info.num_engines = static_cast<int>(engines.size());
  info.memory_breakdown = kv.explanation;
  if (dp > 1) {
    info.memory_breakdown.insert(info.memory_breakdown.begin(),
                                 "data parallel " + std::to_string(dp) + ": " + std::to_string(dp) +
                                     " engines per deployment, each sized as below");
  }
}

int Simulation::Impl::load(int u) const {
  // Requests running and waiting on the unit's engines (one engine, or a data-parallel group).
  const int dp = scenario.engine.data_parallel_size;
  int n = 0;
  for (int e = u * dp; e < (u + 1) * dp; ++e) {
    const auto& eng = *engines[static_cast<std::size_t>(e)];
    n += eng.num_running() + eng.num_waiting();
  }
  return n;
}

int Simulation::Impl::least_loaded(const std::vector<int>& candidates) const {
  int best = candidates.front();
  for (const int u : candidates) {
    if (load(u) < load(best)) best = u;
  }
  return best;
}

int Simulation::Impl::rank_in_group(int u) const {
  // vLLM's data-parallel load balancing (vllm/v1/engine/core_client.py DPLBAsyncMPClient
  // get_core_engine_for_request): the rank with the lowest waiting x 4 + running, the first
  // scanned on ties (one API server: from rank 0).
  const int dp = scenario.engine.data_parallel_size;
  int best = u * dp;
  std::int64_t best_score = -1;
  for (int e = u * dp; e < (u + 1) * dp; ++e) {
    const auto& eng = *engines[static_cast<std::size_t>(e)];
    const std::int64_t score = 4 * static_cast<std::int64_t>(eng.num_waiting()) + eng.num_running();
    if (best_score < 0 || score < best_score) {
      best = e;
      best_score = score;
    }
  }
  return best;
}

Simulation::Impl::Routing Simulation::Impl::routing_of(const std::string& policy) {
  // The scenario decoder admits only these names (tables.cpp); read once, not per request.
  if (policy == "round_robin") return Routing::kRoundRobin;
  if (policy == "least_loaded") return Routing::kLeastLoaded;
  if (policy == "prefix_aware") return Routing::kPrefixAware;
  return Routing::kSessionAffinity;
}

int Simulation::Impl::route(const workload::RequestSpec& spec, const engine::Request& r) {
  // The policy picks a unit: an engine, or with data_parallel_size d > 1 a deployment of d
  // engines, whose API server then picks the rank (rank_in_group).
  const int dp = scenario.engine.data_parallel_size;
  const auto n = static_cast<int>(engines.size()) / dp;
  auto rank = [&](int u) { return dp == 1 ? u : rank_in_group(u); };
  if (n == 1) return rank(0);
  auto round_robin = [&] {
    const int u = next_server;
    next_server = (next_server + 1) % n;
    return u;
  };
  switch (routing) {
    case Routing::kRoundRobin:
      return rank(round_robin());
    case Routing::kLeastLoaded:
      route_scratch.resize(static_cast<std::size_t>(n));
      for (int u = 0; u < n; ++u) route_scratch[static_cast<std::size_t>(u)] = u;
      return rank(least_loaded(route_scratch));
    case Routing::kPrefixAware: {
      // The unit whose GPU prefix caches hold the longest prefix of the request; ties (and no
      // hit anywhere) go to the least loaded of them.
      std::int64_t best_hit = -1;
      std::vector<int>& best = route_scratch;
      best.clear();
      for (int u = 0; u < n; ++u) {
        std::int64_t hit = 0;
        for (int e = u * dp; e < (u + 1) * dp; ++e) {
          hit = std::max(hit, engines[static_cast<std::size_t>(e)]->kv().cached_prefix_blocks(r.block_hashes));
        }
        if (hit > best_hit) {
          best_hit = hit;
          best.clear();
        }
        if (hit == best_hit) best.push_back(u);
      }
      return rank(least_loaded(best));
    }
    case Routing::kSessionAffinity:
      break;
  }
  // session_affinity: a conversation stays on the unit that served its first turn (its KV is
  // there); new conversations and requests without one go round robin.
  if (spec.conversation_id < 0) return rank(round_robin());
  auto it = conversation_server.find(spec.conversation_id);
  if (it != conversation_server.end()) return rank(it->second);
  const int u = round_robin();
  conversation_server.emplace(spec.conversation_id, u);
  return rank(u);
}

std::uint64_t Simulation::Impl::submit(workload::RequestSpec spec) {
  const std::uint64_t id = next_request_id++;
  engine::Request r;
  r.id = id;
  r.prompt_tokens = total_tokens(spec.prompt);
  r.max_output_tokens = std::max<std::int64_t>(spec.output_tokens, 1);
  // A request rejected at arrival (past max_model_len; every engine has the same) is never
  // hashed: its prompt may be longer than any KV cache.
  const bool too_long = engines.front()->rejects_at_arrival(r.prompt_tokens, r.max_output_tokens);
  TokenSequence full = spec.prompt;
  if (!too_long) append_tokens(full, spec.output_content_id, r.max_output_tokens);
  if (!too_long && block_ids.wants_collect(static_cast<std::size_t>(r.prompt_tokens + r.max_output_tokens) /
                                              static_cast<std::size_t>(scenario.engine.block_size) + 1)) {
    collect_block_ids();
  }
  if (!too_long) {
    r.block_hashes = prefix_names ? prefix_names->keys(full, block_ids) : hash_cache.hashes(spec.conversation_id, full);
  }
  const int server = route(spec, r);

  InFlight f;
  f.sent = clock;
  f.server = server;
  f.prompt_tokens = r.prompt_tokens;
  f.spec = std::move(spec);
  in_flight.emplace(id, std::move(f));

  if (on_request != nullptr) note_request(io::RequestEvent::Kind::kArrived, id, server, clock);
  auto& eng = *engines[static_cast<std::size_t>(server)];
  eng.add_request(std::move(r), clock);
  // Rejected at arrival: the error reaches the client as an event, after submit() returned.
  for (const auto& done : eng.take_finished()) {
    finished_by_id.emplace(done.id, done);
    events.push(clock, Event{EventKind::kComplete, static_cast<std::int64_t>(done.id)});
  }
  kick(server);
  return id;
}

void Simulation::Impl::try_start_step(int e) {
  auto& eng = *engines[static_cast<std::size_t>(e)];
  if (eng.stepping() || !eng.has_unfinished()) return;
  const auto duration = eng.start(clock);
  if (!duration) return;  // nothing schedulable: idle until the next arrival
  step_started(e, *duration);
}

void Simulation::Impl::handle_step_end(int e) {
  auto& eng = *engines[static_cast<std::size_t>(e)];
  auto next = eng.finish_step(clock);
  // Decode stretch: while the step that ended and the one that starts are quiet (each only
  // pushes its successor's end) and the next one ends before every queued event (a tie goes to
  // the queued event, pushed earlier), the queue would hand back this engine's step end next,
  // with nothing in between: end those steps here instead of through the queue.
  while (next && eng.next_step_quiet() && !eng.blocked() &&
         (events.empty() || clock + *next < events.top().time)) {
    record_step(e);
    advance_to(clock + *next);
    ++info.skipped_events;
    next = eng.finish_step(clock);
  }
  if (next) step_started(e, *next);
  record_step(e);
  const SimTime latency = scenario.engine.output_latency;
  for (const auto& ft : eng.take_first_tokens()) {
    auto it = in_flight.find(ft.id);
    KVSIM_ASSERT(it != in_flight.end(), "first token of an unknown request");
    it->second.first_token = ft.time + latency;
    if (on_request != nullptr) note_request(io::RequestEvent::Kind::kFirstToken, ft.id, e, ft.time + latency);
  }
  for (const auto& done : eng.take_finished()) {
    finished_by_id.emplace(done.id, done);
    events.push(clock + latency, Event{EventKind::kComplete, static_cast<std::int64_t>(done.id)});
  }
}

void Simulation::Impl::record_step(int e) {
  const auto& st = engines[static_cast<std::size_t>(e)]->last_step();
  ++info.engine_steps;
  if (on_step != nullptr && *on_step) {
    io::StepRecord rec;
    rec.time_s = to_seconds(st.start);
    rec.duration_ms = to_ms(st.duration);
    rec.server = e;
    rec.running = st.running;
    rec.waiting = st.waiting;
    rec.batch_tokens = st.batch_tokens;
    rec.prefill_requests = st.prefill_requests;
    rec.decode_requests = st.decode_requests;
    rec.kv_usage = st.kv_usage;
    rec.preemptions = st.preemptions;
    (*on_step)(rec);
  }
}

void Simulation::Impl::complete(const engine::FinishedRequest& f, int server) {
  auto it = in_flight.find(f.id);
  KVSIM_ASSERT(it != in_flight.end(), "completion of an unknown request");
  InFlight fl = std::move(it->second);
  in_flight.erase(it);
  if (on_request != nullptr) {
    note_request(f.ok ? io::RequestEvent::Kind::kFinished : io::RequestEvent::Kind::kRejected, f.id, server, clock);
  }
  workload::Completion c;
  c.request_id = f.id;
  c.ok = f.ok;
  c.sent = fl.sent;
  c.first_token = fl.first_token;
  c.finished = clock;
  c.output_tokens = f.output_tokens;
  if (f.ok) {
    io::RequestRecord rec;
    rec.ttft_ms = to_ms(fl.first_token - fl.sent);
    rec.latency_ms = to_ms(clock - fl.sent);
    // The benchmark: TPOT = (latency - TTFT) / (output tokens - first chunk tokens).
    rec.tpot_ms = f.output_tokens > 1 ? (rec.latency_ms - rec.ttft_ms) / static_cast<double>(f.output_tokens - 1) : 0.0;
    rec.start_time_ms = to_ms(fl.sent);
    rec.input_num_turns = fl.spec.input_num_turns;
    rec.input_num_tokens = fl.spec.input_num_tokens;
    rec.output_num_tokens = f.output_tokens;
    rec.conversation_id = fl.spec.conversation_name;
    rec.client_id = fl.spec.client_id;
    rec.request_id = f.id;
    rec.prompt_tokens = fl.prompt_tokens;
    rec.cached_tokens = f.cached_tokens;
    rec.preemptions = f.preemptions;
    rec.server = server;
    rec.counted = fl.spec.counted;
    if (on_record != nullptr && *on_record) {
      (*on_record)(rec);
      rec.conversation_id = std::string();
    }
    result.requests.push_back(std::move(rec));
  } else {
    ++info.failed_requests;
  }
  driver->on_complete(c, *this);
}

void Simulation::Impl::build_offload() {
  const auto& sc = scenario;
  const auto& ko = sc.kv_offload;
  const std::string& file = sc.source_file;
  auto fail = [&](const std::string& path, const std::string& message) {
    throw InputError(Diagnostic{file, 0, 0, path, message});
  };
  // A tensor-parallel replica's block is its GPUs' shards together.
  const int tp = sc.engine.tensor_parallel_size;
  const Bytes block_bytes = offload_block_bytes();

  // Topology: per server a host with its GPUs on PCIe (forward = host to GPU), optional local
  // NVMe behind the host, and the NIC as the host's link to one switch that reaches the store.
  topology = std::make_unique<hw::Topology>();
  hw::Topology& topo = *topology;
  bool need_network = false;
  for (const auto& t : ko.tiers) need_network = need_network || t.kind == "remote";
  if (need_network && !sc.hardware.remote_store) {
    fail("kv_offload.tiers", "a remote tier needs hardware.remote_store");
  }
  const hw::NodeId sw = need_network ? topo.add_node(hw::NodeKind::kNetworkSwitch, "switch") : hw::kNoNode;
  hw::NodeId store = hw::kNoNode;
  if (need_network) {
    store = topo.add_node(hw::NodeKind::kStorageNode, "remote_store");
    hw::attach_storage_node(topo, sw, store, *sc.hardware.remote_store);
  }
  struct ServerNodes {
    hw::NodeId host;
    hw::NodeId nvme = hw::kNoNode;
    const hw::ServerSpec* spec;
  };
  std::vector<ServerNodes> servers;
  std::vector<hw::NodeId> gpu_nodes;
  std::vector<int> gpu_server;
  int g_index = 0;
  for (std::size_t group = 0; group < sc.hardware.servers.size(); ++group) {
    const auto& spec = sc.hardware.servers[group];
    const std::string gpath = "hardware.servers." + std::to_string(group);
    for (int c = 0; c < spec.count; ++c) {
      const std::string sname = spec.name + "-" + std::to_string(c);
      ServerNodes sn{topo.add_node(hw::NodeKind::kHost, sname), hw::kNoNode, &spec};
      // One node per engine replica. With tensor parallelism each GPU of the replica moves its
      // own KV shard (1/tp of every block) over its own PCIe link, all at once and alike, so the
      // replica's tp links act as one link of tp times the rates.
      hw::HostLinkSpec replica_link = spec.gpu.host_link;
      replica_link.h2d = BytesPerSec{replica_link.h2d.value * tp};
      replica_link.d2h = BytesPerSec{replica_link.d2h.value * tp};
      replica_link.bidirectional_each = BytesPerSec{replica_link.bidirectional_each.value * tp};
      for (int g = 0; g < spec.gpus_per_server / tp; ++g) {
        const hw::NodeId gpu = topo.add_node(hw::NodeKind::kGpu, sname + "/gpu" + std::to_string(g));
        topo.add_link(sn.host, gpu, hw::gpu_host_link(replica_link, sname + "/pcie" + std::to_string(g), 0));
        gpu_nodes.push_back(gpu);
        gpu_server.push_back(static_cast<int>(servers.size()));
        ++g_index;
      }
      if (spec.local_nvme) {
        sn.nvme = topo.add_node(hw::NodeKind::kNvmeDrive, sname + "/nvme");
        // The drives as one device: their PCIe lanes side by side (striped tier).
        hw::attach_nvme_drive(topo, sn.host, sn.nvme, spec.local_nvme->gen,
                              spec.local_nvme->lanes * spec.local_nvme->count);
      }
      if (need_network) {
        if (spec.nic.rate.value <= 0) fail(gpath + ".nic.rate", "a remote tier needs every server's NIC");
        hw::LinkSpec nic;
        nic.name = sname + "/nic";
        nic.forward = spec.nic.rate;
        nic.backward = spec.nic.rate;
        nic.latency = spec.nic.latency + sc.hardware.switch_latency;
        topo.add_link(sn.host, sw, nic);
      }
      servers.push_back(sn);
    }
  }
  topo.seal();
  network = std::make_unique<hw::FlowNetwork>(topo);
  const bool lmcache = ko.connector == "lmcache";
  const int chunk_tokens = ko.chunk_tokens > 0 ? ko.chunk_tokens : (lmcache ? 256 : sc.engine.block_size);
  if (chunk_tokens % sc.engine.block_size != 0) {
    fail("kv_offload.chunk_tokens", "must be a multiple of engine.block_size (" +
                                         std::to_string(sc.engine.block_size) + ")");
  }
  const int chunk_blocks = chunk_tokens / sc.engine.block_size;
  offload = std::make_unique<engine::OffloadSystem>(
      *network, block_bytes, sc.engine.block_size, ko.offload_prompt_only,
      lmcache ? engine::OffloadSystem::Kind::kLmcache : engine::OffloadSystem::Kind::kNative, chunk_blocks);

  // Device resources: each server's NVMe drives (aggregate of `count`), the store's controller
  // and drives.
  struct Device {
    std::vector<hw::ResourceId> read, write;
    SimTime read_latency = 0, write_latency = 0;
  };
  std::vector<Device> nvme_dev(servers.size());
  for (std::size_t s = 0; s < servers.size(); ++s) {
    if (servers[s].nvme == hw::kNoNode) continue;
    const auto& ln = *servers[s].spec->local_nvme;
    hw::NvmeDriveSpec agg = ln.drive;
    agg.read = BytesPerSec{ln.drive.read.value * ln.count};
    agg.write = BytesPerSec{ln.drive.write.value * ln.count};
    const auto res = hw::add_nvme_drive_resources(*network, agg, topo.name(servers[s].nvme));
    nvme_dev[s] = Device{{res.read}, {res.write}, ln.drive.read_latency, ln.drive.write_latency};
  }
  // Each host's DRAM bandwidth, shared by every transfer into or out of host memory (tier reads
  // and writes, and the bounce of network and NVMe data on its way to the GPU).
  std::vector<hw::ResourceId> dram_res(servers.size(), -1);
  for (std::size_t s = 0; s < servers.size(); ++s) {
    const auto bw = servers[s].spec->host.dram_bandwidth;
    if (bw.value > 0) dram_res[s] = network->add_resource(topo.name(servers[s].host) + "/dram", bw);
  }
  Device store_dev;
  if (need_network) {
    const auto& node = *sc.hardware.remote_store;
    const auto res = hw::add_storage_node_resources(*network, node);
    const auto r = hw::storage_read_options(node, res);
    const auto w = hw::storage_write_options(node, res);
    store_dev = Device{r.resources, w.resources, r.extra_latency, w.extra_latency};
  }

  // Tiers: host_dram and local_nvme one per server, remote one for all.
  auto policy = [](const std::string& e) {
    return e == "arc" ? engine::EvictionPolicy::kArc : engine::EvictionPolicy::kLru;
  };
  std::vector<std::vector<int>> tier_of(ko.tiers.size());  // [tier spec][server] -> tier index
  for (std::size_t t = 0; t < ko.tiers.size(); ++t) {
    const auto& ts = ko.tiers[t];
    const std::string tpath = "kv_offload.tiers." + std::to_string(t);
    const std::int64_t blocks = ts.capacity.value / (block_bytes.value * chunk_blocks);
    if (blocks < 1) fail(tpath + ".capacity", "smaller than one KV chunk");
    if (ts.kind == "remote") {
      const int idx = offload->add_tier("remote", blocks, policy(ts.eviction));
      tier_of[t].assign(servers.size(), idx);
      continue;
    }
    for (std::size_t s = 0; s < servers.size(); ++s) {
      const auto& spec = *servers[s].spec;
      if (ts.kind == "host_dram" && spec.host.dram.value > 0 && ts.capacity > spec.host.dram) {
        fail(tpath + ".capacity", "more than the host's DRAM");
      }
      if (ts.kind == "local_nvme" && servers[s].nvme == hw::kNoNode) {
        fail(tpath, "a local_nvme tier needs local_nvme drives in every server");
      }
      tier_of[t].push_back(offload->add_tier(topo.name(servers[s].host) + "/" + ts.kind, blocks, policy(ts.eviction)));
    }
  }

  tier_instances.assign(ko.tiers.size(), {});
  for (std::size_t t = 0; t < ko.tiers.size(); ++t) {
    for (const int idx : tier_of[t]) {
      auto& v = tier_instances[t];
      if (std::find(v.begin(), v.end(), idx) == v.end()) v.push_back(idx);
    }
  }

  // Each engine's stack: routes from and to its GPU, and between adjacent tiers.
  auto tier_node = [&](std::size_t t, std::size_t s) {
    const auto& kind = ko.tiers[t].kind;
    if (kind == "host_dram") return servers[s].host;
    if (kind == "local_nvme") return servers[s].nvme;
    return store;
  };
  auto tier_device = [&](std::size_t t, std::size_t s) -> Device {
    const auto& kind = ko.tiers[t].kind;
    if (kind == "host_dram") return Device{};
    if (kind == "local_nvme") return nvme_dev[s];
    return store_dev;
  };
  for (std::size_t e = 0; e < engines.size(); ++e) {
    const auto s = static_cast<std::size_t>(gpu_server[e]);
    std::vector<engine::TierPath> paths;
    std::vector<engine::CascadePath> cascades;
    for (std::size_t t = 0; t < ko.tiers.size(); ++t) {
      const hw::NodeId node = tier_node(t, s);
      const Device dev = tier_device(t, s);
      engine::TierPath p;
      p.tier = tier_of[t][s];
      p.to_gpu = topo.route(node, gpu_nodes[e]);
      p.from_gpu = topo.route(gpu_nodes[e], node);
      p.read_latency = dev.read_latency;
      p.write_latency = dev.write_latency;
      p.read_resources = dev.read;
      p.write_resources = dev.write;
      p.host_memory = ko.tiers[t].kind == "host_dram";
      if (dram_res[s] >= 0) {  // every tier's data passes through host memory on a GeForce GPU
        p.read_resources.push_back(dram_res[s]);
        p.write_resources.push_back(dram_res[s]);
      }
      paths.push_back(std::move(p));
      if (t > 0) {
        engine::CascadePath c;
        c.route = topo.route(tier_node(t - 1, s), node);
        c.latency = dev.write_latency;
        c.resources = dev.write;
        cascades.push_back(std::move(c));
      }
    }
    offload->attach(*engines[e], std::move(paths), std::move(cascades));
  }
}

void Simulation::Impl::relay_transfer(const engine::TransferRecord& t, const TransferCallback& cb) {
  using K = engine::TransferRecord::Kind;
  io::TransferEvent ev;
  ev.kind = t.kind == K::kLoad ? "load" : t.kind == K::kStore ? "store" : t.kind == K::kCascade ? "cascade" : "promote";
  ev.request_id = t.request;
  ev.server = engine_index.at(t.engine);
  ev.tier = offload->tier_name(t.tier);
  // Tier instances are named <host>/<kind>, or remote (build_offload).
  const auto slash = ev.tier.rfind('/');
  ev.tier_kind = slash == std::string_view::npos ? ev.tier : ev.tier.substr(slash + 1);
  ev.bytes = t.bytes.value;
  ev.start_ns = t.start;
  ev.end_ns = t.end;
  hop_scratch.clear();
  if (t.route != nullptr) {
    for (const hw::Hop& h : *t.route) {
      hop_scratch.push_back(io::TransferEvent::Hop{topology->link(h.link).name, link_kind(*topology, h.link), h.forward});
    }
  }
  ev.hops = hop_scratch;
  cb(ev);
}

void Simulation::Impl::report_offload() {
  // Tiers by kind, in the order of the scenario's tier list.
  const auto reports = offload->report();
  for (const auto& spec : scenario.kv_offload.tiers) {
    io::TierInfo t;
    t.kind = spec.kind;
    t.capacity_bytes = spec.capacity.value;
    for (const auto& r : reports) {
      const bool match = spec.kind == "remote" ? r.name == "remote"
                                               : r.name.size() > spec.kind.size() &&
                                                     r.name.compare(r.name.size() - spec.kind.size(), spec.kind.size(), spec.kind) == 0;
      if (!match) continue;
      t.hit_tokens += r.hit_tokens;
      t.bytes_read += r.bytes_read.value;
      t.bytes_written += r.bytes_written.value;
      t.bytes_promoted += r.promoted_chunks * offload->chunk_blocks() * offload_block_bytes().value;
      t.evictions += r.stats.evictions;
      t.stores_dropped += r.stats.stores_dropped;
    }
    info.tiers.push_back(t);
  }
  // Links by kind, from the kinds of their ends.
  const hw::Topology& topo = *topology;
  const double seconds = std::max(info.simulated_seconds, 1e-9);
  auto kind_of = [&](hw::LinkId l) -> std::string { return link_kind(topo, l); };
  std::map<std::string, io::LinkInfo> by_kind;
  for (hw::LinkId l = 0; l < static_cast<hw::LinkId>(topo.num_links()); ++l) {
    io::LinkInfo& li = by_kind[kind_of(l)];
    li.kind = kind_of(l);
    const auto fwd = network->bytes_moved(l, true).value;
    const auto bwd = network->bytes_moved(l, false).value;
    li.bytes_forward += fwd;
    li.bytes_backward += bwd;
    const auto& spec = topo.link(l);
    li.max_utilization_forward =
        std::max(li.max_utilization_forward, static_cast<double>(fwd) / (spec.forward.value * seconds));
    li.max_utilization_backward =
        std::max(li.max_utilization_backward, static_cast<double>(bwd) / (spec.backward.value * seconds));
  }
  for (const char* k : {"pcie", "nvme", "nic", "store"}) {
    auto it = by_kind.find(k);
    if (it != by_kind.end()) info.links.push_back(it->second);
  }
}

void Simulation::Impl::schedule_network() {
  const SimTime t = network->next_completion();
  if (t == kNever || t >= network_event) return;
  network_event = t;
  events.push(t, Event{EventKind::kNetwork, 0});
}

void Simulation::Impl::handle_network() {
  if (clock == network_event) network_event = kNever;
  completed.clear();
  network->advance_to(clock, completed);
  for (const auto& c : completed) {
    to_retry.clear();
    engine::Engine* woken = offload->on_transfer_done(c.tag, clock, to_retry);
    for (engine::Engine* r : to_retry) {
      if (!r->stepping()) kick(engine_index.at(r));
    }
    if (woken == nullptr) continue;
    const int e = engine_index.at(woken);
    if (!woken->stepping()) {
      kick(e);
    } else if (!woken->blocked() && pending_compute[static_cast<std::size_t>(e)] >= 0) {
      // The step's synchronous transfers are done: it computes now. With layer-wise loading
      // (LMCache use_layerwise) compute overlapped the loads, but the last layer's compute
      // follows its load.
      const SimTime d = pending_compute[static_cast<std::size_t>(e)];
      pending_compute[static_cast<std::size_t>(e)] = -1;
      SimTime end = clock + d;
      if (scenario.kv_offload.use_layerwise) {
        const SimTime per_layer = d / std::max(scenario.model.num_layers, 1);
        end = std::max(clock + per_layer, woken->current_step().start + d);
      }
      events.push(end, Event{EventKind::kStepEnd, e});
    }
  }
}

// The state at `t`, every event at or before t done and none after: GPU blocks and tier chunks
// as they stand, link bytes as the network will have moved them by t (read on a copy).
void Simulation::Impl::take_sample(SimTime t) {
  io::UsageSample u;
  u.time_s = to_seconds(t);
  const SimTime dt = t - last_sample;
  u.interval_s = to_seconds(dt);
  const std::int64_t block = offload_block_bytes().value;
  for (const auto& e : engines) {
    const auto& pool = e->kv().pool();
    u.gpu_bytes_held += (pool.num_blocks() - 1 - pool.num_free_blocks()) * block;
  }
  if (offload) {
    const std::int64_t chunk = block * offload->chunk_blocks();
    for (std::size_t k = 0; k < tier_instances.size(); ++k) {
      io::TierUsage tu;
      tu.kind = scenario.kv_offload.tiers[k].kind;
      for (const int idx : tier_instances[k]) {
        tu.bytes_held += offload->tier(idx).size() * chunk;
        tu.capacity_bytes += offload->tier(idx).capacity() * chunk;
      }
      u.tiers.push_back(std::move(tu));
    }
    // Utilization of each link direction over (last_sample, t]; the busiest link per kind.
    std::vector<std::int64_t> moved = network->link_bytes_moved_at(t);
    if (last_link_bytes.empty()) last_link_bytes.assign(moved.size(), 0);
    const hw::Topology& topo = *topology;
    const double seconds = to_seconds(dt);
    for (const char* kind : {"pcie", "nvme", "nic", "store"}) {
      io::LinkUsage lu;
      lu.kind = kind;
      bool present = false;
      for (hw::LinkId l = 0; l < static_cast<hw::LinkId>(topo.num_links()); ++l) {
        if (std::string_view(link_kind(topo, l)) != kind) continue;
        present = true;
        if (dt <= 0) continue;
        const std::size_t f = 2 * static_cast<std::size_t>(l);
        const auto& spec = topo.link(l);
        lu.utilization_forward = std::max(
            lu.utilization_forward, static_cast<double>(moved[f] - last_link_bytes[f]) / (spec.forward.value * seconds));
        lu.utilization_backward =
            std::max(lu.utilization_backward,
                     static_cast<double>(moved[f + 1] - last_link_bytes[f + 1]) / (spec.backward.value * seconds));
      }
      if (present) u.links.push_back(std::move(lu));
    }
    last_link_bytes = std::move(moved);
  }
  last_sample = t;
  sampled = true;
  control->on_usage(u);
}

void Simulation::Impl::advance_to(SimTime t) {
  // Samples of the boundaries the next event passes, before it changes anything.
  while (next_sample < t) {
    take_sample(next_sample);
    next_sample += sample_interval;
  }
  if (stoppable && ++since_stop_check == 4096) {
    since_stop_check = 0;
    if (control->stop.stop_requested()) throw RunCancelled();
    if (control->on_progress)
      control->on_progress(
          RunProgress{to_seconds(t), static_cast<std::int64_t>(result.requests.size())});
  }
  clock = t;
}

void Simulation::Impl::throw_time_limit(EventKind kind) const {
  // Times computed from rates and samples saturate at kTimeOverLimit (kvsim/core/units.hpp),
  // so an event past the limit names what took so long instead of wrapping.
  std::string what;
  switch (kind) {
    case EventKind::kWake:
      what = "the workload's next arrival (workload.clients.request_rate, or a trace's timestamps "
             "times time_scale)";
      break;
    case EventKind::kStepEnd:
      what = "a forward step (the GPU's rates: hardware.servers.*.gpu memory_bandwidth, "
             "bf16_dense; or compute)";
      break;
    case EventKind::kNetwork:
      what = "a KV transfer (the rates and latencies of the links, NICs, drives and stores in hardware)";
      break;
    default:
      what = "an event";
      break;
  }
  std::ostringstream os;
  os << what << " would end past kvsim's limit of " << to_seconds(kTimeLimit)
     << " s (about 31.7 years) of simulated time, at simulated time " << to_seconds(clock)
     << " s (docs/limits.md)";
  throw InputError(Diagnostic{scenario.source_file, 0, 0, "", os.str()});
}

void Simulation::Impl::run_loop() {
  driver->start(*this);
  stoppable = control != nullptr && (control->stop.stop_possible() || control->on_progress);
  while (!events.empty()) {
    const auto ev = events.pop();
    KVSIM_ASSERT(ev.time >= clock, "time went back");
    if (ev.time > kTimeLimit) throw_time_limit(ev.payload.kind);
    advance_to(ev.time);
    try {
      switch (ev.payload.kind) {
        case EventKind::kWake:
          driver->on_wake(ev.payload.arg, *this);
          break;
        case EventKind::kKick:
          kick_pending[static_cast<std::size_t>(ev.payload.arg)] = false;
          try_start_step(static_cast<int>(ev.payload.arg));
          break;
        case EventKind::kStepEnd:
          handle_step_end(static_cast<int>(ev.payload.arg));
          break;
        case EventKind::kNetwork:
          handle_network();
          break;
        case EventKind::kComplete: {
          const auto id = static_cast<std::uint64_t>(ev.payload.arg);
          auto it = finished_by_id.find(id);
          KVSIM_ASSERT(it != finished_by_id.end(), "completion event without a finished request");
          const auto f = it->second;
          finished_by_id.erase(it);
          complete(f, in_flight.at(id).server);
          break;
        }
      }
      if (network) schedule_network();
    } catch (const InternalError& e) {
      std::ostringstream os;
      os << e.what() << " (simulated time " << to_seconds(clock) << " s, event " << static_cast<int>(ev.payload.kind)
         << " arg " << ev.payload.arg << ")";
      throw InternalError(os.str());
    }
  }
  if (!in_flight.empty()) {
    std::ostringstream os;
    os << in_flight.size() << " request(s) never finished: an engine idles with requests it cannot schedule "
       << "(simulated time " << to_seconds(clock) << " s)";
    throw InternalError(os.str());
  }
  if (next_sample != kNever && (!sampled || clock > last_sample)) take_sample(clock);
  info.simulated_seconds = to_seconds(clock);
  if (offload) report_offload();
  for (const auto& e : engines) {
    info.prefix_cache_queries += e->counters().prefix_cache_queries;
    info.prefix_cache_hits += e->counters().prefix_cache_hits;
    info.preemptions += e->counters().preemptions;
    info.external_hit_tokens += e->counters().external_hit_tokens;
    info.stretch_steps += e->stretch_steps();
  }
}

Simulation::Simulation(const Scenario& scenario) : impl_(std::make_unique<Impl>(scenario)) {}
Simulation::Simulation(const Scenario& scenario, std::unique_ptr<workload::Driver> driver)
    : impl_(std::make_unique<Impl>(scenario, std::move(driver))) {}
Simulation::~Simulation() = default;

const io::RunInfo& Simulation::info() const { return impl_->info; }

RunResult Simulation::run(const StepCallback& on_step, const RecordCallback& on_record, const RunControl& control) {
  impl_->on_step = &on_step;
  impl_->on_record = &on_record;
  impl_->control = &control;
  if (control.on_request) {
    impl_->on_request = &control.on_request;
    impl_->engine_observers.resize(impl_->engines.size());
    for (std::size_t e = 0; e < impl_->engines.size(); ++e) {
      impl_->engine_observers[e].impl = impl_.get();
      impl_->engine_observers[e].server = static_cast<int>(e);
      impl_->engines[e]->set_observer(&impl_->engine_observers[e]);
    }
  }
  if (control.on_transfer && impl_->offload) {
    Impl* impl = impl_.get();
    const TransferCallback* cb = &control.on_transfer;
    impl_->offload->set_transfer_observer([impl, cb](const engine::TransferRecord& t) { impl->relay_transfer(t, *cb); });
  }
  if (control.on_usage) {
    if (!(control.usage_interval_s > 0)) throw InputError("", 0, 0, "usage sampling interval must be > 0 s");
    impl_->sample_interval = std::max<SimTime>(1, from_seconds(control.usage_interval_s));
    impl_->next_sample = impl_->sample_interval;
  }
  impl_->run_loop();
  impl_->result.info = impl_->info;
  return std::move(impl_->result);
}

}  // namespace kvsim::scenario
