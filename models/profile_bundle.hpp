#pragma once
// A measured kernel profile bundle: per-op CUDA kernel times of one model on one GPU, taken by
// driving a real vLLM engine with synthetic batches (the format of LLMServingSim's profiler,
// github.com/casys-kaist/LLMServingSim, MIT licence). All times are microseconds; dense,
// attention and MoE times are for ONE decoder layer, per-sequence times once per step. The
// tables of one tensor-parallel degree are:
//   dense.csv          layer,tokens,time_us        (op name, total tokens of the batch)
//   per_sequence.csv   layer,sequences,time_us     (lm_head, sampler)
//   attention.csv      prefill_chunk,kv_prefill,n_decode,kv_decode,time_us
//   moe.csv            tokens,activated_experts,time_us   (MoE models: the whole sparse MoE
//                      block, router and fused experts, vs tokens and distinct experts)
//   skew_fit.csv       ...,alpha,...               (optional: blend toward the max context)
// A bundle folder holds them directly (one degree: TP 1) or in tp1/, tp2/, ... (one folder per
// degree, each GPU's shard), beside:
//   meta.yaml          profiler and engine settings (a few top-level keys are read)
//   LICENSE.txt        optional: its "Copyright" line becomes part of the attribution
// The ops of a decoder layer are those dense.csv lists (every op but embedding and
// final_layernorm; layernorm runs twice): Llama has gate_up_proj, act_fn and down_proj, Qwen3
// adds qk_norm, and an MoE model's MLP is moe.csv's block instead.
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
  std::string architecture;   // llama, qwen3, qwen3_moe, ...
  bool enforce_eager = true;  // engine_effective.enforce_eager
};

// One moe.csv row: the MoE block of one layer for `tokens` tokens routed to `activated_experts`
// distinct experts.
struct MoePoint {
  std::int64_t tokens = 0;
  std::int64_t activated_experts = 0;
  double time_us = 0;
  int line = 0;
};

// The ops of one decoder layer in dense.csv with how often each runs per layer (layernorm
// twice: input and post-attention RMSNorm; every other op once).
struct DenseLayerOp {
  std::string name;
  int count = 1;
};

struct ProfileBundle {
  std::string dir;          // the bundle folder (meta.yaml, LICENSE.txt)
  std::string tables_dir;   // the folder the tables were read from: dir, or dir/tpN
  int tensor_parallel_size = 1;  // the degree of the tables (each GPU's shard)
  ProfileMeta meta;
  std::vector<DenseLayerOp> layer_ops;               // dense.csv's per-layer ops, in name order
  std::map<std::string, ProfileCurve> dense;         // op -> time_us vs tokens, per layer
  std::map<std::string, ProfileCurve> per_sequence;  // lm_head, sampler -> time_us vs seqs
  std::vector<AttentionPoint> attention;             // in file order
  std::vector<MoePoint> moe;                         // moe.csv in file order; empty: dense MLP
  std::vector<double> skew_alphas;  // skew_fit.csv alpha column (may be empty; noisy, may be < 0)
  std::string attribution;          // source and licence line to keep with derived figures

  // Median of skew_alphas; 0 when there are none.
  double skew_alpha() const;
  // The dense curve of one op; throws InputError naming dense.csv when it is missing.
  const ProfileCurve& dense_op(const std::string& op) const;
  const ProfileCurve& per_sequence_op(const std::string& op) const;
  // Dense kernels of one layer: the sum of the layer ops' counts.
  int layer_kernels() const;
  bool has_moe() const { return !moe.empty(); }
};

// Ops run once per step on all tokens: embedding and final_layernorm.
const std::vector<std::string>& dense_step_ops();

// The tensor-parallel degrees a bundle folder holds: {1} when the tables lie in the folder
// itself, else the N of each tpN/ subfolder with a dense.csv, ascending. Empty when neither.
std::vector<int> profile_bundle_degrees(const std::string& dir);

// Reads a bundle folder's tables of one tensor-parallel degree (0: the only degree there is, an
// error when there are several). `dir` may also name a tpN folder itself (meta.yaml then comes
// from its parent). Throws InputError (file:line:col) for a missing file or degree, a wrong
// header, a malformed or negative number, a duplicated grid point or a missing required op
// (layernorm, qkv_proj, o_proj, embedding, final_layernorm, lm_head, sampler, and for a dense
// architecture gate_up_proj, act_fn, down_proj or a moe.csv; an MoE architecture's tables may
// lack moe.csv).
ProfileBundle load_profile_bundle(const std::string& dir, int tensor_parallel_size = 0);

}  // namespace kvsim::models
