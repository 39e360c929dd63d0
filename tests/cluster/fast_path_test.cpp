// The engine's exact fast paths (on by default; LoadOptions::fast_paths = false, hence
// EngineConfig::fast_paths, turns them off) must not change a single result: for many scenarios and
// seeds, the per-request JSON, the summary JSON, the step records and the usage samples of a run
// with the fast paths equal, byte for byte, those of the plain step-by-step run. The cases cover
// the example, the seed deployment's variants (VRAM only, host DRAM, network NVMe, decode blocks
// stored, LMCache), both scheduling modes, a Mooncake trace on several servers with two tiers, and
// a preemption-heavy engine with a tiny KV cache. Decode stretches (steps ended without the event
// queue, counts written back late) are among the fast paths. The plain run also keeps every block
// id bound for good, while the fast run reclaims the ids no one holds (BlockIds, from 16,384 ids
// on), so the comparison checks the reclaiming too.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "sim/io/sinks.hpp"
#include "sim/io/summary.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/cluster/simulation.hpp"
#include "sim/workload/driver.hpp"

namespace kvsim::cluster {
using namespace kvsim::scenario;  // NOLINT: the scenarios these tests load and decode
namespace {

const std::string kSource = KVSIM_SOURCE_DIR;

struct Output {
  std::string requests;
  std::string summary;
  std::string steps_csv;  // every step record, in the order on_step saw them
  std::string usage_csv;  // usage samples every 0.5 simulated seconds
  std::int64_t steps = 0;
  std::int64_t stretch_steps = 0;
  std::int64_t skipped_events = 0;
};

// Of all fast runs: steps taken inside decode stretches, and step ends handled without the
// event queue (both must have happened for the comparisons to cover them).
std::int64_t g_stretch_steps = 0;
std::int64_t g_skipped_events = 0;

using DriverFactory = std::function<std::unique_ptr<workload::Driver>()>;

Output run(const std::string& relative, const std::vector<Override>& overrides, bool plain,
           const DriverFactory& driver = {}) {
  LoadOptions o;
  o.catalog_dir = kSource + "/scenarios/catalog";
  o.overrides = overrides;
  o.fast_paths = !plain;
  const Scenario sc = load_scenario(kSource + "/" + relative, o);
  EXPECT_EQ(sc.engine.fast_paths, !plain);
  Simulation sim(sc, driver ? driver() : nullptr);
  Output out;
  std::ostringstream steps;
  io::TimeseriesCsvWriter step_writer(steps);
  std::ostringstream usage;
  io::UsageCsvWriter usage_writer(usage);
  RunControl control;
  control.usage_interval_s = 0.5;
  control.on_usage = [&](const io::UsageSample& u) { usage_writer.write(u); };
  const RunResult r = sim.run([&](const io::StepRecord& st) { step_writer.write(st); }, {}, control);
  out.steps_csv = steps.str();
  out.usage_csv = usage.str();
  out.stretch_steps = r.info.stretch_steps;
  out.skipped_events = r.info.skipped_events;
  std::ostringstream req;
  io::write_requests_json(req, r.requests);
  out.requests = req.str();
  std::ostringstream sum;
  io::write_summary_json(sum, io::summarize(r.requests, r.info), r.info);
  out.summary = sum.str();
  out.steps = r.info.engine_steps;
  return out;
}

void expect_identical(const std::string& relative, std::vector<Override> overrides, const DriverFactory& driver = {}) {
  for (const std::uint64_t seed : {0ULL, 7ULL}) {
    auto with_seed = overrides;
    with_seed.push_back({"seed", std::to_string(seed)});
    const Output fast = run(relative, with_seed, false, driver);
    const Output plain = run(relative, with_seed, true, driver);
    ASSERT_GT(plain.steps, 0) << relative;
    EXPECT_EQ(fast.requests, plain.requests) << relative << " seed " << seed;
    EXPECT_EQ(fast.summary, plain.summary) << relative << " seed " << seed;
    EXPECT_TRUE(fast.steps_csv == plain.steps_csv) << relative << " seed " << seed << ": step records differ";
    EXPECT_TRUE(fast.usage_csv == plain.usage_csv) << relative << " seed " << seed << ": usage samples differ";
    EXPECT_EQ(plain.stretch_steps, 0);
    EXPECT_EQ(plain.skipped_events, 0);
    g_stretch_steps += fast.stretch_steps;
    g_skipped_events += fast.skipped_events;
  }
}

// A smaller population than the seed deployment's 400 conversations keeps the debug build quick
// while the KV cache stays under pressure (48 live conversations of ~3-20k tokens per box).
const std::vector<Override> kSmallSeed = {{"workload.generation.num_conversations", "64"},
                                          {"workload.clients.num_clients", "8"},
                                          {"workload.clients.max_active_conversations", "48"}};

TEST(FastPath, ExampleIsIdentical) {
  g_stretch_steps = 0;
  g_skipped_events = 0;
  expect_identical("scenarios/examples/rtx4090-llama3.1-8b-multiturn.yaml", {});
  // One engine: most decode steps fall in stretches, and most of those end before any other
  // event, without the queue.
  EXPECT_GT(g_stretch_steps, 0);
  EXPECT_GT(g_skipped_events, 0);
}

TEST(FastPath, SeedVramOnlyIsIdentical) { expect_identical("scenarios/seed/4x4090-vram-only.yaml", kSmallSeed); }

TEST(FastPath, SeedDramIsIdentical) { expect_identical("scenarios/seed/4x4090-dram.yaml", kSmallSeed); }

TEST(FastPath, SeedNvmeNetIsIdentical) { expect_identical("scenarios/seed/4x4090-nvme-net.yaml", kSmallSeed); }

// Sends the same requests to two engines at the same instants (round robin, in pairs): the
// engines step in lockstep, their step ends tie to the nanosecond, and the queue's
// insertion-order tie break decides which ends first. Each pair's prompts differ in content, not
// length; every other pair one answer is longer, so one engine steps alone for a while. A new
// pair goes out when a request completes.
class LockstepDriver : public workload::Driver {
 public:
  void start(workload::WorkloadContext& ctx) override { send_pair(ctx); }
  void on_wake(std::int64_t /*tag*/, workload::WorkloadContext& /*ctx*/) override {}
  void on_complete(const workload::Completion& /*c*/, workload::WorkloadContext& ctx) override {
    if (sent_ < 24) send_pair(ctx);
  }
  std::vector<std::string> describe() const override { return {"lockstep pairs"}; }

 private:
  void send_pair(workload::WorkloadContext& ctx) {
    const std::int64_t prompt = 100 + 37 * (sent_ % 5);
    const std::int64_t output = 60 + 50 * (sent_ % 3);
    for (int k = 0; k < 2; ++k) {
      workload::RequestSpec spec;
      append_tokens(spec.prompt, content_id(ContentKind::kUnique, static_cast<std::uint64_t>(sent_)), prompt);
      // Every other pair, the second request answers longer: its engine goes on alone.
      spec.output_tokens = output + (k == 1 && sent_ % 4 == 1 ? 90 : 0);
      spec.output_content_id = content_id(ContentKind::kAssistantTurn, static_cast<std::uint64_t>(sent_));
      spec.input_num_tokens = prompt;
      ctx.submit(std::move(spec));
      ++sent_;
    }
  }
  int sent_ = 0;
};

TEST(FastPath, LockstepEnginesAreIdentical) {
  // Two engines whose step ends tie: a step of one may end without the queue only strictly
  // before the other's (a tie goes to the end queued first).
  g_skipped_events = 0;
  expect_identical("scenarios/examples/rtx4090-llama3.1-8b-multiturn.yaml",
                   {{"hardware.servers.0.gpus_per_server", "2"}, {"routing.policy", "round_robin"}},
                   [] { return std::make_unique<LockstepDriver>(); });
  EXPECT_GT(g_skipped_events, 0);
}

TEST(FastPath, DecodeBlocksStoredIsIdentical) {
  // With decode blocks stored too (offload_prompt_only false) a decode stretch ends where a
  // request fills a block the connector must store.
  auto o = kSmallSeed;
  o.push_back({"kv_offload.offload_prompt_only", "false"});
  g_stretch_steps = 0;
  expect_identical("scenarios/seed/4x4090-dram.yaml", o);
  EXPECT_GT(g_stretch_steps, 0);
}

TEST(FastPath, LmcacheIsIdentical) {
  // Synchronous loads, started with the step that admits the request: with async scheduling
  // when the queued plan starts, without it at once.
  auto o = kSmallSeed;
  o.push_back({"kv_offload.connector", "lmcache"});
  expect_identical("scenarios/seed/4x4090-dram.yaml", o);
  o.push_back({"engine.async_scheduling", "false"});
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
}  // namespace kvsim::cluster
