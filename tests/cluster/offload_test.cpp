// KV offload tiers through the whole simulation, checked from first principles: a load's time is
// its bytes over the path's bottleneck, NVMe is slower than DRAM, a slow shared network can lose
// to recomputation, and bytes are conserved across tiers and links.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "sim/cluster/simulation.hpp"
#include "sim/core/error.hpp"
#include "sim/scenario/scenario.hpp"

namespace kvsim::cluster {
using namespace kvsim::scenario;  // NOLINT: the scenarios these tests load and decode
namespace {

const std::string kCatalog = std::string(KVSIM_SOURCE_DIR) + "/scenarios/catalog";
const std::string kSeed = std::string(KVSIM_SOURCE_DIR) + "/scenarios/seed/";

LoadOptions options(std::vector<Override> overrides = {}) {
  LoadOptions o;
  o.catalog_dir = kCatalog;
  o.overrides = std::move(overrides);
  return o;
}

// Two requests with the same 10,240-token prompt (20 Mooncake blocks of 512 tokens), 5 s apart,
// on a server with two RTX 4090s: round robin puts the second on the other GPU, whose prefix
// cache misses, so it loads the prompt from the tier the first one stored it to.
std::string two_gpu_trace_scenario(const std::string& tier_yaml) {
  const std::string trace = ::testing::TempDir() + "/same_prompt_twice.jsonl";
  {
    std::ofstream out(trace);
    std::string ids;
    for (int i = 0; i < 20; ++i) ids += (i ? ", " : "") + std::to_string(i);
    out << "{\"timestamp\": 0, \"input_length\": 10240, \"output_length\": 2, \"hash_ids\": [" << ids << "]}\n";
    out << "{\"timestamp\": 5000, \"input_length\": 10240, \"output_length\": 2, \"hash_ids\": [" << ids << "]}\n";
  }
  return std::string(R"(name: two-gpus
hardware:
  servers:
    - gpus_per_server: 2
      gpu: {preset: rtx4090}
      local_nvme: {count: 1, drive: {preset: samsung_pm9a3}}
model: {preset: llama-3.1-8b}
engine: {max_model_len: 16384}
kv_offload:
  connector: native
  tiers: [)") + tier_yaml + R"(]
workload:
  kind: trace
  trace: {file: )" + trace + R"(}
)";
}

RunResult run_text(const std::string& yaml) {
  Simulation sim(load_scenario_text(yaml, "test.yaml", options()));
  return sim.run();
}

const io::RequestRecord& by_id(const RunResult& r, std::uint64_t id) {
  for (const auto& q : r.requests) {
    if (q.request_id == id) return q;
  }
  throw std::runtime_error("no request " + std::to_string(id));
}

constexpr double kPromptBytes = 10240.0 * 131072.0;  // 1,342,177,280 B of Llama-3.1-8B KV

// From host DRAM the second request's 1.34 GB cross one PCIe 4.0 x16 link at the 4090's
// measured 25 GB/s: 53.7 ms, after which one engine step computes its last token (~17-30 ms).
// Recomputing the prompt instead takes over a second.
TEST(Offload, DramLoadTakesBytesOverPcie) {
  const RunResult r = run_text(two_gpu_trace_scenario("{kind: host_dram, capacity: 16GiB}"));
  ASSERT_EQ(r.requests.size(), 2u);
  const double load_ms = kPromptBytes / 25e9 * 1e3;  // 53.687 ms
  EXPECT_GT(by_id(r, 0).ttft_ms, 1000.0);
  EXPECT_GE(by_id(r, 1).ttft_ms, load_ms);
  EXPECT_LE(by_id(r, 1).ttft_ms, load_ms + 40.0);
  ASSERT_EQ(r.info.tiers.size(), 1u);
  EXPECT_EQ(r.info.tiers[0].hit_tokens, 10240);
  EXPECT_EQ(r.info.tiers[0].bytes_read, static_cast<std::int64_t>(kPromptBytes));
  EXPECT_EQ(r.info.external_hit_tokens, 10240);
}

// From one local PM9A3 (6.5 GB/s read, 80 us to the first byte) the same load takes
// 1.34 GB / 6.3 GB/s (its PCIe 4.0 x4 slot at 80 % of 7.9 GB/s is the bottleneck) = ~213 ms:
// slower than DRAM, still far faster than recomputing.
TEST(Offload, NvmeIsSlowerThanDram) {
  const RunResult dram = run_text(two_gpu_trace_scenario("{kind: host_dram, capacity: 16GiB}"));
  const RunResult nvme = run_text(two_gpu_trace_scenario("{kind: local_nvme, capacity: 100GiB}"));
  const double nvme_ms = by_id(nvme, 1).ttft_ms;
  EXPECT_GT(nvme_ms, by_id(dram, 1).ttft_ms);
  const double floor_ms = kPromptBytes / 6.5e9 * 1e3;  // the drive alone: 206 ms
  EXPECT_GE(nvme_ms, floor_ms);
  EXPECT_LE(nvme_ms, kPromptBytes / (0.8 * 7.877e9) * 1e3 + 40.0);
  EXPECT_LT(nvme_ms, by_id(nvme, 0).ttft_ms);
}

// A network store behind a 25 Gb/s link (~2.9 GB/s), shared by two boxes of four GPUs, serves
// loads slower than recomputing them: mean TTFT above VRAM-only. Behind 200 Gb/s it is faster.
TEST(Offload, SlowSharedStoreLinkCanLoseToRecompute) {
  const std::vector<Override> smaller = {{"hardware.servers.0.count", "2"},
                                         {"workload.generation.num_conversations", "200"},
                                         {"workload.clients.num_clients", "32"},
                                         {"workload.clients.max_active_conversations", "192"}};
  auto run = [&](std::vector<Override> extra) {
    auto o = smaller;
    o.insert(o.end(), extra.begin(), extra.end());
    Simulation sim(load_scenario(kSeed + "multi-box-nvme-net.yaml", options(o)));
    const RunResult r = sim.run();
    double s = 0;
    for (const auto& q : r.requests) s += q.ttft_ms;
    return s / static_cast<double>(r.requests.size());
  };
  const double vram = run({{"kv_offload.connector", "none"}, {"kv_offload.tiers", "[]"}});
  const double fast = run({});
  const double slow = run({{"hardware.remote_store.nic", "2.9GB/s"}});
  EXPECT_LT(fast, vram);
  EXPECT_GT(slow, vram);
}

// Over many seeds with small tiers (constant eviction), for both connectors: the run completes
// (a chunk read before its store finished, or a tier over capacity, would abort it); bytes read
// from each tier equal its hit tokens times the KV bytes per token (native blocks) or whole
// 256-token chunks covering them (LMCache); every load and first-tier store crosses a GPU's
// PCIe link, so PCIe bytes host-to-GPU equal all tier reads and GPU-to-host the DRAM writes
// (less the chunks promoted into DRAM from the remote tier, which never left the host).
TEST(Offload, BytesAreConservedOverManySeeds) {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const bool lmcache = seed % 2 == 0;
    const std::vector<Override> o = {{"seed", std::to_string(seed)},
                                     {"kv_offload.connector", lmcache ? "lmcache" : "native"},
                                     {"workload.generation.num_conversations", "60"},
                                     {"workload.clients.num_clients", "8"},
                                     {"workload.clients.max_active_conversations", "48"},
                                     {"kv_offload.tiers",
                                      "[{kind: host_dram, capacity: 2GiB}, "
                                      "{kind: remote, capacity: 4GiB, eviction: arc}]"}};
    Simulation sim(load_scenario(kSeed + "4x4090-nvme-net.yaml", options(o)));
    const RunResult r = sim.run();
    ASSERT_FALSE(r.requests.empty());
    std::int64_t read = 0;
    std::int64_t hits = 0;
    for (const auto& t : r.info.tiers) {
      if (lmcache) {
        EXPECT_GE(t.bytes_read, t.hit_tokens * 131072) << t.kind << " seed " << seed;
        EXPECT_EQ(t.bytes_read % (256 * 131072), 0) << t.kind << " seed " << seed;
      } else {
        EXPECT_EQ(t.bytes_read, t.hit_tokens * 131072) << t.kind << " seed " << seed;
      }
      read += t.bytes_read;
      hits += t.hit_tokens;
    }
    EXPECT_EQ(hits, r.info.external_hit_tokens);
    ASSERT_EQ(r.info.tiers.size(), 2u);
    EXPECT_GT(r.info.tiers[1].evictions + r.info.tiers[0].evictions, 0);
    for (const auto& l : r.info.links) {
      if (l.kind != "pcie") continue;
      EXPECT_EQ(l.bytes_forward, read) << "seed " << seed;
      EXPECT_EQ(l.bytes_backward, r.info.tiers[0].bytes_written - r.info.tiers[0].bytes_promoted)
          << "seed " << seed;
    }
  }
}

// Configuration errors name the place: a remote tier without a store, a DRAM tier larger than
// the host's memory.
TEST(Offload, TierConfigurationErrors) {
  auto message = [](std::vector<Override> o) {
    try {
      Simulation sim(load_scenario(kSeed + "4x4090-dram.yaml", options(std::move(o))));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message({{"kv_offload.tiers.0.capacity", "512GiB"}}).find("more than the host's DRAM"),
            std::string::npos);
  EXPECT_NE(message({{"kv_offload.tiers.0.kind", "remote"}, {"hardware.remote_store", "~"}})
                .find("needs hardware.remote_store"),
            std::string::npos);
}

}  // namespace
}  // namespace kvsim::cluster

namespace kvsim::cluster {
namespace {

// Routing across the 4 GPUs of a box, with conversations that fit in the GPUs' KV caches:
// round robin sends a conversation's next turn to another GPU three times in four, where its
// history is not cached, so its hit rate is far below that of session affinity or prefix-aware
// routing, which send the turn where the history is.
TEST(Routing, AffinityAndPrefixAwareKeepConversationsWhereTheirKvIs) {
  auto hit_rate = [](const std::string& policy) {
    const std::vector<Override> o = {
        {"routing.policy", policy},
        {"workload.generation.num_conversations", "120"},
        {"workload.clients.max_active_conversations", "32"},
        {"workload.generation.prompt_input.prefix_num_tokens",
         "{distribution: lognormal, average: 2000, max: 6000}"}};
    Simulation sim(load_scenario(kSeed + "4x4090-vram-only.yaml", options(o)));
    const RunResult r = sim.run();
    return static_cast<double>(r.info.prefix_cache_hits) / static_cast<double>(r.info.prefix_cache_queries);
  };
  const double rr = hit_rate("round_robin");
  EXPECT_GT(hit_rate("session_affinity"), rr + 0.2);
  EXPECT_GT(hit_rate("prefix_aware"), rr + 0.2);
  EXPECT_GT(hit_rate("least_loaded"), 0.0);
}

}  // namespace
}  // namespace kvsim::cluster

namespace kvsim::cluster {
namespace {

// LMCache (256-token chunks, synchronous): the second request's 10,240 tokens come from DRAM in
// the step that computes it, before its forward pass: TTFT = 61.0 ms of load + that step. The
// hit counts whole chunks from the prompt's start and leaves the last token to compute, so
// 10,239 tokens are loaded tokens; the 40 chunks move whole (1.34 GB).
TEST(Lmcache, SynchronousLoadOfWholeChunks) {
  std::string yaml = two_gpu_trace_scenario("{kind: host_dram, capacity: 16GiB}");
  yaml.replace(yaml.find("connector: native"), std::string("connector: native").size(), "connector: lmcache");
  const RunResult r = run_text(yaml);
  ASSERT_EQ(r.requests.size(), 2u);
  const double load_ms = kPromptBytes / (0.88 * 25e9) * 1e3;  // LMCache's kernel copies (below)
  EXPECT_GE(by_id(r, 1).ttft_ms, load_ms);
  EXPECT_LE(by_id(r, 1).ttft_ms, load_ms + 40.0);
  ASSERT_EQ(r.info.tiers.size(), 1u);
  EXPECT_EQ(r.info.tiers[0].hit_tokens, 10239);
  EXPECT_EQ(r.info.tiers[0].bytes_read, static_cast<std::int64_t>(kPromptBytes));
}

// How long each tier transfer took, by kind ("load", "store"), in ms, and its bytes.
struct Timed {
  std::string kind;
  double ms = 0;
  std::int64_t bytes = 0;
};
std::vector<Timed> transfers(const std::string& yaml) {
  Simulation sim(load_scenario_text(yaml, "test.yaml", options()));
  std::vector<Timed> out;
  RunControl control;
  control.on_transfer = [&](const io::TransferEvent& t) {
    out.push_back(
        {std::string(t.kind), static_cast<double>(t.end_ns - t.start_ns) * 1e-6, t.bytes});
  };
  sim.run({}, {}, control);
  return out;
}

// LMCache gathers the paged KV into pinned host memory and back with a kernel, not the copy
// engines: 0.88 of the link's rate (LMCache issue 4626: 22.1 of 25.07 GB/s on a PCIe 4.0 L20).
// The 4090's 25 GB/s H2D and 26.5 GB/s D2H become 22.0 and 23.32 GB/s for LMCache; the native
// connector's DMA copies keep the full rates.
TEST(Lmcache, CopiesRunBelowTheCopyEngines) {
  std::string yaml = two_gpu_trace_scenario("{kind: host_dram, capacity: 16GiB}");
  const auto rate = [](const Timed& t) { return static_cast<double>(t.bytes) / (t.ms * 1e-3); };
  for (const bool lmcache : {false, true}) {
    std::string y = yaml;
    if (lmcache)
      y.replace(y.find("connector: native"), std::string("connector: native").size(),
                "connector: lmcache");
    int loads = 0;
    int stores = 0;
    for (const Timed& t : transfers(y)) {
      // Transfers alone on the link (the two requests are 5 s apart) and large enough that the
      // first-byte latency (none for host DRAM) does not count.
      if (t.bytes < 100'000'000) continue;
      const double expected = (t.kind == "load" ? 25e9 : 26.5e9) * (lmcache ? 0.88 : 1.0);
      EXPECT_NEAR(rate(t) / expected, 1.0, 1e-3) << t.kind << (lmcache ? " lmcache" : " native");
      (t.kind == "load" ? loads : stores) += 1;
    }
    EXPECT_GE(loads, 1);
    EXPECT_GE(stores, 1);
  }
}

// Only whole chunks are stored: a 600-token prompt stores 2 chunks (512 tokens), never the
// 88-token tail; with native 16-token blocks it stores 37 blocks (592 tokens).
TEST(Lmcache, StoresWholeChunksOnly) {
  const std::string trace = ::testing::TempDir() + "/one_600.jsonl";
  {
    std::ofstream out(trace);
    out << "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 4, \"hash_ids\": [1, 2]}\n";
  }
  auto written = [&](const std::string& connector) {
    const std::string yaml = R"(name: one
hardware:
  servers: [{gpu: {preset: rtx4090}}]
model: {preset: llama-3.1-8b}
engine: {max_model_len: 8192}
kv_offload: {connector: )" + connector + R"(, tiers: [{kind: host_dram, capacity: 4GiB}]}
workload: {kind: trace, trace: {file: )" + trace + R"(}}
)";
    return run_text(yaml).info.tiers.at(0).bytes_written;
  };
  EXPECT_EQ(written("lmcache"), 512 * 131072);
  EXPECT_EQ(written("native"), 592 * 131072);
}

}  // namespace
}  // namespace kvsim::cluster

namespace kvsim::cluster {
namespace {

// Promotion: two servers of two GPUs, a DRAM tier per server and one remote store. Four
// requests with the same prompt, round robin: the 1st computes it on server 0 (stored to its
// DRAM, cascaded to the store); the 2nd, on server 0's other GPU, loads it from DRAM; the 3rd,
// on server 1, finds it only in the store and loads it over the network, which leaves a copy in
// server 1's DRAM; the 4th, on server 1's other GPU, loads it from that DRAM.
TEST(Offload, RemoteHitsArePromotedIntoDram) {
  const std::string trace = ::testing::TempDir() + "/four_same.jsonl";
  {
    std::ofstream out(trace);
    for (int i = 0; i < 4; ++i) {
      out << "{\"timestamp\": " << i * 5000
          << ", \"input_length\": 4096, \"output_length\": 2, \"hash_ids\": [1, 2, 3, 4, 5, 6, 7, 8]}\n";
    }
  }
  const std::string yaml = R"(name: promote
hardware:
  servers:
    - count: 2
      gpus_per_server: 2
      gpu: {preset: rtx4090}
      nic: {rate: 23GB/s, latency: 2us}
  remote_store: {preset: pliops-xdp-lightningai}
model: {preset: llama-3.1-8b}
engine: {max_model_len: 8192}
routing: {policy: round_robin}
kv_offload:
  connector: native
  tiers: [{kind: host_dram, capacity: 8GiB}, {kind: remote, capacity: 64GiB}]
workload: {kind: trace, trace: {file: )" + trace + R"(}}
)";
  const RunResult r = run_text(yaml);
  ASSERT_EQ(r.requests.size(), 4u);
  ASSERT_EQ(r.info.tiers.size(), 2u);
  const std::int64_t loaded = 4096;  // 256 blocks, the whole prompt
  EXPECT_EQ(r.info.tiers[0].hit_tokens, 2 * loaded);  // 2nd and 4th requests
  EXPECT_EQ(r.info.tiers[1].hit_tokens, loaded);      // 3rd request
  EXPECT_EQ(r.info.tiers[0].bytes_promoted, loaded * 131072);
}

}  // namespace
}  // namespace kvsim::cluster

namespace kvsim::cluster {
namespace {

// Host memory bandwidth bounds a DRAM tier when it is below PCIe's: at 5 GB/s the 1.34 GB load
// takes 268 ms instead of 54 ms.
TEST(Offload, HostDramBandwidthBoundsLoads) {
  std::string yaml = two_gpu_trace_scenario("{kind: host_dram, capacity: 16GiB}");
  const std::string gpu = "      gpu: {preset: rtx4090}\n";
  yaml.replace(yaml.find(gpu), gpu.size(), gpu + "      host: {dram_bandwidth: 5GB/s}\n");
  const RunResult r = run_text(yaml);
  const double load_ms = kPromptBytes / 5e9 * 1e3;
  EXPECT_GE(by_id(r, 1).ttft_ms, load_ms);
  EXPECT_LE(by_id(r, 1).ttft_ms, load_ms + 40.0);
}

}  // namespace
}  // namespace kvsim::cluster
