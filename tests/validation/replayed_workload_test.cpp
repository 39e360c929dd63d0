// kvsim validate's rebuilt workload: the simulator must see exactly the requests a replay
// measured (token counts, per-client order, think-time gaps) and share the history prefix
// between turns as the server's prefix cache did.
#include "validation/src/replayed_workload.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>

#include "sim/cluster/simulation.hpp"

namespace kvsim::validation {
namespace {

const std::string kScenario =
    std::string(KVSIM_TEST_DATA_DIR) + "/validation/data/small-multiturn.yaml";

struct Turn {
  std::int64_t prompt;  // usage.prompt_tokens
  std::int64_t output;  // usage.completion_tokens
};

// 2 clients x 2 conversations x 3 turns; client c owns conversations 2c and 2c + 1 and
// alternates between them (turn 1 of both, then turn 2 of both, ...). Prompts grow by the
// previous answer plus new user text. No prompt + answer is 0, 1 or 2 past a multiple of 16, so
// the expectation below does not depend on whether the block the last answer token completes
// is cached (vLLM with async scheduling caches only blocks of tokens already known, P + A - 2).
// conversation -> its three turns
const std::map<int, std::vector<Turn>> kTurns = {
    {0, {{100, 10}, {140, 12}, {177, 8}}},
    {1, {{90, 9}, {131, 9}, {163, 11}}},
    {2, {{120, 6}, {150, 14}, {199, 5}}},
    {3, {{85, 9}, {118, 13}, {170, 12}}},
};
constexpr double kGapMs = 500;  // client 1 thinks this long before its last request

ReplayRun hand_made_replay() {
  ReplayRun run;
  run.scenario_name = "small-multiturn";
  run.seed = 7;
  run.workload_kind = "multi_turn";
  std::int64_t submit = 0;
  std::map<int, double> clock{{0, 0.0}, {1, 0.0}};
  for (int turn = 0; turn < 3; ++turn) {
    for (int k = 0; k < 2; ++k) {
      for (int client = 0; client < 2; ++client) {
        const int conv = 2 * client + k;
        const Turn& t = kTurns.at(conv)[static_cast<std::size_t>(turn)];
        ReplayRecord r;
        r.submit_index = submit++;
        r.conversation_index = conv;
        r.request.conversation_id = "CONV_ID_" + std::to_string(conv);
        r.request.client_id = client;
        r.request.input_num_turns = 2 * turn + 1;
        r.request.input_num_tokens = t.prompt - 30;
        r.request.output_num_tokens = t.output;
        r.request.prompt_tokens = t.prompt;
        r.usage_prompt_tokens = t.prompt;
        r.usage_completion_tokens = t.output;
        r.usage_reported = true;
        const bool think = client == 1 && turn == 2 && k == 1;
        r.request.start_time_ms = clock[client] + (think ? kGapMs : 0.0);
        r.end_ms = r.request.start_time_ms + 40;  // what the server took does not matter here
        clock[client] = r.end_ms;
        run.records.push_back(r);
      }
    }
  }
  // A failed request of a fifth conversation: left out, and said so.
  ReplayRecord failed;
  failed.submit_index = submit++;
  failed.conversation_index = 4;
  failed.request.conversation_id = "CONV_ID_4";
  failed.request.client_id = 0;
  failed.request.input_num_turns = 1;
  failed.error = "HTTP 500";
  failed.request.start_time_ms = 1000;
  failed.end_ms = 1001;
  run.records.push_back(failed);
  return run;
}

TEST(ReplayedWorkload, SimulatesExactlyTheMeasuredRequestsInEachClientsOrder) {
  const auto sc = scenario::load_scenario(kScenario, {});
  const ReplayRun run = hand_made_replay();
  ReplayedWorkload w = rebuild_workload(run, sc);
  ASSERT_EQ(w.requests.size(), 12U);
  ASSERT_EQ(w.notes.size(), 1U);
  EXPECT_NE(w.notes[0].find("1 failed"), std::string::npos) << w.notes[0];

  cluster::Simulation sim(sc, std::make_unique<workload::ReplayedDriver>(std::move(w.requests),
                                                                           w.mode));
  auto predicted = sim.run().requests;
  ASSERT_EQ(predicted.size(), 12U);
  std::sort(predicted.begin(), predicted.end(),
            [](const auto& a, const auto& b) { return a.start_time_ms < b.start_time_ms; });

  // Per client, the measured order: (conversation, messages sent).
  std::map<int, std::vector<std::pair<std::string, int>>> simulated, measured;
  for (const auto& r : predicted)
    simulated[r.client_id].emplace_back(r.conversation_id, r.input_num_turns);
  for (const auto& r : run.records) {
    if (r.error.empty())
      measured[r.request.client_id].emplace_back(r.request.conversation_id, r.request.input_num_turns);
  }
  EXPECT_EQ(simulated, measured);

  std::map<std::pair<std::string, int>, const io::RequestRecord*> by_turn;
  for (const auto& r : predicted) by_turn[{r.conversation_id, r.input_num_turns}] = &r;
  for (const auto& [conv, turns] : kTurns) {
    const std::string name = "CONV_ID_" + std::to_string(conv);
    for (std::size_t k = 0; k < turns.size(); ++k) {
      const auto* r = by_turn.at({name, static_cast<int>(2 * k + 1)});
      EXPECT_EQ(r->prompt_tokens, turns[k].prompt) << name << " turn " << k + 1;
      EXPECT_EQ(r->output_num_tokens, turns[k].output) << name << " turn " << k + 1;
      if (k == 0) continue;
      // vLLM's prefix cache hits whole 16-token blocks of the history re-sent: the previous
      // prompt and its answer, rounded down to a block (the KV stays: the GPU cache is large).
      const std::int64_t history = turns[k - 1].prompt + turns[k - 1].output;
      EXPECT_EQ(r->cached_tokens, history / 16 * 16) << name << " turn " << k + 1;
    }
  }

  // Closed loop: each request starts when the client's previous one ended, plus the measured
  // think time before client 1's last request.
  std::map<int, double> last_end;
  for (const auto& r : predicted) {
    const auto it = last_end.find(r.client_id);
    if (it != last_end.end()) {
      const bool think = r.client_id == 1 && r.conversation_id == "CONV_ID_3" && r.input_num_turns == 5;
      EXPECT_NEAR(r.start_time_ms, it->second + (think ? kGapMs : 0.0), 1e-3)
          << r.conversation_id << " turn " << (r.input_num_turns + 1) / 2;
    }
    last_end[r.client_id] = r.start_time_ms + r.latency_ms;
  }
}

TEST(ReplayedWorkload, HistoryThatDoesNotGrowIsClampedToOneNewTokenWithANote) {
  const auto sc = scenario::load_scenario(kScenario, {});
  ReplayRun run = hand_made_replay();
  // Turn 2 of CONV_ID_0 reported shorter than turn 1's prompt + answer (110 tokens).
  for (auto& r : run.records) {
    if (r.request.conversation_id == "CONV_ID_0" && r.request.input_num_turns == 3)
      r.usage_prompt_tokens = 105;
  }
  const ReplayedWorkload w = rebuild_workload(run, sc);
  bool noted = false;
  for (const auto& n : w.notes) noted = noted || n.find("1 turns had a measured prompt") != std::string::npos;
  EXPECT_TRUE(noted);
  for (const auto& q : w.requests) {
    if (q.spec.conversation_name == "CONV_ID_0" && q.spec.input_num_turns == 3) {
      EXPECT_EQ(total_tokens(q.spec.prompt), 111);  // 100 + 10 + 1
    }
  }
}

TEST(ReplayedWorkload, OpenLoopSendsAtTheRecordedTimes) {
  // Open loop: a request goes at its recorded send time whatever the server does.
  std::vector<workload::ReplayedRequest> rs(3);
  const double at_ms[] = {0, 5, 2.5};
  for (std::size_t i = 0; i < rs.size(); ++i) {
    append_tokens(rs[i].spec.prompt, content_id(ContentKind::kUnique, 99, i), 64);
    rs[i].spec.output_tokens = 4;
    rs[i].spec.client_id = 0;
    rs[i].spec.conversation_name = "r" + std::to_string(i);
    rs[i].send_time = from_ms(at_ms[i]);
  }
  const auto sc = scenario::load_scenario(kScenario, {});
  cluster::Simulation sim(
      sc, std::make_unique<workload::ReplayedDriver>(rs, workload::ReplayedDriver::Mode::kOpenLoop));
  const auto predicted = sim.run().requests;
  ASSERT_EQ(predicted.size(), 3U);
  for (const auto& r : predicted) {
    const auto i = static_cast<std::size_t>(r.conversation_id[1] - '0');
    EXPECT_DOUBLE_EQ(r.start_time_ms, at_ms[i]);
  }
}

TEST(ReplayedWorkload, ResizePromptCutsOrExtends) {
  TokenSequence p;
  append_tokens(p, 1, 10);
  append_tokens(p, 2, 10);
  const TokenSequence cut = resize_prompt(p, 15, 3);
  ASSERT_EQ(cut.size(), 2U);
  EXPECT_EQ(cut[1].length, 5);
  const TokenSequence cut2 = resize_prompt(p, 8, 3);
  ASSERT_EQ(cut2.size(), 1U);
  EXPECT_EQ(cut2[0].length, 8);
  const TokenSequence longer = resize_prompt(p, 26, 3);
  ASSERT_EQ(longer.size(), 3U);
  EXPECT_EQ(longer[2], (TokenSegment{3, 0, 6}));
}

}  // namespace
}  // namespace kvsim::validation
