// Shards: K/N parsing, Slurm job arrays (MIN and STEP), Kubernetes Indexed Jobs, and that the
// shards of a sweep are disjoint and cover it.
#include "sim/planner/shard.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "sim/core/error.hpp"

namespace kvsim::planner {
namespace {

EnvLookup env_of(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(Shard, ParsesKOverN) {
  const Shard s = parse_shard("2/5");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 5);
  EXPECT_THROW(parse_shard("5/5"), InputError);
  EXPECT_THROW(parse_shard("1/0"), InputError);
  EXPECT_THROW(parse_shard("1"), InputError);
  EXPECT_THROW(parse_shard("a/2"), InputError);
}

TEST(Shard, ShardsAreDisjointAndCoverTheSweep) {
  // Every index of a 23-run sweep lies in exactly one of 4 shards (i mod 4).
  for (std::int64_t i = 0; i < 23; ++i) {
    int holders = 0;
    for (std::int64_t k = 0; k < 4; ++k) holders += Shard{k, 4, ""}.holds(i) ? 1 : 0;
    EXPECT_EQ(holders, 1) << i;
    EXPECT_TRUE(Shard({i % 4, 4, ""}).holds(i));
  }
}

TEST(Shard, FlagWinsOverTheEnvironment) {
  const auto s =
      resolve_shard(std::string("1/3"), std::nullopt, env_of({{"SLURM_ARRAY_TASK_ID", "0"}}));
  EXPECT_EQ(s.index, 1);
  EXPECT_EQ(s.count, 3);
  EXPECT_THROW(resolve_shard(std::string("1/3"), 4, env_of({})), InputError);
}

TEST(Shard, SlurmArrayCountsFromItsMinimumInSteps) {
  // --array=1-3: tasks 1, 2, 3 are shards 0, 1, 2 of 3.
  auto s = resolve_shard(std::nullopt, std::nullopt,
                         env_of({{"SLURM_ARRAY_TASK_ID", "3"},
                                 {"SLURM_ARRAY_TASK_MIN", "1"},
                                 {"SLURM_ARRAY_TASK_COUNT", "3"}}));
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 3);
  // --array=10-20:5: tasks 10, 15, 20 are shards 0, 1, 2.
  s = resolve_shard(std::nullopt, std::nullopt,
                    env_of({{"SLURM_ARRAY_TASK_ID", "15"},
                            {"SLURM_ARRAY_TASK_MIN", "10"},
                            {"SLURM_ARRAY_TASK_STEP", "5"},
                            {"SLURM_ARRAY_TASK_COUNT", "3"}}));
  EXPECT_EQ(s.index, 1);
  EXPECT_EQ(s.count, 3);
  // Without a count there is nothing to divide by.
  EXPECT_THROW(resolve_shard(std::nullopt, std::nullopt, env_of({{"SLURM_ARRAY_TASK_ID", "0"}})),
               InputError);
  // --shard-count supplies it.
  s = resolve_shard(std::nullopt, 2, env_of({{"SLURM_ARRAY_TASK_ID", "1"}}));
  EXPECT_EQ(s.index, 1);
  EXPECT_EQ(s.count, 2);
}

TEST(Shard, KubernetesIndexedJobNeedsTheCount) {
  auto s = resolve_shard(std::nullopt, 4, env_of({{"JOB_COMPLETION_INDEX", "3"}}));
  EXPECT_EQ(s.index, 3);
  EXPECT_EQ(s.count, 4);
  s = resolve_shard(std::nullopt, std::nullopt,
                    env_of({{"JOB_COMPLETION_INDEX", "0"}, {"KVSIM_SHARD_COUNT", "2"}}));
  EXPECT_EQ(s.count, 2);
  EXPECT_THROW(resolve_shard(std::nullopt, std::nullopt, env_of({{"JOB_COMPLETION_INDEX", "0"}})),
               InputError);
  EXPECT_THROW(resolve_shard(std::nullopt, 4, env_of({{"JOB_COMPLETION_INDEX", "4"}})), InputError);
}

TEST(Shard, NoShardIsTheWholeSweep) {
  const auto s = resolve_shard(std::nullopt, std::nullopt, env_of({}));
  EXPECT_EQ(s.index, 0);
  EXPECT_EQ(s.count, 1);
}

}  // namespace
}  // namespace kvsim::planner
