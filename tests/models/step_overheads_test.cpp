// What a served step costs besides its kernels (models/step_overheads.hpp): which launches run in
// a CUDA graph, the gaps and the host time, each checked against its equation by hand.
#include "models/step_overheads.hpp"

#include <gtest/gtest.h>

#include <memory>

#include "sim/core/error.hpp"

namespace kvsim::models {
namespace {

// A step of 100 us of dense kernels, 10 us of attention, 5 us of logits, with Llama-3.1-8B's
// launch counts (32 x 8 + 2 forward, 32 attention, 5 logits).
StepBreakdown kernels() {
  StepBreakdown b;
  b.dense_s = 100e-6;
  b.attention_s = 10e-6;
  b.lm_head_s = 5e-6;
  b.forward_kernels = 258;
  b.attention_kernels = 32;
  b.logits_kernels = 5;
  return b;
}

BatchShape decodes(int n) {
  BatchShape b;
  b.decode_contexts.assign(static_cast<std::size_t>(n), 1000);
  return b;
}

BatchShape mixed(std::int64_t chunk, int n) {
  BatchShape b = decodes(n);
  b.prefills.push_back({chunk, 0});
  return b;
}

class Fixed : public ComputeModel {
 public:
  StepBreakdown step_time(const BatchShape& b) const override { return b.empty() ? StepBreakdown{} : kernels(); }
  std::string describe() const override { return "fixed"; }
};

// vLLM 0.19 (FULL_AND_PIECEWISE): a decode-only batch is one full graph; a mixed batch within the
// capture size replays the piecewise graphs with attention launched between them; beyond it
// everything runs eagerly. Logits and sampler always run after the graph.
TEST(StepOverheads, WhichLaunchesRunInAGraph) {
  const GraphPolicy full;
  StepLaunches n = step_launches(full, decodes(128), kernels());
  EXPECT_EQ(n.graph, 258.0 + 32);
  EXPECT_EQ(n.eager, 5.0);
  n = step_launches(full, mixed(100, 20), kernels());
  EXPECT_EQ(n.graph, 258.0);
  EXPECT_EQ(n.eager, 32.0 + 5);
  n = step_launches(full, mixed(2048, 0), kernels());
  EXPECT_EQ(n.graph, 0.0);
  EXPECT_EQ(n.eager, 258.0 + 32 + 5);
  n = step_launches(full, decodes(513), kernels());  // beyond the largest capture size
  EXPECT_EQ(n.graph, 0.0);
  // vLLM 0.10: piecewise graphs only, so decode attention runs eagerly too.
  GraphPolicy piecewise;
  piecewise.mode = GraphMode::kPiecewise;
  n = step_launches(piecewise, decodes(128), kernels());
  EXPECT_EQ(n.graph, 258.0);
  EXPECT_EQ(n.eager, 32.0 + 5);
  GraphPolicy eager;
  eager.mode = GraphMode::kEager;
  n = step_launches(eager, decodes(1), kernels());
  EXPECT_EQ(n.graph, 0.0);
  EXPECT_EQ(n.eager, 258.0 + 32 + 5);
}

// gpu_overhead = graph launches x 0.5 + eager launches x 0.9 + 160 (async); host = 300 + 20 S.
TEST(StepOverheads, GapsAndHostTimeFollowTheirEquations) {
  const StepOverheadParams p;
  StepBreakdown b = kernels();
  add_step_overheads(p, GraphPolicy{}, decodes(128), b);
  EXPECT_NEAR(b.gpu_overhead_s * 1e6, 290 * 0.5 + 5 * 0.9 + 160, 1e-9);
  EXPECT_NEAR(b.overhead_s * 1e6, 300 + 20 * 128, 1e-9);
  EXPECT_EQ(b.dense_s, 100e-6);  // the kernels are untouched
  // Without async scheduling the GPU waits for the host instead: no separate step gap.
  GraphPolicy sync;
  sync.async_scheduling = false;
  b = kernels();
  add_step_overheads(p, sync, mixed(100, 20), b);
  EXPECT_NEAR(b.gpu_overhead_s * 1e6, 258 * 0.5 + 37 * 0.9, 1e-9);
  EXPECT_NEAR(b.overhead_s * 1e6, 300 + 20 * 21, 1e-9);
}

// Eager launches of short kernels: the host cannot launch them as fast as the GPU runs them, so
// the kernel phase is launches x eager_launch_us (295 x 5 us = 1,475 us > 115 + 295 x 0.9 us).
TEST(StepOverheads, ShortEagerKernelsAreHostBound) {
  GraphPolicy eager;
  eager.mode = GraphMode::kEager;
  StepBreakdown b = kernels();
  add_step_overheads(StepOverheadParams{}, eager, decodes(1), b);
  EXPECT_NEAR((b.kernels_s() + b.gpu_overhead_s) * 1e6, 295 * 5 + 160, 1e-9);
  // Long kernels hide the launches: back to kernels + gaps.
  b = kernels();
  b.dense_s = 0.1;
  add_step_overheads(StepOverheadParams{}, eager, decodes(1), b);
  EXPECT_NEAR(b.gpu_overhead_s * 1e6, 295 * 0.9 + 160, 1e-6);
}

TEST(StepOverheads, DisabledAndEmptyAddNothing) {
  StepOverheadParams off;
  off.enabled = false;
  StepBreakdown b = kernels();
  add_step_overheads(off, GraphPolicy{}, decodes(4), b);
  EXPECT_EQ(b.gpu_overhead_s, 0.0);
  EXPECT_EQ(b.overhead_s, 0.0);
  const ServedStepModel m(std::make_unique<Fixed>(), StepOverheadParams{}, GraphPolicy{});
  EXPECT_EQ(m.step_time(BatchShape{}).total_s(), 0.0);
  EXPECT_GT(m.step_time(decodes(1)).gpu_overhead_s, 0.0);
}

TEST(StepOverheads, RejectsNegativeParameters) {
  StepOverheadParams p;
  p.step_gap_us = -1;
  try {
    ServedStepModel(std::make_unique<Fixed>(), p, GraphPolicy{});
    FAIL() << "no error";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].path, "compute.overheads.step_gap_us");
  }
}

}  // namespace
}  // namespace kvsim::models
