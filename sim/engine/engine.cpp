#include "sim/engine/engine.hpp"

#include <algorithm>
#include <limits>

#include "sim/core/error.hpp"

namespace kvsim::engine {

Engine::Engine(const EngineConfig& config, std::int64_t num_gpu_blocks, std::int64_t max_model_len,
               const models::ComputeModel& compute)
    : config_(config),
      max_model_len_(max_model_len),
      compute_(compute),
      kv_(num_gpu_blocks, config.block_size, config.enable_prefix_caching, max_model_len) {
  KVSIM_ASSERT(config.block_size > 0, "block_size must be positive");
  KVSIM_ASSERT(config.max_num_batched_tokens > 0, "max_num_batched_tokens must be positive");
  fast_paths_ = config.fast_paths;
  kv_.set_prefix_cache_sequences(config.prefix_cache_sequences);
}

bool Engine::admission_blocked_anyway(const Request& r, std::span<const BlockId> hits, std::int64_t hit_tokens,
                                      std::int64_t budget) const {
  // match() answers nullopt (skip this request), 0 (allocate the first chunk; on failure, admit
  // loaded requests behind the head when nothing runs, then stop) or > 0 (allocate the whole
  // prompt; on failure stop). With no chunk pinned it cannot answer nullopt; with requests
  // running the failed 0 case only stops; and when even the first chunk does not fit, the
  // whole prompt does not either. Then admission stops whatever the answer, and a native
  // connector's match() has no side effects, so it need not run.
  if (!fast_paths_ || connector_->synchronous() || running_.empty() || connector_->may_defer()) return false;
  std::int64_t n = r.num_tokens() - r.num_computed - hit_tokens;
  if (config_.long_prefill_token_threshold > 0) n = std::min<std::int64_t>(n, config_.long_prefill_token_threshold);
  n = std::min(n, budget);
  return !kv_.can_allocate(r, n, hit_tokens, hits);
}

bool Engine::full_sequence_blocked(const Request& r, std::span<const BlockId> hits, std::int64_t hit_tokens) const {
  // scheduler_reserve_full_isl (vLLM 0.19, vllm/v1/core/sched/scheduler.py with
  // kv_cache_manager.py can_fit_full_sequence): a waiting request is admitted only when blocks
  // for its whole sequence (prompt and tokens generated so far, at most max_model_len) beyond
  // its prefix-cache hits fit in the free blocks; loaded external tokens need blocks too. Only
  // a gate: the first chunk alone is allocated.
  return config_.scheduler_reserve_full_isl &&
         !kv_.can_allocate(r, r.num_tokens() - r.num_computed - hit_tokens, hit_tokens, hits);
}

void Engine::add_request(Request r, SimTime now) {
  settle();
  r.arrival = now;
  // vLLM's OpenAI server rejects it with HTTP 400.
  if (rejects_at_arrival(r.prompt_tokens, r.max_output_tokens)) {
    FinishedRequest f;
    f.id = r.id;
    f.ok = false;
    f.arrival = now;
    f.finish_time = now;
    f.prompt_tokens = r.prompt_tokens;
    finished_.push_back(f);
    ++counters_.rejected;
    return;
  }
  r.status = RequestStatus::kWaiting;
  Slot s = 0;
  if (!free_slots_.empty()) {
    s = free_slots_.back();
    free_slots_.pop_back();
    slots_[static_cast<std::size_t>(s)] = std::move(r);
  } else {
    s = static_cast<Slot>(slots_.size());
    slots_.push_back(std::move(r));
  }
  slot_of_[req(s).id] = s;
  waiting_.push_back(s);
}

void Engine::preempt(Slot s) {
  // Scheduler._preempt_request: free the KV, reset computed tokens, count, and prepend to the
  // waiting queue so it is served first (V1 always preempts by recompute).
  Request& r = req(s);
  kv_.free(r);
  r.status = RequestStatus::kPreempted;
  r.num_computed = 0;
  r.placeholders = 0;
  r.stored_blocks = 0;
  ++r.preemptions;
  ++counters_.preemptions;
  waiting_.push_front(s);
  note(r.id, RequestEventKind::kPreempted, now_);
}

void Engine::schedule_pass(Plan& plan) {
  std::int64_t budget = config_.max_num_batched_tokens;
  bool preempted = false;

  // 1. RUNNING requests first, in admission order (scheduler.py "First, schedule the RUNNING
  //    requests"), each taking up to the remaining token budget (chunked prefill). A request's
  //    tokens include those still in flight (num_output_placeholders).
  std::size_t i = 0;
  while (i < running_.size() && budget > 0) {
    const Slot s = running_[i];
    Request& r = req(s);
    // AsyncScheduler: a request whose in-flight token is its last is not scheduled again.
    if (r.placeholders > 0 && r.num_computed + 2 - r.placeholders >= r.prompt_tokens + r.max_output_tokens) {
      ++i;
      continue;
    }
    std::int64_t n = r.num_tokens() + r.placeholders - r.num_computed;
    if (config_.long_prefill_token_threshold > 0) n = std::min<std::int64_t>(n, config_.long_prefill_token_threshold);
    n = std::min(n, budget);
    n = std::min(n, max_model_len_ - 1 - r.num_computed);
    if (n <= 0) {
      ++i;
      continue;
    }
    bool allocated = false;
    while (true) {
      if (kv_.allocate_slots(r, n, 0, {})) {
        allocated = true;
        break;
      }
      // Out of blocks: preempt the most recently admitted running request (FCFS:
      // self.running.pop()), possibly this one; repeat until the allocation fits.
      const Slot victim = running_.back();
      running_.pop_back();
      preempt(victim);
      ++plan.stats.preemptions;
      preempted = true;
      if (victim == s) break;
    }
    if (!allocated) break;  // this request could not be scheduled: stop with running requests
    plan.items.push_back(Item{s, n, false});
    budget -= n;
    ++i;
  }

  // 2. WAITING requests, FCFS, only if nothing was preempted in this step.
  if (!preempted) schedule_waiting(plan, budget);
}

void Engine::schedule_waiting(Plan& plan, std::int64_t& budget) {
  skipped_.clear();
  while (!waiting_.empty() && budget > 0) {
    if (static_cast<int>(running_.size()) >= config_.max_num_seqs) break;
    const Slot s = waiting_.front();
    Request& r = req(s);
    if (r.loading) {
      // WAITING_FOR_REMOTE_KVS: skipped until its load finished.
      if (!r.load_ready) {
        waiting_.pop_front();
        skipped_.push_back(s);
        continue;
      }
      take_loaded(r);
    }
    std::int64_t hit_tokens = 0;
    std::span<const BlockId> hits;
    if (r.num_computed == 0 && kv_.caching()) {
      hits = kv_.longest_cache_hit(r, hit_scratch_, fast_paths_);
      hit_tokens = static_cast<std::int64_t>(hits.size()) * kv_.block_size();
      if (prepare_waits() && kv_.would_erase(hits)) {
        // Its sequence must be erased first, which waits for the engine (prepare_max_running).
        waiting_.pop_front();
        skipped_.push_back(s);
        continue;
      }
      // PrefixCacheStats are recorded at every lookup (vLLM 0.11-0.19 kv_cache_manager.py
      // get_computed_blocks), so a request blocked at the head of the queue is counted again
      // each step; resumed (preempted) requests are counted apart.
      if (r.preemptions == 0) {
        counters_.prefix_cache_queries += r.num_tokens();
        counters_.prefix_cache_hits += hit_tokens;
      } else {
        counters_.preempted_queries += r.num_tokens();
        counters_.preempted_hits += hit_tokens;
      }
    }
    if (r.num_computed == 0 && connector_ != nullptr) {
      if (admission_blocked_anyway(r, hits, hit_tokens, budget)) break;
      // get_num_new_matched_tokens: tokens the offload tiers hold beyond the GPU hit.
      const auto external = connector_->match(r, hit_tokens);
      if (!external) {  // its blocks are being loaded for another request: try again later
        waiting_.pop_front();
        skipped_.push_back(s);
        continue;
      }
      if (*external > 0 && connector_->synchronous() && prepare_waits()) {
        // The engine does not give itself to the load in this step (prepare_max_running): the
        // request waits at the head of the queue; those behind it go ahead.
        connector_->release_match(r);
        waiting_.pop_front();
        skipped_.push_back(s);
        continue;
      }
      if (*external > 0 && connector_->synchronous()) {
        // Synchronous load (LMCache): the request is scheduled in this step with its loaded
        // tokens counted as computed; the load runs before the step's forward pass.
        const std::int64_t computed = hit_tokens + *external;
        const std::int64_t n = std::min(r.num_tokens() - computed, budget);
        if (full_sequence_blocked(r, hits, hit_tokens) || !kv_.allocate_slots(r, *external + n, hit_tokens, hits)) {
          connector_->release_match(r);
          // As for any head that cannot get blocks: with nothing running, nothing frees blocks
          // but the loaded requests parked behind it.
          if (running_.empty()) admit_loaded_behind_head(plan, budget);
          break;
        }
        left_waiting(r);
        waiting_.pop_front();
        running_.push_back(s);
        r.external_tokens = *external;
        counters_.external_hit_tokens += *external;
        ++counters_.external_loads;
        if (r.num_cached_tokens < 0) r.num_cached_tokens = computed;
        r.num_computed = computed;
        r.status = RequestStatus::kRunning;
        plan.items.push_back(Item{s, n, false});
        plan.sync_loads.push_back(SyncLoad{s, hit_tokens, *external});
        note(r.id, RequestEventKind::kScheduled, now_);
        budget -= n;
        continue;
      }
      if (*external > 0) {
        // Asynchronous load: allocate blocks (not yet cached), park the request in
        // WAITING_FOR_REMOTE_KVS and schedule nothing for it. vLLM 0.19 allocates for the hit
        // and the external tokens only; kvsim allocates for the whole prompt, as newer vLLM's
        // admission gate for asynchronous loads does (reserved_blocks): with blocks for the
        // loaded part only, parked requests can fill the pool and stall the engine.
        if (!kv_.allocate_slots(r, r.num_tokens() - hit_tokens, hit_tokens, hits, true)) {
          connector_->release_match(r);
          // As for any head that cannot get blocks: with nothing running, nothing frees blocks
          // but the loaded requests parked behind it.
          if (running_.empty()) admit_loaded_behind_head(plan, budget);
          break;
        }
        r.loading = true;
        r.load_ready = false;
        r.load_base = hit_tokens;
        r.external_tokens = *external;
        counters_.external_hit_tokens += *external;
        ++counters_.external_loads;
        const int transfers = connector_->start_load(r, hit_tokens, *external, now_);
        note(r.id, RequestEventKind::kLoadStarted, now_, transfers);
        left_waiting(r);
        waiting_.pop_front();
        skipped_.push_back(s);
        continue;
      }
    }
    std::int64_t n = r.num_tokens() - r.num_computed - hit_tokens;
    if (config_.long_prefill_token_threshold > 0) n = std::min<std::int64_t>(n, config_.long_prefill_token_threshold);
    // Without chunked prefill a prompt that does not fit the remaining budget waits.
    if (!config_.enable_chunked_prefill && n > budget) break;
    n = std::min(n, budget);
    // Head-of-line blocking: a waiting request that cannot get blocks stops admission; waiting
    // requests never preempt running ones.
    if (full_sequence_blocked(r, hits, hit_tokens) || !kv_.allocate_slots(r, n, hit_tokens, hits)) {
      if (running_.empty()) admit_loaded_behind_head(plan, budget);
      break;
    }
    left_waiting(r);
    waiting_.pop_front();
    running_.push_back(s);
    if (r.num_cached_tokens < 0) r.num_cached_tokens = hit_tokens;
    r.num_computed += hit_tokens;
    r.status = RequestStatus::kRunning;
    plan.items.push_back(Item{s, n, false});
    note(r.id, RequestEventKind::kScheduled, now_);
    budget -= n;
  }
  // Skipped requests go back to the head of the queue in their order.
  for (auto it = skipped_.rbegin(); it != skipped_.rend(); ++it) waiting_.push_front(*it);
}

void Engine::begin_current(SimTime now) {
  for (const SyncLoad& l : plans_.front().sync_loads) {
    const int transfers = connector_->start_load(req(l.slot), l.first_token, l.tokens, now);
    sync_outstanding_ += transfers;
    note(req(l.slot).id, RequestEventKind::kLoadStarted, now, transfers);
  }
}

void Engine::sync_transfer_done() {
  settle();
  KVSIM_ASSERT(sync_outstanding_ > 0, "a synchronous transfer ended that no step waited for");
  --sync_outstanding_;
}

void Engine::take_loaded(Request& r) {
  r.loading = false;
  std::int64_t computed = std::min(r.load_base + r.external_tokens, r.num_tokens());
  if (computed == r.num_tokens()) --computed;
  r.num_computed = computed;
  kv_.cache_full_blocks(r, computed);
  if (r.num_cached_tokens < 0) r.num_cached_tokens = computed;
}

void Engine::admit_loaded_behind_head(Plan& plan, std::int64_t& budget) {
  // Nothing runs, so nothing will free blocks for the blocked head of the queue, while requests
  // behind it hold blocks with their loaded KV. vLLM 0.19 can stall here; newer vLLM keeps
  // blocks in reserve for such requests (kv_cache_manager.py reserved_blocks). kvsim admits the
  // requests whose loads finished: their blocks already cover their prompts.
  for (auto it = std::next(waiting_.begin()); it != waiting_.end() && budget > 0;) {
    Request& r = req(*it);
    if (!r.loading || !r.load_ready || static_cast<int>(running_.size()) >= config_.max_num_seqs) {
      ++it;
      continue;
    }
    take_loaded(r);
    const std::int64_t n = std::min(r.num_tokens() - r.num_computed, budget);
    if (!kv_.allocate_slots(r, n, 0, {})) {
      ++it;
      continue;
    }
    r.status = RequestStatus::kRunning;
    running_.push_back(*it);
    plan.items.push_back(Item{*it, n, false});
    note(r.id, RequestEventKind::kScheduled, now_);
    budget -= n;
    it = waiting_.erase(it);
  }
}

bool Engine::schedule_plan(SimTime now, Plan& plan) {
  now_ = now;
  plan.items.clear();
  plan.sync_loads.clear();
  plan.stats = StepStats{};
  plan.stats.start = now;
  // A pass that only preempted (its victim was the request itself) schedules nothing; vLLM's
  // busy loop schedules again at once, with the freed blocks. Terminates: each such pass
  // empties part of the running queue.
  while (true) {
    const std::int64_t before = counters_.preemptions;
    schedule_pass(plan);
    if (!plan.items.empty() || counters_.preemptions == before || waiting_.empty()) break;
  }
  record_queues(plan.stats);
  if (plan.items.empty()) return false;

  batch_.clear();
  update_after_schedule(plan, 0);
  time_plan(plan);
  return true;
}

void Engine::update_after_schedule(Plan& plan, std::size_t first) {
  // _update_after_schedule: computed tokens advance at scheduling time; a request that has
  // now scheduled all its known tokens will sample one (a placeholder until the output is
  // applied). Add the items' work to the batch the compute model times.
  for (std::size_t k = first; k < plan.items.size(); ++k) {
    Item& it = plan.items[k];
    Request& r = req(it.slot);
    const std::int64_t n = it.tokens;
    const bool decode = n == 1 && r.generated + r.placeholders > 0 &&
                        r.num_computed == r.num_tokens() + r.placeholders - 1;
    if (decode) {
      batch_.decode_contexts.push_back(r.num_computed + 1);
      ++plan.stats.decode_requests;
    } else {
      batch_.prefills.push_back(models::PrefillChunk{n, r.num_computed});
      ++plan.stats.prefill_requests;
      counters_.prompt_tokens_computed += n;
    }
    plan.stats.batch_tokens += n;
    r.num_computed += n;
    if (r.num_computed >= r.num_tokens() + r.placeholders) {
      it.samples = true;
      ++r.placeholders;
    }
  }
}

void Engine::record_queues(StepStats& stats) const {
  stats.running = static_cast<int>(running_.size());
  stats.waiting = static_cast<int>(waiting_.size());
  stats.kv_usage = kv_.pool().usage();
}

Engine::Plan Engine::reuse_finished_plan(SimTime now) {
  Plan next = std::move(plans_.front());
  plans_.pop_front();
  if (!plans_.empty()) plans_.front().stats.start = now;
  now_ = now;
  next.sync_loads.clear();
  next.stats = StepStats{};
  next.stats.start = now;
  return next;
}

void Engine::time_plan(Plan& plan) {
  plan.stats.breakdown = compute_.step_time(batch_);
  // With async scheduling the host prepares step N+1 while step N runs, so host time overlaps
  // GPU time instead of adding to it (vLLM AsyncScheduler) -- except for a step scheduled while
  // nothing runs (the first after idle): the GPU waits for its host work.
  const bool overlapped = config_.async_scheduling && !plans_.empty();
  const double seconds = plan.stats.breakdown.step_s(overlapped);
  plan.stats.duration = std::max<SimTime>(from_seconds(seconds), 1);
  ++counters_.steps;
}

std::optional<SimTime> Engine::decode_step(SimTime now) {
  // Sync scheduling: the finished plan is the only one. Async: the one queued behind it runs
  // next, and the plan scheduled now follows it.
  const std::size_t in_flight = config_.async_scheduling ? 2 : 1;
  if (plans_.size() != in_flight) return std::nullopt;
  Plan& done = plans_.front();
  if (done.stats.prefill_requests != 0 || done.items.size() != running_.size()) return std::nullopt;
  if (in_flight == 2 && !plans_[1].sync_loads.empty()) return std::nullopt;
  const auto n = static_cast<std::int64_t>(running_.size());
  if (n > config_.max_num_batched_tokens) return std::nullopt;
  // Whether schedule_pass() gets to its waiting requests: someone waits, and the running ones
  // leave a sequence and tokens for them. The pass's second half then runs as it is.
  const bool admits = !waiting_.empty() && n < config_.max_num_seqs && n < config_.max_num_batched_tokens;
  // Each request, in the terms of apply_outputs() then schedule_pass() (g generated, p
  // placeholders, c computed, P prompt, M forced output length; after the output: g + 1, p - 1).
  std::int64_t new_blocks = 0;
  for (std::size_t i = 0; i < running_.size(); ++i) {
    const Item& it = done.items[i];
    if (it.slot != running_[i] || it.dropped || !it.samples || it.tokens != 1) return std::nullopt;
    const Request& r = req(it.slot);
    const std::int64_t g = r.generated + 1;
    const std::int64_t p = r.placeholders - 1;
    const std::int64_t c = r.num_computed;
    // Not its first token, not its last; its next token is not its last in flight (async).
    if (r.generated < 1 || p < 0 || g >= r.max_output_tokens) return std::nullopt;
    if (p > 0 && c + 2 - p >= r.prompt_tokens + r.max_output_tokens) return std::nullopt;
    // Scheduled for exactly one more token, which it samples (a decode).
    if (r.prompt_tokens + g + p - c != 1 || c >= max_model_len_ - 1) return std::nullopt;
    // store_new_blocks() has nothing new to store.
    if (connector_ != nullptr && storable_blocks(r) > r.stored_blocks) return std::nullopt;
    if (kv_.needs_new_block(r, 1)) ++new_blocks;
  }
  // No preemption: every new block comes from the free queue.
  if (new_blocks > kv_.pool().num_free_blocks()) return std::nullopt;

  // apply_outputs(): one token each, and the blocks it filled become cacheable.
  last_step_ = done.stats;
  for (const Slot s : running_) decode_output(req(s));
  counters_.generation_tokens += n;
  // schedule_plan(): the same requests, one token each, in the same order.
  Plan next = reuse_finished_plan(now);
  batch_.clear();
  for (const Slot s : running_) {
    Request& r = req(s);
    batch_.decode_contexts.push_back(r.num_computed + 1);
    decode_schedule(r);
  }
  next.stats.decode_requests = static_cast<int>(n);
  next.stats.batch_tokens = n;
  // The waiting requests, as schedule_pass() takes them after the running ones (nothing was
  // preempted); those admitted join the plan and the batch as schedule_plan() adds them.
  if (admits) {
    std::int64_t budget = config_.max_num_batched_tokens - n;
    schedule_waiting(next, budget);
  }
  record_queues(next.stats);
  if (next.items.size() > static_cast<std::size_t>(n)) update_after_schedule(next, static_cast<std::size_t>(n));
  time_plan(next);
  plans_.push_back(std::move(next));
  // Without async scheduling the plan starts now: its synchronous loads begin (start()).
  if (in_flight == 1) begin_current(now);
  ++fast_decode_steps_;
  // A stretch needs steps in which nothing but decoding can happen: none that reached the queue.
  if (!admits) begin_stretch();
  return plans_.front().stats.duration;
}

bool Engine::decode_output(Request& r) {
  --r.placeholders;
  ++r.generated;
  const std::int64_t upto = std::min(r.num_computed - r.placeholders, r.num_tokens());
  if (!kv_.caches_more(r, upto)) return false;
  kv_.cache_full_blocks(r, upto);
  return true;
}

bool Engine::decode_schedule(Request& r) {
  bool touched = false;
  if (kv_.needs_new_block(r, 1) || kv_.caches_more(r, std::min(r.num_computed + 1, r.num_tokens()))) {
    const bool allocated = kv_.allocate_slots(r, 1, 0, {});
    KVSIM_ASSERT(allocated, "a decode step's block did not fit after all");
    touched = true;
  }
  ++r.num_computed;
  ++r.placeholders;
  return touched;
}

void Engine::begin_stretch() {
  // The state is that after step 0 (the decode_step() just done): g generated, c computed, p
  // placeholders per request. Step k (k >= 1) enters with g + k - 1 and c + k - 1 and passes
  // decode_step()'s checks while (one bound per check, in its order):
  //   g + k < M;  with p - 1 > 0: (c + k - 1) + 2 - (p - 1) < P + M;  c + k - 1 < max_model_len - 1;
  //   the blocks the connector may store, min(x / bs, H) with x = c + k - 1 - p (at most P when
  //   only prompts are stored), stay at those stored;
  // and, for all requests together, the new blocks of steps 1..k fit in today's free queue
  // (each step's test then passes: only these allocations take free blocks).
  const std::int64_t bs = kv_.block_size();
  std::int64_t k_max = std::numeric_limits<std::int64_t>::max();
  for (const Slot s : running_) {
    const Request& r = req(s);
    const std::int64_t P = r.prompt_tokens;
    const std::int64_t M = r.max_output_tokens;
    const std::int64_t g = r.generated;
    const std::int64_t c = r.num_computed;
    const std::int64_t p = r.placeholders;
    k_max = std::min(k_max, M - g - 1);
    if (p - 1 > 0) k_max = std::min(k_max, P + M - c + p - 3);
    k_max = std::min(k_max, max_model_len_ - 1 - c);
    if (connector_ != nullptr) {
      const std::int64_t H = static_cast<std::int64_t>(r.block_hashes.size());
      const std::int64_t limit = (r.stored_blocks + 1) * bs - 1;  // largest x that stores nothing new
      const bool bounded = H > r.stored_blocks && !(connector_->prompt_only() && P <= limit);
      if (bounded) k_max = std::min(k_max, limit - c + 1 + p);
    }
  }
  auto new_blocks = [&](std::int64_t k) {
    std::int64_t total = 0;
    for (const Slot s : running_) {
      const Request& r = req(s);
      const std::int64_t need = (r.num_computed + k + bs - 1) / bs - static_cast<std::int64_t>(r.blocks.size());
      total += std::max<std::int64_t>(need, 0);
    }
    return total;
  };
  constexpr std::int64_t kWorthIt = 4;  // shorter stretches save less than they cost to open
  if (k_max < kWorthIt) return;
  const std::int64_t free = kv_.pool().num_free_blocks();
  if (new_blocks(k_max) > free) {
    std::int64_t lo = 0;  // new_blocks(lo) fits
    std::int64_t hi = k_max;
    while (hi - lo > 1) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      (new_blocks(mid) <= free ? lo : hi) = mid;
    }
    k_max = lo;
    if (k_max < kWorthIt) return;
  }
  // Every request is examined at step 1 (step 0 may have called the pool for it).
  const auto window = static_cast<std::size_t>(bs) + 1;
  if (stretch_.due.size() < window) stretch_.due.resize(window);
  for (auto& d : stretch_.due) d.clear();
  stretch_.synced.assign(running_.size(), 0);
  auto& first = stretch_.due[1 % window];
  for (std::size_t i = 0; i < running_.size(); ++i) first.push_back(static_cast<std::int32_t>(i));
  stretch_.left = k_max;
  stretch_.step = 0;
}

std::int64_t Engine::next_examination(const Request& r, std::int64_t k, bool touched) const {
  if (touched) return k + 1;
  // At a later step k + d the block-pool tests of decode_output() and decode_schedule() read
  // c' - p, P + g' and c' (floor and ceiling over the block size), with c' = c + d, g' = g + d,
  // and the request's block counts, which only its own pool calls change. None of them reads
  // anything else; while no floor moves the tests answer as at step k (no call).
  const std::int64_t bs = kv_.block_size();
  const std::int64_t c = r.num_computed;
  std::int64_t d = bs;
  for (const std::int64_t x : {c - r.placeholders, r.num_tokens(), c, c + bs - 1}) d = std::min(d, bs - x % bs);
  return k + d;
}

SimTime Engine::stretch_step(SimTime now) {
  Stretch& st = stretch_;
  const std::int64_t k = ++st.step;
  --st.left;
  last_step_ = plans_.front().stats;
  // The requests at a block boundary, in running order: outputs, then schedules.
  const std::size_t window = st.due.size();
  st.examined.swap(st.due[static_cast<std::size_t>(k) % window]);
  std::sort(st.examined.begin(), st.examined.end());
  st.touched.assign(st.examined.size(), 0);
  for (std::size_t j = 0; j < st.examined.size(); ++j) {
    const auto i = static_cast<std::size_t>(st.examined[j]);
    Request& r = req(running_[i]);
    const std::int64_t behind = k - 1 - st.synced[i];
    r.generated += behind;
    r.num_computed += behind;
    st.touched[j] = decode_output(r) ? 1 : 0;
  }
  for (std::size_t j = 0; j < st.examined.size(); ++j) {
    const std::int32_t i = st.examined[j];
    Request& r = req(running_[static_cast<std::size_t>(i)]);
    const bool touched = decode_schedule(r) || st.touched[j] != 0;
    st.synced[static_cast<std::size_t>(i)] = k;
    st.due[static_cast<std::size_t>(next_examination(r, k, touched)) % window].push_back(i);
  }
  st.examined.clear();
  const auto n = static_cast<std::int64_t>(running_.size());
  counters_.generation_tokens += n;
  Plan next = reuse_finished_plan(now);
  for (std::int64_t& c : batch_.decode_contexts) ++c;
  record_queues(next.stats);
  next.stats.decode_requests = static_cast<int>(n);
  next.stats.batch_tokens = n;
  time_plan(next);
  plans_.push_back(std::move(next));
  ++fast_decode_steps_;
  ++stretch_steps_;
  return plans_.front().stats.duration;
}

void Engine::settle_stretch() {
  Stretch& st = stretch_;
  for (std::size_t i = 0; i < running_.size(); ++i) {
    Request& r = req(running_[i]);
    const std::int64_t behind = st.step - st.synced[i];
    r.generated += behind;
    r.num_computed += behind;
  }
  st.left = 0;
  st.step = 0;
}

bool Engine::enqueue_plan(SimTime now) {
  Plan plan;
  if (!spare_plans_.empty()) {
    plan = std::move(spare_plans_.back());
    spare_plans_.pop_back();
  }
  const bool scheduled = schedule_plan(now, plan);
  if (scheduled) plans_.push_back(std::move(plan));
  else spare_plans_.push_back(std::move(plan));
  return scheduled;
}

std::optional<SimTime> Engine::start(SimTime now) {
  KVSIM_ASSERT(plans_.empty(), "start() while a step is in flight");
  if (!enqueue_plan(now)) return std::nullopt;
  begin_current(now);
  const SimTime duration = plans_.front().stats.duration;
  // EngineCore.step_with_batch_queue: with a free slot in the batch queue the next step is
  // scheduled at once, before the outputs of the one in flight are known.
  if (config_.async_scheduling) enqueue_plan(now);
  return duration;
}

std::optional<SimTime> Engine::finish_step(SimTime now) {
  KVSIM_ASSERT(!plans_.empty(), "finish_step() without a step in flight");
  if (stretch_.left > 0) return stretch_step(now);
  settle();
  if (fast_paths_) {
    if (const auto d = decode_step(now)) return d;
  }
  Plan done = std::move(plans_.front());
  plans_.pop_front();
  last_step_ = done.stats;
  apply_outputs(done, now);
  spare_plans_.push_back(std::move(done));
  if (plans_.empty()) return start(now);
  // Async: the queued step starts now; schedule the one after it.
  plans_.front().stats.start = now;
  begin_current(now);
  const SimTime duration = plans_.front().stats.duration;
  enqueue_plan(now);
  return duration;
}

void Engine::apply_outputs(const Plan& plan, SimTime now) {
  // update_from_output: each request that computed its last known token samples one; partial
  // prefill chunks sample nothing. A request at its forced length finishes and frees its blocks.
  for (const Item& it : plan.items) {
    if (it.dropped) continue;
    Request& r = req(it.slot);
    if (connector_ != nullptr && r.status == RequestStatus::kRunning) store_new_blocks(r, now);
    if (!it.samples) continue;
    if (r.status == RequestStatus::kFinished) continue;
    if (r.placeholders > 0) --r.placeholders;
    ++r.generated;
    ++counters_.generation_tokens;
    if (r.generated == 1) {
      r.first_token_time = now;
      first_tokens_.push_back(FirstToken{r.id, now});
    }
    if (r.generated >= r.max_output_tokens) {
      finish(it.slot, now);
      continue;
    }
    // Blocks filled by the new token become cacheable once it is known (async scheduling:
    // _update_request_with_output caches up to num_computed - placeholders).
    if (r.status == RequestStatus::kRunning) {
      kv_.cache_full_blocks(r, std::min(r.num_computed - r.placeholders, r.num_tokens()));
    }
  }
}

void Engine::finish(Slot s, SimTime now) {
  Request& r = req(s);
  if (r.status == RequestStatus::kPreempted) {
    // A preempted request whose in-flight token was its last (async scheduling) leaves the
    // waiting queue (update_from_output's stopped_preempted_reqs).
    auto w = std::find(waiting_.begin(), waiting_.end(), s);
    KVSIM_ASSERT(w != waiting_.end(), "finishing a preempted request that is not waiting");
    waiting_.erase(w);
  } else {
    auto it = std::find(running_.begin(), running_.end(), s);
    KVSIM_ASSERT(it != running_.end(), "finishing a request that is not running");
    running_.erase(it);
  }
  // With async scheduling the step queued behind the one that just ended may already hold this
  // request (a preempted request resumed there while its last token was in flight). That step
  // still runs; vLLM's update_from_output skips requests that have finished, so kvsim drops
  // the request's outputs there, and its synchronous load if it had one.
  for (std::size_t k = 0; k < plans_.size(); ++k) {
    Plan& p = plans_[k];
    for (Item& item : p.items) item.dropped = item.dropped || item.slot == s;
    std::erase_if(p.sync_loads, [s](const SyncLoad& l) { return l.slot == s; });
  }
  r.status = RequestStatus::kFinished;
  r.finish_time = now;
  FinishedRequest f;
  f.id = r.id;
  f.ok = true;
  f.arrival = r.arrival;
  f.first_token_time = r.first_token_time;
  f.finish_time = now;
  f.prompt_tokens = r.prompt_tokens;
  f.output_tokens = r.generated;
  f.cached_tokens = std::max<std::int64_t>(r.num_cached_tokens, 0);
  f.preemptions = r.preemptions;
  finished_.push_back(f);
  // request_finished(): with stores in flight the blocks stay until the connector is done.
  if (connector_ != nullptr && connector_->request_finished(r)) return;
  release(s);
}

void Engine::left_waiting(Request& r) {
  if (connector_ != nullptr) connector_->forget(r);
  kv_.forget_hit(r);
}

void Engine::release(Slot s) {
  Request& r = req(s);
  left_waiting(r);
  kv_.free(r);
  slot_of_.erase(r.id);
  r.block_hashes.clear();
  free_slots_.push_back(s);
}

std::int64_t Engine::storable_blocks(const Request& r) const {
  // Write-through offload: every full block computed so far (prompt blocks only by default:
  // vLLM offload_prompt_only).
  std::int64_t computed = r.num_computed - r.placeholders;
  if (connector_->prompt_only()) computed = std::min(computed, r.prompt_tokens);
  return std::min<std::int64_t>(computed / kv_.block_size(), static_cast<std::int64_t>(r.block_hashes.size()));
}

void Engine::store_new_blocks(Request& r, SimTime now) {
  // The full blocks not yet handed over.
  const std::int64_t full = storable_blocks(r);
  if (full <= r.stored_blocks) return;
  const int waited = connector_->store(r, r.stored_blocks, full, now);
  if (connector_->synchronous()) sync_outstanding_ += waited;
  r.stored_blocks = full;
}

void Engine::load_finished(std::uint64_t id) {
  settle();
  auto it = slot_of_.find(id);
  KVSIM_ASSERT(it != slot_of_.end(), "load finished for a request the engine does not hold");
  Request& r = req(it->second);
  KVSIM_ASSERT(r.loading && !r.load_ready, "load finished twice");
  r.load_ready = true;
}

void Engine::stores_finished(std::uint64_t id) {
  settle();
  auto it = slot_of_.find(id);
  KVSIM_ASSERT(it != slot_of_.end(), "stores finished for a request the engine does not hold");
  KVSIM_ASSERT(req(it->second).status == RequestStatus::kFinished, "stores finished before the request");
  release(it->second);
}

bool Engine::only_loading() const {
  if (!running_.empty()) return false;
  for (const Slot s : waiting_) {
    if (!req(s).loading || req(s).load_ready) return false;
  }
  return !waiting_.empty();
}

std::vector<FirstToken> Engine::take_first_tokens() {
  std::vector<FirstToken> out;
  out.swap(first_tokens_);
  return out;
}

std::vector<FinishedRequest> Engine::take_finished() {
  std::vector<FinishedRequest> out;
  out.swap(finished_);
  return out;
}

void Engine::check_invariants() const {
  const BlockPool& pool = kv_.pool();
  std::vector<int> refs(static_cast<std::size_t>(pool.num_blocks()), 0);
  auto count = [&](Slot s) {
    for (BlockId b : req(s).blocks) ++refs[static_cast<std::size_t>(b)];
  };
  for (const auto& [id, s] : slot_of_) count(s);
  std::int64_t zero = 0;
  for (BlockId b = 1; b < static_cast<BlockId>(pool.num_blocks()); ++b) {
    KVSIM_ASSERT(refs[static_cast<std::size_t>(b)] == pool.ref_cnt(b),
                 "block " + std::to_string(b) + " has ref_cnt " + std::to_string(pool.ref_cnt(b)) +
                     " but " + std::to_string(refs[static_cast<std::size_t>(b)]) + " holders");
    if (pool.ref_cnt(b) == 0) {
      ++zero;
      KVSIM_ASSERT(pool.in_free_queue(b), "unreferenced block not in the free queue");
    }
  }
  KVSIM_ASSERT(zero == pool.num_free_blocks(), "free count disagrees with the blocks' references");
}

}  // namespace kvsim::engine
