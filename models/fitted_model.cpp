#include "models/fitted_model.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>

#include "models/moe_block.hpp"
#include "models/profile_model.hpp"
#include "models/relative_fit.hpp"
#include "models/roofline.hpp"
#include "sim/core/error.hpp"

namespace kvsim::models {

namespace {

constexpr double kUsToS = 1e-6;
constexpr int kL1Rounds = 40;
constexpr double kTrim = 0.1;  // share of worst points left out of the later attention rounds

ComponentResidual summarise(const std::string& name, const Samples& s,
                            const std::vector<double>& coef) {
  const auto e = relative_errors(s, coef);
  const ErrorSummary sum = summarise_errors(e);
  ComponentResidual r;
  r.component = name;
  r.points = e.size();
  r.median_abs_rel_error = sum.median;
  r.max_abs_rel_error = sum.max;
  return r;
}

// Past the knee a GEMM computes whole tiles of tokens; the profile's steps sit at multiples of
// 128 and 256 tokens (e.g. 1,433 us at 512 tokens, 1,771 us at 528), so the compute-bound terms
// count tokens rounded up to those tiles.
std::vector<double> dense_layer_features(double tokens, double knee) {
  const double t128 = std::ceil(tokens / 128) * 128;
  const double t256 = std::ceil(tokens / 256) * 256;
  return {1.0, tokens, std::max(0.0, t128 - knee), std::max(0.0, t256 - knee)};
}

// dot(dense_layer_features(tokens, knee), coef) without building the vector (once per step).
double dense_layer_dot(double tokens, double knee, const std::vector<double>& coef) {
  const double t128 = std::ceil(tokens / 128) * 128;
  const double t256 = std::ceil(tokens / 256) * 256;
  return coef[0] + coef[1] * tokens + coef[2] * std::max(0.0, t128 - knee) + coef[3] * std::max(0.0, t256 - knee);
}

// dot(dense_step_features(tokens, knee), coef) without building the vector (once per step).
double dense_step_dot(double tokens, double knee, const std::vector<double>& coef) {
  const double small = tokens <= 16 ? 1.0 : 0.0;
  return coef[0] + coef[1] * tokens + coef[2] * small + coef[3] * small * tokens + coef[4] * std::max(0.0, tokens - knee);
}

// A least absolute relative error fit of `y` over the grid's token counts with features
// features(tokens, knee), the knee searched among the grid's inner token counts by the median
// error; writes the best knee and coefficients and returns their residuals.
template <class Features>
ComponentResidual fit_with_knee(const char* name, const std::vector<double>& tokens, const std::vector<double>& y,
                                std::size_t terms, Features features, double& knee_out, std::vector<double>& coef_out) {
  Samples s;
  s.y = y;
  s.x.resize(tokens.size());
  ComponentResidual best;
  best.median_abs_rel_error = std::numeric_limits<double>::infinity();
  knee_out = tokens.back();
  for (const double knee : tokens) {
    if (knee <= tokens.front() || knee >= tokens.back()) continue;
    for (std::size_t i = 0; i < tokens.size(); ++i) s.x[i] = features(tokens[i], knee);
    const auto coef = weighted_fit(s, terms, kL1Rounds);
    const auto res = summarise(name, s, coef);
    if (res.median_abs_rel_error < best.median_abs_rel_error) {
      best = res;
      knee_out = knee;
      coef_out = coef;
    }
  }
  return best;
}

double dense_layer_us(const ProfileBundle& b, double tokens) {
  double t = 0;
  for (const auto& op : b.layer_ops) t += op.count * b.dense_op(op.name).at(tokens);
  return t;
}


double dense_step_us(const ProfileBundle& b, double tokens) {
  double t = 0;
  for (const auto& op : dense_step_ops()) t += b.dense_op(op).at(tokens);
  return t;
}

// ---- YAML text ----

std::string format_double(double v) {
  std::array<char, 64> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  return std::string(buf.data(), res.ptr);
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (const char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

std::string format_list(const std::vector<double>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + format_double(v[i]);
  return out + "]";
}

std::string strip(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

double parse_double(const std::string& text, const std::string& file, int line, int col) {
  const std::string t = strip(text);
  double v = 0;
  const auto res = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || res.ec != std::errc{} || res.ptr != t.data() + t.size() || !std::isfinite(v)) {
    throw InputError(file, line, col, "expected a number, got '" + t + "'");
  }
  return v;
}

std::string parse_string(const std::string& text, const std::string& file, int line, int col) {
  std::string t = strip(text);
  if (t.empty() || t.front() != '"') return t;
  std::string out;
  for (std::size_t i = 1; i < t.size(); ++i) {
    const char ch = t[i];
    if (ch == '\\' && i + 1 < t.size()) {
      out += t[++i];
    } else if (ch == '"') {
      if (i + 1 != t.size()) throw InputError(file, line, col, "text after the closing quote");
      return out;
    } else {
      out += ch;
    }
  }
  throw InputError(file, line, col, "missing closing quote");
}

// `{load_bytes_per_s: R, latency_us: L}` (both keys, in any order, nothing else).
MeasuredTier parse_tier(const std::string& text, const std::string& file, int line, int col) {
  const std::string t = strip(text);
  if (t.size() < 2 || t.front() != '{' || t.back() != '}') {
    throw InputError(file, line, col,
                     "offload_tier: expected {load_bytes_per_s: RATE, latency_us: TIME}");
  }
  MeasuredTier tier;
  std::map<std::string, bool> seen;
  std::stringstream ss(t.substr(1, t.size() - 2));
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto colon = item.find(':');
    const std::string key = strip(item.substr(0, colon));
    if (colon == std::string::npos || (key != "load_bytes_per_s" && key != "latency_us")) {
      throw InputError(
          file, line, col,
          "offload_tier: unknown key '" + key + "' (valid: load_bytes_per_s, latency_us)");
    }
    if (seen[key]) throw InputError(file, line, col, "offload_tier: duplicate key '" + key + "'");
    seen[key] = true;
    const double v = parse_double(item.substr(colon + 1), file, line, col);
    if (key == "load_bytes_per_s") {
      if (v <= 0) throw InputError(file, line, col, "offload_tier: load_bytes_per_s must be > 0");
      tier.load_bytes_per_s = v;
    } else {
      if (v < 0) throw InputError(file, line, col, "offload_tier: latency_us must be >= 0");
      tier.latency_us = v;
    }
  }
  for (const char* key : {"load_bytes_per_s", "latency_us"}) {
    if (!seen[key])
      throw InputError(file, line, col, std::string("offload_tier: missing key '") + key + "'");
  }
  return tier;
}

std::vector<double> parse_list(const std::string& text, std::size_t want, const std::string& file,
                               int line, int col) {
  const std::string t = strip(text);
  if (t.size() < 2 || t.front() != '[' || t.back() != ']') {
    throw InputError(file, line, col, "expected a list [a, b, ...]");
  }
  std::vector<double> out;
  std::stringstream ss(t.substr(1, t.size() - 2));
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(parse_double(item, file, line, col));
  if (out.size() != want) {
    throw InputError(
        file, line, col,
        "expected " + std::to_string(want) + " numbers, got " + std::to_string(out.size()));
  }
  return out;
}

void check_params(const FittedCoefficients& c, const ModelSpec& m) {
  if (m.num_layers <= 0) throw InputError("", 0, 0, "fitted model: num_layers must be > 0");
  if (c.dense_layer_us.size() != kDenseLayerTerms || c.dense_step_us.size() != kDenseStepTerms ||
      c.attention_layer_us.size() != kAttentionTerms ||
      c.per_sequence_us.size() != kPerSequenceTerms) {
    throw InputError("", 0, 0, "fitted model: a coefficient list has the wrong length");
  }
  if (!(c.attention_decode_wave >= 1) || !(c.attention_prefill_wave_tokens >= 1)) {
    throw InputError("", 0, 0, "fitted model: attention wave widths must be >= 1");
  }
}

}  // namespace

std::vector<double> attention_features(const BatchShape& batch, double decode_wave,
                                       double prefill_wave_tokens, double split_decodes) {
  std::vector<double> f(kAttentionTerms, 0.0);
  attention_features(batch, decode_wave, prefill_wave_tokens, split_decodes, std::span<double, kAttentionTerms>(f));
  return f;
}

std::vector<double> dense_step_features(double tokens, double knee) {
  const double small = tokens <= 16 ? 1.0 : 0.0;
  return {1.0, tokens, small, small * tokens, std::max(0.0, tokens - knee)};
}

void attention_features(const BatchShape& batch, double decode_wave, double prefill_wave_tokens,
                        double split_decodes, std::span<double, kAttentionTerms> f) {
  std::fill(f.begin(), f.end(), 0.0);
  double ctx_sum = 0;
  double ctx_max = 0;
  for (const auto c : batch.decode_contexts) {
    ctx_sum += static_cast<double>(c);
    ctx_max = std::max(ctx_max, static_cast<double>(c));
  }
  const auto n = static_cast<double>(batch.decode_contexts.size());
  const double ctx_mean = n > 0 ? ctx_sum / n : 0.0;
  if (batch.prefills.empty()) {
    f[9] = 1.0;
    f[10] = n;
    f[11] = ctx_sum;
    f[12] = ctx_max;
    return;
  }
  double longest = ctx_max;
  f[0] = 1.0;
  for (const auto& p : batch.prefills) {
    const auto nt = static_cast<double>(p.new_tokens);
    const auto cached = static_cast<double>(p.cached_tokens);
    f[1] += nt;
    f[2] += attention_pairs_prefill(p.new_tokens, p.cached_tokens);
    f[3] += cached;
    f[6] += std::ceil(nt / prefill_wave_tokens) * (cached + nt / 2);
    longest = std::max(longest, cached + nt);
  }
  f[4] = n;
  f[5] = std::ceil(n / decode_wave) * ctx_mean;
  f[7] = longest;
  f[8] = n * n * ctx_mean;
  f[13] = ctx_sum;
  f[14] = n * f[1];
  f[15] = n >= split_decodes ? ctx_mean : 0.0;
}

std::vector<double> model_shape_of(const ModelSpec& m) {
  return {static_cast<double>(m.num_layers),          static_cast<double>(m.hidden_size),
          static_cast<double>(m.num_attention_heads), static_cast<double>(m.num_kv_heads),
          static_cast<double>(m.head_dim),            static_cast<double>(m.mlp_layers() > 0 ? m.intermediate_size : 0),
          static_cast<double>(m.vocab_size),          static_cast<double>(m.num_experts),
          static_cast<double>(m.num_experts_per_tok), static_cast<double>(m.moe_intermediate_size)};
}

ModelSpec model_of_shape(const FittedCoefficients& c) {
  if (c.model_shape.size() != kModelShapeFields) {
    throw InputError(c.source_dir, 0, 0, "the fitted profile does not record the profiled model's shape; fit it again");
  }
  auto i = [&](std::size_t k) { return static_cast<int>(c.model_shape[k]); };
  ModelSpec m;
  m.name = c.model;
  m.num_layers = i(0);
  m.hidden_size = i(1);
  m.num_attention_heads = i(2);
  m.num_kv_heads = i(3);
  m.head_dim = i(4);
  m.intermediate_size = i(5);
  m.vocab_size = i(6);
  m.num_experts = i(7);
  m.num_experts_per_tok = i(8);
  m.moe_intermediate_size = i(9);
  m.max_position_embeddings = 1;
  m.num_params = params_from_shape(m);
  return m;
}

bool shape_matches(const FittedCoefficients& c, const ModelSpec& m, std::string* why) {
  static const char* names[kModelShapeFields] = {"num_layers", "hidden_size", "num_attention_heads", "num_kv_heads",
                                                 "head_dim", "intermediate_size", "vocab_size", "num_experts",
                                                 "num_experts_per_tok", "moe_intermediate_size"};
  if (c.model_shape.size() != kModelShapeFields) {
    if (why != nullptr) *why = "the fitted profile does not record the profiled model's shape";
    return false;
  }
  const auto shape = model_shape_of(m);
  for (std::size_t i = 1; i < kModelShapeFields; ++i) {  // num_layers may differ
    if (shape[i] != c.model_shape[i]) {
      if (why != nullptr) {
        std::ostringstream os;
        os << names[i] << " " << shape[i] << " against " << c.model_shape[i] << " profiled";
        *why = os.str();
      }
      return false;
    }
  }
  return true;
}

FitReport fit_profile(const ProfileBundle& bundle, const ModelSpec& model) {
  if (model.num_layers <= 0) throw InputError("", 0, 0, "fit: num_layers must be > 0");
  FitReport rep;
  FittedCoefficients& c = rep.coefficients;
  c.source_dir = bundle.dir;
  c.model = bundle.meta.model;
  c.gpu = bundle.meta.gpu;
  c.vllm_version = bundle.meta.vllm_version;
  c.profiled_at = bundle.meta.profiled_at;
  c.attribution = bundle.attribution;
  c.tensor_parallel_size = bundle.tensor_parallel_size;
  c.dense_layer_kernels = bundle.layer_kernels();
  c.model_shape = model_shape_of(model);
  c.launch_floor_us = std::numeric_limits<double>::infinity();
  for (const auto& op : bundle.layer_ops) {
    c.launch_floor_us = std::min(c.launch_floor_us, bundle.dense_op(op.name).y.front());
  }
  for (const auto& op : dense_step_ops()) {
    c.launch_floor_us = std::min(c.launch_floor_us, bundle.dense_op(op).y.front());
  }

  // Dense per layer: the knee is searched over the grid's token counts by the median error of
  // the least absolute relative error fit.
  const auto& tokens = bundle.dense_op("qkv_proj").x;
  std::vector<double> layer_us;
  std::vector<double> step_us;
  for (const double t : tokens) {
    layer_us.push_back(dense_layer_us(bundle, t));
    step_us.push_back(dense_step_us(bundle, t));
  }
  rep.residuals.push_back(fit_with_knee("dense_layer", tokens, layer_us, kDenseLayerTerms, dense_layer_features,
                                        c.dense_knee_tokens, c.dense_layer_us));
  // Dense per step, alike (the small ops are noisy: a few points far off must not pull the rest).
  rep.residuals.push_back(fit_with_knee("dense_step", tokens, step_us, kDenseStepTerms, dense_step_features,
                                        c.dense_step_knee_tokens, c.dense_step_us));

  // Attention: the wave widths are searched like the dense knee, by the median error.
  std::vector<BatchShape> batches;
  std::vector<double> attn_y;
  for (const auto& p : bundle.attention) {
    BatchShape batch;
    if (p.prefill_chunk > 0) batch.prefills.push_back(PrefillChunk{p.prefill_chunk, p.kv_prefill});
    batch.decode_contexts.assign(static_cast<std::size_t>(p.n_decode), p.kv_decode);
    batches.push_back(std::move(batch));
    attn_y.push_back(p.time_us);
  }
  ComponentResidual best_attn;
  best_attn.median_abs_rel_error = std::numeric_limits<double>::infinity();
  for (const double dw : {1.0, 2.0, 4.0, 8.0}) {
    for (const double pw : {64.0, 128.0, 256.0, 512.0}) {
      for (const double ns : {16.0, 32.0, 64.0}) {
        Samples attn;
        attn.y = attn_y;
        for (const auto& b : batches) attn.x.push_back(attention_features(b, dw, pw, ns));
        const auto coef = weighted_fit(attn, kAttentionTerms, kL1Rounds, kTrim);
        const auto res = summarise("attention_layer", attn, coef);
        if (res.median_abs_rel_error < best_attn.median_abs_rel_error) {
          best_attn = res;
          c.attention_decode_wave = dw;
          c.attention_prefill_wave_tokens = pw;
          c.attention_split_decodes = ns;
          c.attention_layer_us = coef;
        }
      }
    }
  }
  rep.residuals.push_back(best_attn);

  // MoE block (models/moe_block.hpp).
  if (bundle.has_moe()) {
    const MoeBlockFit moe = fit_moe_block(bundle.moe);
    c.moe_layer_us = moe.us;
    c.moe_experts_per_wave = moe.experts_per_wave;
    rep.residuals.push_back(ComponentResidual{"moe_layer", moe.points, moe.median_abs_rel_error, moe.max_abs_rel_error});
  }

  Samples seq;
  for (const double s : bundle.per_sequence_op("lm_head").x) {
    seq.x.push_back({1.0, s});
    seq.y.push_back(bundle.per_sequence_op("lm_head").at(s) +
                    bundle.per_sequence_op("sampler").at(s));
  }
  c.per_sequence_us = weighted_fit(seq, kPerSequenceTerms);
  rep.residuals.push_back(summarise("per_sequence", seq, c.per_sequence_us));
  return rep;
}

std::vector<ComponentResidual> evaluate_fit(const FittedCoefficients& c, const ProfileBundle& bundle) {
  std::vector<ComponentResidual> out;
  const auto& tokens = bundle.dense_op("qkv_proj").x;
  Samples dense;
  Samples step;
  for (const double t : tokens) {
    dense.x.push_back(dense_layer_features(t, c.dense_knee_tokens));
    dense.y.push_back(dense_layer_us(bundle, t));
    step.x.push_back(dense_step_features(t, c.dense_step_knee_tokens));
    step.y.push_back(dense_step_us(bundle, t));
  }
  out.push_back(summarise("dense_layer", dense, c.dense_layer_us));
  out.push_back(summarise("dense_step", step, c.dense_step_us));
  Samples attn;
  for (const auto& p : bundle.attention) {
    BatchShape batch;
    if (p.prefill_chunk > 0) batch.prefills.push_back(PrefillChunk{p.prefill_chunk, p.kv_prefill});
    batch.decode_contexts.assign(static_cast<std::size_t>(p.n_decode), p.kv_decode);
    attn.x.push_back(attention_features(batch, c.attention_decode_wave, c.attention_prefill_wave_tokens,
                                        c.attention_split_decodes));
    attn.y.push_back(p.time_us);
  }
  out.push_back(summarise("attention_layer", attn, c.attention_layer_us));
  if (bundle.has_moe() && !c.moe_layer_us.empty()) {
    Samples moe;
    for (const auto& p : bundle.moe) {
      moe.x.push_back(moe_block_features(static_cast<double>(p.tokens), static_cast<double>(p.activated_experts),
                                         c.moe_experts_per_wave));
      moe.y.push_back(p.time_us);
    }
    out.push_back(summarise("moe_layer", moe, c.moe_layer_us));
  }
  Samples seq;
  for (const double s : bundle.per_sequence_op("lm_head").x) {
    seq.x.push_back({1.0, s});
    seq.y.push_back(bundle.per_sequence_op("lm_head").at(s) + bundle.per_sequence_op("sampler").at(s));
  }
  out.push_back(summarise("per_sequence", seq, c.per_sequence_us));
  return out;
}

std::string write_fitted_yaml(const FittedCoefficients& c) {
  std::ostringstream os;
  os << "# kvsim fitted compute model (models/fitted_model.hpp); times in microseconds\n"
     << "source_dir: " << quote(c.source_dir) << "\n"
     << "model: " << quote(c.model) << "\n"
     << "gpu: " << quote(c.gpu) << "\n"
     << "vllm_version: " << quote(c.vllm_version) << "\n"
     << "profiled_at: " << quote(c.profiled_at) << "\n"
     << "attribution: " << quote(c.attribution) << "\n"
     << "launch_floor_us: " << format_double(c.launch_floor_us) << "\n"
     << "dense_knee_tokens: " << format_double(c.dense_knee_tokens) << "\n"
     << "# a0 + a1 T + a2 max(0, T128 - knee) + a3 max(0, T256 - knee), per layer\n"
     << "dense_layer_us: " << format_list(c.dense_layer_us) << "\n"
     << "# b0 + b1 T + b2 [T <= 16] + b3 [T <= 16] T + b4 max(0, T - knee), per step (embedding,\n"
     << "# final_layernorm)\n"
     << "dense_step_knee_tokens: " << format_double(c.dense_step_knee_tokens) << "\n"
     << "dense_step_us: " << format_list(c.dense_step_us) << "\n"
     << "attention_decode_wave: " << format_double(c.attention_decode_wave) << "\n"
     << "attention_prefill_wave_tokens: " << format_double(c.attention_prefill_wave_tokens) << "\n"
     << "attention_split_decodes: " << format_double(c.attention_split_decodes) << "\n"
     << "# e0..e8, e13..e15 with a prefill (1, new, pairs, cached, decodes, decode waves x mean\n"
     << "# context, prefill waves x (cached + new / 2), longest context, decodes^2 x mean "
        "context,\n"
     << "# sum of contexts, decodes x new, [decodes >= split] x mean context); e9..e12 decode only\n"
     << "# (1, decodes, sum of contexts, longest context); per layer\n"
     << "attention_layer_us: " << format_list(c.attention_layer_us) << "\n"
     << "# c0 + c1 S, per step (lm_head, sampler)\n"
     << "per_sequence_us: " << format_list(c.per_sequence_us) << "\n"
     << "# tensor-parallel degree of the tables (each GPU's shard); dense kernels per layer\n"
     << "tensor_parallel_size: " << c.tensor_parallel_size << "\n"
     << "dense_layer_kernels: " << format_double(c.dense_layer_kernels) << "\n";
  if (!c.gpu_preset.empty()) os << "gpu_preset: " << quote(c.gpu_preset) << "\n";
  if (!c.gpu_figures.empty()) {
    os << "# memory_bandwidth (B/s), bf16_dense and fp8_dense (FLOP/s) of the profiled GPU\n"
       << "gpu_figures: " << format_list(c.gpu_figures) << "\n";
  }
  if (!c.model_shape.empty()) {
    os << "# num_layers, hidden, heads, kv_heads, head_dim, intermediate, vocab, experts, top_k,\n"
       << "# moe_intermediate of the profiled model\n"
       << "model_shape: " << format_list(c.model_shape) << "\n";
  }
  if (!c.moe_layer_us.empty()) {
    os << "# m0 + m1 E + m2 T + m3 ceil(E / experts_per_wave), per MoE layer\n"
       << "moe_layer_us: " << format_list(c.moe_layer_us) << "\n"
       << "moe_experts_per_wave: " << format_double(c.moe_experts_per_wave) << "\n"
       << "moe_kernels: " << format_double(c.moe_kernels) << "\n";
  }
  if (c.offload_tier) {
    os << "# offload tier load path: latency_us + bytes / load_bytes_per_s (kvsim probe "
          "--offload)\n"
       << "offload_tier: {load_bytes_per_s: " << format_double(c.offload_tier->load_bytes_per_s)
       << ", latency_us: " << format_double(c.offload_tier->latency_us) << "}\n";
  }
  return os.str();
}

FittedCoefficients read_fitted_yaml(const std::string& text, const std::string& file_name) {
  FittedCoefficients c;
  using Setter = std::function<void(const std::string&, int, int)>;
  const std::string& f = file_name;
  auto str = [&](std::string& dst) -> Setter {
    return [&dst, &f](const std::string& v, int l, int col) { dst = parse_string(v, f, l, col); };
  };
  auto num = [&](double& dst) -> Setter {
    return [&dst, &f](const std::string& v, int l, int col) { dst = parse_double(v, f, l, col); };
  };
  auto list = [&](std::vector<double>& dst, std::size_t n) -> Setter {
    return
        [&dst, n, &f](const std::string& v, int l, int col) { dst = parse_list(v, n, f, l, col); };
  };
  // A list of n numbers, or of the legacy length (the later terms read as 0).
  auto list_or_legacy = [&](std::vector<double>& dst, std::size_t n, std::size_t legacy) -> Setter {
    return [&dst, n, legacy, &f](const std::string& v, int l, int col) {
      const std::string t = strip(v);
      const auto items = static_cast<std::size_t>(std::count(t.begin(), t.end(), ',')) + 1;
      dst = parse_list(v, items == legacy ? legacy : n, f, l, col);
      dst.resize(n, 0.0);
    };
  };
  const std::map<std::string, Setter> keys = {
      {"source_dir", str(c.source_dir)},
      {"model", str(c.model)},
      {"gpu", str(c.gpu)},
      {"vllm_version", str(c.vllm_version)},
      {"profiled_at", str(c.profiled_at)},
      {"attribution", str(c.attribution)},
      {"launch_floor_us", num(c.launch_floor_us)},
      {"dense_knee_tokens", num(c.dense_knee_tokens)},
      {"attention_decode_wave", num(c.attention_decode_wave)},
      {"attention_prefill_wave_tokens", num(c.attention_prefill_wave_tokens)},
      {"dense_layer_us", list(c.dense_layer_us, kDenseLayerTerms)},
      {"dense_step_us", list_or_legacy(c.dense_step_us, kDenseStepTerms, kLegacyDenseStepTerms)},
      {"attention_layer_us", list_or_legacy(c.attention_layer_us, kAttentionTerms, kLegacyAttentionTerms)},
      {"dense_step_knee_tokens", num(c.dense_step_knee_tokens)},
      {"attention_split_decodes", num(c.attention_split_decodes)},
      {"per_sequence_us", list(c.per_sequence_us, kPerSequenceTerms)},
      {"offload_tier", [&c, &f](const std::string& v, int l,
                                int col) { c.offload_tier = parse_tier(v, f, l, col); }},
      {"tensor_parallel_size",
       [&c, &f](const std::string& v, int l, int col) {
         const double tp = parse_double(v, f, l, col);
         if (!(tp >= 1 && tp <= 64) || std::floor(tp) != tp) {
           throw InputError(f, l, col, "tensor_parallel_size must be a whole number from 1 to 64");
         }
         c.tensor_parallel_size = static_cast<int>(tp);
       }},
      {"dense_layer_kernels", num(c.dense_layer_kernels)},
      {"model_shape", list(c.model_shape, kModelShapeFields)},
      {"moe_layer_us", list(c.moe_layer_us, kMoeTerms)},
      {"moe_experts_per_wave", num(c.moe_experts_per_wave)},
      {"moe_kernels", num(c.moe_kernels)},
      {"gpu_preset", str(c.gpu_preset)},
      {"gpu_figures", list(c.gpu_figures, kGpuFigureFields)},
  };
  const std::set<std::string> optional_keys = {"dense_step_knee_tokens", "attention_split_decodes", "offload_tier",         "tensor_parallel_size", "dense_layer_kernels",
                                               "model_shape",          "moe_layer_us",         "moe_experts_per_wave",
                                               "moe_kernels",          "gpu_preset",           "gpu_figures"};
  std::map<std::string, int> seen;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    const std::string s = strip(line);
    if (s.empty() || s[0] == '#') continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) throw InputError(f, n, 1, "expected 'key: value'");
    const std::string key = strip(line.substr(0, colon));
    const auto it = keys.find(key);
    if (it == keys.end()) throw InputError(f, n, 1, "unknown key '" + key + "'");
    if (!seen.emplace(key, n).second) throw InputError(f, n, 1, "duplicate key '" + key + "'");
    const auto vcol = line.find_first_not_of(" \t", colon + 1);
    const int col =
        vcol == std::string::npos ? static_cast<int>(line.size()) + 1 : static_cast<int>(vcol) + 1;
    it->second(line.substr(colon + 1), n, col);
  }
  for (const auto& [key, setter] : keys) {
    if (!seen.count(key) && !optional_keys.count(key)) {
      throw InputError(f, 0, 0, "missing key '" + key + "'");
    }
  }
  return c;
}

void save_fitted_yaml(const std::string& path, const FittedCoefficients& c) {
  std::ofstream out(path);
  if (!out) throw InputError(path, 0, 0, "cannot write fitted coefficients");
  out << write_fitted_yaml(c);
  if (!out) throw InputError(path, 0, 0, "cannot write fitted coefficients");
}

FittedCoefficients load_fitted_yaml(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, 0, "cannot open fitted coefficients");
  std::ostringstream ss;
  ss << in.rdbuf();
  return read_fitted_yaml(ss.str(), path);
}

FittedModel::FittedModel(FittedCoefficients coefficients, ModelSpec model, ProfileParams params, MoeLayout moe)
    : c_(std::move(coefficients)), model_(std::move(model)), params_(std::move(params)), work_(model_), moe_(moe) {
  check_params(c_, model_);
  if (model_.is_moe() && c_.moe_layer_us.empty()) {
    throw InputError("", 0, 0,
                     "fitted model: " + model_.name +
                         " is a mixture-of-experts model and the fitted profile has no MoE block "
                         "(fit a bundle with a moe.csv)");
  }
  if (!(c_.moe_experts_per_wave >= 1) || !(c_.moe_kernels >= 0) || !(c_.dense_layer_kernels >= 0)) {
    throw InputError("", 0, 0, "fitted model: moe_experts_per_wave must be >= 1 and kernel counts >= 0");
  }
  decode_dense_kernels_ = model_.num_layers * c_.dense_layer_kernels + static_cast<double>(dense_step_ops().size());
}

double FittedModel::moe_layer_us(double tokens) const {
  return models::moe_layer_us(c_.moe_layer_us, c_.moe_experts_per_wave, model_, moe_, tokens);
}

double FittedModel::attention_layer_us(const BatchShape& batch) const {
  if (batch.empty()) return 0;
  // Once per engine step: features in a local array, no allocation.
  std::array<double, kAttentionTerms> f{};
  attention_features(batch, c_.attention_decode_wave, c_.attention_prefill_wave_tokens, c_.attention_split_decodes, f);
  double us = 0;
  for (std::size_t i = 0; i < kAttentionTerms; ++i) us += f[i] * c_.attention_layer_us[i];
  return std::max(0.0, us);
}

StepBreakdown FittedModel::step_time(const BatchShape& batch) const {
  StepBreakdown b;
  if (batch.empty()) return b;
  const double tokens = static_cast<double>(batch.num_tokens());
  const double seqs = static_cast<double>(batch.num_sequences());
  const double layers = model_.num_layers;
  double dense_us = layers * std::max(0.0, dense_layer_dot(tokens, c_.dense_knee_tokens, c_.dense_layer_us)) +
                    std::max(0.0, dense_step_dot(tokens, c_.dense_step_knee_tokens, c_.dense_step_us));
  const bool decode_only = batch.prefills.empty();
  double attn_us = 0;
  double pairs = 0;
  double kv_tokens = 0;
  if (decode_only) {
    // attention_layer_us() and add_step_work() of a decode-only batch in one pass: its only
    // attention features are e9..e12 (1, n, the sum and the largest of the contexts; the
    // others are 0, and adding 0 x a finite coefficient changes no sum), and its attention
    // pairs are the same sum. The same sums in the same order, so the same values.
    double ctx_max = 0;
    for (const auto c : batch.decode_contexts) {
      pairs += attention_pairs_decode(c);
      ctx_max = std::max(ctx_max, static_cast<double>(c));
      kv_tokens += static_cast<double>(c + 1);
    }
    double us = 0;
    us += 1.0 * c_.attention_layer_us[9];
    us += seqs * c_.attention_layer_us[10];
    us += pairs * c_.attention_layer_us[11];
    us += ctx_max * c_.attention_layer_us[12];
    attn_us = layers * std::max(0.0, us);
  } else {
    attn_us = layers * attention_layer_us(batch);
  }
  double moe_us = model_.is_moe() ? model_.moe_layers() * moe_layer_us(tokens) : 0.0;
  b.dense_s = dense_us * kUsToS;
  b.moe_s = moe_us * kUsToS;
  b.attention_s = attn_us * kUsToS;
  b.lm_head_s = std::max(0.0, c_.per_sequence_us[0] + c_.per_sequence_us[1] * seqs) * kUsToS;
  b.forward_kernels = decode_dense_kernels_ + (model_.is_moe() ? c_.moe_kernels * model_.moe_layers() : 0.0);
  b.attention_kernels = layers;
  b.logits_kernels = kLogitsKernels;
  if (decode_only) add_step_work(work_, tokens, seqs, pairs, kv_tokens, b);
  else add_step_work(work_, batch, b);
  return b;
}

std::string FittedModel::describe() const {
  std::ostringstream os;
  os << "fitted(" << model_.name << ", from " << c_.source_dir << ", " << c_.gpu << ", TP "
     << c_.tensor_parallel_size << ", vLLM "
     << c_.vllm_version << ")";
  return os.str();
}

}  // namespace kvsim::models
