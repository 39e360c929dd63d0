// Tensor-parallel scenarios: the 70B seed builds one engine replica over the box's four GPUs
// with the per-replica KV capacity vLLM logs, and splits vLLM refuses are input errors.
#include <gtest/gtest.h>

#include <string>

#include "sim/core/error.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/cluster/simulation.hpp"

namespace kvsim::cluster {
using namespace kvsim::scenario;  // NOLINT: the scenarios these tests load and decode
namespace {

const std::string kSeed = std::string(KVSIM_SOURCE_DIR) + "/scenarios/seed/";

LoadOptions with(std::vector<Override> overrides) {
  LoadOptions o;
  o.overrides = std::move(overrides);
  return o;
}

// Four GPUs at tensor_parallel_size 4 make one engine; its KV cache is 8,804 blocks of 16 tokens
// (tests/models/tensor_parallel_test.cpp derives them by hand) = 140,864 tokens.
TEST(TensorParallelScenario, SeventyBSeedIsOneReplicaOfFourGpus) {
  const Simulation sim(load_scenario(kSeed + "4x4090-70b-vram-only.yaml"));
  EXPECT_EQ(sim.info().num_engines, 1);
  EXPECT_EQ(sim.info().num_gpu_blocks, 8804);
  EXPECT_EQ(sim.info().gpu_kv_cache_tokens, 140'864);
}

// At tensor_parallel_size 2 the box holds two replicas, each GPU a half of the model: int4
// weights of 19.9 GB per GPU leave less KV room than a quarter does.
TEST(TensorParallelScenario, TwoReplicasAtTp2) {
  const Simulation sim(load_scenario(
      kSeed + "4x4090-70b-vram-only.yaml",
      with({{"engine.tensor_parallel_size", "2"}, {"engine.max_model_len", "4096"}})));
  EXPECT_EQ(sim.info().num_engines, 2);
  EXPECT_LT(sim.info().gpu_kv_cache_tokens, 140'864);
}

std::string error_of(std::vector<Override> overrides) {
  try {
    const Simulation sim(
        load_scenario(kSeed + "4x4090-70b-vram-only.yaml", with(std::move(overrides))));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// 3 divides neither the box's 4 GPUs nor the 64 heads; 8 exceeds the box; BF16 70B does not fit.
TEST(TensorParallelScenario, RefusedSplitsAreInputErrors) {
  EXPECT_NE(error_of({{"engine.tensor_parallel_size", "3"}}).find("gpus_per_server"),
            std::string::npos);
  EXPECT_NE(error_of({{"engine.tensor_parallel_size", "8"}}).find("engine.tensor_parallel_size"),
            std::string::npos);
  EXPECT_NE(
      error_of({{"engine.tensor_parallel_size", "1"}}).find("no memory is left for the KV cache"),
      std::string::npos);
}

}  // namespace
}  // namespace kvsim::cluster
