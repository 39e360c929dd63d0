#include "sim/workload/make_driver.hpp"

#include <gtest/gtest.h>

#include <tuple>

#include "sim/core/error.hpp"
#include "tests/workload/fake_context.hpp"

namespace kvsim::workload {
namespace {

const std::string kFixtures = std::string(KVSIM_TEST_DATA_DIR) + "/fixtures/workload";

Distribution constant(double v) {
  Distribution d;
  d.value = v;
  return d;
}

// An inline config of 5 conversations of 6 messages (3 user turns) run by one client with one
// active conversation sends every turn: 15 requests, each conversation's turns in order.
TEST(MakeDriver, InlineGenerationConfig) {
  WorkloadSpec spec;
  GenerationConfig g;
  g.num_conversations = 5;
  g.num_turns = constant(6);
  g.num_tokens = constant(100);
  g.prefix_num_tokens = constant(50);
  g.output_num_tokens = constant(20);
  spec.generation = g;
  auto d = make_driver(spec, "", 1);
  testing::FakeContext ctx;
  ctx.run(*d);
  ASSERT_EQ(ctx.sent.size(), 15u);
  EXPECT_EQ(ctx.sent[0].spec.conversation_name, "CONV_ID_0");
  EXPECT_EQ(ctx.sent[2].spec.input_num_turns, 5);
  EXPECT_EQ(ctx.sent[14].spec.conversation_name, "CONV_ID_4");
  EXPECT_EQ(ctx.sent[0].spec.output_tokens, 20);
}

// Relative input files resolve against base_dir; vLLM's default config generates 24
// conversations and the header lists its parameters as the benchmark prints them.
TEST(MakeDriver, InputFileRelativeToBaseDir) {
  WorkloadSpec spec;
  spec.input_file = "generate_multi_turn.json";
  spec.clients.num_clients = 2;
  spec.clients.max_active_conversations = 6;
  auto d = make_driver(spec, kFixtures, 0);
  EXPECT_EQ(d->describe(),
            (std::vector<std::string>{
                "num_clients=2", "num_conversations=24", "active_conversations=6", "seed=0",
                "text_files=pg1184.txt", "input_num_turns=UniformDistribution[12, 18]",
                "input_common_prefix_num_tokens=Constant[500]",
                "input_prefix_num_tokens=LognormalDistribution[1000, 0.85, 5000]",
                "input_num_tokens=UniformDistribution[120, 160]",
                "output_num_tokens=UniformDistribution[80, 120]"}));
  spec.input_file = "conversations.json";
  spec.clients.max_active_conversations = 2;
  auto c = make_driver(spec, kFixtures, 0);
  testing::FakeContext ctx;
  ctx.run(*c);
  // Instant answers: conv-a turn 1 (client 0), conv-b turn 1 (client 1), conv-a turn 2 (client
  // 0); then conv-b is done, client 1 meets TERM and exits, which stops client 0 after its turn.
  ASSERT_EQ(ctx.sent.size(), 3u);
  EXPECT_EQ(ctx.sent[2].spec.conversation_name, "conv-a");
  EXPECT_EQ(ctx.sent[2].spec.input_num_turns, 3);
}

TEST(MakeDriver, BadSpecs) {
  WorkloadSpec spec;
  EXPECT_THROW(make_driver(spec, "", 0), InputError);  // neither config nor file
  spec.generation = GenerationConfig{};
  spec.input_file = "x.json";
  EXPECT_THROW(make_driver(spec, "", 0), InputError);  // both
  spec.generation.reset();
  EXPECT_THROW(make_driver(spec, kFixtures, 0), InputError);  // missing file
  WorkloadSpec trace;
  trace.kind = WorkloadSpec::Kind::kTrace;
  trace.trace.file = "small_trace.jsonl";
  trace.trace.format = TraceFormat::kAzure;
  EXPECT_THROW(make_driver(trace, kFixtures, 0), InputError);
  trace.trace.format = TraceFormat::kAuto;
  auto d = make_driver(trace, kFixtures, 0);
  testing::FakeContext ctx;
  ctx.run(*d);
  EXPECT_EQ(ctx.sent.size(), 4u);
}

// Same spec and seed, same requests at the same times; another seed, other conversations.
TEST(MakeDriver, DeterministicForASeed) {
  WorkloadSpec spec;
  spec.input_file = "generate_multi_turn.json";
  spec.clients.num_clients = 2;
  spec.clients.max_active_conversations = 4;
  spec.clients.request_rate = 1.0;
  auto run = [&](std::uint64_t seed) {
    auto d = make_driver(spec, kFixtures, seed);
    testing::FakeContext ctx;
    ctx.latency = [](const RequestSpec& r) { return r.output_tokens * 20 * kMillisecond; };
    ctx.run(*d);
    std::vector<std::tuple<SimTime, std::string, int, std::int64_t, std::int64_t>> out;
    for (const auto& s : ctx.sent) {
      out.emplace_back(s.at, s.spec.conversation_name, s.spec.input_num_turns,
                       total_tokens(s.spec.prompt), s.spec.output_tokens);
    }
    return out;
  };
  const auto a = run(3);
  EXPECT_GT(a.size(), 10u);
  EXPECT_EQ(a, run(3));
  EXPECT_NE(a, run(4));
}

}  // namespace
}  // namespace kvsim::workload
