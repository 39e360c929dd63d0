#include "kvsim/engine/engine.hpp"

#include <algorithm>
#include <string>

#include "kvsim/core/error.hpp"

namespace kvsim::engine {

Engine::Engine(const EngineConfig& config, std::int64_t num_gpu_blocks, std::int64_t max_model_len,
               const models::ComputeModel& compute)
    : config_(config),
      max_model_len_(max_model_len),
      compute_(compute),
      kv_(num_gpu_blocks, config.block_size, config.enable_prefix_caching, max_model_len) {
  KVSIM_ASSERT(config.block_size > 0, "block_size must be positive");
  KVSIM_ASSERT(config.max_num_batched_tokens > 0, "max_num_batched_tokens must be positive");
}

void Engine::add_request(Request r, SimTime now) {
  r.arrival = now;
  // vLLM's OpenAI server rejects a request whose prompt plus max_tokens exceed max_model_len
  // (vllm/entrypoints/openai/serving_engine.py _validate_input) with HTTP 400.
  if (r.prompt_tokens + r.max_output_tokens > max_model_len_ || r.prompt_tokens < 1) {
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
  waiting_.push_back(s);
}

void Engine::preempt(Slot s) {
  // Scheduler._preempt_request: free the KV, reset computed tokens, count, and prepend to the
  // waiting queue so it is served first (V1 always preempts by recompute).
  Request& r = req(s);
  kv_.free(r);
  r.status = RequestStatus::kPreempted;
  r.num_computed = 0;
  r.scheduled_this_step = 0;
  ++r.preemptions;
  ++counters_.preemptions;
  waiting_.push_front(s);
}

void Engine::schedule(SimTime now) {
  (void)now;
  scheduled_.clear();
  batch_.clear();
  std::int64_t budget = config_.max_num_batched_tokens;
  bool preempted = false;

  // 1. RUNNING requests first, in admission order (scheduler.py "First, schedule the RUNNING
  //    requests"), each taking up to the remaining token budget (chunked prefill).
  std::size_t i = 0;
  while (i < running_.size() && budget > 0) {
    const Slot s = running_[i];
    Request& r = req(s);
    std::int64_t n = r.num_tokens() - r.num_computed;
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
      preempted = true;
      if (victim == s) break;
    }
    if (!allocated) break;  // this request could not be scheduled: stop with running requests
    r.scheduled_this_step = n;
    scheduled_.push_back(s);
    budget -= n;
    ++i;
  }

  // 2. WAITING requests, FCFS, only if nothing was preempted in this step.
  if (!preempted) {
    while (!waiting_.empty() && budget > 0) {
      if (static_cast<int>(running_.size()) >= config_.max_num_seqs) break;
      const Slot s = waiting_.front();
      Request& r = req(s);
      std::int64_t hit_tokens = 0;
      hit_scratch_.clear();
      if (r.num_computed == 0) hit_tokens = kv_.find_longest_cache_hit(r, hit_scratch_);
      std::int64_t n = r.num_tokens() - r.num_computed - hit_tokens;
      if (config_.long_prefill_token_threshold > 0) n = std::min<std::int64_t>(n, config_.long_prefill_token_threshold);
      // Without chunked prefill a prompt that does not fit the remaining budget waits.
      if (!config_.enable_chunked_prefill && n > budget) break;
      n = std::min(n, budget);
      // Head-of-line blocking: a waiting request that cannot get blocks stops admission; waiting
      // requests never preempt running ones.
      if (!kv_.allocate_slots(r, n, hit_tokens, hit_scratch_)) break;
      waiting_.pop_front();
      running_.push_back(s);
      // Prefix-cache statistics, per lookup (vLLM PrefixCacheStats: resumed requests are counted
      // apart from first-time ones).
      if (r.preemptions == 0) {
        counters_.prefix_cache_queries += r.num_tokens();
        counters_.prefix_cache_hits += hit_tokens;
      } else {
        counters_.preempted_queries += r.num_tokens();
        counters_.preempted_hits += hit_tokens;
      }
      if (r.num_cached_tokens < 0) r.num_cached_tokens = hit_tokens;
      r.num_computed += hit_tokens;
      r.status = RequestStatus::kRunning;
      r.scheduled_this_step = n;
      scheduled_.push_back(s);
      budget -= n;
    }
  }

  // 3. _update_after_schedule: computed tokens advance at scheduling time; build the batch.
  for (const Slot s : scheduled_) {
    Request& r = req(s);
    const std::int64_t n = r.scheduled_this_step;
    const bool decode = r.generated > 0 && n == 1 && r.num_computed == r.num_tokens() - 1;
    if (decode) {
      batch_.decode_contexts.push_back(r.num_computed + 1);
      ++last_step_.decode_requests;
    } else {
      batch_.prefills.push_back(models::PrefillChunk{n, r.num_computed});
      ++last_step_.prefill_requests;
      counters_.prompt_tokens_computed += n;
    }
    last_step_.batch_tokens += n;
    r.num_computed += n;
  }
}

std::optional<SimTime> Engine::begin_step(SimTime now) {
  KVSIM_ASSERT(!stepping_, "a step began while another was in flight");
  last_step_ = StepStats{};
  last_step_.start = now;
  // A pass whose only effect was to preempt (the victim was the request itself) schedules
  // nothing; vLLM's busy loop schedules again at once, with the freed blocks. Terminates:
  // each such pass empties part of the running queue.
  while (true) {
    const std::int64_t before = counters_.preemptions;
    schedule(now);
    const std::int64_t preempted = counters_.preemptions - before;
    last_step_.preemptions += static_cast<int>(preempted);
    if (!scheduled_.empty() || preempted == 0 || waiting_.empty()) break;
  }
  last_step_.running = static_cast<int>(running_.size());
  last_step_.waiting = static_cast<int>(waiting_.size());
  last_step_.kv_usage = kv_.pool().usage();
  if (scheduled_.empty()) return std::nullopt;

  last_step_.breakdown = compute_.step_time(batch_);
  const double overhead = last_step_.breakdown.overhead_s;
  const double gpu = last_step_.breakdown.total_s() - overhead;
  // With async scheduling the host prepares step N+1 while step N runs, so host overhead
  // overlaps GPU time instead of adding to it (vLLM AsyncScheduler).
  const double seconds = config_.async_scheduling ? std::max(gpu, overhead) : gpu + overhead;
  SimTime duration = from_seconds(seconds);
  if (duration < 1) duration = 1;
  last_step_.duration = duration;
  stepping_ = true;
  ++counters_.steps;
  return duration;
}

void Engine::end_step(SimTime now) {
  KVSIM_ASSERT(stepping_, "end_step without a step in flight");
  stepping_ = false;
  // update_from_output: a request whose computed tokens reached its length samples a token;
  // a partial prefill chunk samples nothing.
  for (const Slot s : scheduled_) {
    Request& r = req(s);
    r.scheduled_this_step = 0;
    if (r.num_computed < r.num_tokens()) continue;
    ++r.generated;
    ++counters_.generation_tokens;
    if (r.generated == 1) {
      r.first_token_time = now;
      first_tokens_.push_back(FirstToken{r.id, now});
    }
    if (r.generated >= r.max_output_tokens) finish(s, now, true);
  }
  scheduled_.clear();
}

void Engine::finish(Slot s, SimTime now, bool ok) {
  Request& r = req(s);
  auto it = std::find(running_.begin(), running_.end(), s);
  KVSIM_ASSERT(it != running_.end(), "finishing a request that is not running");
  running_.erase(it);
  kv_.free(r);
  r.status = RequestStatus::kFinished;
  r.finish_time = now;
  FinishedRequest f;
  f.id = r.id;
  f.ok = ok;
  f.arrival = r.arrival;
  f.first_token_time = r.first_token_time;
  f.finish_time = now;
  f.prompt_tokens = r.prompt_tokens;
  f.output_tokens = r.generated;
  f.cached_tokens = std::max<std::int64_t>(r.num_cached_tokens, 0);
  f.preemptions = r.preemptions;
  finished_.push_back(f);
  r.block_hashes.clear();
  free_slots_.push_back(s);
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
  for (Slot s : running_) count(s);
  for (Slot s : waiting_) count(s);
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
