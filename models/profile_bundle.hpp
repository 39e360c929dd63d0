#pragma once
// A measured kernel profile bundle: per-op CUDA kernel times of one model on one GPU, taken by
// driving a real vLLM engine with synthetic batches (the format of LLMServingSim's profiler,
// github.com/casys-kaist/LLMServingSim, MIT licence). All times are microseconds; dense and
// attention times are for ONE decoder layer, per-sequence times once per step. The folder holds:
//   dense.csv          layer,tokens,time_us        (op name, total tokens of the batch)
//   per_sequence.csv   layer,sequences,time_us     (lm_head, sampler)
//   attention.csv      prefill_chunk,kv_prefill,n_decode,kv_decode,time_us
//   skew_fit.csv       ...,alpha,...               (optional: blend toward the max context)
//   meta.yaml          profiler and engine settings (a few top-level keys are read)
//   LICENSE.txt        optional: its "Copyright" line becomes part of the attribution
// Malformed rows throw kvsim::InputError with file:line:col.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kvsim::models {

// A measured curve y(x) on increasing x: piecewise linear between neighbouring points, y(x0)
// below the first point, and beyond the last point a straight line with the slope of the last
// doubling of x (from the largest point at or below x_last / 2 to x_last), which is steadier
// than the slope of the last, often noisy, segment.
struct ProfileCurve {
  std::vector<double> x;
  std::vector<double> y;

  double at(double xv) const;
};

// One attention.csv row: one prefill chunk of `prefill_chunk` new tokens over `kv_prefill`
// cached ones (0 and 0: no prefill) plus `n_decode` decodes each at context `kv_decode`.
struct AttentionPoint {
  std::int64_t prefill_chunk = 0;
  std::int64_t kv_prefill = 0;
  std::int64_t n_decode = 0;
  std::int64_t kv_decode = 0;
  double time_us = 0;
  int line = 0;  // line in attention.csv, for diagnostics
};

// The few meta.yaml keys kvsim uses (strings as written, quotes removed).
struct ProfileMeta {
  std::string vllm_version;
  std::string gpu;
  std::string hardware;
  std::string profiled_at;
  std::string model;
  std::string variant;
  bool enforce_eager = true;  // engine_effective.enforce_eager
};

struct ProfileBundle {
  std::string dir;
  ProfileMeta meta;
  std::map<std::string, ProfileCurve> dense;         // op -> time_us vs tokens, per layer
  std::map<std::string, ProfileCurve> per_sequence;  // lm_head, sampler -> time_us vs seqs
  std::vector<AttentionPoint> attention;             // in file order
  std::vector<double> skew_alphas;  // skew_fit.csv alpha column (may be empty; noisy, may be < 0)
  std::string attribution;          // source and licence line to keep with derived figures

  // Median of skew_alphas; 0 when there are none.
  double skew_alpha() const;
  // The dense curve of one op; throws InputError naming dense.csv when it is missing.
  const ProfileCurve& dense_op(const std::string& op) const;
  const ProfileCurve& per_sequence_op(const std::string& op) const;
};

// The ops of one Llama-style decoder layer in dense.csv, each once per layer except layernorm,
// which runs twice (input and post-attention RMSNorm).
struct DenseLayerOp {
  const char* name;
  int count;
};
const std::vector<DenseLayerOp>& dense_layer_ops();
// Ops run once per step on all tokens: embedding and final_layernorm.
const std::vector<std::string>& dense_step_ops();

// Reads a bundle folder. Throws InputError (file:line:col) for a missing file, a wrong header,
// a malformed or negative number, a duplicated grid point or a missing required op.
ProfileBundle load_profile_bundle(const std::string& dir);

}  // namespace kvsim::models
