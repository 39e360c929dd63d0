// Ring collectives over the GPUs of a tensor-parallel group (hw/collective.hpp) against hand
// calculations.
#include "hw/collective.hpp"

#include <gtest/gtest.h>

#include "sim/core/error.hpp"

namespace kvsim::hw {
namespace {

GpuSpec rtx4090() {
  GpuSpec g;
  g.name = "rtx4090";
  g.host_link.h2d = BytesPerSec{25e9};
  g.host_link.d2h = BytesPerSec{26.5e9};
  g.host_link.bidirectional_each = BytesPerSec{13e9};
  g.p2p = false;
  return g;
}

// Four RTX 4090s without P2P: every hop is staged through host memory, each GPU's PCIe link
// busy both ways, B = 13 GB/s; each hop crosses PCIe twice, 2 x 5.7 us; one call 8.4 us.
// A 2,048-token prefill of Llama-3.1-70B all-reduces 2,048 x 8,192 x 2 B = 33,554,432 B:
//   8.4 us + 2 x 3 x 11.4 us + 2 x 3/4 x 33,554,432 B / 13 GB/s
//   = 8.4 + 68.4 us + 50,331,648 / 13e9 s = 76.8 us + 3,871.665 us = 3,948.465 us.
TEST(Collective, AllReduceOverFourGeForceGpusThroughHostMemory) {
  const CollectiveLink link = collective_link(rtx4090(), 4);
  EXPECT_EQ(link.path, CollectivePath::kHostStaged);
  EXPECT_DOUBLE_EQ(link.rate_bytes_per_s, 13e9);
  EXPECT_DOUBLE_EQ(link.hop_latency_s, 11.4e-6);
  EXPECT_NEAR(nccl_all_reduce_s(33'554'432, link), 3'948.465e-6, 1e-9);
}

// A decode step of 32 sequences all-reduces 32 x 8,192 x 2 B = 524,288 B: latency dominates,
// 76.8 us + 1.5 x 524,288 / 13e9 s = 76.8 + 60.495 us = 137.295 us.
TEST(Collective, SmallMessagesAreLatencyBound) {
  const CollectiveLink link = collective_link(rtx4090(), 4);
  EXPECT_NEAR(nccl_all_reduce_s(524'288, link), 137.295e-6, 1e-9);
}

// Host memory carries every staged byte twice (in and out) for each of the k GPUs: with 70 GB/s
// of DRAM bandwidth and 4 GPUs, B = 70 / (2 x 4) = 8.75 GB/s, below the 13 GB/s of PCIe.
TEST(Collective, HostMemoryBandwidthCapsTheStagedRate) {
  EXPECT_DOUBLE_EQ(collective_link(rtx4090(), 4, BytesPerSec{70e9}).rate_bytes_per_s, 8.75e9);
  EXPECT_DOUBLE_EQ(collective_link(rtx4090(), 4, BytesPerSec{200e9}).rate_bytes_per_s, 13e9);
}

// NVLink (H100 SXM: 450 GB/s per direction) and PCIe peer-to-peer (L40S: both directions of
// PCIe busy, 13 GB/s, one crossing per hop).
TEST(Collective, NvlinkAndPcieP2pPaths) {
  GpuSpec h100 = rtx4090();
  h100.p2p = true;
  h100.nvlink = BytesPerSec{450e9};
  const CollectiveLink nv = collective_link(h100, 8);
  EXPECT_EQ(nv.path, CollectivePath::kNvlink);
  // 8.4 us + 14 x 3.4 us + 2 x 7/8 x 1 GB / 450 GB/s = 8.4 + 47.6 + 3,888.889 us.
  EXPECT_NEAR(nccl_all_reduce_s(1e9, nv), 3'944.889e-6, 1e-9);

  GpuSpec l40s = rtx4090();
  l40s.p2p = true;
  const CollectiveLink p2p = collective_link(l40s, 2);
  EXPECT_EQ(p2p.path, CollectivePath::kPcieP2p);
  // 8.4 us + 2 x 5.7 us + 2 x 1/2 x 13 MB / 13 GB/s = 19.8 + 1,000 us.
  EXPECT_NEAR(nccl_all_reduce_s(13e6, p2p), 1'019.8e-6, 1e-9);
}

// All-gather of the logits: k - 1 steps each moving one GPU's share. 64 sequences x 128,256
// vocabulary x 2 B = 16,416,768 B over four 4090s: 8.4 us + 3 x 11.4 us + 3/4 x 16,416,768 /
// 13e9 s = 42.6 us + 947.121 us = 989.721 us.
TEST(Collective, AllGatherOfLogits) {
  EXPECT_NEAR(nccl_all_gather_s(16'416'768, collective_link(rtx4090(), 4)), 989.721e-6, 1e-9);
}

// One GPU has nothing to exchange; zero ranks is an input error.
TEST(Collective, OneGpuCostsNothing) {
  const CollectiveLink one = collective_link(rtx4090(), 1);
  EXPECT_EQ(nccl_all_reduce_s(1e9, one), 0.0);
  EXPECT_EQ(nccl_all_gather_s(1e9, one), 0.0);
  EXPECT_THROW(collective_link(rtx4090(), 0), InputError);
}

// vLLM's choice of all-reduce (custom_all_reduce.py): two RTX PRO 6000 over PCIe with P2P at
// 50.9 GB/s per direction run the custom kernel one-shot below 8 MiB: 8 us + S / B (a 2,048-token
// step of Llama-3.1-8B: 2,048 x 4,096 x 2 B = 16,777,216 B is above it, so NCCL's ring:
// 8.4 us + 2 x 5.7 us + 16,777,216 / 50.9e9 s). Without P2P (RTX 4090) and with four PCIe-only
// GPUs it is always NCCL's ring.
TEST(Collective, VllmPicksCustomAllReduceOnTwoP2pGpus) {
  GpuSpec pro = rtx4090();
  pro.p2p = true;
  pro.host_link.bidirectional_each = BytesPerSec{50.9e9};
  const CollectiveLink two = collective_link(pro, 2);
  EXPECT_TRUE(two.custom_all_reduce);
  const double decode = 64 * 4096 * 2.0;  // 64 decode tokens
  EXPECT_NEAR(vllm_all_reduce_s(decode, two), 8e-6 + decode / 50.9e9, 1e-12);
  EXPECT_NEAR(vllm_all_reduce_s(16'777'216, two), 8.4e-6 + 2 * 5.7e-6 + 16'777'216 / 50.9e9, 1e-12);
  const CollectiveLink four = collective_link(pro, 4);
  EXPECT_FALSE(four.custom_all_reduce);
  EXPECT_DOUBLE_EQ(vllm_all_reduce_s(decode, four), nccl_all_reduce_s(decode, four));
  const CollectiveLink geforce = collective_link(rtx4090(), 2);
  EXPECT_FALSE(geforce.custom_all_reduce);
  EXPECT_DOUBLE_EQ(vllm_all_reduce_s(decode, geforce), nccl_all_reduce_s(decode, geforce));
  // Four NVLink GPUs: custom, one-shot below 512 KiB (each reads 3 peers), two-shot above.
  GpuSpec h100 = pro;
  h100.nvlink = BytesPerSec{450e9};
  const CollectiveLink nv = collective_link(h100, 4);
  EXPECT_TRUE(nv.custom_all_reduce);
  EXPECT_NEAR(vllm_all_reduce_s(1024 * 256, nv), 8e-6 + 3 * 1024 * 256 / 450e9, 1e-12);
  EXPECT_NEAR(vllm_all_reduce_s(4 * 1024 * 1024, nv), 8e-6 + 1.5 * 4 * 1024 * 1024 / 450e9, 1e-12);
}

// A measured pair (GpuSpec::nccl_pair) replaces the ring formulas for two GPUs: linear between
// measured sizes, the smallest size's time below it, the last slope above the largest. Sizes as
// nccl-tests counts them: all_gather and reduce_scatter per GPU, so a gathered result of
// 2 x 1 MiB reads the 1 MiB entry.
TEST(Collective, MeasuredPairReplacesTheRingForTwoGpus) {
  GpuSpec pro = rtx4090();
  pro.p2p = true;
  pro.host_link.bidirectional_each = BytesPerSec{50.9e9};
  pro.nccl_pair.bytes = {4096, 1048576, 8388608};
  pro.nccl_pair.all_reduce_us = {12, 40, 240};
  pro.nccl_pair.all_gather_us = {10, 45, 277};
  pro.nccl_pair.reduce_scatter_us = {9, 49, 324};
  const CollectiveLink two = collective_link(pro, 2);
  ASSERT_TRUE(two.uses_measured());
  EXPECT_NEAR(nccl_all_reduce_s(1048576, two), 40e-6, 1e-12);
  EXPECT_NEAR(nccl_all_reduce_s(100, two), 12e-6, 1e-12);  // below the sweep: its floor
  // Halfway between 1 MiB and 8 MiB: (40 + 240) / 2 us.
  EXPECT_NEAR(nccl_all_reduce_s((1048576 + 8388608) / 2.0, two), 140e-6, 1e-12);
  // Past the sweep: 240 us + (240 - 40) / 7 MiB x 8 MiB = 240 + 228.571 us.
  EXPECT_NEAR(nccl_all_reduce_s(2 * 8388608.0, two), 240e-6 + 200e-6 / 7 * 8, 1e-12);
  EXPECT_NEAR(nccl_all_gather_s(2 * 1048576.0, two), 45e-6, 1e-12);
  EXPECT_NEAR(nccl_reduce_scatter_s(2 * 8388608.0, two), 324e-6, 1e-12);
  // vLLM's custom all-reduce still runs below 8 MiB; NCCL (measured) at and above.
  EXPECT_NEAR(vllm_all_reduce_s(1048576, two), 8e-6 + 1048576 / 50.9e9, 1e-12);
  EXPECT_NEAR(vllm_all_reduce_s(8388608, two), 240e-6, 1e-12);
  // Four GPUs: the pair's measurement does not apply; the ring does.
  const CollectiveLink four = collective_link(pro, 4);
  EXPECT_FALSE(four.uses_measured());
  EXPECT_NEAR(nccl_all_reduce_s(13e6, four), 8.4e-6 + 6 * (5.7e-6 + 13e6 / (4 * 50.9e9)), 1e-12);
  // Without a measurement a reduce-scatter takes as long as the all-gather of the same size.
  EXPECT_DOUBLE_EQ(nccl_reduce_scatter_s(13e6, four), nccl_all_gather_s(13e6, four));
}

}  // namespace
}  // namespace kvsim::hw
