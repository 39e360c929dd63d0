// The engine's side of a KV connector (vLLM OffloadingConnector semantics), with a scripted
// connector standing in for the offload tiers.
#include <gtest/gtest.h>

#include <map>
#include <optional>

#include "sim/engine/connector.hpp"
#include "sim/engine/engine.hpp"
#include "tests/engine/test_support.hpp"

namespace kvsim::engine {
namespace {

using testing::FixedCompute;
using testing::make_request;

class ScriptedConnector : public ConnectorHooks {
 public:
  std::int64_t offer = 0;        // external tokens offered to every lookup
  bool retry = false;            // answer "ask again later"
  std::optional<std::uint64_t> retry_id;  // ... to this request only
  bool hold_blocks = false;      // request_finished() delays the free
  std::vector<std::pair<std::uint64_t, std::int64_t>> loads;    // (id, tokens)
  std::vector<std::pair<std::int64_t, std::int64_t>> stores;    // block ranges
  std::optional<std::int64_t> match(const Request& r, std::int64_t) override {
    if (retry || retry_id == r.id) return std::nullopt;
    return offer;
  }
  int start_load(const Request& r, std::int64_t, std::int64_t tokens, SimTime) override {
    loads.emplace_back(r.id, tokens);
    return 1;
  }
  int store(const Request&, std::int64_t first, std::int64_t end, SimTime) override {
    stores.emplace_back(first, end);
    return 1;
  }
  bool request_finished(const Request&) override { return hold_blocks; }
  bool prompt_only() const override { return true; }
};

EngineConfig sync_config() {
  EngineConfig c;
  c.async_scheduling = false;
  return c;
}

// A lookup that finds external tokens parks the request (WAITING_FOR_REMOTE_KVS): blocks are
// allocated for hit and external tokens, nothing is scheduled for it, and it does not block the
// requests behind it. Once the load finished, the next step admits it with all its blocks
// computed but the last token (a fully loaded prompt recomputes one token).
TEST(Connector, AsynchronousLoadParksTheRequestUntilItLands) {
  FixedCompute compute;
  Engine e(sync_config(), 100, 8192, compute);
  ScriptedConnector conn;
  conn.offer = 64;
  e.set_connector(&conn);
  e.add_request(make_request(1, 64, 4, 1), 0);
  EXPECT_FALSE(e.start(0).has_value());  // nothing to run: only a load in flight
  ASSERT_EQ(conn.loads.size(), 1u);
  EXPECT_EQ(conn.loads[0].second, 64);
  EXPECT_TRUE(e.only_loading());
  EXPECT_EQ(e.kv().pool().num_free_blocks(), 99 - 4);  // 64 tokens = 4 blocks held
  conn.offer = 0;
  e.add_request(make_request(2, 32, 4, 2), 0);  // behind it, not blocked
  ASSERT_TRUE(e.start(0));
  EXPECT_EQ(e.current_step().batch_tokens, 32);
  e.load_finished(1);
  ASSERT_TRUE(e.finish_step(1));
  // Request 1 computes only its last token (64 loaded, 63 counted as computed).
  EXPECT_EQ(e.current_step().prefill_requests, 1);
  EXPECT_EQ(e.current_step().batch_tokens, 1 + 1);  // its last token + request 2's decode
  EXPECT_EQ(e.counters().external_hit_tokens, 64);
  e.check_invariants();
}

// "Ask again later" skips the request for this step without blocking the queue.
TEST(Connector, RetryLeavesTheRequestWaiting) {
  FixedCompute compute;
  Engine e(sync_config(), 100, 8192, compute);
  ScriptedConnector conn;
  conn.retry = true;
  e.set_connector(&conn);
  e.add_request(make_request(1, 64, 4, 1), 0);
  EXPECT_FALSE(e.start(0).has_value());
  EXPECT_EQ(e.num_waiting(), 1);
  conn.retry = false;
  EXPECT_TRUE(e.start(0).has_value());
}

// A head whose asynchronous load cannot get blocks for its prompt, with nothing running: only
// the loaded requests parked behind it hold blocks, so they are admitted (as when the head of
// the queue cannot get blocks for a prefill), instead of the engine idling for ever. Pool of 99
// usable blocks; B (64 tokens, 4 blocks) parks while A is told to retry; then A, 1,536 tokens =
// 96 blocks, finds only 95 free.
TEST(Connector, LoadedRequestsBehindAHeadThatCannotLoadAreAdmitted) {
  FixedCompute compute;
  Engine e(sync_config(), 100, 8192, compute);
  ScriptedConnector conn;
  conn.offer = 64;
  conn.retry_id = 1;
  e.set_connector(&conn);
  e.add_request(make_request(1, 1536, 4, 1), 0);  // A
  e.add_request(make_request(2, 64, 4, 2), 0);    // B
  EXPECT_FALSE(e.start(0).has_value());
  ASSERT_EQ(conn.loads.size(), 1u);
  EXPECT_EQ(conn.loads[0].first, 2u);
  conn.retry_id.reset();
  e.load_finished(2);
  ASSERT_TRUE(e.start(0).has_value());
  EXPECT_EQ(e.current_step().batch_tokens, 1);  // B's last prompt token
  EXPECT_EQ(e.num_waiting(), 1);                // A still waits for blocks
  e.check_invariants();
}

// Write-through stores: after each step the full prompt blocks computed so far are handed to
// the connector once (a 40-token prompt has 2 full blocks; decode blocks are not stored).
// A finished request whose stores are in flight keeps its blocks until stores_finished().
TEST(Connector, StoresFullPromptBlocksAndDelaysTheFree) {
  FixedCompute compute;
  EngineConfig c = sync_config();
  c.max_num_batched_tokens = 24;  // the prompt is computed in two chunks: 24 + 16
  Engine e(c, 100, 8192, compute);
  ScriptedConnector conn;
  conn.hold_blocks = true;
  e.set_connector(&conn);
  e.add_request(make_request(1, 40, 30, 1), 0);
  SimTime t = 0;
  auto d = e.start(t);
  while (d) {
    t += *d;
    d = e.finish_step(t);
  }
  ASSERT_EQ(conn.stores.size(), 2u);
  EXPECT_EQ(conn.stores[0], (std::pair<std::int64_t, std::int64_t>{0, 1}));
  EXPECT_EQ(conn.stores[1], (std::pair<std::int64_t, std::int64_t>{1, 2}));
  ASSERT_EQ(e.take_finished().size(), 1u);
  EXPECT_LT(e.kv().pool().num_free_blocks(), 99);  // still held
  e.check_invariants();
  e.stores_finished(1);
  EXPECT_EQ(e.kv().pool().num_free_blocks(), 99);
}

}  // namespace
}  // namespace kvsim::engine
