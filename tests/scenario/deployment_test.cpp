// Checks of a scenario as a whole (sim/scenario/deployment.hpp), made while decoding: each
// problem names the file, line and column of the key it is about (or the --set that placed it),
// and a scenario built in code meets the same checks.
#include "sim/scenario/deployment.hpp"

#include <gtest/gtest.h>

#include <string>

#include "sim/core/error.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/scenario/fixture_text.hpp"

namespace kvsim::scenario {
namespace {

const std::string& kCatalog = testing::kFixtureCatalog;

// A box of two RTX 4090s with a DRAM tier; the line numbers below are this file's.
const std::string kBase = testing::fixture_scenario_text("deployment.yaml");

LoadOptions options(std::vector<std::string> sets = {}) {
  LoadOptions o;
  o.catalog_dir = kCatalog;
  for (const auto& s : sets) o.overrides.push_back(parse_override(s));
  return o;
}

// The one diagnostic a load gives (the test fails when it loads or gives several).
Diagnostic problem_of(const std::string& yaml, const LoadOptions& o = options()) {
  try {
    load_scenario_text(yaml, "t.yaml", o);
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().size(), 1u) << e.what();
    return e.diagnostics().front();
  }
  ADD_FAILURE() << "the scenario loaded";
  return {};
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(DeploymentChecks, TheBaseLoads) {
  const Scenario s = load_scenario_text(kBase, "t.yaml", options());
  EXPECT_FALSE(check_deployment(s).has_value());
  const EngineSizing sizing = size_engines(s);
  EXPECT_EQ(sizing.gpus, 2);
  EXPECT_EQ(sizing.replicas, 2);
  EXPECT_GT(sizing.kv.num_blocks, 2);
}

TEST(DeploymentChecks, SchedulingPolicyAtItsLine) {
  const Diagnostic d =
      problem_of(replace(kBase, "scheduling_policy: fcfs", "scheduling_policy: priority"));
  EXPECT_EQ(d.file, "t.yaml");
  EXPECT_EQ(d.line, 9);
  EXPECT_EQ(d.column, 22);  // the value
  EXPECT_EQ(d.path, "engine.scheduling_policy");
  EXPECT_NE(d.message.find("only 'fcfs' is modelled"), std::string::npos) << d.message;
}

// Sequence slots fewer than the running requests: each running request holds a sequence.
TEST(DeploymentChecks, PrefixCacheSequencesBelowMaxNumSeqs) {
  const Diagnostic d = problem_of(
      replace(kBase, "scheduling_policy: fcfs",
              "scheduling_policy: fcfs\n  max_num_seqs: 4\n  prefix_cache_sequences: 2"));
  EXPECT_EQ(d.path, "engine.prefix_cache_sequences");
  EXPECT_EQ(d.line, 11);
  EXPECT_NE(d.message.find("at least max_num_seqs (4)"), std::string::npos) << d.message;
  const Scenario ok = load_scenario_text(
      replace(kBase, "scheduling_policy: fcfs",
              "scheduling_policy: fcfs\n  max_num_seqs: 4\n  prefix_cache_sequences: 4"),
      "t.yaml", options());
  EXPECT_FALSE(check_deployment(ok).has_value());
}

// engine.prepare_max_running gates synchronous loads and sequence erases: with the native
// connector and vLLM's block cache there is nothing to gate. With lmcache, or with sequence
// slots, it loads.
TEST(DeploymentChecks, PrepareMaxRunningNeedsSomethingToGate) {
  const Diagnostic d = problem_of(replace(kBase, "scheduling_policy: fcfs",
                                          "scheduling_policy: fcfs\n  prepare_max_running: 1"));
  EXPECT_EQ(d.path, "engine.prepare_max_running");
  EXPECT_EQ(d.line, 10);
  EXPECT_NE(d.message.find("needs kv_offload.connector lmcache or engine.prefix_cache_sequences"),
            std::string::npos)
      << d.message;
  for (const std::string& with :
       {std::string("prefix_cache_sequences: 256"), std::string("max_num_seqs: 4")}) {
    std::string text = replace(kBase, "scheduling_policy: fcfs",
                               "scheduling_policy: fcfs\n  prepare_max_running: 1\n  " + with);
    if (with.rfind("max_num_seqs", 0) == 0)
      text = replace(text, "connector: native", "connector: lmcache");
    const Scenario ok = load_scenario_text(text, "t.yaml", options());
    EXPECT_FALSE(check_deployment(ok).has_value()) << with;
    EXPECT_EQ(ok.engine.prepare_max_running, 1);
  }
}

TEST(DeploymentChecks, TensorParallelAtItsLine) {
  const Diagnostic d =
      problem_of(replace(kBase, "tensor_parallel_size: 1", "tensor_parallel_size: 3"));
  EXPECT_EQ(d.line, 10);
  EXPECT_EQ(d.path, "engine.tensor_parallel_size");
  EXPECT_NE(d.message.find("must divide hardware.servers.0.gpus_per_server (2)"), std::string::npos)
      << d.message;
}

TEST(DeploymentChecks, TierLargerThanDramAtItsCapacity) {
  const Diagnostic d = problem_of(replace(kBase, "capacity: 16GiB", "capacity: 128GiB"));
  EXPECT_EQ(d.line, 16);
  EXPECT_EQ(d.path, "kv_offload.tiers.0.capacity");
  EXPECT_NE(d.message.find("more than the host's DRAM"), std::string::npos) << d.message;
}

TEST(DeploymentChecks, AKeyLeftAtItsDefaultIsReportedAtItsSection) {
  // No remote_store key at all: the problem is the tier's, reported at the tiers' list.
  const Diagnostic d = problem_of(replace(kBase, "kind: host_dram", "kind: remote"));
  EXPECT_EQ(d.path, "kv_offload.tiers");
  EXPECT_EQ(d.line, 15);  // the list's first item
  EXPECT_NE(d.message.find("needs hardware.remote_store"), std::string::npos) << d.message;
}

TEST(DeploymentChecks, AnOverrideIsNamedInsteadOfALine) {
  const Diagnostic d = problem_of(kBase, options({"engine.num_gpu_blocks_override=1"}));
  EXPECT_EQ(d.path, "engine.num_gpu_blocks_override");
  EXPECT_EQ(d.line, 0);
  EXPECT_NE(d.file.find("--set engine.num_gpu_blocks_override=1"), std::string::npos) << d.file;
  EXPECT_NE(d.message.find("leaves no block"), std::string::npos) << d.message;
}

TEST(DeploymentChecks, AScenarioBuiltInCodeMeetsTheSameChecks) {
  Scenario s = load_scenario_text(kBase, "t.yaml", options());
  s.engine.data_parallel_size = 4;  // 1 x 4 ranks on a 2-GPU server
  const auto p = check_deployment(s);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->path, "engine.data_parallel_size");
  s = load_scenario_text(kBase, "t.yaml", options());
  s.kv_offload.chunk_tokens = 24;  // not a multiple of the 16-token block
  ASSERT_TRUE(check_deployment(s).has_value());
  EXPECT_EQ(check_deployment(s)->path, "kv_offload.chunk_tokens");
  s = load_scenario_text(kBase, "t.yaml", options());
  s.hardware.servers.clear();
  ASSERT_TRUE(check_deployment(s).has_value());
  EXPECT_EQ(check_deployment(s)->path, "hardware.servers");
}

}  // namespace
}  // namespace kvsim::scenario
