// What a caller may add to Simulation::run (RunControl) must not change any result, and must do
// what it says:
// - the usage sampler: with it, the per-request JSON and the summary JSON are byte-identical to
//   a run without it; its samples stay within the tiers' capacities, link utilisations within
//   [0, 1]; the last sample's tier bytes are what the run's totals say the tiers hold at the end
//   (bytes written less evicted chunks); and over a kind with a single link the utilisations
//   integrate back to the bytes the link carried in the whole run.
// - the stop token: a stop requested from another thread ends the run with RunCancelled before
//   the workload has finished.
#include <gtest/gtest.h>

#include "tests/scenario/small_seed.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <sstream>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/io/sinks.hpp"
#include "sim/io/summary.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/cluster/simulation.hpp"

namespace kvsim::cluster {
using namespace kvsim::scenario;  // NOLINT: the scenarios these tests load and decode
namespace {

const std::string kSource = KVSIM_SOURCE_DIR;

// Llama-3.1-8B in BF16: K and V x 32 layers x 8 KV heads x 128 dims x 2 bytes = 131,072 B per
// token (the model card's shape).
constexpr std::int64_t kKvBytesPerToken = 2LL * 32 * 8 * 128 * 2;

// The seed deployment with a smaller population (small_seed.hpp).
Scenario seed(const std::string& file, std::vector<Override> extra = {}) {
  return test_support::small_seed(file, std::move(extra));
}

struct Printed {
  std::string requests;
  std::string summary;
};

Printed print(const RunResult& r) {
  Printed p;
  std::ostringstream req;
  io::write_requests_json(req, r.requests);
  p.requests = req.str();
  std::ostringstream sum;
  io::write_summary_json(sum, io::summarize(r.requests, r.info), r.info);
  p.summary = sum.str();
  return p;
}

struct Sampled {
  RunResult result;
  std::vector<io::UsageSample> samples;
};

Sampled run_sampled(const Scenario& sc, double interval_s) {
  Sampled s;
  std::stop_source never;  // a stop token that is checked but never requested
  RunControl control;
  control.usage_interval_s = interval_s;
  control.on_usage = [&s](const io::UsageSample& u) { s.samples.push_back(u); };
  control.stop = never.get_token();
  Simulation sim(sc);
  s.result = sim.run({}, {}, control);
  return s;
}

void expect_unchanged_by_sampler(const std::string& file) {
  const Scenario sc = seed(file);
  Simulation plain_sim(sc);
  const Printed plain = print(plain_sim.run());
  for (const double interval : {1.0, 0.0137}) {
    const Sampled sampled = run_sampled(sc, interval);
    const Printed with = print(sampled.result);
    EXPECT_EQ(with.requests, plain.requests) << file << " interval " << interval;
    EXPECT_EQ(with.summary, plain.summary) << file << " interval " << interval;
    EXPECT_FALSE(sampled.samples.empty());
  }
}

TEST(RunControl, SamplerChangesNoResultDram) { expect_unchanged_by_sampler("4x4090-dram.yaml"); }
TEST(RunControl, SamplerChangesNoResultNvmeNet) { expect_unchanged_by_sampler("4x4090-nvme-net.yaml"); }

// Samples every interval of simulated time (the last one at the run's end, possibly shorter),
// nothing held beyond capacity, utilisations in [0, 1].
void expect_sane(const Sampled& s, double interval_s, int tier_instances) {
  const io::RunInfo& info = s.result.info;
  ASSERT_FALSE(s.samples.empty());
  const auto expected_samples = static_cast<std::size_t>(std::ceil(info.simulated_seconds / interval_s));
  EXPECT_EQ(s.samples.size(), expected_samples);
  EXPECT_DOUBLE_EQ(s.samples.back().time_s, info.simulated_seconds);
  const std::int64_t gpu_capacity = (info.num_gpu_blocks - 1) * 16 * kKvBytesPerToken * info.num_engines;
  double last_time = 0;
  for (std::size_t k = 0; k < s.samples.size(); ++k) {
    const auto& u = s.samples[k];
    if (k + 1 < s.samples.size()) {
      EXPECT_NEAR(u.time_s, interval_s * static_cast<double>(k + 1), 1e-9);
    }
    EXPECT_NEAR(u.interval_s, u.time_s - last_time, 1e-9);
    last_time = u.time_s;
    EXPECT_GE(u.gpu_bytes_held, 0);
    EXPECT_LE(u.gpu_bytes_held, gpu_capacity);
    ASSERT_EQ(u.tiers.size(), info.tiers.size());
    for (std::size_t t = 0; t < u.tiers.size(); ++t) {
      EXPECT_EQ(u.tiers[t].kind, info.tiers[t].kind);
      EXPECT_GE(u.tiers[t].bytes_held, 0);
      EXPECT_LE(u.tiers[t].bytes_held, u.tiers[t].capacity_bytes);
      EXPECT_LE(u.tiers[t].capacity_bytes, info.tiers[t].capacity_bytes * tier_instances);
    }
    ASSERT_EQ(u.links.size(), info.links.size());
    for (const auto& l : u.links) {
      EXPECT_GE(l.utilization_forward, 0.0) << l.kind;
      EXPECT_LE(l.utilization_forward, 1.0 + 1e-9) << l.kind;
      EXPECT_GE(l.utilization_backward, 0.0) << l.kind;
      EXPECT_LE(l.utilization_backward, 1.0 + 1e-9) << l.kind;
    }
  }
}

// Every chunk a tier takes in (stores, cascades, promotions: bytes_written) stays until it is
// evicted, so at the end it holds bytes_written - evictions x chunk bytes.
void expect_final_holdings(const Sampled& s, std::int64_t chunk_tokens) {
  const auto& info = s.result.info;
  const auto& last = s.samples.back();
  for (std::size_t t = 0; t < info.tiers.size(); ++t) {
    const std::int64_t expected =
        info.tiers[t].bytes_written - info.tiers[t].evictions * chunk_tokens * kKvBytesPerToken;
    EXPECT_EQ(last.tiers[t].bytes_held, expected) << info.tiers[t].kind;
    EXPECT_GT(last.tiers[t].bytes_held, 0) << info.tiers[t].kind;
  }
}

TEST(RunControl, DramSamplesAreSane) {
  // LMCache's host DRAM tier (256-token chunks) of 128 GiB on the one box.
  const Sampled s = run_sampled(seed("4x4090-dram.yaml"), 1.0);
  expect_sane(s, 1.0, 1);
  expect_final_holdings(s, 256);
  double peak_pcie = 0;
  for (const auto& u : s.samples) {
    for (const auto& l : u.links) peak_pcie = std::max(peak_pcie, l.kind == "pcie" ? l.utilization_backward : 0.0);
  }
  EXPECT_GT(peak_pcie, 0.0);  // the stores crossed the GPUs' PCIe links
}

TEST(RunControl, NvmeNetSamplesAreSaneAndIntegrateToTheLinkTotals) {
  // The network store (native connector: 16-token chunks, one block) behind the box's one NIC.
  const Scenario sc = seed("4x4090-nvme-net.yaml");
  const Sampled s = run_sampled(sc, 1.0);
  expect_sane(s, 1.0, 1);
  expect_final_holdings(s, 16);
  // One box: one NIC link and one store link, so "the busiest link" is that link and
  // sum(utilisation x capacity x interval) is every byte it carried (LinkInfo's totals).
  const double nic_rate = sc.hardware.servers.front().nic.rate.value;
  for (const auto& li : s.result.info.links) {
    if (li.kind != "nic") continue;
    double fwd = 0;
    double bwd = 0;
    for (const auto& u : s.samples) {
      for (const auto& l : u.links) {
        if (l.kind != "nic") continue;
        fwd += l.utilization_forward * nic_rate * u.interval_s;
        bwd += l.utilization_backward * nic_rate * u.interval_s;
      }
    }
    EXPECT_GT(li.bytes_forward, 0);
    EXPECT_NEAR(fwd, static_cast<double>(li.bytes_forward), 1e-6 * static_cast<double>(li.bytes_forward));
    EXPECT_NEAR(bwd, static_cast<double>(li.bytes_backward), 1e-6 * static_cast<double>(li.bytes_backward) + 1);
  }
}

TEST(RunControl, VramOnlySamplesHoldGpuBlocksOnly) {
  const Sampled s = run_sampled(seed("4x4090-vram-only.yaml"), 2.5);
  expect_sane(s, 2.5, 1);
  std::int64_t peak = 0;
  for (const auto& u : s.samples) {
    EXPECT_TRUE(u.tiers.empty());
    EXPECT_TRUE(u.links.empty());
    peak = std::max(peak, u.gpu_bytes_held);
  }
  EXPECT_GT(peak, 0);
  // Every request finished: nothing holds GPU blocks at the end.
  EXPECT_EQ(s.samples.back().gpu_bytes_held, 0);
}

TEST(RunControl, StopFromAnotherThreadCancelsTheRun) {
  // 2,000 conversations: at least 2,000 requests. Once 50 have completed, the run waits until
  // another thread has requested the stop; the run must then end with RunCancelled long before
  // the workload is through.
  const int conversations = 2000;
  const Scenario sc = seed("4x4090-dram.yaml", {{"workload.generation.num_conversations", std::to_string(conversations)},
                                                {"workload.clients.num_clients", "16"},
                                                {"workload.clients.max_active_conversations", "96"}});
  std::stop_source stop;
  std::mutex m;
  std::condition_variable cv;
  bool asked = false;
  bool stopped = false;
  std::thread canceller([&] {
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return asked; });
    stop.request_stop();
    stopped = true;
    cv.notify_all();
  });
  std::atomic<int> completed{0};
  RecordCallback on_record = [&](const io::RequestRecord&) {
    if (++completed != 50) return;
    std::unique_lock lock(m);
    asked = true;
    cv.notify_all();
    cv.wait(lock, [&] { return stopped; });
  };
  RunControl control;
  control.stop = stop.get_token();
  Simulation sim(sc);
  bool cancelled = false;
  try {
    sim.run({}, on_record, control);
  } catch (const RunCancelled&) {
    cancelled = true;
  }
  {
    const std::lock_guard lock(m);
    asked = true;  // lets the canceller end even if the run never reached 50 requests
  }
  cv.notify_all();
  canceller.join();
  EXPECT_TRUE(cancelled);
  EXPECT_GE(completed.load(), 50);
  EXPECT_LT(completed.load(), conversations);
}

TEST(RunControl, RejectsANonPositiveInterval) {
  RunControl control;
  control.on_usage = [](const io::UsageSample&) {};
  control.usage_interval_s = 0;
  Simulation sim(seed("4x4090-vram-only.yaml"));
  EXPECT_THROW(sim.run({}, {}, control), InputError);
}

}  // namespace
}  // namespace kvsim::cluster
