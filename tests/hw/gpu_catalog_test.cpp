// The GPU catalog (scenarios/catalog/gpus.yaml) against docs/sources.md A1/A2 and physical
// bounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "../models/catalog_reader.hpp"
#include "hw/gpu_spec.hpp"
#include "hw/pcie.hpp"

namespace kvsim::hw {
namespace {

using kvsim::testing::Catalog;
using kvsim::testing::parse_quantity;

const Catalog& gpus() {
  static const Catalog c =
      kvsim::testing::read_catalog(std::string(KVSIM_SOURCE_DIR) + "/scenarios/catalog/gpus.yaml");
  return c;
}

// The nine GPUs, each with the GpuSpec keys (num_sms, cuda_name and a measured NCCL sweep where
// known).
TEST(GpuCatalog, HasTheGpusWithAllKeys) {
  const std::set<std::string> expected = {"rtx4090",      "rtx5090",  "l4",   "l40s",        "a100-80g-sxm",
                                          "h100-sxm",     "h200",     "rtx-pro-6000", "rtx-pro-6000-server"};
  std::set<std::string> names;
  for (const auto& [name, e] : gpus()) names.insert(name);
  EXPECT_EQ(names, expected);
  const std::set<std::string> keys = {
      "memory",        "memory_bandwidth", "bf16_dense",
      "fp8_dense",     "host_link.gen",    "host_link.lanes",
      "host_link.h2d", "host_link.d2h",    "host_link.bidirectional_each",
      "p2p",           "nvlink",           "gpudirect",
      "source"};
  for (const auto& [name, e] : gpus()) {
    std::set<std::string> got;
    for (const auto& [k, v] : e) {
      if (k != "num_sms" && k != "cuda_name" && k != "memory_max" && k.rfind("nccl_pair.", 0) != 0)
        got.insert(k);
    }
    EXPECT_EQ(got, keys) << name;
    EXPECT_FALSE(e.at("source").empty()) << name;
  }
}

// Where the catalog gives the most CUDA reports for a card (memory_max), it lies between the
// calibration host's total and the board's memory: the RTX 4090's 24,564 MiB (nvidia-smi).
TEST(GpuCatalog, MemoryMaxBoundsTheReportedTotal) {
  for (const auto& [name, e] : gpus()) {
    if (e.count("memory_max") == 0) continue;
    EXPECT_GE(kvsim::testing::parse_quantity(e.at("memory_max")),
              kvsim::testing::parse_quantity(e.at("memory")))
        << name;
  }
  EXPECT_DOUBLE_EQ(kvsim::testing::parse_quantity(gpus().at("rtx4090").at("memory_max")),
                   24564.0 * 1048576);
}

// The RTX PRO 6000 Server Edition's NCCL sweep (docs/sources.md A10): 24 sizes from 4 KiB to
// 20 MiB, each collective slower than its latency floor at the top, and no faster per byte than
// PCIe 5.0 x16 (63 GB/s per direction) allows: at 2 GPUs an all-reduce of S moves S per direction,
// an all-gather or reduce-scatter of S per GPU moves S.
TEST(GpuCatalog, MeasuredNcclSweepIsPhysical) {
  const auto& e = gpus().at("rtx-pro-6000-server");
  for (const char* c : {"all_reduce_us", "all_gather_us", "reduce_scatter_us"}) {
    const auto bytes = kvsim::testing::numbers(e.at("nccl_pair.bytes"));
    const auto us = kvsim::testing::numbers(e.at(std::string("nccl_pair.") + c));
    ASSERT_EQ(bytes.size(), 24U) << c;
    ASSERT_EQ(us.size(), bytes.size()) << c;
    EXPECT_DOUBLE_EQ(bytes.front(), 4096);
    EXPECT_DOUBLE_EQ(bytes.back(), 20 * 1048576.0);
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      EXPECT_GT(us[i], 5.0) << c << " " << bytes[i];  // no NCCL call under ~5 us
      EXPECT_GE(us[i] * 1e-6, bytes[i] / 63e9) << c << " " << bytes[i];
    }
    EXPECT_GT(us.back(), 10 * us.front()) << c;
  }
}

// The RTX 4090 figures of docs/sources.md A1/A2: 1,008 GB/s, 165.2 TFLOP/s dense BF16 with FP32
// accumulate (half of the 330.3 with FP16 accumulate), PCIe 4.0 x16, no P2P, no GPUDirect.
TEST(GpuCatalog, Rtx4090MatchesA1) {
  const auto& e = gpus().at("rtx4090");
  EXPECT_DOUBLE_EQ(parse_quantity(e.at("memory_bandwidth")), 1008e9);
  EXPECT_DOUBLE_EQ(parse_quantity(e.at("bf16_dense")), 165.2e12);
  EXPECT_DOUBLE_EQ(parse_quantity(e.at("fp8_dense")), 330.3e12);
  EXPECT_EQ(e.at("host_link.gen"), "4");
  EXPECT_EQ(e.at("host_link.lanes"), "16");
  EXPECT_EQ(e.at("p2p"), "false");
  EXPECT_EQ(e.at("gpudirect"), "false");
}

// Physical sanity for every GPU:
//  - memory as CUDA reports it lies within 90-100 % of the marketed size (in GiB);
//  - measured host-link rates lie below the theoretical PCIe rate of the link and above half
//    of it; with both directions busy, no direction is faster than alone;
//  - FP8, where present, is twice BF16 (same accumulate mode) within 2 % (the L40S datasheet
//    gives 362.05 and 733), else 0 (A100);
//  - GeForce cards have neither P2P nor GPUDirect; data-centre cards have GPUDirect.
TEST(GpuCatalog, FiguresArePlausible) {
  const std::map<std::string, double> marketed_gib = {
      {"rtx4090", 24},      {"rtx5090", 32},  {"l4", 24},   {"l40s", 48},
      {"a100-80g-sxm", 80}, {"h100-sxm", 80}, {"h200", 141}, {"rtx-pro-6000", 96},
      {"rtx-pro-6000-server", 96}};
  for (const auto& [name, e] : gpus()) {
    SCOPED_TRACE(name);
    const double mem_gib = parse_quantity(e.at("memory")) / 1073741824.0;
    EXPECT_LE(mem_gib, marketed_gib.at(name));
    EXPECT_GE(mem_gib, 0.9 * marketed_gib.at(name));

    const int gen = std::stoi(e.at("host_link.gen"));
    const int lanes = std::stoi(e.at("host_link.lanes"));
    const double theory = pcie_theoretical_rate(static_cast<PcieGen>(gen), lanes).value;
    const double h2d = parse_quantity(e.at("host_link.h2d"));
    const double d2h = parse_quantity(e.at("host_link.d2h"));
    const double both = parse_quantity(e.at("host_link.bidirectional_each"));
    for (double r : {h2d, d2h}) {
      EXPECT_LT(r, theory);
      EXPECT_GT(r, 0.5 * theory);
    }
    EXPECT_LE(both, std::min(h2d, d2h));
    EXPECT_GT(both, 0);

    const double bf16 = parse_quantity(e.at("bf16_dense"));
    const double fp8 = parse_quantity(e.at("fp8_dense"));
    EXPECT_GT(bf16, 0);
    if (name == "a100-80g-sxm") {
      EXPECT_EQ(fp8, 0);
    } else {
      EXPECT_NEAR(fp8, 2 * bf16, 0.02 * fp8);
    }
    const bool geforce = name.rfind("rtx", 0) == 0 && name.rfind("rtx-pro", 0) != 0;
    EXPECT_EQ(e.at("gpudirect"), geforce ? "false" : "true");
    if (geforce) {
      EXPECT_EQ(e.at("p2p"), "false");
    }
  }
}

}  // namespace
}  // namespace kvsim::hw
