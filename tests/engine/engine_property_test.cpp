// Property tests over many seeds: random arrivals and lengths on a small block pool, so that
// preemption and eviction happen often. Invariants: block references always match block tables
// and the free count; every request finishes exactly once with its forced output length; time
// never goes back; first token before finish.
#include <gtest/gtest.h>

#include <map>

#include "kvsim/core/rng.hpp"
#include "kvsim/engine/engine.hpp"
#include "test_support.hpp"

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

}  // namespace
}  // namespace kvsim::engine
