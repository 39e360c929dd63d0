// The engine's exact fast paths (on by default; KVSIM_PLAIN_STEPS=1 at construction turns them
// off) must not change a single result: for many scenarios and seeds, the per-request JSON and
// the summary JSON of a run with the fast paths equal, byte for byte, those of the plain
// step-by-step run. The cases cover the example, the seed deployment's variants (VRAM only, host
// DRAM, network NVMe, LMCache), both scheduling modes, a Mooncake trace on several servers with
// two tiers, and a preemption-heavy engine with a tiny KV cache. The plain run also keeps every block id bound
// for good, while the fast run reclaims the ids no one holds (BlockIds, from 16,384 ids on), so
// the comparison checks the reclaiming too.
#include <gtest/gtest.h>
#include <stdlib.h>  // setenv, unsetenv (POSIX)

#include <sstream>
#include <string>
#include <vector>

#include "kvsim/io/sinks.hpp"
#include "kvsim/io/summary.hpp"
#include "kvsim/scenario/scenario.hpp"
#include "kvsim/scenario/simulation.hpp"

namespace kvsim::scenario {
namespace {

const std::string kSource = KVSIM_SOURCE_DIR;

struct Output {
  std::string requests;
  std::string summary;
  std::int64_t steps = 0;
};

Output run(const std::string& relative, const std::vector<Override>& overrides, bool plain) {
  LoadOptions o;
  o.catalog_dir = kSource + "/scenarios/catalog";
  o.overrides = overrides;
  const Scenario sc = load_scenario(kSource + "/" + relative, o);
  if (plain) {
    setenv("KVSIM_PLAIN_STEPS", "1", 1);
  } else {
    unsetenv("KVSIM_PLAIN_STEPS");
  }
  Simulation sim(sc);
  unsetenv("KVSIM_PLAIN_STEPS");
  const RunResult r = sim.run();
  Output out;
  std::ostringstream req;
  io::write_requests_json(req, r.requests);
  out.requests = req.str();
  std::ostringstream sum;
  io::write_summary_json(sum, io::summarize(r.requests, r.info), r.info);
  out.summary = sum.str();
  out.steps = r.info.engine_steps;
  return out;
}

void expect_identical(const std::string& relative, std::vector<Override> overrides) {
  for (const std::uint64_t seed : {0ULL, 7ULL}) {
    auto with_seed = overrides;
    with_seed.push_back({"seed", std::to_string(seed)});
    const Output fast = run(relative, with_seed, false);
    const Output plain = run(relative, with_seed, true);
    ASSERT_GT(plain.steps, 0) << relative;
    EXPECT_EQ(fast.requests, plain.requests) << relative << " seed " << seed;
    EXPECT_EQ(fast.summary, plain.summary) << relative << " seed " << seed;
  }
}

// A smaller population than the seed deployment's 400 conversations keeps the debug build quick
// while the KV cache stays under pressure (48 live conversations of ~3-20k tokens per box).
const std::vector<Override> kSmallSeed = {{"workload.generation.num_conversations", "64"},
                                          {"workload.clients.num_clients", "8"},
                                          {"workload.clients.max_active_conversations", "48"}};

TEST(FastPath, ExampleIsIdentical) {
  expect_identical("scenarios/examples/rtx4090-llama3.1-8b-multiturn.yaml", {});
}

TEST(FastPath, SeedVramOnlyIsIdentical) { expect_identical("scenarios/seed/4x4090-vram-only.yaml", kSmallSeed); }

TEST(FastPath, SeedDramIsIdentical) { expect_identical("scenarios/seed/4x4090-dram.yaml", kSmallSeed); }

TEST(FastPath, SeedNvmeNetIsIdentical) { expect_identical("scenarios/seed/4x4090-nvme-net.yaml", kSmallSeed); }

TEST(FastPath, LmcacheIsIdentical) {
  auto o = kSmallSeed;
  o.push_back({"kv_offload.connector", "lmcache"});
  expect_identical("scenarios/seed/4x4090-dram.yaml", o);
}

TEST(FastPath, SynchronousSchedulingIsIdentical) {
  // Without async scheduling a decode step holds one placeholder instead of two, and blocks
  // filled while decoding are cached at the next step's allocation: the example (next turns hit
  // them) and the seed with host DRAM.
  expect_identical("scenarios/examples/rtx4090-llama3.1-8b-multiturn.yaml", {{"engine.async_scheduling", "false"}});
  auto o = kSmallSeed;
  o.push_back({"engine.async_scheduling", "false"});
  expect_identical("scenarios/seed/4x4090-dram.yaml", o);
}

TEST(FastPath, MooncakeTraceOnManyServersIsIdentical) {
  // The first 600 requests of the conversation trace, twice as fast, on eight boxes with DRAM
  // and a shared network store.
  expect_identical("scenarios/bench/mooncake-8-servers.yaml",
                   {{"workload.trace.max_requests", "600"}, {"workload.trace.time_scale", "0.5"}});
}

TEST(FastPath, PreemptionHeavySmallKvIsIdentical) {
  // 200 blocks (3,200 tokens) for 8 clients with ~1.5-8k-token histories: constant preemption
  // and head-of-line blocking, with and without a DRAM tier behind the GPU.
  const std::vector<Override> small = {{"engine.num_gpu_blocks_override", "200"},
                                       {"engine.max_model_len", "3000"},
                                       {"workload.generation.num_conversations", "48"},
                                       {"workload.clients.max_active_conversations", "24"}};
  expect_identical("scenarios/examples/rtx4090-llama3.1-8b-multiturn.yaml", small);
  auto dram = small;
  dram.push_back({"hardware.servers.0.host.dram", "64GiB"});
  dram.push_back({"kv_offload.connector", "native"});
  dram.push_back({"kv_offload.tiers", "[{kind: host_dram, capacity: 16GiB}]"});
  expect_identical("scenarios/examples/rtx4090-llama3.1-8b-multiturn.yaml", dram);
}

}  // namespace
}  // namespace kvsim::scenario
