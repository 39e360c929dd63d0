// Property tests over many seeds: random arrivals and lengths on a small block pool, so that
// preemption and eviction happen often. Invariants: block references always match block tables
// and the free count; every request finishes exactly once with its forced output length; time
// never goes back; first token before finish.
#include <gtest/gtest.h>

#include <map>
#include <optional>

#include "sim/core/rng.hpp"
#include "sim/engine/engine.hpp"
#include "tests/engine/test_support.hpp"

namespace kvsim::engine {
namespace {

using testing::FixedCompute;

TEST(EngineProperties, InvariantsHoldOverManySeeds) {
  FixedCompute compute;
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    Rng rng(seed);
    EngineConfig c;
    c.max_num_batched_tokens = static_cast<int>(rng.uniform_int(64, 512));
    c.max_num_seqs = static_cast<int>(rng.uniform_int(2, 16));
    c.enable_prefix_caching = rng.uniform01() < 0.8;
    c.async_scheduling = seed % 2 == 1;
    const std::int64_t blocks = rng.uniform_int(40, 120);
    Engine e(c, blocks, 512, compute);
    const int n = 80;
    std::map<std::uint64_t, int> finished;
    std::map<std::uint64_t, SimTime> first;
    std::map<std::uint64_t, std::int64_t> outputs;
    SimTime t = 0;
    SimTime next_end = -1;  // end of the step in flight; -1 when idle
    int added = 0;
    while (added < n || e.has_unfinished() || next_end >= 0) {
      while (added < n && rng.uniform01() < 0.3) {
        const auto prompt = rng.uniform_int(1, 300);
        const auto out = rng.uniform_int(1, 100);
        outputs[static_cast<std::uint64_t>(added)] = out;
        // Share prefixes across requests: few distinct streams.
        e.add_request(testing::make_request(static_cast<std::uint64_t>(added), prompt, out,
                                            static_cast<std::uint64_t>(rng.uniform_int(0, 4))),
                      t);
        ++added;
      }
      // Drive the engine as the simulation does: start when idle, then step to step.
      if (next_end < 0) {
        const auto d = e.start(t);
        if (d) next_end = t + *d;
      }
      if (next_end >= 0) {
        ASSERT_GT(next_end, t);
        t = next_end;
        const auto d = e.finish_step(t);
        next_end = d ? t + *d : -1;
      } else {
        t += 500;
      }
      e.check_invariants();
      for (const auto& f : e.take_first_tokens()) first[f.id] = f.time;
      for (const auto& f : e.take_finished()) {
        ++finished[f.id];
        if (f.ok) {
          ASSERT_TRUE(first.count(f.id));
          ASSERT_LE(first[f.id], f.finish_time);
          ASSERT_EQ(f.output_tokens, outputs[f.id]);
        }
      }
    }
    ASSERT_EQ(finished.size(), static_cast<std::size_t>(n)) << "seed " << seed;
    for (const auto& [id, count] : finished) ASSERT_EQ(count, 1) << "seed " << seed << " id " << id;
    // Nothing held once everything finished.
    EXPECT_EQ(e.kv().pool().num_free_blocks(), blocks - 1) << "seed " << seed;
  }
}

// The decode fast path (Engine::decode_step) against the plain path, step by step: two engines,
// one with the fast paths and one without, get the same arrivals; after every step their step
// durations and statistics, counters, first tokens, finished requests and free blocks must be
// equal. Small pools make eviction and preemption frequent; long answers and few sequences make
// long decode-only stretches, with requests waiting at max_num_seqs; most requests are next
// turns of earlier ones, so blocks cached during decoding are hit later. Both scheduling modes.
// The fast run takes most decode steps inside decode stretches (Engine::stretch_step), where
// requests' counts are written back late and arrivals settle the stretch; the step time
// depends on every context, and the free queues must stay in the same order.
TEST(EngineProperties, DecodeFastPathMatchesThePlainPathStepByStep) {
  testing::ContextCompute compute;
  std::int64_t fast_steps = 0;
  std::int64_t stretch_steps = 0;
  std::int64_t total_steps = 0;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    Rng rng(seed + 1000);
    EngineConfig c;
    c.max_num_batched_tokens = static_cast<int>(rng.uniform_int(32, 512));
    c.max_num_seqs = static_cast<int>(rng.uniform_int(1, 12));
    c.enable_prefix_caching = rng.uniform01() < 0.8;
    c.async_scheduling = seed % 2 == 1;
    // At least one request's worth (at most 700 tokens: 44 blocks) beyond the null block.
    const std::int64_t blocks = rng.uniform_int(46, 400);
    Engine fast(c, blocks, 1024, compute);
    Engine plain(c, blocks, 1024, compute);
    plain.set_fast_paths(false);
    SimTime t = 0;
    SimTime next_end = -1;
    int added = 0;
    std::vector<TokenSequence> prompts;
    std::vector<std::int64_t> lengths, outs;
    while (added < 60 || fast.has_unfinished() || next_end >= 0) {
      while (added < 60 && rng.uniform01() < 0.1) {
        const auto id = static_cast<std::uint64_t>(added);
        const auto out = rng.uniform_int(1, 300);
        TokenSequence prompt;
        std::int64_t len = 0;
        if (added > 0 && rng.uniform01() < 0.7) {
          // A next turn: an earlier request's prompt and answer (whose blocks were cached as it
          // decoded, if it has yet), then new tokens.
          const auto prev = static_cast<std::size_t>(rng.uniform_int(0, added - 1));
          const auto more = rng.uniform_int(1, 100);
          if (lengths[prev] + outs[prev] + more + out <= 700) {
            prompt = prompts[prev];
            append_tokens(prompt, content_id(ContentKind::kAssistantTurn, prev), outs[prev]);
            append_tokens(prompt, content_id(ContentKind::kUserTurn, id), more);
            len = lengths[prev] + outs[prev] + more;
          }
        }
        if (len == 0) {
          len = rng.uniform_int(1, 400);
          append_tokens(prompt, content_id(ContentKind::kUnique, static_cast<std::uint64_t>(rng.uniform_int(0, 3))), len);
        }
        prompts.push_back(prompt);
        lengths.push_back(len);
        outs.push_back(out);
        for (Engine* e : {&fast, &plain}) e->add_request(testing::make_turn(id, prompt, len, out), t);
        ++added;
      }
      std::optional<SimTime> df, dp;
      if (next_end < 0) {
        df = fast.start(t);
        dp = plain.start(t);
        ASSERT_EQ(df, dp) << "seed " << seed;
        if (df) next_end = t + *df;
      }
      if (next_end < 0) {
        t += 500;
        continue;
      }
      t = next_end;
      df = fast.finish_step(t);
      dp = plain.finish_step(t);
      ASSERT_EQ(df, dp) << "seed " << seed << " t " << t;
      next_end = df ? t + *df : -1;
      const StepStats& a = fast.last_step();
      const StepStats& b = plain.last_step();
      ASSERT_EQ(a.start, b.start);
      ASSERT_EQ(a.duration, b.duration);
      ASSERT_EQ(a.running, b.running);
      ASSERT_EQ(a.waiting, b.waiting);
      ASSERT_EQ(a.batch_tokens, b.batch_tokens);
      ASSERT_EQ(a.prefill_requests, b.prefill_requests);
      ASSERT_EQ(a.decode_requests, b.decode_requests);
      ASSERT_EQ(a.kv_usage, b.kv_usage);
      ASSERT_EQ(a.preemptions, b.preemptions);
      ASSERT_EQ(fast.kv().pool().num_free_blocks(), plain.kv().pool().num_free_blocks());
      ASSERT_EQ(fast.kv().pool().free_queue_order(), plain.kv().pool().free_queue_order()) << "seed " << seed;
      ASSERT_EQ(fast.kv().pool().num_cached_blocks(), plain.kv().pool().num_cached_blocks()) << "seed " << seed;
      ASSERT_EQ(fast.counters().generation_tokens, plain.counters().generation_tokens);
      ASSERT_EQ(fast.counters().prefix_cache_hits, plain.counters().prefix_cache_hits);
      ASSERT_EQ(fast.counters().prefix_cache_queries, plain.counters().prefix_cache_queries);
      ASSERT_EQ(fast.counters().preemptions, plain.counters().preemptions);
      ASSERT_EQ(fast.counters().steps, plain.counters().steps);
      const auto ff = fast.take_first_tokens();
      const auto fp = plain.take_first_tokens();
      ASSERT_EQ(ff.size(), fp.size());
      for (std::size_t i = 0; i < ff.size(); ++i) ASSERT_EQ(ff[i].id, fp[i].id);
      const auto gf = fast.take_finished();
      const auto gp = plain.take_finished();
      ASSERT_EQ(gf.size(), gp.size());
      for (std::size_t i = 0; i < gf.size(); ++i) {
        ASSERT_EQ(gf[i].id, gp[i].id);
        ASSERT_EQ(gf[i].cached_tokens, gp[i].cached_tokens);
        ASSERT_EQ(gf[i].preemptions, gp[i].preemptions);
      }
      fast.check_invariants();
    }
    EXPECT_EQ(plain.fast_decode_steps(), 0);
    EXPECT_EQ(plain.stretch_steps(), 0);
    fast_steps += fast.fast_decode_steps();
    stretch_steps += fast.stretch_steps();
    total_steps += fast.counters().steps;
  }
  // The fast path ran, and for most steps (decode-only stretches dominate long answers), most
  // of them inside stretches.
  EXPECT_GT(fast_steps, total_steps / 2) << fast_steps << " of " << total_steps;
  EXPECT_GT(stretch_steps, fast_steps / 2) << stretch_steps << " of " << fast_steps;
}

}  // namespace
}  // namespace kvsim::engine
