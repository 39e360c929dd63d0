#include "sim/cluster/simulation.hpp"

#include <algorithm>
#include <optional>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include "hw/flow_network.hpp"
#include "hw/topology.hpp"
#include "models/memory.hpp"
#include "models/tensor_parallel.hpp"
#include "sim/cluster/compute_factory.hpp"
#include "sim/cluster/offload_builder.hpp"
#include "sim/cluster/router.hpp"
#include "sim/cluster/usage_sampler.hpp"
#include "sim/core/error.hpp"
#include "sim/core/event_queue.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/tokens.hpp"
#include "sim/core/version.hpp"
#include "sim/engine/block_ids.hpp"
#include "sim/engine/engine.hpp"
#include "sim/engine/offload.hpp"
#include "sim/scenario/deployment.hpp"
#include "sim/workload/make_driver.hpp"

namespace kvsim::cluster {
using scenario::Scenario;

namespace {

enum class EventKind : std::uint8_t { kWake, kKick, kStepEnd, kComplete, kNetwork, kGroupStepEnd };

struct Event {
  EventKind kind;
  std::int64_t arg;  // wake tag, engine index or request id
};

}  // namespace

struct Simulation::Impl : workload::WorkloadContext {
  // Built.
  Scenario scenario;
  // Block ids for block hashes (the GPU prefix caches and the tiers index them); never reclaimed
  // on the plain path (engine.fast_paths off), so the fast-path test checks reclaiming against it.
  engine::BlockIds block_ids{scenario.engine.fast_paths};
  std::unique_ptr<models::ComputeModel> compute;
  std::vector<std::unique_ptr<engine::Engine>> engines;
  // KV offload: the hardware topology, the transfers over it and the tiers (offload_builder.hpp);
  // the pointers are null without an offload system.
  OffloadCluster offload_cluster;
  hw::Topology* topology = nullptr;
  hw::FlowNetwork* network = nullptr;
  engine::OffloadSystem* offload = nullptr;
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
  std::unique_ptr<UsageSampler> sampler;
  void take_sample(SimTime t) { control->on_usage(sampler->take(t)); }
  // Timelines (RunControl::on_request, on_transfer); null without them.
  const RequestEventCallback* on_request = nullptr;
  void note_request(io::RequestEvent::Kind kind, std::uint64_t id, int server, SimTime t,
                    int transfers = 0) {
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
    void on_request_event(std::uint64_t id, engine::RequestEventKind kind, SimTime now,
                          int transfers) override {
      using K = io::RequestEvent::Kind;
      K k = K::kScheduled;
      switch (kind) {
        case engine::RequestEventKind::kScheduled:
          k = K::kScheduled;
          break;
        case engine::RequestEventKind::kPreempted:
          k = K::kPreempted;
          break;
        case engine::RequestEventKind::kLoadStarted:
          k = K::kLoadStarted;
          break;
        case engine::RequestEventKind::kLoadDone:
          k = K::kLoadDone;
          break;
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
  std::unique_ptr<Router> router;  // built with the engines
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
  // Hands the first tokens and finished requests of engine `e`'s last step to their clients.
  void deliver_outputs(int e);
  // Counts the step that ended last on engine `e` and hands it to on_step; `wall` > 0: the time
  // the step really took (a lockstep group's), else the engine's own duration.
  void record_step(int e, SimTime wall = 0);

  // Data-parallel ranks of an MoE model step in lockstep (vLLM V1 DPEngineCoreProc: the MoE
  // layers' collectives join every rank in every forward pass, and a rank with nothing to run
  // runs a dummy batch while any rank of its group has work): a group's step starts on all its
  // ranks at once and ends when the slowest rank's ends. Dense models' ranks step alone.
  struct LockstepGroup {
    int first = 0;          // engine index of rank 0
    int size = 0;           // ranks
    bool stepping = false;  // a group step is in flight (its kGroupStepEnd queued or due)
    SimTime start = 0;      // when the step in flight started
    SimTime end = 0;        // its end, over the ranks whose compute has begun
    int blocked = 0;        // ranks whose step waits for synchronous connector transfers
  };
  std::vector<LockstepGroup> groups;
  std::vector<int> group_of;  // per engine: its group, or -1
  SimTime dummy_step = 0;     // the dummy batch an idle rank runs (one decode token)
  std::vector<std::optional<SimTime>> group_scratch;
  void try_start_group(int g);
  void handle_group_step_end(int g);
  // Group g between steps, now: each rank ends its step if it ran one (recorded with the group's
  // duration, outputs delivered) or starts one if it has work (a rank that got work during the
  // group's step joins here); the ranks' next steps then start together (a rank without one runs
  // the dummy batch), unless no rank has any.
  void step_group(int g);
  // Takes the usage samples due before `t`, checks for cancellation, and sets the clock to t.
  void advance_to(SimTime t);
  bool stoppable = false;
  std::uint32_t since_stop_check = 0;
  void complete(const engine::FinishedRequest& f, int server);
  void run_loop();
  // Frees the block ids no engine, tier or hash cache holds (between requests only).
  void collect_block_ids() {
    block_ids.collect([this](auto mark) {
      for (const auto& e : engines) e->for_each_block_hash(mark);
      if (offload) offload->for_each_key(mark);
      hash_cache.for_each_key(mark);
    });
  }
  void schedule_network();
  void handle_network();
};

Simulation::Impl::Impl(const Scenario& s, std::unique_ptr<workload::Driver> custom_driver)
    : scenario(s) {
  const auto& sc = scenario;
  // Requests carry block ids instead of raw hashes (a renaming: same results).
  hash_cache.set_interner(&block_ids);
  // The decoder ran these checks already, at the keys' lines; a scenario built in code meets
  // them here.
  const kvsim::scenario::CheckedDeployment checked = kvsim::scenario::check_and_size(sc);
  if (const auto& problem = checked.problem) {
    throw InputError(Diagnostic{sc.source_file, 0, 0, problem->path, problem->message});
  }
  const kvsim::scenario::EngineSizing& sizing = checked.sizing;
  const models::MemoryBreakdown& kv = sizing.kv;
  const std::int64_t max_model_len = sizing.max_model_len;
  const int tp = sc.engine.tensor_parallel_size;
  const int dp = sc.engine.data_parallel_size;
  ComputeChoice choice = make_compute_model(sc);
  compute = std::move(choice.model);
  info.compute_model = choice.description;
  info.notes = std::move(choice.notes);
  info.notes.insert(info.notes.end(), sizing.notes.begin(), sizing.notes.end());
  for (const auto& server : sc.hardware.servers) {
    for (int c = 0; c < server.count; ++c) {
      for (int g = 0; g < server.gpus_per_server / tp; ++g) {
        engines.push_back(
            std::make_unique<engine::Engine>(sc.engine, kv.num_blocks, max_model_len, *compute));
      }
    }
  }
  kick_pending.assign(engines.size(), false);
  pending_compute.assign(engines.size(), -1);
  for (std::size_t i = 0; i < engines.size(); ++i)
    engine_index[engines[i].get()] = static_cast<int>(i);
  router = std::make_unique<Router>(sc.routing, dp, engines);
  if (dp > 1 && sc.model.is_moe()) {
    // Lockstep groups: each deployment's d consecutive engines (the router's units).
    group_of.assign(engines.size(), -1);
    for (int first = 0; first + dp <= static_cast<int>(engines.size()); first += dp) {
      LockstepGroup grp;
      grp.first = first;
      grp.size = dp;
      for (int r = 0; r < dp; ++r)
        group_of[static_cast<std::size_t>(first) + static_cast<std::size_t>(r)] =
            static_cast<int>(groups.size());
      groups.push_back(grp);
    }
    group_scratch.assign(static_cast<std::size_t>(dp), std::nullopt);
    // execute_dummy_batch: vLLM's _dummy_run of one token, a decode in graph mode.
    models::BatchShape dummy;
    dummy.decode_contexts.push_back(1);
    dummy_step = std::max<SimTime>(
        from_seconds(compute->step_time(dummy).step_s(sc.engine.async_scheduling)), 1);
  }
  if (sc.kv_offload.connector != engine::KvConnector::kNone) {
    offload_cluster = build_offload(sc, engines);
    topology = offload_cluster.topology.get();
    network = offload_cluster.network.get();
    offload = offload_cluster.offload.get();
  }

  try {
    driver = custom_driver ? std::move(custom_driver)
                           : workload::make_driver(sc.workload, scenario_dir(sc), sc.seed);
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
  info.step_times = describe_step_times(*compute, sc.engine);
  if (dp > 1) {
    info.memory_breakdown.insert(info.memory_breakdown.begin(),
                                 "data parallel " + std::to_string(dp) + ": " + std::to_string(dp) +
                                     " engines per deployment, each sized as below");
  }
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
  if (!too_long &&
      block_ids.wants_collect(static_cast<std::size_t>(r.prompt_tokens + r.max_output_tokens) /
                                  static_cast<std::size_t>(scenario.engine.block_size) +
                              1)) {
    collect_block_ids();
  }
  if (!too_long) {
    r.block_hashes = prefix_names ? prefix_names->keys(full, block_ids)
                                  : hash_cache.hashes(spec.conversation_id, full);
  }
  const int server = router->route(spec, r);

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
  if (!group_of.empty() && group_of[static_cast<std::size_t>(e)] >= 0) {
    try_start_group(group_of[static_cast<std::size_t>(e)]);
    return;
  }
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
  deliver_outputs(e);
}

void Simulation::Impl::deliver_outputs(int e) {
  auto& eng = *engines[static_cast<std::size_t>(e)];
  const SimTime latency = scenario.engine.output_latency;
  for (const auto& ft : eng.take_first_tokens()) {
    auto it = in_flight.find(ft.id);
    KVSIM_ASSERT(it != in_flight.end(), "first token of an unknown request");
    it->second.first_token = ft.time + latency;
    if (on_request != nullptr)
      note_request(io::RequestEvent::Kind::kFirstToken, ft.id, e, ft.time + latency);
  }
  for (const auto& done : eng.take_finished()) {
    finished_by_id.emplace(done.id, done);
    events.push(clock + latency, Event{EventKind::kComplete, static_cast<std::int64_t>(done.id)});
  }
}

void Simulation::Impl::try_start_group(int g) {
  // A rank that gets work while its group steps joins at the group's next step.
  if (!groups[static_cast<std::size_t>(g)].stepping) step_group(g);
}

void Simulation::Impl::handle_group_step_end(int g) {
  LockstepGroup& grp = groups[static_cast<std::size_t>(g)];
  KVSIM_ASSERT(grp.stepping && grp.blocked == 0, "a lockstep group's step ended twice");
  grp.stepping = false;
  step_group(g);
}

void Simulation::Impl::step_group(int g) {
  LockstepGroup& grp = groups[static_cast<std::size_t>(g)];
  const SimTime wall = clock - grp.start;
  bool any = false;
  for (int r = 0; r < grp.size; ++r) {
    const int e = grp.first + r;
    auto& eng = *engines[static_cast<std::size_t>(e)];
    std::optional<SimTime>& d = group_scratch[static_cast<std::size_t>(r)];
    d.reset();
    if (eng.stepping()) {
      d = eng.finish_step(clock);
      record_step(e, wall);
      deliver_outputs(e);
    } else if (eng.has_unfinished()) {
      d = eng.start(clock);
    }
    any = any || d.has_value();
  }
  if (!any) return;
  grp.stepping = true;
  grp.start = clock;
  grp.end = clock;
  grp.blocked = 0;
  for (int r = 0; r < grp.size; ++r) {
    const int e = grp.first + r;
    const std::optional<SimTime>& d = group_scratch[static_cast<std::size_t>(r)];
    if (!d) {
      grp.end = std::max(grp.end, clock + dummy_step);  // execute_dummy_batch
    } else if (engines[static_cast<std::size_t>(e)]->blocked()) {
      pending_compute[static_cast<std::size_t>(e)] = *d;
      ++grp.blocked;
    } else {
      grp.end = std::max(grp.end, clock + *d);
    }
  }
  if (grp.blocked == 0) events.push(grp.end, Event{EventKind::kGroupStepEnd, g});
}

void Simulation::Impl::record_step(int e, SimTime wall) {
  const auto& st = engines[static_cast<std::size_t>(e)]->last_step();
  ++info.engine_steps;
  if (on_step != nullptr && *on_step) {
    io::StepRecord rec;
    rec.time_s = to_seconds(st.start);
    rec.duration_ms = to_ms(wall > 0 ? wall : st.duration);
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
    note_request(f.ok ? io::RequestEvent::Kind::kFinished : io::RequestEvent::Kind::kRejected, f.id,
                 server, clock);
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
    rec.tpot_ms = f.output_tokens > 1
                      ? (rec.latency_ms - rec.ttft_ms) / static_cast<double>(f.output_tokens - 1)
                      : 0.0;
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

void Simulation::Impl::relay_transfer(const engine::TransferRecord& t, const TransferCallback& cb) {
  using K = engine::TransferRecord::Kind;
  io::TransferEvent ev;
  ev.kind = t.kind == K::kLoad      ? "load"
            : t.kind == K::kStore   ? "store"
            : t.kind == K::kCascade ? "cascade"
                                    : "promote";
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
      hop_scratch.push_back(io::TransferEvent::Hop{topology->link(h.link).name,
                                                   link_kind(*topology, h.link), h.forward});
    }
  }
  ev.hops = hop_scratch;
  cb(ev);
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
    const int g = group_of.empty() ? -1 : group_of[static_cast<std::size_t>(e)];
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
      if (g < 0) {
        events.push(end, Event{EventKind::kStepEnd, e});
      } else {
        // A rank of a lockstep group: the group's step ends with its last rank's.
        LockstepGroup& grp = groups[static_cast<std::size_t>(g)];
        KVSIM_ASSERT(woken->current_step().start == grp.start,
                     "a rank's step began apart from its group's");
        grp.end = std::max(grp.end, end);
        if (--grp.blocked == 0) events.push(grp.end, Event{EventKind::kGroupStepEnd, g});
      }
    }
  }
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
  // Times computed from rates and samples saturate at kTimeOverLimit (sim/core/units.hpp),
  // so an event past the limit names what took so long instead of wrapping.
  std::string what;
  switch (kind) {
    case EventKind::kWake:
      what =
          "the workload's next arrival (workload.clients.request_rate, or a trace's timestamps "
          "times time_scale)";
      break;
    case EventKind::kStepEnd:
    case EventKind::kGroupStepEnd:
      what =
          "a forward step (the GPU's rates: hardware.servers.*.gpu memory_bandwidth, "
          "bf16_dense; or compute)";
      break;
    case EventKind::kNetwork:
      what =
          "a KV transfer (the rates and latencies of the links, NICs, drives and stores in "
          "hardware)";
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
        case EventKind::kGroupStepEnd:
          handle_group_step_end(static_cast<int>(ev.payload.arg));
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
      os << e.what() << " (simulated time " << to_seconds(clock) << " s, event "
         << static_cast<int>(ev.payload.kind) << " arg " << ev.payload.arg << ")";
      throw InternalError(os.str());
    }
  }
  if (!in_flight.empty()) {
    std::ostringstream os;
    os << in_flight.size()
       << " request(s) never finished: an engine idles with requests it cannot schedule "
       << "(simulated time " << to_seconds(clock) << " s)";
    throw InternalError(os.str());
  }
  if (sampler && (!sampler->taken() || clock > sampler->last())) take_sample(clock);
  info.simulated_seconds = to_seconds(clock);
  if (offload) report_offload(scenario, offload_cluster, info.simulated_seconds, info);
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

RunResult Simulation::run(const StepCallback& on_step, const RecordCallback& on_record,
                          const RunControl& control) {
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
    impl_->offload->set_transfer_observer(
        [impl, cb](const engine::TransferRecord& t) { impl->relay_transfer(t, *cb); });
  }
  if (control.on_usage) {
    if (!(control.usage_interval_s > 0))
      throw InputError("", 0, 0, "usage sampling interval must be > 0 s");
    impl_->sampler = std::make_unique<UsageSampler>(
        impl_->scenario, impl_->engines, impl_->offload ? &impl_->offload_cluster : nullptr);
    impl_->sample_interval = std::max<SimTime>(1, from_seconds(control.usage_interval_s));
    impl_->next_sample = impl_->sample_interval;
  }
  impl_->run_loop();
  impl_->result.info = impl_->info;
  return std::move(impl_->result);
}

}  // namespace kvsim::cluster
