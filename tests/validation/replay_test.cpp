// kvsim replay against the fake server (validation/testing/fake_server.py): the request stream
// is the simulator's client model, server faults end as recorded errors in a finished run, and
// a stop request ends the run with its partial results.
#include "validation/src/replay.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>
#include <thread>
#include <tuple>

#include "sim/cluster/simulation.hpp"
#include "sim/workload/make_driver.hpp"
#include "tests/validation/fake_server.hpp"
#include "validation/src/report.hpp"

namespace kvsim::validation {
namespace {

using testing::FakeServer;

const std::string kScenario =
    std::string(KVSIM_TEST_DATA_DIR) + "/validation/data/small-multiturn.yaml";

scenario::Scenario load(const std::vector<scenario::Override>& overrides = {}) {
  scenario::LoadOptions lo;
  lo.overrides = overrides;
  return scenario::load_scenario(kScenario, lo);
}

ReplayOptions options(const std::string& url) {
  ReplayOptions o;
  o.url = url;
  o.model = "fake-model";
  o.timeouts.first_token_s = 1.0;
  o.timeouts.idle_s = 1.0;
  o.timeouts.total_s = 20;
  o.retry.max_retries = 1;
  o.retry.backoff_s = 0.02;
  return o;
}

using Key = std::tuple<std::string, int, int>;  // conversation, messages sent, client

// The closed-loop client model run on scripted completions: the driver sees the replay's
// completions in the replay's order, and must then ask for exactly the requests the replay
// sent, in the same order.
std::vector<Key> driver_stream_for(const scenario::Scenario& sc, const ReplayRun& run) {
  struct Scripted : workload::WorkloadContext {
    std::vector<Key> sent;
    SimTime now() const override { return 0; }
    std::uint64_t submit(workload::RequestSpec s) override {
      sent.emplace_back(s.conversation_name, s.input_num_turns, s.client_id);
      return sent.size() - 1;
    }
    void wake_at(SimTime, std::int64_t) override {
      ADD_FAILURE() << "no timers with request_rate 0";
    }
  } ctx;
  auto driver = workload::make_driver(
      sc.workload, std::string(KVSIM_TEST_DATA_DIR) + "/validation/data", sc.seed);
  driver->start(ctx);
  for (const ReplayRecord& r : run.records) {
    EXPECT_LT(static_cast<std::size_t>(r.submit_index), ctx.sent.size())
        << "completed before it was sent";
    workload::Completion c;
    c.request_id = static_cast<std::uint64_t>(r.submit_index);
    c.ok = r.error.empty();
    c.output_tokens = r.request.output_num_tokens;
    driver->on_complete(c, ctx);
  }
  return ctx.sent;
}

std::vector<Key> replay_stream(const ReplayRun& run) {
  std::vector<ReplayRecord> by_submit = run.records;
  std::sort(by_submit.begin(), by_submit.end(), [](const ReplayRecord& a, const ReplayRecord& b) {
    return a.submit_index < b.submit_index;
  });
  std::vector<Key> out;
  for (const auto& r : by_submit)
    out.emplace_back(r.request.conversation_id, r.request.input_num_turns, r.request.client_id);
  return out;
}

TEST(Replay, OneClientSendsTheSimulatorsRequestSequence) {
  // With one client the closed loop's order does not depend on timing: the replay must send the
  // simulation's (conversation, turn, client) sequence, request for request, with the simulated
  // answer lengths as min_tokens = max_tokens and the same content token counts up to the
  // joints between text segments (a token or two).
  const auto sc = load(
      {{"workload.clients.num_clients", "1"}, {"workload.clients.max_active_conversations", "2"}});
  FakeServer server({"--mode", "ok"});
  const ReplayRun run = run_replay(sc, options(server.url()));
  ASSERT_EQ(run.failed(), 0);
  EXPECT_FALSE(run.interrupted);

  cluster::Simulation sim(sc);
  auto predicted = sim.run().requests;
  std::sort(predicted.begin(), predicted.end(),
            [](const auto& a, const auto& b) { return a.start_time_ms < b.start_time_ms; });
  std::vector<Key> simulated;
  for (const auto& r : predicted)
    simulated.emplace_back(r.conversation_id, r.input_num_turns, r.client_id);
  EXPECT_EQ(replay_stream(run), simulated);

  std::map<std::pair<std::string, int>, const io::RequestRecord*> sim_by_turn;
  for (const auto& r : predicted) sim_by_turn[{r.conversation_id, r.input_num_turns}] = &r;
  for (const ReplayRecord& r : run.records) {
    const auto* s = sim_by_turn.at({r.request.conversation_id, r.request.input_num_turns});
    EXPECT_EQ(r.request.output_num_tokens, s->output_num_tokens);
    EXPECT_EQ(r.expected_output_tokens, s->output_num_tokens);
    EXPECT_NEAR(static_cast<double>(r.request.input_num_tokens),
                static_cast<double>(s->input_num_tokens), 3.0);
    EXPECT_GT(r.request.ttft_ms, 0);
    EXPECT_GE(r.request.latency_ms, r.request.ttft_ms);
  }
}

TEST(Replay, TwoClientsFollowTheClientModelForTheMeasuredCompletionOrder) {
  const auto sc = load();
  FakeServer server({"--mode", "ok"});
  const ReplayRun run = run_replay(sc, options(server.url()));
  ASSERT_EQ(run.failed(), 0);
  ASSERT_GE(run.records.size(), 6U);
  EXPECT_EQ(replay_stream(run), driver_stream_for(sc, run));
  // Turns after the first re-send their history: the fake server's prefix cache hits it.
  std::int64_t cached_later_turns = 0;
  for (const auto& r : run.records) {
    if (r.request.input_num_turns > 1) cached_later_turns += r.request.cached_tokens;
  }
  EXPECT_GT(cached_later_turns, 0);
  EXPECT_GT(counter_delta(run.metrics_before, run.metrics_after, "vllm:prefix_cache_queries"), 0.0);
}

TEST(Replay, ServerFaultsAreRecordedAndTheRunFinishes) {
  // One client, so the fake server's fault cycle meets the requests in a fixed order: ok, 500
  // (retried: ok), stall after two chunks, close after three, a malformed event, a disconnect
  // (retried), headers then silence. Each fault ends its request with an error; the failed
  // conversation is dropped, as the benchmark does; the run ends normally.
  const auto sc = load(
      {{"workload.clients.num_clients", "1"}, {"workload.clients.max_active_conversations", "3"}});
  FakeServer server({"--mode", "mixed"});
  const ReplayRun run = run_replay(sc, options(server.url()));
  EXPECT_FALSE(run.interrupted);
  std::string all;
  int retried_ok = 0;
  for (const auto& r : run.records) {
    all += r.error + "\n";
    if (r.error.empty() && r.attempts > 1) ++retried_ok;
  }
  EXPECT_NE(all.find("timeout: nothing received"), std::string::npos) << all;
  EXPECT_NE(all.find("malformed event"), std::string::npos) << all;
  EXPECT_NE(all.find("timeout: no token within"), std::string::npos) << all;
  EXPECT_TRUE(all.find("connection lost after 3 chunks") != std::string::npos ||
              all.find("stream ended before [DONE] after 3 chunks") != std::string::npos)
      << all;
  EXPECT_GE(retried_ok, 1);  // the 500
  EXPECT_EQ(replay_stream(run), driver_stream_for(sc, run));
  const std::string summary = replay_summary_text(run);
  EXPECT_NE(summary.find("failed"), std::string::npos);
  EXPECT_NE(summary.find("errors:"), std::string::npos);
}

TEST(Replay, PersistentServerErrorsFailEveryRequestAfterItsRetries) {
  const auto sc = load();
  FakeServer server({"--mode", "http500"});
  const ReplayRun run = run_replay(sc, options(server.url()));
  ASSERT_FALSE(run.records.empty());
  for (const auto& r : run.records) {
    EXPECT_EQ(r.attempts, 2);
    EXPECT_EQ(r.error, "HTTP 500: fake server error (after 2 attempts)");
  }
}

TEST(Replay, FirstAttemptFailuresAreRetriedAndSucceed) {
  // --mode retry: the first attempt of every request gets HTTP 503, its retry the answer.
  const auto sc = load();
  FakeServer server({"--mode", "retry"});
  const ReplayRun run = run_replay(sc, options(server.url()));
  ASSERT_FALSE(run.records.empty());
  for (const auto& r : run.records) {
    EXPECT_TRUE(r.error.empty()) << r.error;
    EXPECT_EQ(r.attempts, 2);
  }
}

TEST(Replay, DisconnectsWithoutAnAnswerFailAfterTheirRetries) {
  const auto sc = load();
  FakeServer server({"--mode", "disconnect"});
  const ReplayRun run = run_replay(sc, options(server.url()));
  ASSERT_FALSE(run.records.empty());
  for (const auto& r : run.records) {
    EXPECT_EQ(r.attempts, 2);
    EXPECT_NE(r.error.find("(after 2 attempts)"), std::string::npos) << r.error;
  }
}

TEST(Replay, TraceRequestsAreSentOpenLoopAtTheirTimestamps) {
  // tests/fixtures/workload/small_trace.jsonl: arrivals at 0, 100, 250 and 250 ms (a blank line
  // skipped); the second request shares hash blocks 0 and 1 (1,024 tokens) with the first.
  // Time scaled by 4 (0, 400, 1,000, 1,000 ms): the first request (about 40 ms on the fake
  // server) has ended, and its KV is cached, well before the one that reuses it is sent, even on
  // a loaded machine.
  const auto sc = load({{"workload.kind", "trace"},
                        {"workload.trace.file", std::string(KVSIM_TEST_DATA_DIR) +
                                                    "/fixtures/workload/small_trace.jsonl"},
                        {"workload.trace.time_scale", "4"}});
  FakeServer server({"--mode", "ok"});
  const ReplayRun run = run_replay(sc, options(server.url()));
  EXPECT_EQ(run.workload_kind, "trace");
  ASSERT_EQ(run.records.size(), 4U);
  std::map<std::int64_t, const ReplayRecord*> by_submit;
  for (const auto& r : run.records) {
    EXPECT_TRUE(r.error.empty()) << r.error;
    EXPECT_EQ(r.conversation_index, -1);
    by_submit[r.submit_index] = &r;
  }
  const double arrivals[] = {0, 400, 1000, 1000};
  const std::int64_t outputs[] = {10, 5, 20, 1};  // trace order, ties kept in file order
  for (std::int64_t i = 0; i < 4; ++i) {
    const ReplayRecord& r = *by_submit.at(i);
    EXPECT_GE(r.request.start_time_ms, arrivals[i]) << "sent before its timestamp";
    EXPECT_EQ(r.request.output_num_tokens, outputs[i]);
  }
  EXPECT_GT(by_submit.at(2)->request.cached_tokens, 0);  // the shared 1,024-token prefix
}

TEST(Replay, UnreachableServerIsRecordedNotThrown) {
  const auto sc = load();
  auto o = options("http://127.0.0.1:9");  // discard port: connection refused
  o.tokenize = TokenizeMode::kEstimate;
  o.retry.max_retries = 0;
  const ReplayRun run = run_replay(sc, o);
  ASSERT_FALSE(run.records.empty());
  for (const auto& r : run.records) EXPECT_FALSE(r.error.empty());
  EXPECT_TRUE(run.metrics_before.empty());
}

TEST(Replay, StopRequestEndsTheRunWithItsPartialResultsJournaled) {
  const auto sc = load();
  FakeServer server({"--mode", "ok", "--token-ms", "40"});
  std::atomic<bool> stop{false};
  auto o = options(server.url());
  o.stop = &stop;
  o.journal_path = ::testing::TempDir() + "/replay_stop.partial.jsonl";
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    stop.store(true);
  });
  const ReplayRun run = run_replay(sc, o);
  stopper.join();
  EXPECT_TRUE(run.interrupted);
  EXPECT_EQ(run.stop_reason, "interrupted");
  ASSERT_FALSE(run.records.empty());
  EXPECT_EQ(run.records.back().error, "interrupted");
  std::ifstream journal(o.journal_path);
  std::size_t lines = 0;
  for (std::string l; std::getline(journal, l);) ++lines;
  EXPECT_EQ(lines, run.records.size());
}

}  // namespace
}  // namespace kvsim::validation
