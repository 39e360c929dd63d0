#include "models/profile_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <utility>

#include "models/roofline.hpp"
#include "sim/core/error.hpp"

namespace kvsim::models {

namespace {

constexpr double kUsToS = 1e-6;

// Interpolation along one axis: value = (1 - w) v[i0] + w v[i1].
struct AxisWeight {
  std::size_t i0 = 0;
  std::size_t i1 = 0;
  double w = 0;
};

AxisWeight axis_weight(const std::vector<double>& g, double x) {
  const std::size_t n = g.size();
  if (n == 1 || x <= g.front()) return {0, 0, 0};
  if (x >= g.back()) {
    if (x == g.back()) return {n - 1, n - 1, 0};
    return {n - 2, n - 1, (x - g[n - 2]) / (g[n - 1] - g[n - 2])};  // linear extrapolation
  }
  const auto it = std::upper_bound(g.begin(), g.end(), x);
  const auto i = static_cast<std::size_t>(it - g.begin()) - 1;  // g[i] <= x < g[i + 1]
  if (x == g[i]) return {i, i, 0};
  if (g[i] > 0) return {i, i + 1, std::log2(x / g[i]) / std::log2(g[i + 1] / g[i])};
  return {i, i + 1, (x - g[i]) / (g[i + 1] - g[i])};
}

}  // namespace

ProfileGrid::ProfileGrid(std::vector<std::vector<double>> axes) : axes_(std::move(axes)) {
  KVSIM_ASSERT(!axes_.empty() && axes_.size() <= kMaxAxes, "grid needs 1 to 4 axes");
  std::size_t size = 1;
  for (auto& a : axes_) {
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
    KVSIM_ASSERT(!a.empty(), "grid axis without values");
    size *= a.size();
  }
  values_.assign(size, std::numeric_limits<double>::quiet_NaN());
}

bool ProfileGrid::set(const std::array<double, kMaxAxes>& at, double value) {
  std::size_t idx = 0;
  for (std::size_t k = 0; k < axes_.size(); ++k) {
    const auto& a = axes_[k];
    const auto it = std::lower_bound(a.begin(), a.end(), at[k]);
    if (it == a.end() || *it != at[k]) return false;
    idx = idx * a.size() + static_cast<std::size_t>(it - a.begin());
  }
  values_[idx] = value;
  return true;
}

bool ProfileGrid::complete() const {
  return std::none_of(values_.begin(), values_.end(), [](double v) { return std::isnan(v); });
}

double ProfileGrid::at(const std::array<double, kMaxAxes>& at) const {
  const std::size_t n = axes_.size();
  std::array<AxisWeight, kMaxAxes> w{};
  for (std::size_t k = 0; k < n; ++k) w[k] = axis_weight(axes_[k], at[k]);
  double sum = 0;
  const unsigned corners = 1U << n;
  for (unsigned mask = 0; mask < corners; ++mask) {
    double weight = 1;
    std::size_t idx = 0;
    bool skip = false;
    for (std::size_t k = 0; k < n; ++k) {
      const bool hi = (mask >> k) & 1U;
      if (hi && w[k].i0 == w[k].i1) {
        skip = true;
        break;
      }
      weight *= hi ? w[k].w : 1 - w[k].w;
      idx = idx * axes_[k].size() + (hi ? w[k].i1 : w[k].i0);
    }
    if (skip || weight == 0) continue;
    const double v = values_[idx];
    KVSIM_ASSERT(!std::isnan(v), "profile grid point without a value");
    sum += weight * v;
  }
  return sum;
}

StepWorkTerms::StepWorkTerms(const ModelSpec& model)
    : dense_params(static_cast<double>(model.dense_params())),
      attention(4.0 * model.num_layers * model.num_attention_heads * model.head_dim),
      lm_head(static_cast<double>(model.hidden_size) * model.vocab_size),
      weight_bytes(dtype_bytes(model.dtype)),
      kv_bytes(model.kv_bytes_per_token().as_double()) {}

void add_step_work(const StepWorkTerms& t, const BatchShape& batch, StepBreakdown& b) {
  const double tokens = static_cast<double>(batch.num_tokens());
  const double seqs = static_cast<double>(batch.num_sequences());
  double pairs = 0;
  double kv_tokens = 0;
  for (const auto& p : batch.prefills) {
    pairs += attention_pairs_prefill(p.new_tokens, p.cached_tokens);
    kv_tokens += static_cast<double>(p.cached_tokens + 2 * p.new_tokens);
  }
  for (const auto c : batch.decode_contexts) {
    pairs += attention_pairs_decode(c);
    kv_tokens += static_cast<double>(c + 1);
  }
  add_step_work(t, tokens, seqs, pairs, kv_tokens, b);
}

void add_step_work(const StepWorkTerms& t, double tokens, double seqs, double pairs, double kv_tokens,
                   StepBreakdown& b) {
  b.flops = 2.0 * t.dense_params * tokens + t.attention * pairs + 2.0 * t.lm_head * seqs;
  b.bytes = (t.dense_params + t.lm_head) * t.weight_bytes + t.kv_bytes * kv_tokens;
}

void add_step_work(const ModelSpec& model, const BatchShape& batch, StepBreakdown& b) {
  add_step_work(StepWorkTerms(model), batch, b);
}

double effective_decode_context(const std::vector<std::int64_t>& contexts, double alpha) {
  if (contexts.empty()) return 0;
  double sum = 0;
  std::int64_t max = 0;
  for (const auto c : contexts) {
    sum += static_cast<double>(c);
    max = std::max(max, c);
  }
  const double mean = sum / static_cast<double>(contexts.size());
  return mean + alpha * (static_cast<double>(max) - mean);
}

ProfileModel::ProfileModel(const ProfileBundle& bundle, ModelSpec model, ProfileParams params, MoeLayout moe)
    : model_(std::move(model)), params_(std::move(params)), work_(model_), source_(bundle.tables_dir), moe_layout_(moe) {
  if (model_.num_layers <= 0) throw InputError("", 0, 0, "profile model: num_layers must be > 0");

  launch_floor_us_ = std::numeric_limits<double>::infinity();
  for (const auto& op : bundle.layer_ops) {
    layer_ops_.emplace_back(bundle.dense_op(op.name), op.count);
    launch_floor_us_ = std::min(launch_floor_us_, layer_ops_.back().first.y.front());
  }
  for (const auto& op : dense_step_ops()) {
    step_ops_.push_back(bundle.dense_op(op));
    launch_floor_us_ = std::min(launch_floor_us_, step_ops_.back().y.front());
  }
  double per_layer = 0;
  for (const auto& op : layer_ops_) per_layer += op.second;
  forward_kernels_ = model_.num_layers * per_layer + static_cast<double>(step_ops_.size()) +
                     (model_.is_moe() ? kMoeBlockKernels * model_.moe_layers() : 0.0);
  if (model_.is_moe()) {
    if (!bundle.has_moe()) {
      throw InputError(bundle.tables_dir, 0, 0,
                       model_.name + " is a mixture-of-experts model and the bundle has no moe.csv");
    }
    moe_ = fit_moe_block(bundle.moe);
  }
  lm_head_ = bundle.per_sequence_op("lm_head");
  sampler_ = bundle.per_sequence_op("sampler");
  alpha_ = params_.skew_blend ? bundle.skew_alpha() : 0.0;

  const std::string path = bundle.tables_dir + "/attention.csv";
  std::vector<double> pc, pk, dn, dk, mc, mk, mn, md;
  for (const auto& p : bundle.attention) {
    if (p.prefill_chunk == 0 && p.kv_prefill != 0) {
      throw InputError(path, p.line, 1, "kv_prefill without a prefill chunk");
    }
    if (p.n_decode == 0 && p.kv_decode != 0) {
      throw InputError(path, p.line, 1, "kv_decode without decodes");
    }
    const auto c = static_cast<double>(p.prefill_chunk);
    const auto k = static_cast<double>(p.kv_prefill);
    const auto n = static_cast<double>(p.n_decode);
    const auto d = static_cast<double>(p.kv_decode);
    if (p.n_decode == 0) {
      pc.push_back(c);
      pk.push_back(k);
    } else if (p.prefill_chunk == 0) {
      dn.push_back(n);
      dk.push_back(d);
    } else {
      mc.push_back(c);
      mk.push_back(k);
      mn.push_back(n);
      md.push_back(d);
    }
  }
  if (pc.empty() || dn.empty() || mc.empty()) {
    throw InputError(path, 0, 0,
                     "need prefill-only, decode-only and mixed points (prefill_chunk > 0 with "
                     "n_decode > 0)");
  }
  prefill_ = ProfileGrid({pc, pk});
  decode_ = ProfileGrid({dn, dk});
  mixed_ = ProfileGrid({mc, mk, mn, md});
  for (const auto& p : bundle.attention) {
    const auto c = static_cast<double>(p.prefill_chunk);
    const auto k = static_cast<double>(p.kv_prefill);
    const auto n = static_cast<double>(p.n_decode);
    const auto d = static_cast<double>(p.kv_decode);
    if (p.n_decode == 0) {
      prefill_.set({c, k, 0, 0}, p.time_us);
    } else if (p.prefill_chunk == 0) {
      decode_.set({n, d, 0, 0}, p.time_us);
    } else {
      mixed_.set({c, k, n, d}, p.time_us);
    }
  }
  if (!prefill_.complete() || !decode_.complete() || !mixed_.complete()) {
    throw InputError(path, 0, 0,
                     "the attention grid is incomplete: every combination of the listed "
                     "prefill_chunk, kv_prefill, n_decode and kv_decode values needs a row");
  }
  prefill_floor_us_ = prefill_.at({prefill_.axis(0).front(), prefill_.axis(1).front(), 0, 0});
}

double ProfileModel::attention_layer_us(double prefill_chunk, double kv_prefill, double n_decode,
                                        double kv_decode) const {
  if (prefill_chunk <= 0 && n_decode <= 0) return 0;
  if (prefill_chunk <= 0) return decode_.at({n_decode, kv_decode, 0, 0});
  if (n_decode <= 0) return prefill_.at({prefill_chunk, kv_prefill, 0, 0});
  return mixed_.at({prefill_chunk, kv_prefill, n_decode, kv_decode});
}

StepBreakdown ProfileModel::step_time(const BatchShape& batch) const {
  StepBreakdown b;
  if (batch.empty()) return b;
  const double tokens = static_cast<double>(batch.num_tokens());
  const double seqs = static_cast<double>(batch.num_sequences());
  const double layers = model_.num_layers;

  double dense_layer = 0;
  for (const auto& [curve, count] : layer_ops_) dense_layer += count * curve.at(tokens);
  double dense_us = layers * dense_layer;
  for (const auto& curve : step_ops_) dense_us += curve.at(tokens);

  const double n_decode = static_cast<double>(batch.decode_contexts.size());
  const double kv_decode = effective_decode_context(batch.decode_contexts, alpha_);
  double attn_layer = 0;
  if (batch.prefills.empty()) {
    attn_layer = attention_layer_us(0, 0, n_decode, kv_decode);
  } else {
    std::size_t lead = 0;
    double lead_pairs = -1;
    for (std::size_t i = 0; i < batch.prefills.size(); ++i) {
      const auto& p = batch.prefills[i];
      const double pairs = attention_pairs_prefill(p.new_tokens, p.cached_tokens);
      if (pairs > lead_pairs) {
        lead = i;
        lead_pairs = pairs;
      }
    }
    for (std::size_t i = 0; i < batch.prefills.size(); ++i) {
      const auto& p = batch.prefills[i];
      const auto c = static_cast<double>(p.new_tokens);
      const auto k = static_cast<double>(p.cached_tokens);
      if (i == lead) {
        attn_layer += attention_layer_us(c, k, n_decode, kv_decode);
      } else {
        attn_layer += std::max(0.0, attention_layer_us(c, k, 0, 0) - prefill_floor_us_);
      }
    }
  }
  double attn_us = layers * attn_layer;
  double moe_us = model_.is_moe() ? model_.moe_layers() *
                                        moe_layer_us(moe_.us, moe_.experts_per_wave, model_, moe_layout_, tokens)
                                  : 0.0;

  b.forward_kernels = forward_kernels_;
  b.attention_kernels = layers;
  b.logits_kernels = kLogitsKernels;

  b.dense_s = dense_us * kUsToS;
  b.moe_s = moe_us * kUsToS;
  b.attention_s = attn_us * kUsToS;
  b.lm_head_s = (lm_head_.at(seqs) + sampler_.at(seqs)) * kUsToS;
  add_step_work(work_, batch, b);
  return b;
}

std::string ProfileModel::describe() const {
  std::ostringstream os;
  os << "profile(" << model_.name << ", bundle " << source_ << ", skew_alpha=" << alpha_ << ")";
  return os.str();
}

}  // namespace kvsim::models
