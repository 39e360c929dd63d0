// Scheduler rules of vLLM V1 (vllm/v1/core/sched/scheduler.py), each test stating the rule.
#include <gtest/gtest.h>

#include "kvsim/engine/engine.hpp"
#include "test_support.hpp"

namespace kvsim::engine {
namespace {

using testing::FixedCompute;
using testing::make_request;

EngineConfig config(int budget = 2048, int max_seqs = 256) {
  EngineConfig c;
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
  ASSERT_TRUE(e.begin_step(0));
  EXPECT_EQ(e.last_step().batch_tokens, 2048);
  EXPECT_EQ(e.last_step().prefill_requests, 2);
  e.end_step(10);
  auto first = e.take_first_tokens();
  ASSERT_EQ(first.size(), 1u);  // only A finished its prompt
  EXPECT_EQ(first[0].id, 1u);
  ASSERT_TRUE(e.begin_step(10));
  EXPECT_EQ(e.last_step().batch_tokens, 1 + 952);
  EXPECT_EQ(e.last_step().decode_requests, 1);
  EXPECT_EQ(e.last_step().prefill_requests, 1);
}

// max_num_seqs caps the number of running requests; the rest wait.
TEST(Scheduler, MaxNumSeqsCapsAdmission) {
  FixedCompute compute;
  Engine e(config(2048, 2), 1000, 8192, compute);
  for (std::uint64_t i = 1; i <= 3; ++i) e.add_request(make_request(i, 10, 4, i), 0);
  ASSERT_TRUE(e.begin_step(0));
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
  ASSERT_TRUE(e.begin_step(0));
  EXPECT_EQ(e.last_step().batch_tokens, 1500);
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
  ASSERT_TRUE(e.begin_step(0));  // A: 2 blocks, B: 2 blocks
  e.end_step(1);                 // both sample a token: 33 tokens each
  ASSERT_TRUE(e.begin_step(1));
  EXPECT_EQ(e.last_step().preemptions, 1);
  EXPECT_EQ(e.num_running(), 1);
  EXPECT_EQ(e.num_waiting(), 1);
  EXPECT_EQ(e.last_step().batch_tokens, 1);  // only A's decode
  e.check_invariants();
  EXPECT_EQ(e.counters().preemptions, 1);
  // Run to the end: B must finish with one preemption and a resume hit counted apart.
  SimTime t = 2;
  e.end_step(t);
  while (e.has_unfinished()) {
    auto d = e.begin_step(t);
    ASSERT_TRUE(d.has_value());
    t += *d;
    e.end_step(t);
    e.check_invariants();
  }
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
  ASSERT_TRUE(e.begin_step(0));  // A: 3 blocks (48 slots); 1 free
  e.end_step(1);
  e.add_request(make_request(2, 40, 3, 2), 1);  // needs 3 blocks
  e.add_request(make_request(3, 10, 3, 3), 1);  // needs 1 block, would fit
  ASSERT_TRUE(e.begin_step(1));
  EXPECT_EQ(e.num_running(), 1);
  EXPECT_EQ(e.num_waiting(), 2);
  EXPECT_EQ(e.last_step().preemptions, 0);
  EXPECT_EQ(e.last_step().batch_tokens, 1);
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
  while (e.has_unfinished()) {
    t += *e.begin_step(t);
    e.end_step(t);
  }
  e.add_request(make_request(2, 64, 2, 7), t);
  ASSERT_TRUE(e.begin_step(t));
  EXPECT_EQ(e.last_step().batch_tokens, 16);
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
  while (e.has_unfinished()) {
    t += *e.begin_step(t);
    e.end_step(t);
  }
  e.add_request(make_request(2, 64, 2, 7), t);
  ASSERT_TRUE(e.begin_step(t));
  EXPECT_EQ(e.last_step().batch_tokens, 64);
}

}  // namespace
}  // namespace kvsim::engine
