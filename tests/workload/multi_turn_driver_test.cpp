#include "sim/workload/multi_turn_driver.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "sim/core/error.hpp"
#include "sim/workload/prompt.hpp"
#include "tests/workload/fake_context.hpp"

namespace kvsim::workload {
namespace {

using testing::FakeContext;

// A conversation of `user_turns` user messages, each answered; all messages 10 tokens.
Conversation conv(const std::string& id, std::size_t user_turns) {
  Conversation c;
  c.id = id;
  const std::uint64_t key = conversation_key(id);
  for (std::size_t i = 0; i < 2 * user_turns; ++i) {
    c.messages.push_back(
        make_message(i % 2 == 0 ? Message::Role::kUser : Message::Role::kAssistant, key, i, 10));
  }
  return c;
}

std::vector<Conversation> convs(std::vector<std::size_t> user_turns) {
  std::vector<Conversation> out;
  for (std::size_t i = 0; i < user_turns.size(); ++i) {
    std::string id = "c";  // appended, not "c" + ...: GCC 12 misreports -Wrestrict on that
    id.append(std::to_string(i));
    out.push_back(conv(id, user_turns[i]));
  }
  return out;
}

ClientSpec clients(int n, int active) {
  ClientSpec s;
  s.num_clients = n;
  s.max_active_conversations = active;
  return s;
}

// (conversation, messages sent) of each request in submission order.
std::vector<std::pair<std::string, int>> turns(const FakeContext& ctx) {
  std::vector<std::pair<std::string, int>> out;
  for (const auto& s : ctx.sent) out.emplace_back(s.spec.conversation_name, s.spec.input_num_turns);
  return out;
}

using Turns = std::vector<std::pair<std::string, int>>;

// client_main's round-robin deque with 3 active conversations: fetched c0, c1, c2 are appended
// at the right; pop() takes the right end (c2 first); an unfinished conversation goes back with
// appendleft, so the order cycles c2, c1, c0, c2, c1, c0, c2. When c2 finishes (its third turn
// sends 5 messages), the refill meets TERM and the client exits at once, abandoning c0 and c1
// (vLLM's behaviour, issue #57173): 7 requests, 1 conversation finished.
TEST(MultiTurnDriver, RoundRobinCyclesThroughTheDeque) {
  MultiTurnDriver d(convs({3, 3, 3}), clients(1, 3), ChatTemplate{}, 0);
  FakeContext ctx;
  ctx.run(d);
  EXPECT_EQ(turns(ctx),
            (Turns{{"c2", 1}, {"c1", 1}, {"c0", 1}, {"c2", 3}, {"c1", 3}, {"c0", 3}, {"c2", 5}}));
  EXPECT_TRUE(d.finished());
  EXPECT_EQ(d.conversations_finished(), 1);
}

// With one active conversation per client nothing is abandoned: every turn of every
// conversation is sent, conversation after conversation.
TEST(MultiTurnDriver, OneActiveConversationRunsEverything) {
  MultiTurnDriver d(convs({2, 1, 2}), clients(1, 1), ChatTemplate{}, 0);
  FakeContext ctx;
  ctx.run(d);
  EXPECT_EQ(turns(ctx), (Turns{{"c0", 1}, {"c0", 3}, {"c1", 1}, {"c2", 1}, {"c2", 3}}));
  EXPECT_EQ(d.conversations_finished(), 3);
}

// When c2 finishes, the refill appends the next conversation c3 at the right, so it is served
// next. When c3 finishes, the refill meets TERM and the client exits at once, abandoning the
// second turns of c0 and c1 (vLLM's behaviour, issue #57173).
TEST(MultiTurnDriver, NewConversationGoesNextAndTermAbandonsActiveOnes) {
  MultiTurnDriver d(convs({2, 2, 2, 1}), clients(1, 3), ChatTemplate{}, 0);
  FakeContext ctx;
  ctx.run(d);
  EXPECT_EQ(turns(ctx), (Turns{{"c2", 1}, {"c1", 1}, {"c0", 1}, {"c2", 3}, {"c3", 1}}));
  EXPECT_EQ(d.conversations_finished(), 2);
  EXPECT_TRUE(d.finished());
}

// Early stop: 2 clients, 1 active conversation each, client 0 answers in 1 s, client 1 in 10 s.
// Client 0 runs c0 (t=0,1), c2 (t=2,3), c3 (t=4,5), meets TERM at t=6 and exits, which stops
// the others: client 1's request in flight (c1 turn 1, sent at t=0) completes at t=10 and
// counts, then client 1 exits without sending c1's second turn. Without early stop it does.
TEST(MultiTurnDriver, EarlyStopLetsTheInFlightRequestFinish) {
  const auto latency = [](const RequestSpec& s) {
    return s.client_id == 0 ? kSecond : 10 * kSecond;
  };
  {
    MultiTurnDriver d(convs({2, 2, 2, 2}), clients(2, 2), ChatTemplate{}, 0);
    FakeContext ctx;
    ctx.latency = latency;
    ctx.run(d);
    EXPECT_EQ(turns(ctx),
              (Turns{{"c0", 1}, {"c1", 1}, {"c0", 3}, {"c2", 1}, {"c2", 3}, {"c3", 1}, {"c3", 3}}));
    ASSERT_EQ(ctx.done.size(), 7u);
    EXPECT_EQ(ctx.done.back().at, 10 * kSecond);  // c1's first turn still completes
    EXPECT_TRUE(d.finished());
  }
  {
    ClientSpec s = clients(2, 2);
    s.early_stop = false;
    MultiTurnDriver d(convs({2, 2, 2, 2}), s, ChatTemplate{}, 0);
    FakeContext ctx;
    ctx.latency = latency;
    ctx.run(d);
    EXPECT_EQ(ctx.sent.size(), 8u);
    EXPECT_EQ(ctx.sent.back().spec.conversation_name, "c1");
    EXPECT_EQ(ctx.sent.back().at, 10 * kSecond);
    EXPECT_EQ(ctx.done.back().at, 20 * kSecond);
  }
}

// max_num_requests is split per client as n // num_clients: 5 // 2 = 2 requests each, then the
// client exits (and early stop ends the run): 4 requests in all. 3 // 2 = 1 each: 2 requests.
TEST(MultiTurnDriver, MaxNumRequestsPerClient) {
  for (const auto& [n, expected] : std::vector<std::pair<int, std::size_t>>{{5, 4}, {3, 2}}) {
    ClientSpec s = clients(2, 2);
    s.max_num_requests = n;
    MultiTurnDriver d(convs({3, 3, 3, 3}), s, ChatTemplate{}, 0);
    FakeContext ctx;
    ctx.run(d);
    EXPECT_EQ(ctx.sent.size(), expected) << "max_num_requests " << n;
    std::map<int, int> per_client;
    for (const auto& r : ctx.sent) ++per_client[r.spec.client_id];
    EXPECT_EQ(per_client[0], per_client[1]);
  }
}

// --max-turns caps the messages used: 4 -> user turns at 1 and 3 messages; 3 -> the same
// (after the second answer 4 >= 3); the conversation has 5 user turns.
TEST(MultiTurnDriver, MaxTurns) {
  for (const int max_turns : {4, 3}) {
    ClientSpec s = clients(1, 1);
    s.max_turns = max_turns;
    MultiTurnDriver d(convs({5}), s, ChatTemplate{}, 0);
    FakeContext ctx;
    ctx.run(d);
    EXPECT_EQ(turns(ctx), (Turns{{"c0", 1}, {"c0", 3}})) << "max_turns " << max_turns;
  }
}

// Warmup step: first only turn 1 of every conversation (1 active per client, no early stop,
// counted = false), then the benchmark on the conversations in warmup completion order,
// skipping turn 1; a 2-message conversation has nothing left. Here c0 answers in 5 s, the
// others in 1 s, with 2 clients: warmup completion order c1 (t=1), c2, c3, c4, c0 (t=5).
// Benchmark from t=5: client 0 takes c1, client 1 takes c2; at t=6 client 0 takes c3, client
// 1 skips c4 and takes c0; at t=7 client 0 meets TERM and early stop ends the run after
// client 1's c0 (t=11).
TEST(MultiTurnDriver, WarmupStep) {
  ClientSpec s = clients(2, 2);
  s.warmup_step = true;
  MultiTurnDriver d(convs({2, 2, 2, 1, 2}), s, ChatTemplate{}, 0);
  // Ids: c0..c4 with user turns 2, 2, 2, 1, 2 -> c3 is the 2-message one.
  FakeContext ctx;
  ctx.latency = [](const RequestSpec& r) {
    return r.conversation_name == "c0" ? 5 * kSecond : kSecond;
  };
  ctx.output = [](const RequestSpec& r) { return r.output_tokens + 7; };  // real answers are longer
  ctx.run(d);
  ASSERT_EQ(ctx.sent.size(), 9u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_FALSE(ctx.sent[i].spec.counted);
    EXPECT_EQ(ctx.sent[i].spec.input_num_turns, 1);
  }
  EXPECT_EQ(turns(ctx), (Turns{{"c0", 1},
                               {"c1", 1},
                               {"c2", 1},
                               {"c3", 1},
                               {"c4", 1},
                               {"c1", 3},
                               {"c2", 3},
                               {"c4", 3},
                               {"c0", 3}}));
  for (std::size_t i = 5; i < 9; ++i) {
    EXPECT_TRUE(ctx.sent[i].spec.counted);
    // History re-sends the warmup's real answer: 10 + (10 + 7) + 10 content tokens.
    EXPECT_EQ(ctx.sent[i].spec.input_num_tokens, 37);
  }
  EXPECT_EQ(ctx.sent[5].at, 5 * kSecond);
  EXPECT_EQ(d.warmup_requests_sent(), 5);
  EXPECT_EQ(d.requests_sent(), 4);
}

// --request-rate r: after every response the client sleeps Exp(1/r) (its own "client_sleep"
// stream), without subtracting the latency: with 100 ms latency, request k is sent at
// k * 100 ms + the first k sleeps, and the run ends after the last sleep.
TEST(MultiTurnDriver, RequestRateSleepsAfterEveryResponse) {
  ClientSpec s = clients(1, 1);
  s.request_rate = 2.0;
  const std::uint64_t seed = 42;
  MultiTurnDriver d(convs({3}), s, ChatTemplate{}, seed);
  FakeContext ctx;
  ctx.latency = [](const RequestSpec&) { return 100 * kMillisecond; };
  ctx.run(d);
  Rng sleeps = RngFactory(seed).stream("client_sleep", 0);
  const SimTime s1 = from_seconds(sleeps.exponential(0.5));
  const SimTime s2 = from_seconds(sleeps.exponential(0.5));
  const SimTime s3 = from_seconds(sleeps.exponential(0.5));
  ASSERT_EQ(ctx.sent.size(), 3u);
  EXPECT_EQ(ctx.sent[0].at, 0);
  EXPECT_EQ(ctx.sent[1].at, 100 * kMillisecond + s1);
  EXPECT_EQ(ctx.sent[2].at, 200 * kMillisecond + s1 + s2);
  ASSERT_EQ(ctx.timers.size(), 3u);
  EXPECT_EQ(ctx.timers.back(), 300 * kMillisecond + s1 + s2 + s3);
}

// The mean sleep is 1/rate: over 400 instant requests at 4 req/s the mean gap is 0.25 s
// (standard error 0.0125 s).
TEST(MultiTurnDriver, RequestRateMeanGap) {
  ClientSpec s = clients(1, 1);
  s.request_rate = 4.0;
  MultiTurnDriver d(convs({401}), s, ChatTemplate{}, 7);
  FakeContext ctx;
  ctx.run(d);
  ASSERT_EQ(ctx.sent.size(), 401u);
  EXPECT_NEAR(to_seconds(ctx.sent.back().at) / 400.0, 0.25, 0.04);
}

// random sampling: random.choice over the active conversations (in fetch order) with the
// client's own stream. Each conversation's turns still go in order; the run ends when the first
// conversation finishes (its 4th turn sends 7 messages) and the refill meets TERM; the same seed
// repeats the sequence and other seeds give other ones.
TEST(MultiTurnDriver, RandomSampling) {
  ClientSpec s = clients(1, 3);
  s.conversation_sampling = ConversationSampling::kRandom;
  auto run = [&](std::uint64_t seed) {
    MultiTurnDriver d(convs({4, 4, 4}), s, ChatTemplate{}, seed);
    FakeContext ctx;
    ctx.run(d);
    return turns(ctx);
  };
  std::set<Turns> distinct;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const Turns a = run(seed);
    EXPECT_EQ(a, run(seed));
    distinct.insert(a);
    ASSERT_GE(a.size(), 4u);
    EXPECT_EQ(a.back().second, 7);
    std::map<std::string, int> last;
    for (const auto& [id, n] : a) {
      EXPECT_EQ(n, last[id] == 0 ? 1 : last[id] + 2);
      last[id] = n;
    }
    int finals = 0;
    for (const auto& t : a) finals += t.second == 7 ? 1 : 0;
    EXPECT_EQ(finals, 1);
  }
  EXPECT_GT(distinct.size(), 1u);
}

// A failed request drops its conversation; the client goes on with the next one.
TEST(MultiTurnDriver, FailedRequestDropsTheConversation) {
  MultiTurnDriver d(convs({3, 2}), clients(1, 1), ChatTemplate{}, 0);
  FakeContext ctx;
  ctx.ok = [](const RequestSpec& r) {
    return !(r.conversation_name == "c0" && r.input_num_turns == 3);
  };
  ctx.run(d);
  EXPECT_EQ(turns(ctx), (Turns{{"c0", 1}, {"c0", 3}, {"c1", 1}, {"c1", 3}}));
}

// The answer the server generated replaces the dataset's: the next turn re-sends it with its
// real length, as the same stream that was generated, so turn k's prompt plus its answer is a
// prefix of turn k+1's prompt.
TEST(MultiTurnDriver, HistoryReSendsTheGeneratedAnswer) {
  MultiTurnDriver d(convs({3}), clients(1, 1), ChatTemplate{}, 0);
  FakeContext ctx;
  ctx.output = [](const RequestSpec& r) { return r.output_tokens + 25; };
  ctx.run(d);
  ASSERT_EQ(ctx.sent.size(), 3u);
  for (std::size_t k = 0; k + 1 < ctx.sent.size(); ++k) {
    TokenSequence with_answer = ctx.sent[k].spec.prompt;
    append_tokens(with_answer, ctx.sent[k].spec.output_content_id,
                  ctx.sent[k].spec.output_tokens + 25);
    const auto a = block_hashes(with_answer, 1);
    const auto b = block_hashes(ctx.sent[k + 1].spec.prompt, 1);
    ASSERT_LT(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i)
      ASSERT_EQ(a[i], b[i]) << "turn " << k << " token " << i;
  }
  EXPECT_EQ(d.conversations()[0].messages[1].content_tokens, 35);
  EXPECT_EQ(ctx.sent[2].spec.input_num_tokens, 10 + 35 + 10 + 35 + 10);
}

// get_client_config's checks.
TEST(MultiTurnDriver, ValidationMirrorsGetClientConfig) {
  const auto message = [](const ClientSpec& s, std::size_t n) -> std::string {
    try {
      validate_client_spec(s, n);
    } catch (const InputError& e) {
      return e.diagnostics().at(0).message;
    }
    return "";
  };
  EXPECT_EQ(message(clients(2, 4), 4), "");
  EXPECT_EQ(message(clients(0, 0), 4), "Number of clients must be a positive number");
  EXPECT_EQ(message(clients(5, 0), 4),
            "Number of conversations (4) must be equal or larger than the number of clients");
  EXPECT_EQ(
      message(clients(2, 5), 4),
      "Max active conversations 5 must be equal or less than the total number of conversations");
  EXPECT_EQ(message(clients(3, 2), 4),
            "Max active conversations 2 must be equal or greater than the number of clients");
  ClientSpec s = clients(2, 2);
  s.max_num_requests = 1;
  EXPECT_EQ(message(s, 4), "Number of requests should be at least one per client");
  s = clients(1, 1);
  s.limit_min_tokens = 10;
  EXPECT_EQ(message(s, 4), "Invalid min/max tokens limits (both limits should be provided)");
  s.limit_max_tokens = 5;
  EXPECT_EQ(message(s, 4), "Invalid min/max tokens limits (min should not be larger than max)");
  s = clients(1, 1);
  s.request_rate = -1;
  EXPECT_NE(message(s, 4), "");
  EXPECT_THROW(MultiTurnDriver(convs({1}), clients(2, 2), ChatTemplate{}, 0), InputError);
}

// The benchmark's parameter header (active_conversations prints None when not given).
TEST(MultiTurnDriver, Describe) {
  ClientSpec s = clients(2, 0);
  s.limit_min_tokens = 50;
  s.limit_max_tokens = 60;
  const MultiTurnDriver d(convs({1, 1, 1}), s, ChatTemplate{}, 7);
  EXPECT_EQ(d.describe(), (std::vector<std::string>{"num_clients=2", "num_conversations=3",
                                                    "active_conversations=None", "seed=7",
                                                    "min_tokens=50", "max_tokens=60"}));
}

// Clients with equal completion times act in client order, so runs repeat exactly.
TEST(MultiTurnDriver, Deterministic) {
  auto run = [] {
    ClientSpec s = clients(3, 6);
    s.request_rate = 1.0;
    s.conversation_sampling = ConversationSampling::kRandom;
    MultiTurnDriver d(convs({3, 1, 4, 1, 5, 9, 2, 6}), s, ChatTemplate{}, 11);
    FakeContext ctx;
    ctx.latency = [](const RequestSpec& r) { return (r.input_num_turns % 3) * 250 * kMillisecond; };
    ctx.run(d);
    std::vector<std::tuple<SimTime, std::string, int, int>> out;
    for (const auto& r : ctx.sent)
      out.emplace_back(r.at, r.spec.conversation_name, r.spec.input_num_turns, r.spec.client_id);
    return out;
  };
  EXPECT_EQ(run(), run());
}

}  // namespace
}  // namespace kvsim::workload
