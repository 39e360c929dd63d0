// Pure helpers behind the charts: CDF steps, thinning, the engines' summed queues, the usage
// samples as lines, what-if value lists, and the tier variants a scenario gets (the planner's).
// Expected values are worked out by hand.
#include "gui/models/run_data.hpp"

#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "sim/planner/variants.hpp"
#include "sim/scenario/scenario.hpp"

namespace kvsim::gui {
namespace {

TEST(CdfPoints, StepsUpByOneOverN) {
  const auto p = cdf_points({10, 20, 30, 40});
  const std::vector<std::pair<double, double>> want = {
      {10, 0.25}, {20, 0.5}, {30, 0.75}, {40, 1.0}};
  EXPECT_EQ(p, want);
  EXPECT_TRUE(cdf_points({}).empty());
}

TEST(CdfPoints, ThinsByRankAndKeepsTheMaximum) {
  std::vector<double> v;
  for (int i = 1; i <= 10; ++i) v.push_back(i);
  // At most 4 points: stride ceil(10/4) = 3 -> ranks 1, 4, 7, 10.
  const auto p = cdf_points(v, 4);
  const std::vector<std::pair<double, double>> want = {{1, 0.1}, {4, 0.4}, {7, 0.7}, {10, 1.0}};
  ASSERT_EQ(p.size(), want.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    EXPECT_DOUBLE_EQ(p[i].first, want[i].first);
    EXPECT_DOUBLE_EQ(p[i].second, want[i].second);
  }
}

TEST(QueueSeries, SumsTheLatestStateOfEveryEngine) {
  auto step = [](double t, int server, int running, int waiting, double kv) {
    io::StepRecord s;
    s.time_s = t;
    s.server = server;
    s.running = running;
    s.waiting = waiting;
    s.kv_usage = kv;
    return s;
  };
  const auto q =
      queue_series({step(0, 0, 2, 1, 0.5), step(1, 1, 3, 0, 0.1), step(2, 0, 1, 0, 0.3)});
  ASSERT_EQ(q.size(), 3U);
  // t=1: engine 0 still (2, 1, 0.5), engine 1 (3, 0, 0.1) -> 5 running, 1 waiting, mean 0.3.
  EXPECT_EQ(q[1].running, 5);
  EXPECT_EQ(q[1].waiting, 1);
  EXPECT_DOUBLE_EQ(q[1].kv_usage, 0.3);
  // t=2: engine 0 now (1, 0, 0.3) -> 4 running, 0 waiting, mean 0.2.
  EXPECT_EQ(q[2].running, 4);
  EXPECT_EQ(q[2].waiting, 0);
  EXPECT_DOUBLE_EQ(q[2].kv_usage, 0.2);
}

TEST(ThinSteps, KeepsEveryNthAndTheLast) {
  std::vector<io::StepRecord> steps(10);
  for (int i = 0; i < 10; ++i) steps[static_cast<std::size_t>(i)].time_s = i;
  const auto t = thin_steps(steps, 4);  // stride 3: 0, 3, 6, 9
  ASSERT_EQ(t.size(), 4U);
  EXPECT_EQ(t.back().time_s, 9);
  EXPECT_EQ(t[1].time_s, 3);
}

TEST(ParseValues, ListsAndRanges) {
  EXPECT_EQ(parse_values("2:8:4", true), (std::vector<std::string>{"2", "4", "6", "8"}));
  EXPECT_EQ(parse_values(" 1, 2 ,32GiB", false), (std::vector<std::string>{"1", "2", "32GiB"}));
  EXPECT_EQ(parse_values("0.5:1:3", false), (std::vector<std::string>{"0.5", "0.75", "1"}));
  EXPECT_THROW(parse_values("2:8", true), InputError);
  EXPECT_THROW(parse_values(" , ", true), InputError);
}

TEST(TierVariants, NetworkStoreOnlyWhenTheHardwareHasOne) {
  const auto single = scenario::load_scenario(
      KVSIM_SOURCE_DIR "/scenarios/examples/rtx4090-llama3.1-8b-multiturn.yaml");
  const auto v1 = tier_variants(single);
  ASSERT_EQ(v1.size(), 2U);  // no remote store in the example
  EXPECT_EQ(v1[0].name, "vram-only");
  EXPECT_EQ(v1[1].name, "dram");
  const auto net = scenario::load_scenario(KVSIM_SOURCE_DIR "/scenarios/seed/4x4090-nvme-net.yaml");
  const auto v2 = tier_variants(net);
  ASSERT_EQ(v2.size(), 3U);
  EXPECT_EQ(v2[2].name, "nvme-net");
  // The planner's variants, less its no-reuse baseline, with the same overrides.
  const auto planner_variants = planner::default_variants(net);
  ASSERT_EQ(planner_variants.size(), 4U);
  EXPECT_EQ(planner_variants[3].name, "no-reuse");
  for (std::size_t i = 0; i < v2.size(); ++i) {
    EXPECT_EQ(v2[i].name, planner_variants[i].name);
    ASSERT_EQ(v2[i].overrides.size(), planner_variants[i].overrides.size());
    for (std::size_t k = 0; k < v2[i].overrides.size(); ++k) {
      EXPECT_EQ(v2[i].overrides[k].path, planner_variants[i].overrides[k].path);
      EXPECT_EQ(v2[i].overrides[k].value, planner_variants[i].overrides[k].value);
    }
  }
}

io::UsageSample usage(double t, double interval, std::int64_t gpu, std::int64_t dram, double pcie_fwd,
                      double pcie_bwd) {
  io::UsageSample u;
  u.time_s = t;
  u.interval_s = interval;
  u.gpu_bytes_held = gpu;
  u.tiers.push_back({"host_dram", dram, 64'000'000'000});
  u.links.push_back({"pcie", pcie_fwd, pcie_bwd});
  return u;
}

TEST(UsageLines, TierBytesInGbGpuFirst) {
  const std::vector<io::UsageSample> u = {usage(1, 1, 2'000'000'000, 0, 0, 0),
                                          usage(2, 1, 3'500'000'000, 1'250'000'000, 0, 0)};
  const auto lines = tier_usage_lines(u);
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_EQ(lines[0].name, "gpu");
  EXPECT_EQ(lines[1].name, "host_dram");
  const std::vector<std::pair<double, double>> gpu = {{1, 2.0}, {2, 3.5}};
  const std::vector<std::pair<double, double>> dram = {{1, 0.0}, {2, 1.25}};
  EXPECT_EQ(lines[0].points, gpu);
  EXPECT_EQ(lines[1].points, dram);
  EXPECT_TRUE(tier_usage_lines({}).empty());
}

TEST(UsageLines, LinkPercentIsTheBusierDirectionAveragedOverGroups) {
  // Five samples, at most 2 points: groups of ceil(5/2) = 3 samples and 2 samples.
  // Busier direction per sample: 0.2, 0.6, 0.1, 0.5, 0.3 with intervals 1, 1, 2, 1, 0.5.
  const std::vector<io::UsageSample> u = {usage(1, 1, 0, 0, 0.2, 0.1), usage(2, 1, 0, 0, 0.1, 0.6),
                                          usage(4, 2, 0, 0, 0.1, 0.0), usage(5, 1, 0, 0, 0.5, 0.5),
                                          usage(5.5, 0.5, 0, 0, 0.0, 0.3)};
  const auto lines = link_usage_lines(u, 2);
  ASSERT_EQ(lines.size(), 1U);
  EXPECT_EQ(lines[0].name, "pcie");
  ASSERT_EQ(lines[0].points.size(), 2U);
  // (0.2 x 1 + 0.6 x 1 + 0.1 x 2) / 4 s = 25 %, at t = 4; (0.5 x 1 + 0.3 x 0.5) / 1.5 s = 43.3 %.
  EXPECT_DOUBLE_EQ(lines[0].points[0].first, 4.0);
  EXPECT_NEAR(lines[0].points[0].second, 25.0, 1e-12);
  EXPECT_DOUBLE_EQ(lines[0].points[1].first, 5.5);
  EXPECT_NEAR(lines[0].points[1].second, 100.0 * 0.65 / 1.5, 1e-12);
  // Unthinned: one point per sample, in percent.
  const auto all = link_usage_lines(u);
  ASSERT_EQ(all[0].points.size(), 5U);
  EXPECT_NEAR(all[0].points[1].second, 60.0, 1e-12);
}

}  // namespace
}  // namespace kvsim::gui
