// Scheduler rules of vLLM V1 (vllm/v1/core/sched/scheduler.py), each test stating the rule.
#include <gtest/gtest.h>

#include "sim/engine/engine.hpp"
#include "tests/engine/test_support.hpp"

namespace kvsim::engine {
namespace {

using testing::FixedCompute;
using testing::make_request;

// Synchronous scheduling, so that each test sees one step at a time; async scheduling has its
// own tests below.
EngineConfig config(int budget = 2048, int max_seqs = 256) {
  EngineConfig c;
  c.async_scheduling = false;
  c.max_num_batched_tokens = budget;
  c.max_num_seqs = max_seqs;
  return c;
}

// Chunked prefill with a shared token budget: waiting requests are admitted FCFS, each taking
// what is left of max_num_batched_tokens; the second prompt gets a 548-token chunk.
// Next step, running requests come first: A decodes (1 token) and B continues (952 tokens).
TEST(Scheduler, TokenBudgetSplitsPrefillsAndRunningComeFirst) {
  FixedCompute compute;
  Engine e(config(), 1000, 8192, compute);
  e.add_request(make_request(1, 1500, 4, 1), 0);
  e.add_request(make_request(2, 1500, 4, 2), 0);
  ASSERT_TRUE(e.start(0));
  EXPECT_EQ(e.current_step().batch_tokens, 2048);
  EXPECT_EQ(e.current_step().prefill_requests, 2);
  ASSERT_TRUE(e.finish_step(10));
  auto first = e.take_first_tokens();
  ASSERT_EQ(first.size(), 1u);  // only A finished its prompt
  EXPECT_EQ(first[0].id, 1u);
  EXPECT_EQ(e.current_step().batch_tokens, 1 + 952);
  EXPECT_EQ(e.current_step().decode_requests, 1);
  EXPECT_EQ(e.current_step().prefill_requests, 1);
}

// scheduler_reserve_full_isl (vLLM 0.19): a waiting request is admitted only when blocks for its
// whole prompt fit, not just its first chunk. 64 usable blocks of 16 tokens = 1,024 tokens; A's
// 600-token prompt takes 38 blocks, leaving 26 (416 tokens). B's 1,000-token prompt needs 63
// blocks: with the gate it waits although a 400-token first chunk would fit; without the gate
// it gets that chunk in the same step.
TEST(Scheduler, ReserveFullIslGatesAdmissionOnTheWholePrompt) {
  FixedCompute compute;
  for (const bool gate : {true, false}) {
    EngineConfig c = config(1000);
    c.scheduler_reserve_full_isl = gate;
    Engine e(c, 65, 8192, compute);
    e.add_request(make_request(1, 600, 4, 1), 0);
    e.add_request(make_request(2, 1000, 4, 2), 0);
    ASSERT_TRUE(e.start(0));
    EXPECT_EQ(e.num_running(), gate ? 1 : 2) << "gate " << gate;
    EXPECT_EQ(e.current_step().batch_tokens, gate ? 600 : 1000) << "gate " << gate;
  }
}

// max_num_seqs caps the number of running requests; the rest wait.
TEST(Scheduler, MaxNumSeqsCapsAdmission) {
  FixedCompute compute;
  Engine e(config(2048, 2), 1000, 8192, compute);
  for (std::uint64_t i = 1; i <= 3; ++i) e.add_request(make_request(i, 10, 4, i), 0);
  ASSERT_TRUE(e.start(0));
  EXPECT_EQ(e.num_running(), 2);
  EXPECT_EQ(e.num_waiting(), 1);
}

// Without chunked prefill a prompt that does not fit the remaining budget is not split: it waits.
TEST(Scheduler, NoChunkedPrefillKeepsWholePrompts) {
  FixedCompute compute;
  EngineConfig c = config();
  c.enable_chunked_prefill = false;
  Engine e(c, 1000, 8192, compute);
  e.add_request(make_request(1, 1500, 4, 1), 0);
  e.add_request(make_request(2, 1500, 4, 2), 0);
  ASSERT_TRUE(e.start(0));
  EXPECT_EQ(e.current_step().batch_tokens, 1500);
  EXPECT_EQ(e.num_waiting(), 1);
}

// When a running request cannot get a block, the most recently admitted running request is
// preempted (recompute): its blocks are freed, its computed tokens reset, it is prepended to
// the waiting queue. Here A (admitted first) grows into a 3rd block; B is the victim.
// B's freed blocks go to the free-queue tail in reverse (B1, B0), so A takes B1 and B0 stays
// cached: when B resumes it can hit its own first block.
TEST(Scheduler, PreemptsLatestAdmittedAndItResumesWithItsCachedPrefix) {
  FixedCompute compute;
  Engine e(config(), 5, 8192, compute);  // 4 usable blocks
  e.add_request(make_request(1, 32, 20, 1), 0);
  e.add_request(make_request(2, 32, 20, 2), 0);
  ASSERT_TRUE(e.start(0));        // A: 2 blocks, B: 2 blocks
  ASSERT_TRUE(e.finish_step(1));  // both sample a token (33 tokens each); next step scheduled
  EXPECT_EQ(e.current_step().preemptions, 1);
  EXPECT_EQ(e.num_running(), 1);
  EXPECT_EQ(e.num_waiting(), 1);
  EXPECT_EQ(e.current_step().batch_tokens, 1);  // only A's decode
  e.check_invariants();
  EXPECT_EQ(e.counters().preemptions, 1);
  // Run to the end: B must finish with one preemption and a resume hit counted apart.
  SimTime t = 2;
  auto d = e.finish_step(t);
  while (d) {
    e.check_invariants();
    t += *d;
    d = e.finish_step(t);
  }
  EXPECT_FALSE(e.has_unfinished());
  auto done = e.take_finished();
  ASSERT_EQ(done.size(), 2u);
  for (const auto& f : done) EXPECT_EQ(f.output_tokens, 20);
  EXPECT_EQ(done[0].id, 1u);
  EXPECT_EQ(done[1].preemptions, 1);
  EXPECT_GT(e.counters().preempted_queries, 0);
  EXPECT_EQ(e.counters().preempted_hits % 16, 0);
}

// Head-of-line blocking: when the first waiting request cannot get blocks, admission stops,
// even if a later, smaller request would fit; waiting requests never preempt running ones.
TEST(Scheduler, HeadOfLineBlocking) {
  FixedCompute compute;
  Engine e(config(), 5, 8192, compute);  // 4 usable blocks
  e.add_request(make_request(1, 40, 3, 1), 0);
  ASSERT_TRUE(e.start(0));  // A: 3 blocks (48 slots); 1 free
  e.add_request(make_request(2, 40, 3, 2), 0);  // needs 3 blocks
  e.add_request(make_request(3, 10, 3, 3), 0);  // needs 1 block, would fit
  ASSERT_TRUE(e.finish_step(1));
  EXPECT_EQ(e.num_running(), 1);
  EXPECT_EQ(e.num_waiting(), 2);
  EXPECT_EQ(e.current_step().preemptions, 0);
  EXPECT_EQ(e.current_step().batch_tokens, 1);
}

// A prompt plus max_tokens over max_model_len is rejected at arrival (HTTP 400 in vLLM).
TEST(Scheduler, RejectsRequestsLongerThanMaxModelLen) {
  FixedCompute compute;
  Engine e(config(), 100, 100, compute);
  e.add_request(make_request(1, 90, 20, 1), 0);
  auto f = e.take_finished();
  ASSERT_EQ(f.size(), 1u);
  EXPECT_FALSE(f[0].ok);
  EXPECT_FALSE(e.has_unfinished());
}

// Prefix caching: a second request with the same 64-token prompt hits 48 tokens (the last
// block is recomputed: hit <= num_tokens - 1) and its first step computes only 16 tokens.
TEST(Scheduler, PrefixCacheHitShortensPrefill) {
  FixedCompute compute;
  Engine e(config(), 100, 8192, compute);
  e.add_request(make_request(1, 64, 2, 7), 0);
  SimTime t = 0;
  auto d = e.start(t);
  while (d) {
    t += *d;
    d = e.finish_step(t);
  }
  e.add_request(make_request(2, 64, 2, 7), t);
  ASSERT_TRUE(e.start(t));
  EXPECT_EQ(e.current_step().batch_tokens, 16);
  EXPECT_EQ(e.counters().prefix_cache_hits, 48);
  EXPECT_EQ(e.counters().prefix_cache_queries, 64 + 64);
}

// With prefix caching off the same request recomputes everything.
TEST(Scheduler, PrefixCachingOffRecomputes) {
  FixedCompute compute;
  EngineConfig c = config();
  c.enable_prefix_caching = false;
  Engine e(c, 100, 8192, compute);
  e.add_request(make_request(1, 64, 2, 7), 0);
  SimTime t = 0;
  auto d = e.start(t);
  while (d) {
    t += *d;
    d = e.finish_step(t);
  }
  e.add_request(make_request(2, 64, 2, 7), t);
  ASSERT_TRUE(e.start(t));
  EXPECT_EQ(e.current_step().batch_tokens, 64);
}

}  // namespace
}  // namespace kvsim::engine

namespace kvsim::engine {
namespace {

// Async scheduling (vLLM AsyncScheduler with EngineCore's batch queue of 2): the next step is
// scheduled as soon as one is launched, before its outputs are known, so a request's decode is
// scheduled while its prefill runs, and a request arriving during step N enters step N+2.
// Without async scheduling it enters step N+1.
TEST(Scheduler, AsyncSchedulingPipelinesOneStepAhead) {
  FixedCompute compute;
  for (const bool async : {false, true}) {
    EngineConfig c;
    c.async_scheduling = async;
    Engine e(c, 100, 8192, compute);
    e.add_request(testing::make_request(1, 100, 5, 1), 0);
    const auto d1 = e.start(0);
    ASSERT_TRUE(d1);
    EXPECT_EQ(e.current_step().prefill_requests, 1);
    e.add_request(testing::make_request(2, 50, 5, 2), 1);  // arrives while step 1 runs
    const SimTime t1 = *d1;
    const auto d2 = e.finish_step(t1);
    ASSERT_TRUE(d2);
    EXPECT_EQ(e.take_first_tokens().size(), 1u);
    // Step 2: A's decode; B only without async scheduling.
    EXPECT_EQ(e.current_step().decode_requests, 1) << "async " << async;
    EXPECT_EQ(e.current_step().prefill_requests, async ? 0 : 1) << "async " << async;
    const auto d3 = e.finish_step(t1 + *d2);
    ASSERT_TRUE(d3);
    if (async) {
      EXPECT_EQ(e.current_step().prefill_requests, 1);
    }
  }
}

// Async scheduling: a request whose in-flight token is its last is not scheduled again, so it
// finishes with exactly its forced length.
TEST(Scheduler, AsyncSchedulingStopsAtTheForcedLength) {
  FixedCompute compute;
  EngineConfig c;
  c.async_scheduling = true;
  Engine e(c, 100, 8192, compute);
  e.add_request(testing::make_request(1, 30, 3, 1), 0);
  SimTime t = 0;
  auto d = e.start(t);
  int steps = 0;
  while (d) {
    t += *d;
    ++steps;
    d = e.finish_step(t);
  }
  const auto f = e.take_finished();
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].output_tokens, 3);
  EXPECT_EQ(steps, 3);  // prefill (token 1), decode (token 2), decode (token 3)
}

}  // namespace
}  // namespace kvsim::engine
