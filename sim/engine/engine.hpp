#pragma once
// One vLLM V1 engine instance (EngineCore with its Scheduler and KVCacheManager) on one GPU.
// Each step: schedule (vllm/v1/core/sched/scheduler.py Scheduler.schedule), time the batch with
// a ComputeModel, then apply the outputs (update_from_output): sample one token for every
// request whose computed tokens reached its length, finish requests at their forced length and
// free their blocks. Times are SimTime nanoseconds.
#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "models/compute_model.hpp"
#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/engine/connector.hpp"
#include "sim/engine/engine_config.hpp"
#include "sim/engine/kv_cache_manager.hpp"
#include "sim/engine/request.hpp"

namespace kvsim::engine {

// A request that left the engine (finished or rejected at arrival).
struct FinishedRequest {
  std::uint64_t id = 0;
  bool ok = true;                 // false: rejected (longer than max_model_len)
  SimTime arrival = 0;
  SimTime first_token_time = -1;  // engine-side, before output latency
  SimTime finish_time = -1;
  std::int64_t prompt_tokens = 0;
  std::int64_t output_tokens = 0;
  std::int64_t cached_tokens = 0;
  int preemptions = 0;
};

// A request that produced its first output token this step.
struct FirstToken {
  std::uint64_t id = 0;
  SimTime time = 0;
};

// What one step did.
struct StepStats {
  SimTime start = 0;
  SimTime duration = 0;
  int running = 0;
  int waiting = 0;
  std::int64_t batch_tokens = 0;
  int prefill_requests = 0;
  int decode_requests = 0;
  double kv_usage = 0;
  int preemptions = 0;
  models::StepBreakdown breakdown;
};

// What happens to a request inside the engine, for timelines (Simulation's
// RunControl::on_request). `transfers`: for kLoadStarted the connector transfers started (the
// load ends when as many kLoadDone have followed); 0 otherwise.
enum class RequestEventKind : std::uint8_t {
  kScheduled,    // left the waiting queue into the running queue (first time or resumed)
  kPreempted,    // freed its KV and went back to the waiting queue (recompute)
  kLoadStarted,  // the connector started loading its KV from the offload tiers
  kLoadDone,     // one of those transfers ended
};
class RequestObserver {
 public:
  virtual ~RequestObserver() = default;
  virtual void on_request_event(std::uint64_t id, RequestEventKind kind, SimTime now, int transfers) = 0;
};

// Engine-wide counters (vLLM's Prometheus counters of the same names).
struct EngineCounters {
  std::int64_t prefix_cache_queries = 0;  // tokens looked up by requests scheduled the first time
  std::int64_t prefix_cache_hits = 0;
  std::int64_t preempted_queries = 0;     // the same for resumed (preempted) requests
  std::int64_t preempted_hits = 0;
  std::int64_t preemptions = 0;
  std::int64_t steps = 0;
  std::int64_t prompt_tokens_computed = 0;
  std::int64_t generation_tokens = 0;
  std::int64_t rejected = 0;
  std::int64_t external_hit_tokens = 0;  // tokens loaded through the KV connector
  std::int64_t external_loads = 0;       // requests that waited for a connector load
};

class Engine {
 public:
  Engine(const EngineConfig& config, std::int64_t num_gpu_blocks, std::int64_t max_model_len,
         const models::ComputeModel& compute);

  // A request arrives at `now`. Requests whose prompt plus output exceed max_model_len are
  // rejected as vLLM's API server does (HTTP 400) and reported through take_finished().
  void add_request(Request req, SimTime now);
  // Whether add_request() rejects a request of these lengths at arrival: prompt plus output past
  // max_model_len (vllm/entrypoints/openai/serving_engine.py _validate_input), or no prompt.
  bool rejects_at_arrival(std::int64_t prompt_tokens, std::int64_t max_output_tokens) const {
    return prompt_tokens + max_output_tokens > max_model_len_ || prompt_tokens < 1;
  }

  // Attaches an observer of request events (timelines); nullptr for none, which costs one
  // pointer test where an event would be reported.
  void set_observer(RequestObserver* observer) { observer_ = observer; }
  // Reports a request event to the observer, if any (the connector reports kLoadDone).
  void note(std::uint64_t id, RequestEventKind kind, SimTime now, int transfers = 0) {
    if (observer_ != nullptr) observer_->on_request_event(id, kind, now, transfers);
  }
  // Attaches a KV connector (offload tiers); nullptr for none.
  void set_connector(ConnectorHooks* connector) { connector_ = connector; }
  // Calls f(hash) for every block hash the engine holds: its requests' and its prefix cache's.
  template <class F>
  void for_each_block_hash(F&& f) const {
    for (const auto& [id, s] : slot_of_) {
      for (const std::uint64_t h : req(s).block_hashes) f(h);
    }
    kv_.pool().for_each_cached_hash(f);
  }
  // The connector finished loading request `id`'s external tokens.
  void load_finished(std::uint64_t id);
  // The connector finished the stores of finished request `id`: its blocks can be freed.
  void stores_finished(std::uint64_t id);
  // A synchronous connector's transfer that the step in flight waits for has ended.
  void sync_transfer_done();
  // The step in flight cannot compute (or end) until its synchronous transfers are done.
  bool blocked() const { return sync_outstanding_ > 0; }

  bool stepping() const { return !plans_.empty(); }
  bool has_unfinished() const { return !running_.empty() || !waiting_.empty(); }
  // Requests waiting only for connector loads: the engine has nothing to run until one lands.
  bool only_loading() const;

  // The engine is idle and `now` something may run: schedule a step (and, with async
  // scheduling, the one after it). Returns the duration of the step that starts now, or
  // nullopt when nothing could be scheduled.
  std::optional<SimTime> start(SimTime now);
  // The step in flight ended at `now`: apply its outputs (update_from_output). Returns the
  // duration of the next step, which starts now, or nullopt when the engine goes idle.
  std::optional<SimTime> finish_step(SimTime now);

  // Events since the last call (moved out).
  std::vector<FirstToken> take_first_tokens();
  std::vector<FinishedRequest> take_finished();
  // The step that ended last.
  const StepStats& last_step() const { return last_step_; }
  // The step in flight (stepping() must be true).
  const StepStats& current_step() const { return plans_.front().stats; }

  const EngineCounters& counters() const { return counters_; }
  const KvCacheManager& kv() const { return kv_; }
  std::int64_t num_gpu_blocks() const { return kv_.pool().num_blocks(); }
  std::int64_t max_model_len() const { return max_model_len_; }
  int num_running() const { return static_cast<int>(running_.size()); }
  int num_waiting() const { return static_cast<int>(waiting_.size()); }
  // Checks block accounting: every held block referenced, free count consistent (tests).
  void check_invariants() const;
  // Whether the exact fast paths are on (EngineConfig::fast_paths, on by default); off, every
  // step takes the plain path; results are byte-identical either way
  // (tests/scenario/fast_path_test.cpp).
  bool fast_paths() const { return fast_paths_; }
  void set_fast_paths(bool on) {
    settle();
    fast_paths_ = on;
  }
  // Steps that took the decode fast path (decode_step) so far (tests, benchmarks).
  std::int64_t fast_decode_steps() const { return fast_decode_steps_; }
  // Steps taken inside decode stretches (stretch_step) so far (tests, benchmarks).
  std::int64_t stretch_steps() const { return stretch_steps_; }
  // Whether the last finish_step() and the next one are quiet: decode-only steps that change
  // nothing outside the engine (no token leaves it, no request finishes, starts or waits, no
  // connector is called), the next one provided nothing reaches the engine before it. True
  // while a decode stretch has steps left: a stretch opens only after a quiet step, and each of
  // its steps is quiet.
  bool next_step_quiet() const { return stretch_.left > 0; }

 private:
  using Slot = std::int32_t;
  struct Item {
    Slot slot;
    std::int64_t tokens;
    bool samples;  // the step computes the request's last known token, so it samples one
    bool dropped = false;  // the request finished before this step's outputs came back
  };
  // One scheduled step: what it computes, how long it takes, what it looked like.
  struct SyncLoad {
    Slot slot;
    std::int64_t first_token;
    std::int64_t tokens;
  };
  struct Plan {
    std::vector<Item> items;
    std::vector<SyncLoad> sync_loads;  // started when the step starts (start_load_kv)
    StepStats stats;
  };
  // The steps in flight, oldest first: at most two (the one executing and, with async
  // scheduling, the one queued behind it). A ring in place, so that a step allocates nothing
  // (a std::deque allocated a chunk every few steps).
  class PlanQueue {
   public:
    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    Plan& front() { return at(0); }
    const Plan& front() const { return at(0); }
    Plan& operator[](std::size_t i) { return at(i); }
    void push_back(Plan&& p) {
      KVSIM_ASSERT(size_ < kSlots, "more steps in flight than the plan queue holds");
      at(size_++) = std::move(p);
    }
    void pop_front() {
      head_ = (head_ + 1) & (kSlots - 1);
      --size_;
    }

   private:
    static constexpr std::size_t kSlots = 4;  // a power of two: the index is masked
    Plan& at(std::size_t i) { return slots_[(head_ + i) & (kSlots - 1)]; }
    const Plan& at(std::size_t i) const { return slots_[(head_ + i) & (kSlots - 1)]; }
    std::array<Plan, kSlots> slots_;
    std::size_t head_ = 0;
    std::size_t size_ = 0;
  };

  Request& req(Slot s) { return slots_[static_cast<std::size_t>(s)]; }
  const Request& req(Slot s) const { return slots_[static_cast<std::size_t>(s)]; }
  // Schedules one step at `now` into `plan`; false when nothing was scheduled.
  bool schedule_plan(SimTime now, Plan& plan);
  // Schedules a step and queues it behind the one in flight; false when nothing was scheduled.
  bool enqueue_plan(SimTime now);
  void schedule_pass(Plan& plan);
  // The pass's second half: waiting requests, FCFS, within `budget` tokens.
  void schedule_waiting(Plan& plan, std::int64_t& budget);
  // _update_after_schedule for the plan's items from `first` on; their work joins batch_.
  void update_after_schedule(Plan& plan, std::size_t first);
  void admit_loaded_behind_head(Plan& plan, std::int64_t& budget);
  // A finished load: the request's computed tokens are its hit and loaded tokens, less one
  // token if that is all of them (scheduler.py _update_waiting_for_remote_kv), and its blocks
  // enter the prefix cache.
  void take_loaded(Request& r);
  // The plan at the front starts now: its synchronous loads begin.
  void begin_current(SimTime now);
  // Exact fast path of finish_step() for a step in which every running request decoded one
  // token and decodes one more: nothing finishes or starts, no preemption, no connector store.
  // Does what apply_outputs() and schedule_plan() would, in the same order, calling the block
  // pool only where they would change it, and reuses the finished plan for the next one; the
  // waiting requests, if the pass gets to them, go through schedule_waiting() as in the plain
  // pass. nullopt (and no change) when the step is not such a step. When the waiting requests
  // were left alone, opens a decode stretch (begin_stretch()).
  std::optional<SimTime> decode_step(SimTime now);
  // decode_step()'s work on one request: the output of the step that ended (apply_outputs())
  // and its next one-token step (schedule_pass()). Each returns whether it called the block pool.
  bool decode_output(Request& r);
  bool decode_schedule(Request& r);

  // A decode stretch. After a decode_step(), the steps that are sure to be decode steps as well
  // while nothing reaches the engine (no arrival, load, store or transfer) are counted up to the
  // engine's next event of its own: a request's last token or its last in flight, a block the
  // connector must store, max_model_len, or a step whose new blocks the free queue cannot
  // supply. Within the stretch a step costs O(1) plus the requests at a block boundary: each
  // request's computed and generated counts advance by one per step and are written back only
  // when the request is examined or the stretch ends (settle()), and a request is examined only
  // at the steps where one of the token counts its block-pool calls depend on crosses a block
  // boundary (or the step after it called the pool), in running order, outputs before
  // schedules, as decode_step() orders them. Any call from outside settles the stretch first.
  struct Stretch {
    std::int64_t left = 0;  // steps the stretch may still take
    std::int64_t step = 0;  // steps taken (k); no stretch is open while both are 0
    std::vector<std::int64_t> synced;  // per running index: the step its counts were written at
    std::vector<std::vector<std::int32_t>> due;  // ring: running indices to examine at step k
    std::vector<std::int32_t> examined;          // scratch: those due now
    std::vector<std::uint8_t> touched;           // scratch: whether their output called the pool
  };
  // Opens a stretch after a decode_step() if it would last a few steps.
  void begin_stretch();
  // One step of the open stretch (what decode_step() would do, same results).
  SimTime stretch_step(SimTime now);
  // Writes the deferred counts back and closes the stretch (no-op when none is open).
  void settle() {
    if (stretch_.left > 0 || stretch_.step > 0) settle_stretch();
  }
  void settle_stretch();
  // The next stretch step at which request `r`, examined at step k (its counts written as of
  // step k), must be examined again; `touched`: it called the block pool at step k.
  std::int64_t next_examination(const Request& r, std::int64_t k, bool touched) const;
  // The finished plan at the front, taken out to be the next one (decode_step(), stretch_step()):
  // emptied of synchronous loads and statistics, starting now; the step queued behind it (async)
  // starts now too.
  Plan reuse_finished_plan(SimTime now);
  // A scheduled step's view of the queues and the pool, as schedule_plan() records it.
  void record_queues(StepStats& stats) const;
  // The step time of the batch in batch_, as schedule_plan() derives it.
  void time_plan(Plan& plan);
  void apply_outputs(const Plan& plan, SimTime now);
  void preempt(Slot s);
  void finish(Slot s, SimTime now);
  void release(Slot s);
  // The request leaves the waiting queue: lookups memoized for it while it waited are dropped.
  void left_waiting(Request& r);
  void store_new_blocks(Request& r, SimTime now);
  // The request's full blocks the connector stores (all those computed, or the prompt's).
  std::int64_t storable_blocks(const Request& r) const;

  // Whether scheduler_reserve_full_isl keeps the waiting request out (engine.cpp).
  bool full_sequence_blocked(const Request& r, std::span<const BlockId> hits, std::int64_t hit_tokens) const;
  // The waiting request `r` (nothing computed, GPU hit `hit_tokens` in `hits`) cannot be
  // admitted whatever the connector's match() answers: skip the match (fast path).
  bool admission_blocked_anyway(const Request& r, std::span<const BlockId> hits, std::int64_t hit_tokens,
                                std::int64_t budget) const;

  EngineConfig config_;
  bool fast_paths_ = true;
  std::int64_t fast_decode_steps_ = 0;
  std::int64_t stretch_steps_ = 0;
  Stretch stretch_;
  std::int64_t max_model_len_;
  const models::ComputeModel& compute_;
  KvCacheManager kv_;

  std::vector<Request> slots_;
  std::vector<Slot> free_slots_;
  std::unordered_map<std::uint64_t, Slot> slot_of_;  // request id -> slot, while in the engine
  ConnectorHooks* connector_ = nullptr;
  // Whether a request that needs its sequence prepared (a synchronous load, an erase) waits in
  // this step: more requests run than engine.prepare_max_running allows.
  bool prepare_waits() const {
    return config_.prepare_max_running >= 0 &&
           static_cast<int>(running_.size()) > config_.prepare_max_running;
  }
  RequestObserver* observer_ = nullptr;
  std::vector<Slot> skipped_;
  SimTime now_ = 0;  // time of the schedule pass in progress
  int sync_outstanding_ = 0;  // synchronous connector transfers the step in flight waits for  // waiting requests passed over in this pass (loads in flight)
  std::vector<Slot> running_;  // admission order
  std::deque<Slot> waiting_;   // FCFS; preempted requests are prepended
  PlanQueue plans_;            // front: executing; second (async only): scheduled, queued
  std::vector<Plan> spare_plans_;
  std::vector<BlockId> hit_scratch_;
  models::BatchShape batch_;

  std::vector<FirstToken> first_tokens_;
  std::vector<FinishedRequest> finished_;
  StepStats last_step_;
  EngineCounters counters_;
};

}  // namespace kvsim::engine
