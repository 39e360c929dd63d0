// engine.prepare_max_running: an engine that prepares a request's sequence (loads its KV from
// the offload tier, erases what another request left in it) only between batches it has to
// itself (the CPU engine of validation/cpu-engine, whose batch loop keeps the llama.cpp context
// while two or more sequences decode). A request that needs such a preparation starts only in a
// step that at most N other requests run in; the requests behind it go ahead meanwhile.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <vector>

#include "sim/engine/connector.hpp"
#include "sim/engine/engine.hpp"
#include "sim/engine/kv_cache_manager.hpp"
#include "tests/engine/test_support.hpp"

namespace kvsim::engine {
namespace {

using testing::FixedCompute;
using testing::make_request;

EngineConfig config(int max_seqs, int gate) {
  EngineConfig c;
  c.async_scheduling = false;
  c.max_num_seqs = max_seqs;
  c.prepare_max_running = gate;
  return c;
}

// Runs the engine to the end from `t`, recording each request's first token time.
void run_to_end(Engine& e, SimTime t, std::optional<SimTime> d,
                std::map<std::uint64_t, SimTime>& first) {
  while (d) {
    t += *d;
    d = e.finish_step(t);
    for (const auto& f : e.take_first_tokens()) first.emplace(f.id, f.time);
  }
}

// Which sequences a request would erase: with 2 sequences, none while one is still empty; once
// both are idle, a prompt that continues neither erases the least recently used one; a prompt
// that continues a whole idle sequence erases nothing, one that continues it in part erases its
// tail. vLLM's block cache (0 sequences) never erases.
TEST(PrepareGate, WouldEraseFollowsTheSequenceRule) {
  for (const int sequences : {0, 2}) {
    KvCacheManager kv(256, 16, true, 4096);
    kv.set_prefix_cache_sequences(sequences);
    std::vector<BlockId> hits;
    Request a = make_request(1, 48, 1, 1);  // 3 full blocks
    EXPECT_FALSE(kv.would_erase({}));       // both sequences empty
    ASSERT_TRUE(kv.allocate_slots(a, 48, 0, {}));
    kv.free(a);
    EXPECT_FALSE(kv.would_erase({})) << sequences;  // one empty sequence left
    Request b = make_request(2, 48, 1, 2);
    ASSERT_TRUE(kv.allocate_slots(b, 48, 0, {}));
    kv.free(b);
    EXPECT_EQ(kv.would_erase({}), sequences > 0) << sequences;  // both idle, neither continued
    const Request whole = make_request(3, 80, 1, 2);            // continues all of b's blocks
    ASSERT_EQ(kv.find_longest_cache_hit(whole, hits), 48);
    EXPECT_FALSE(kv.would_erase(hits)) << sequences;
    const Request part = make_request(4, 24, 1, 2);  // continues b's first block only
    ASSERT_EQ(kv.find_longest_cache_hit(part, hits), 16);
    EXPECT_EQ(kv.would_erase(hits), sequences > 0) << sequences;
  }
}

// 2 sequences, 2 running at most. A decodes 20 tokens, B ends after its prefill, so B's sequence
// is idle and none is empty. Then C (a new prompt: it must erase B's sequence) and D (B's prompt
// continued: nothing to erase) arrive. With N = 0, C waits while A runs and D goes ahead of it;
// C starts only once A and D are done. Without the gate (-1), or with N = 1 (one other runs),
// C starts at once (FCFS) and D waits for a free sequence slot.
TEST(PrepareGate, ARequestThatErasesASequenceWaitsAndThoseBehindGoAhead) {
  FixedCompute compute;
  for (const int gate : {-1, 0, 1}) {
    EngineConfig c = config(2, gate);
    c.prefix_cache_sequences = 2;
    Engine e(c, 100, 8192, compute);
    e.add_request(make_request(1, 32, 20, 1), 0);
    e.add_request(make_request(2, 48, 1, 2), 0);
    SimTime t = 0;
    std::map<std::uint64_t, SimTime> first;
    auto d = e.start(t);
    ASSERT_TRUE(d);
    t += *d;
    d = e.finish_step(t);  // both prefilled: B (1 output token) is done, A decodes
    for (const auto& f : e.take_first_tokens()) first.emplace(f.id, f.time);
    ASSERT_EQ(e.num_running(), 1) << gate;
    e.add_request(make_request(3, 40, 1, 3), t);  // C
    e.add_request(make_request(4, 80, 1, 2), t);  // D: B's 48 tokens (3 blocks) and 32 more
    ASSERT_TRUE(d);
    t += *d;
    d = e.finish_step(t);  // the step that admits the newcomers
    for (const auto& f : e.take_first_tokens()) first.emplace(f.id, f.time);
    // A's decode and C's 40-token prompt, or A's decode and D's 32 new tokens.
    EXPECT_EQ(e.current_step().batch_tokens, gate == 0 ? 1 + 32 : 1 + 40) << gate;
    run_to_end(e, t, d, first);
    ASSERT_EQ(first.size(), 4u) << gate;
    if (gate == 0) {
      EXPECT_GT(first.at(3), first.at(4));
      EXPECT_GT(first.at(3), first.at(1) + 18 * 1000000) << "C waited for A's decode";
    } else {
      EXPECT_LT(first.at(3), first.at(4)) << gate;
    }
  }
}

// A synchronous connector (LMCache) offering external tokens to C only: with N = 1 and A and B
// decoding, C's load waits and D, behind it, is admitted; C's load starts in the first step
// after D and A are done (B alone runs). Without the gate it loads at once.
class SyncConnector : public ConnectorHooks {
 public:
  std::vector<std::pair<std::uint64_t, SimTime>> loads;  // (id, when)
  std::optional<std::int64_t> match(const Request& r, std::int64_t) override {
    return r.id == 3 ? 64 : 0;
  }
  int start_load(const Request& r, std::int64_t, std::int64_t, SimTime now) override {
    loads.emplace_back(r.id, now);
    return 0;  // the load takes no time: the test is about when it starts
  }
  int store(const Request&, std::int64_t, std::int64_t, SimTime) override { return 0; }
  bool synchronous() const override { return true; }
  bool request_finished(const Request&) override { return false; }
  bool prompt_only() const override { return true; }
};

TEST(PrepareGate, ASynchronousLoadWaitsUntilAtMostNOthersRun) {
  FixedCompute compute;
  for (const int gate : {-1, 1}) {
    Engine e(config(4, gate), 100, 8192, compute);
    SyncConnector conn;
    e.set_connector(&conn);
    e.add_request(make_request(1, 32, 10, 1), 0);  // A
    e.add_request(make_request(2, 32, 40, 2), 0);  // B
    SimTime t = 0;
    std::map<std::uint64_t, SimTime> first;
    auto d = e.start(t);
    ASSERT_TRUE(d);
    t += *d;
    d = e.finish_step(t);
    for (const auto& f : e.take_first_tokens()) first.emplace(f.id, f.time);
    ASSERT_EQ(e.num_running(), 2);
    e.add_request(make_request(3, 80, 1, 3), t);  // C: 64 tokens in the tier
    e.add_request(make_request(4, 32, 3, 4), t);  // D
    run_to_end(e, t, d, first);
    ASSERT_EQ(conn.loads.size(), 1u) << gate;
    ASSERT_EQ(first.size(), 4u) << gate;
    if (gate < 0) {
      EXPECT_LT(conn.loads[0].second, first.at(4));  // C loads before D's first token
    } else {
      EXPECT_GT(conn.loads[0].second, first.at(4));  // D went ahead
      EXPECT_GT(conn.loads[0].second, first.at(1) + 8 * 1000000) << "after A's last decode";
      EXPECT_LT(first.at(3), first.at(2) + 39 * 1000000) << "while B still decodes";
    }
  }
}

}  // namespace
}  // namespace kvsim::engine
