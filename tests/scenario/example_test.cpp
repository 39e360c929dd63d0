// The example scenarios load; the first one users read says what its comments claim.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "sim/core/error.hpp"
#include "sim/scenario/scenario.hpp"

namespace kvsim::scenario {
namespace {

namespace fs = std::filesystem;

const std::string kExample =
    std::string(KVSIM_SOURCE_DIR) + "/scenarios/examples/rtx4090-llama3.1-8b-multiturn.yaml";
const std::string kTestCatalog = std::string(KVSIM_TEST_DATA_DIR) + "/fixtures/scenarios/catalog";
const std::string kRealCatalog = std::string(KVSIM_SOURCE_DIR) + "/scenarios/catalog";

// Against the test catalog, so the assertions hold whatever the real catalog holds.
TEST(Example, Rtx4090MultiTurnLoadsWithItsStatedSettings) {
  LoadOptions o;
  o.catalog_dir = kTestCatalog;
  const Scenario s = load_scenario(kExample, o);
  EXPECT_EQ(s.name, "rtx4090-llama3.1-8b-multiturn");
  ASSERT_EQ(s.hardware.servers.size(), 1u);
  EXPECT_EQ(s.hardware.servers[0].count, 1);
  EXPECT_EQ(s.hardware.servers[0].gpus_per_server, 1);
  EXPECT_EQ(s.hardware.servers[0].gpu.name, "rtx4090");
  EXPECT_EQ(s.model.name, "llama-3.1-8b");
  EXPECT_EQ(s.model.dtype, models::DType::kBf16);
  // vllm serve defaults for a 24 GB card.
  EXPECT_EQ(s.engine.max_num_batched_tokens, 2048);
  EXPECT_EQ(s.engine.max_num_seqs, 256);
  EXPECT_EQ(s.engine.block_size, 16);
  EXPECT_TRUE(s.engine.enable_prefix_caching);
  EXPECT_TRUE(s.engine.enable_chunked_prefill);
  EXPECT_EQ(s.engine.gpu_memory_utilization, 0.9);
  EXPECT_EQ(s.engine.max_model_len, 32768);
  // The comments' arithmetic: 2 x 32 x 8 x 128 x 2 B = 128 KiB per token, so one 32,768-token
  // sequence needs 4 GiB and one 131,072-token sequence 16 GiB.
  EXPECT_EQ(s.model.kv_bytes_per_token().value, 128 * 1024);
  EXPECT_EQ(s.model.kv_bytes_per_token().value * s.engine.max_model_len, 4LL << 30);
  EXPECT_EQ(s.model.kv_bytes_per_token().value * s.model.max_position_embeddings, 16LL << 30);
  // The default generate_multi_turn.json.
  ASSERT_TRUE(s.workload.generation.has_value());
  const auto& g = *s.workload.generation;
  EXPECT_EQ(g.num_conversations, 24);
  EXPECT_EQ(g.num_turns.kind, workload::DistKind::kUniform);
  EXPECT_EQ(g.num_turns.min, 12);
  EXPECT_EQ(g.num_turns.max, 18);
  EXPECT_EQ(g.common_prefix_num_tokens.value, 500);
  EXPECT_EQ(g.prefix_num_tokens.kind, workload::DistKind::kLognormal);
  EXPECT_EQ(g.prefix_num_tokens.average, 1000);
  EXPECT_EQ(g.prefix_num_tokens.max, 5000);
  EXPECT_EQ(g.num_tokens.min, 120);
  EXPECT_EQ(g.num_tokens.max, 160);
  EXPECT_EQ(g.output_num_tokens.min, 80);
  EXPECT_EQ(g.output_num_tokens.max, 120);
  EXPECT_EQ(s.workload.clients.num_clients, 8);
  EXPECT_TRUE(s.engine.async_scheduling);
  EXPECT_EQ(s.workload.clients.max_active_conversations, 24);
  // The resolved form loads back to the same scenario.
  const Scenario again = load_scenario_text(s.resolved_yaml, "resolved.yaml", o);
  EXPECT_TRUE(scenario_differences(s, again).empty());
}

// With the project's own catalog, found by walking up from the scenario file.
TEST(Example, EveryExampleLoadsWithTheProjectCatalog) {
  ASSERT_TRUE(fs::exists(kRealCatalog + "/gpus.yaml") && fs::exists(kRealCatalog + "/models.yaml"))
      << "the repository's catalog is missing: " << kRealCatalog;
  // Every catalog entry decodes with the same tables.
  const Catalog catalog = load_catalog(kRealCatalog);
  EXPECT_EQ(catalog.gpus.count("rtx4090"), 1u);
  EXPECT_EQ(catalog.models.count("llama-3.1-8b"), 1u);
  int loaded = 0;
  for (const auto& entry :
       fs::directory_iterator(fs::path(KVSIM_SOURCE_DIR) / "scenarios/examples")) {
    if (entry.path().extension() != ".yaml") continue;
    LoadOptions o;
    o.catalog_dir = kRealCatalog;
    try {
      const Scenario s = load_scenario(entry.path().string(), o);
      // The catalog's citation strings survive the resolved YAML.
      const Scenario again = load_scenario_text(s.resolved_yaml, "resolved.yaml", o);
      EXPECT_TRUE(scenario_differences(s, again).empty()) << entry.path();
      ++loaded;
    } catch (const InputError& e) {
      ADD_FAILURE() << e.what();
    }
  }
  EXPECT_GE(loaded, 1);
  // The catalog search finds the project catalog from the example's folder.
  EXPECT_EQ(fs::path(find_catalog_dir(kExample)), fs::path(kRealCatalog).lexically_normal());
  LoadOptions o;
  o.catalog_dir = kRealCatalog;
  const Scenario s = load_scenario(kExample, o);
  EXPECT_EQ(s.hardware.servers[0].gpu.name, "rtx4090");
  EXPECT_EQ(s.model.num_layers, 32);
}

}  // namespace
}  // namespace kvsim::scenario
