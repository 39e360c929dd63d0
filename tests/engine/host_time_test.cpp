// How the host time of a step (models/step_overheads.hpp) adds to its GPU time: overlapped by
// async scheduling (vLLM AsyncScheduler), except for a step scheduled while nothing runs.
#include <gtest/gtest.h>

#include "sim/engine/engine.hpp"
#include "tests/engine/test_support.hpp"

namespace kvsim::engine {
namespace {

// A step with 1 ms of GPU time and 2 ms of host time. With async scheduling the first step after
// idle waits for its host work (3 ms); the step queued behind it overlaps (2 ms, host-bound).
// Without async scheduling every step adds both (3 ms).
class HostHeavy : public models::ComputeModel {
 public:
  models::StepBreakdown step_time(const models::BatchShape& b) const override {
    models::StepBreakdown out;
    if (b.empty()) return out;
    out.dense_s = 1e-3;
    out.overhead_s = 2e-3;
    return out;
  }
  std::string describe() const override { return "host-heavy"; }
};

TEST(StepOverheads, FirstStepAfterIdleWaitsForTheHost) {
  HostHeavy compute;
  for (const bool async : {true, false}) {
    EngineConfig c;
    c.async_scheduling = async;
    Engine e(c, 1000, 8192, compute);
    e.add_request(testing::make_request(1, 100, 8, 1), 0);
    const auto first = e.start(0);
    ASSERT_TRUE(first);
    EXPECT_EQ(*first, from_seconds(3e-3)) << "async " << async;
    const auto second = e.finish_step(*first);
    ASSERT_TRUE(second);
    EXPECT_EQ(*second, from_seconds(async ? 2e-3 : 3e-3)) << "async " << async;
  }
}

}  // namespace
}  // namespace kvsim::engine
