// The roofline's default efficiencies, anchored on the RTX 4090: the model fitted to measured
// 4090 kernel latencies (models/profiles/rtx4090-llama-3.1-8b-vllm0.19.yaml) gives the kernel
// time of a batch; the efficiency that makes the roofline's bound equal it is
// (work / peak) / measured time. Other GPUs without a profile use these efficiencies.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "kvsim/models/compute_spec.hpp"
#include "kvsim/models/fitted_model.hpp"
#include "kvsim/models/roofline.hpp"
#include "model_shapes.hpp"

namespace kvsim::models {
namespace {

const std::string kShipped = std::string(KVSIM_SOURCE_DIR) + "/models/profiles/rtx4090-llama-3.1-8b-vllm0.19.yaml";

struct Anchor {
  double memory;     // batch-1 decode: dense weight bytes / (kernel time x 1,008 GB/s)
  double gemm;       // 2,048-token prefill: dense FLOPs / (dense time x 165.2 TFLOP/s)
  double attention;  // 2,048-token chunk after 8,192 cached: attention FLOPs / (time x peak)
};

Anchor anchor() {
  const ModelSpec m = testing::llama_31_8b();
  ProfileParams pp;
  pp.gpu_step_overhead_us = 0;
  pp.step_overhead_us = 0;
  const FittedModel fitted(load_fitted_yaml(kShipped), m, pp);
  const RooflineModel roof(m, DeviceFigures{FlopsPerSec{165.2e12}, BytesPerSec{1008e9}, Bytes{}}, {});
  BatchShape decode;
  decode.decode_contexts = {512};
  const auto fd = fitted.step_time(decode);
  BatchShape prefill;
  prefill.prefills = {PrefillChunk{2048, 0}};
  const auto fp = fitted.step_time(prefill);
  BatchShape long_chunk;
  long_chunk.prefills = {PrefillChunk{2048, 8192}};
  const auto fa = fitted.step_time(long_chunk);
  Anchor a{};
  a.memory = roof.step_time(decode).bytes / ((fd.dense_s + fd.lm_head_s + fd.attention_s) * 1008e9);
  a.gemm = roof.dense_flops(prefill) / (fp.dense_s * 165.2e12);
  a.attention = roof.attention_flops(long_chunk) / (fa.attention_s * 165.2e12);
  return a;
}

// The defaults are within 10 % of the anchors (printed for the record).
TEST(RooflineAnchor, DefaultsMatchTheFittedRtx4090) {
  const Anchor a = anchor();
  std::printf("anchored efficiencies: memory %.3f, gemm %.3f, attention %.3f\n", a.memory, a.gemm, a.attention);
  const RooflineParams d;
  EXPECT_NEAR(d.memory_efficiency, a.memory, 0.1 * a.memory);
  EXPECT_NEAR(d.gemm_efficiency, a.gemm, 0.1 * a.gemm);
  EXPECT_NEAR(d.attention_efficiency, a.attention, 0.1 * a.attention);
}

}  // namespace
}  // namespace kvsim::models
