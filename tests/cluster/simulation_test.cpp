// The whole simulation through the façade: sanity against published figures, determinism and
// conservation of requests.
#include "sim/cluster/simulation.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "sim/core/error.hpp"
#include "sim/scenario/scenario.hpp"

namespace kvsim::cluster {
using namespace kvsim::scenario;  // NOLINT: the scenarios these tests load and decode
namespace {

const std::string kCatalog = std::string(KVSIM_SOURCE_DIR) + "/scenarios/catalog";
const std::string kExample = std::string(KVSIM_SOURCE_DIR) + "/scenarios/examples/rtx4090-llama3.1-8b-multiturn.yaml";

LoadOptions options(std::vector<Override> overrides = {}) {
  LoadOptions o;
  o.catalog_dir = kCatalog;
  o.overrides = std::move(overrides);
  return o;
}

// One conversation of one user turn: 100 prompt tokens, 500 forced output tokens, one client.
std::string single_request_yaml(bool async) {
  return std::string(R"(name: single
hardware:
  servers: [{gpu: {preset: rtx4090}}]
model: {preset: llama-3.1-8b}
engine: {max_model_len: 8192, async_scheduling: )") +
         (async ? "true" : "false") + R"(}
workload:
  kind: multi_turn
  generation:
    num_conversations: 1
    text_files: [none.txt]
    prompt_input:
      num_turns: {distribution: constant, value: 2}
      common_prefix_num_tokens: {distribution: constant, value: 0}
      prefix_num_tokens: {distribution: constant, value: 0}
      num_tokens: {distribution: constant, value: 100}
    prompt_output:
      num_tokens: {distribution: constant, value: 500}
  clients: {num_clients: 1}
)";
}

// Published: one request decoding alone on an RTX 4090 with Llama-3.1-8B BF16 runs at about
// 55-57 tokens/s (memory-bound: 16 GB of weights per token at ~0.9 x 1,008 GB/s; the hard
// ceiling is 62.8). The simulated client-side TPOT must give 55-60 tokens/s, with and without
// async scheduling.
TEST(Simulation, SingleRequestDecodesAtPublishedRate) {
  for (const bool async : {false, true}) {
    const Scenario s = load_scenario_text(single_request_yaml(async), "single.yaml", options());
    Simulation sim(s);
    const RunResult r = sim.run();
    ASSERT_EQ(r.requests.size(), 1u);
    const double tokens_per_s = 1000.0 / r.requests[0].tpot_ms;
    EXPECT_GE(tokens_per_s, 55.0) << "async " << async;
    EXPECT_LE(tokens_per_s, 60.0) << "async " << async;
    EXPECT_EQ(r.requests[0].output_num_tokens, 500);
  }
}

// KV capacity for the example (one 24 GB RTX 4090, Llama-3.1-8B BF16, utilization 0.9): above
// the 24k tokens of the smallest published 24 GB log, and below the bound that ignores every
// term but the weights: (0.9 x 25,250,627,584 B - 16,094,076,928 B) / 128 KiB = 50,594 tokens.
TEST(Simulation, ExampleKvCapacityIsInThePublishedRange) {
  const Scenario s = load_scenario(kExample, options());
  Simulation sim(s);
  EXPECT_GT(sim.info().gpu_kv_cache_tokens, 24000);
  EXPECT_LT(sim.info().gpu_kv_cache_tokens, 50594);
  EXPECT_EQ(sim.info().gpu_kv_cache_tokens % 16, 0);
}

// num_gpu_blocks_override replaces the derived size (vLLM --num-gpu-blocks-override).
TEST(Simulation, BlockOverrideIsHonoured) {
  const Scenario s = load_scenario(kExample, options({{"engine.num_gpu_blocks_override", "4000"}}));
  Simulation sim(s);
  EXPECT_EQ(sim.info().num_gpu_blocks, 4000);
  EXPECT_EQ(sim.info().gpu_kv_cache_tokens, 4000 * 16);
}

// vLLM refuses to start when one max_model_len sequence does not fit the KV cache.
TEST(Simulation, RefusesMaxModelLenLargerThanTheCache) {
  // The decoder refuses it at the key's line (the example sets max_model_len on line 65) ...
  try {
    load_scenario(kExample, options({{"engine.num_gpu_blocks_override", "1000"}}));
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(":65:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("engine.max_model_len"), std::string::npos) << e.what();
  }
  // ... and so does the Simulation, for a scenario changed in code after loading.
  Scenario s = load_scenario(kExample, options());
  s.engine.num_gpu_blocks_override = 1000;
  try {
    Simulation sim(s);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("engine.max_model_len"), std::string::npos) << e.what();
  }
}

// Same scenario, same seed: the same records, bit for bit; every request the clients sent is
// accounted for exactly once (finished or failed).
TEST(Simulation, DeterministicAndConserving) {
  const Scenario s = load_scenario(kExample, options());
  Simulation a(s);
  Simulation b(s);
  const RunResult ra = a.run();
  const RunResult rb = b.run();
  ASSERT_EQ(ra.requests.size(), rb.requests.size());
  for (std::size_t i = 0; i < ra.requests.size(); ++i) {
    EXPECT_EQ(ra.requests[i].request_id, rb.requests[i].request_id);
    EXPECT_EQ(ra.requests[i].ttft_ms, rb.requests[i].ttft_ms);
    EXPECT_EQ(ra.requests[i].latency_ms, rb.requests[i].latency_ms);
  }
  std::vector<int> seen(ra.requests.size() + static_cast<std::size_t>(ra.info.failed_requests) + 1, 0);
  for (const auto& r : ra.requests) {
    ASSERT_LT(r.request_id, seen.size());
    ++seen[r.request_id];
    EXPECT_LE(r.ttft_ms, r.latency_ms);
    EXPECT_GE(r.ttft_ms, 0.0);
  }
  for (const auto& r : ra.requests) EXPECT_EQ(seen[r.request_id], 1);
}

// Prefix caching matters on multi-turn traffic: turning it off raises mean TTFT, and the
// multi-turn history gives a high hit rate when it is on.
TEST(Simulation, PrefixCachingCutsTtftOnMultiTurn) {
  auto mean_ttft = [](const RunResult& r) {
    double s = 0;
    for (const auto& q : r.requests) s += q.ttft_ms;
    return s / static_cast<double>(r.requests.size());
  };
  Simulation on(load_scenario(kExample, options()));
  Simulation off(load_scenario(kExample, options({{"engine.enable_prefix_caching", "false"}})));
  const RunResult r_on = on.run();
  const RunResult r_off = off.run();
  EXPECT_GT(mean_ttft(r_off), mean_ttft(r_on));
  const double hit_rate =
      static_cast<double>(r_on.info.prefix_cache_hits) / static_cast<double>(r_on.info.prefix_cache_queries);
  EXPECT_GT(hit_rate, 0.5);
  EXPECT_EQ(r_off.info.prefix_cache_hits, 0);
}

}  // namespace
}  // namespace kvsim::cluster

namespace kvsim::cluster {
namespace {

// A prompt longer than max_model_len is refused at arrival (vLLM answers HTTP 400): the client
// sees an error, drops the conversation, and the run ends normally with it counted as failed.
TEST(Simulation, RequestsRefusedAtArrivalEndTheirConversations) {
  std::string yaml = single_request_yaml(true);
  yaml.replace(yaml.find("value: 100}"), std::string("value: 100}").size(), "value: 9000}");
  Simulation sim(load_scenario_text(yaml, "refused.yaml", options()));
  const RunResult r = sim.run();
  EXPECT_TRUE(r.requests.empty());
  EXPECT_EQ(r.info.failed_requests, 1);
}

}  // namespace
}  // namespace kvsim::cluster

namespace kvsim::cluster {
namespace {

// The three compute models on the example: the measured RTX 4090 profile's tables, the model
// fitted to them (shipped) and the roofline anchored on that fit all come from the same kernel
// measurements, so their mean TTFT and TPOT agree within 10 %.
TEST(Simulation, ComputeModelsAgreeOnTheExample) {
  const std::string bundle = std::string(KVSIM_SOURCE_DIR) + "/models/profiles/rtx4090-llama-3.1-8b-vllm0.19";
  auto means = [](const RunResult& r) {
    double ttft = 0, tpot = 0;
    for (const auto& q : r.requests) {
      ttft += q.ttft_ms;
      tpot += q.tpot_ms;
    }
    const auto n = static_cast<double>(r.requests.size());
    return std::pair<double, double>{ttft / n, tpot / n};
  };
  Simulation fitted(load_scenario(kExample, options()));
  const auto f = means(fitted.run());
  Simulation roofline(load_scenario(kExample, options({{"compute.kind", "roofline"}})));
  const auto r = means(roofline.run());
  EXPECT_NEAR(r.first, f.first, 0.1 * f.first);
  EXPECT_NEAR(r.second, f.second, 0.1 * f.second);
  Simulation profile(load_scenario(kExample, options({{"compute.kind", "profile"}, {"compute.profile.bundle_dir", bundle}})));
  const auto p = means(profile.run());
  EXPECT_NEAR(p.first, f.first, 0.1 * f.first);
  EXPECT_NEAR(p.second, f.second, 0.1 * f.second);
}

}  // namespace
}  // namespace kvsim::cluster
