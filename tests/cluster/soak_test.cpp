// Scale soak: 64 servers x 8 RTX 4090s (512 engines) under every connector, tier stack, routing
// policy and scheduling mode, over 20 seeds each. The property: every request the clients send
// finishes, none twice, and the run ends (no engine idles with requests it could schedule).
//
// The expected count is the benchmark's, independent of the engine: with one active
// conversation per client and early_stop off, each client takes a conversation from the queue
// only when its previous one ended, so every conversation runs to its end (docs/workloads.md
// "Stopping"); a conversation of 6 messages sends 3 requests, with 1, 3 and 5 messages.
// Small GPU pools (num_gpu_blocks_override), a common 1,000-token prefix shared by every
// conversation and small tiers force evictions, loads of the same chunks by many engines at
// once (pins on the shared tiers) and preemptions.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "sim/scenario/scenario.hpp"
#include "sim/cluster/simulation.hpp"

namespace kvsim::cluster {
using namespace kvsim::scenario;  // NOLINT: the scenarios these tests load and decode
namespace {

const std::string kCatalog = std::string(KVSIM_SOURCE_DIR) + "/scenarios/catalog";
constexpr int kSeeds = 20;
constexpr int kConversations = 128;
constexpr int kRequestsPerConversation = 3;

struct Config {
  const char* connector;  // none, native, lmcache
  const char* tiers;      // YAML flow list
  const char* routing;
  bool async;
};

const char* const kDram = "[{kind: host_dram, capacity: 1GiB}]";
const char* const kNvme = "[{kind: local_nvme, capacity: 2GiB}]";
const char* const kRemote = "[{kind: remote, capacity: 8GiB}]";
const char* const kAll =
    "[{kind: host_dram, capacity: 512MiB}, {kind: local_nvme, capacity: 1GiB}, {kind: remote, capacity: 8GiB}]";

std::string scenario_yaml(const Config& c) {
  return std::string(R"(name: soak
hardware:
  servers:
    - count: 64
      gpus_per_server: 8
      gpu: {preset: rtx4090}
      host: {dram: 256GiB}
      nic: {rate: 23GB/s, latency: 2us}
      local_nvme: {count: 1, drive: {preset: samsung_pm9a3}}
  remote_store: {preset: pliops-xdp-lightningai}
  switch_latency: 1us
model: {preset: llama-3.1-8b}
compute: {kind: roofline}
engine: {max_model_len: 8192, num_gpu_blocks_override: 600, async_scheduling: )") +
         (c.async ? "true" : "false") + R"(}
kv_offload:
  connector: )" + c.connector + R"(
  tiers: )" + (std::string(c.connector) == "none" ? "[]" : c.tiers) + R"(
routing: {policy: )" + c.routing + R"(}
workload:
  kind: multi_turn
  generation:
    num_conversations: )" + std::to_string(kConversations) + R"(
    text_files: [pg1184.txt]
    prompt_input:
      num_turns: {distribution: constant, value: 6}
      common_prefix_num_tokens: {distribution: constant, value: 1000}
      prefix_num_tokens: {distribution: lognormal, average: 2500, max: 6000}
      num_tokens: {distribution: uniform, min: 50, max: 150}
    prompt_output:
      num_tokens: {distribution: uniform, min: 10, max: 40}
  clients:
    num_clients: 64
    max_active_conversations: 64
    early_stop: false
)";
}

void PrintTo(const Config& c, std::ostream* os) {
  *os << c.connector << " " << c.tiers << " " << c.routing << (c.async ? " async" : " sync");
}

class Soak : public ::testing::TestWithParam<Config> {};

TEST_P(Soak, EveryRequestFinishesOnceOverSeeds) {
  LoadOptions o;
  o.catalog_dir = kCatalog;
  Scenario base = load_scenario_text(scenario_yaml(GetParam()), "soak.yaml", o);
  for (int seed = 0; seed < kSeeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Scenario s = base;
    s.seed = static_cast<std::uint64_t>(seed);
    RunResult r;
    ASSERT_NO_THROW(r = Simulation(s).run());
    ASSERT_EQ(r.requests.size(), static_cast<std::size_t>(kConversations * kRequestsPerConversation));
    // Each conversation's three turns, each exactly once.
    std::map<std::string, std::vector<int>> turns;
    for (const auto& q : r.requests) {
      EXPECT_GT(q.output_num_tokens, 0);
      turns[q.conversation_id].push_back(q.input_num_turns);
    }
    ASSERT_EQ(turns.size(), static_cast<std::size_t>(kConversations));
    for (auto& [id, t] : turns) {
      std::sort(t.begin(), t.end());
      EXPECT_EQ(t, (std::vector<int>{1, 3, 5})) << id;
    }
  }
}

std::string config_name(const ::testing::TestParamInfo<Config>& info) {
  const Config& c = info.param;
  std::string tiers = c.tiers == kDram ? "Dram" : c.tiers == kNvme ? "Nvme" : c.tiers == kRemote ? "Remote" : "AllTiers";
  if (std::string(c.connector) == "none") tiers = "Gpu";
  std::string routing = c.routing;
  std::string r;
  bool up = true;
  for (const char ch : routing) {
    if (ch == '_') {
      up = true;
      continue;
    }
    r += up ? static_cast<char>(ch - 'a' + 'A') : ch;
    up = false;
  }
  return std::string(c.connector) + tiers + r + (c.async ? "Async" : "Sync");
}

// Every connector with every tier stack; every routing policy with each connector; async and
// sync with each connector and stack.
INSTANTIATE_TEST_SUITE_P(
    Scale, Soak,
    ::testing::Values(Config{"none", "", "session_affinity", true}, Config{"none", "", "round_robin", false},
                      Config{"none", "", "least_loaded", true}, Config{"none", "", "prefix_aware", false},
                      Config{"native", kDram, "session_affinity", true}, Config{"native", kDram, "round_robin", false},
                      Config{"native", kNvme, "least_loaded", true}, Config{"native", kNvme, "prefix_aware", false},
                      Config{"native", kRemote, "session_affinity", true},
                      Config{"native", kRemote, "round_robin", true},
                      Config{"native", kRemote, "least_loaded", false},
                      Config{"native", kRemote, "prefix_aware", true},
                      Config{"native", kAll, "session_affinity", false}, Config{"native", kAll, "round_robin", true},
                      Config{"lmcache", kDram, "round_robin", true}, Config{"lmcache", kDram, "session_affinity", false},
                      Config{"lmcache", kNvme, "prefix_aware", true}, Config{"lmcache", kNvme, "least_loaded", false},
                      Config{"lmcache", kRemote, "session_affinity", true},
                      Config{"lmcache", kRemote, "round_robin", false},
                      Config{"lmcache", kAll, "least_loaded", true}, Config{"lmcache", kAll, "prefix_aware", false}),
    config_name);

// The reproducer of a lost wake-up: an idle engine whose only waiting request was deferred
// because another engine's load pinned a chunk on the shared remote tier was never woken when
// the pin dropped ("N request(s) never finished"). The seed network-NVMe scenario at 64 x 8.
TEST(SoakRegression, IdleEngineDeferredOnAPinnedRemoteChunkIsWoken) {
  LoadOptions o;
  o.catalog_dir = kCatalog;
  o.overrides = {{"hardware.servers.0.count", "64"},
                 {"hardware.servers.0.gpus_per_server", "8"},
                 {"workload.generation.num_conversations", "256"},
                 {"workload.clients.num_clients", "64"},
                 {"workload.clients.max_active_conversations", "256"}};
  const Scenario s = load_scenario(std::string(KVSIM_SOURCE_DIR) + "/scenarios/seed/4x4090-nvme-net.yaml", o);
  RunResult r;
  ASSERT_NO_THROW(r = Simulation(s).run());
  EXPECT_GT(r.requests.size(), 256u);
}

}  // namespace
}  // namespace kvsim::cluster
