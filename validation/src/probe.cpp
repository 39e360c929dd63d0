#include "validation/src/probe.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <tuple>

#include "sim/core/error.hpp"
#include "sim/io/stats.hpp"
#include "validation/src/text_maker.hpp"

namespace kvsim::validation {
namespace {

using nlohmann::ordered_json;

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return io::percentile_linear(v, 0.5);
}

std::string chat_body(const std::string& model, const std::string& text, std::int64_t out) {
  const nlohmann::json body{
      {"model", model},    {"messages", {{{"role", "user"}, {"content", text}}}},
      {"seed", 0},         {"temperature", 0.0},
      {"stream", true},    {"stream_options", {{"include_usage", true}}},
      {"min_tokens", out}, {"max_tokens", out}};
  return body.dump();
}

// Sends the bodies at once; returns their outcomes in the order given.
std::vector<StreamOutcome> send_all(StreamingClient& client,
                                    const std::vector<std::string>& bodies) {
  std::vector<std::uint64_t> ids;
  ids.reserve(bodies.size());
  for (const auto& b : bodies) ids.push_back(client.start("/v1/chat/completions", b));
  std::vector<StreamOutcome> done;
  while (client.active() > 0) {
    for (auto& o : client.poll(200 * kMillisecond)) done.push_back(std::move(o));
  }
  std::vector<StreamOutcome> ordered;
  for (const auto id : ids) {
    for (auto& o : done) {
      if (o.id == id) ordered.push_back(o);
    }
  }
  return ordered;
}

double ttft_ms(const StreamOutcome& o) { return to_ms(o.chat.first_token - o.sent); }

double tpot_ms(const StreamOutcome& o) {
  const std::int64_t n =
      o.chat.completion_tokens > 0 ? o.chat.completion_tokens : o.chat.content_chunks;
  if (n <= 1 || o.chat.last_token < 0) return 0;
  return to_ms(o.chat.last_token - o.chat.first_token) / static_cast<double>(n - 1);
}

}  // namespace

std::vector<double> concurrent_tpot_ms(const std::vector<const ChatResult*>& batch) {
  SimTime from = std::numeric_limits<SimTime>::min();
  SimTime to = std::numeric_limits<SimTime>::max();
  for (const ChatResult* c : batch) {
    if (c->chunk_times.empty()) return std::vector<double>(batch.size(), 0.0);
    from = std::max(from, c->chunk_times.front());
    to = std::min(to, c->chunk_times.back());
  }
  std::vector<double> out;
  out.reserve(batch.size());
  for (const ChatResult* c : batch) {
    const auto& t = c->chunk_times;
    SimTime span = 0;
    std::int64_t intervals = 0;
    for (std::size_t i = 1; i < t.size(); ++i) {
      if (t[i - 1] >= from && t[i] <= to) {
        span += t[i] - t[i - 1];
        ++intervals;
      }
    }
    const double tokens_per_chunk =
        c->completion_tokens > c->content_chunks && c->content_chunks > 0
            ? static_cast<double>(c->completion_tokens) / static_cast<double>(c->content_chunks)
            : 1.0;
    out.push_back(intervals > 0 ? to_ms(span) / (static_cast<double>(intervals) * tokens_per_chunk)
                                : 0.0);
  }
  return out;
}

ProbeResult run_probe(const ProbeOptions& opts) {
  if (opts.url.empty()) throw InputError("", 0, 0, "--url: the server's base URL is required");
  if (opts.repeats < 1 || opts.decode_tokens < 2)
    throw InputError("", 0, 0, "probe: repeats >= 1, decode tokens >= 2");
  ProbeResult res;
  res.url = opts.url;
  res.model = opts.model;
  res.decode_tokens = opts.decode_tokens;
  EstimateTokenizer estimate;
  std::unique_ptr<ServerTokenizer> server;
  try {
    server = std::make_unique<ServerTokenizer>(opts.url, opts.model);
  } catch (const InputError&) {
    if (opts.progress) opts.progress("no working /tokenize: sizing text with the estimate");
  }
  Tokenizer& tok = server ? static_cast<Tokenizer&>(*server) : estimate;
  res.tokenizer = tok.describe();
  TextMaker maker(tok);
  // Unique prompts: streams no earlier probe (or replay) used.
  std::random_device rd;
  std::uint64_t stream = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  const auto unique_text = [&](std::int64_t tokens) {
    return maker.segment_text(++stream, 0, tokens, false);
  };

  const WallClock clock;
  StreamingClient client(opts.url, opts.timeouts, RetryPolicy{0, 1.0}, clock);
  const auto record = [&](const StreamOutcome& o, const std::string& kind, std::int64_t prompt,
                          int batch) {
    if (!o.ok) {
      res.errors.push_back(kind + " " + std::to_string(prompt) + " tokens: " + o.error);
      return;
    }
    ProbePoint p;
    p.kind = kind;
    p.prompt_tokens = prompt;
    p.server_prompt_tokens = o.chat.prompt_tokens;
    p.cached_tokens = o.chat.cached_tokens;
    p.batch = batch;
    p.output_tokens = o.chat.completion_tokens;
    p.ttft_ms = ttft_ms(o);
    p.tpot_ms = tpot_ms(o);
    res.points.push_back(p);
  };
  for (int rep = 0; rep < opts.repeats; ++rep) {
    for (const std::int64_t len : opts.prompt_tokens) {
      if (opts.progress)
        opts.progress("prefill " + std::to_string(len) + " tokens, cold then cached");
      const std::string body = chat_body(opts.model, unique_text(len), 1);
      record(send_all(client, {body}).front(), "cold_prefill", len, 1);
      record(send_all(client, {body}).front(), "cached_prefix", len, 1);
    }
    if (opts.offload) {
      // Pushes `len`'s prompt out of the GPU KV cache; false (an error recorded) when the
      // server offers no way to.
      const auto evict = [&](std::int64_t len) {
        const HttpResponse reset = http_post_json(opts.url + "/reset_prefix_cache", "{}",
                                                  opts.timeouts.first_token_s);
        if (reset.status == 200) {
          res.tier_eviction = "reset_prefix_cache";
          return true;
        }
        if (opts.gpu_kv_tokens > 0) {
          // Distinct prompts, 4 at a time, until more than the GPU's KV tokens went through.
          res.tier_eviction = "flood";
          const std::int64_t each = std::max<std::int64_t>(len, 512);
          std::int64_t sent = 0;
          while (sent <= opts.gpu_kv_tokens + opts.gpu_kv_tokens / 10) {
            std::vector<std::string> bodies;
            bodies.reserve(4);
            for (int i = 0; i < 4; ++i)
              bodies.push_back(chat_body(opts.model, unique_text(each), 1));
            send_all(client, bodies);
            sent += 4 * each;
          }
          return true;
        }
        res.errors.push_back(
            "offload probe: the server has no /reset_prefix_cache (vLLM: set "
            "VLLM_SERVER_DEV_MODE=1) and --gpu-kv-tokens was not given for the flood");
        return false;
      };
      bool can_evict = true;
      for (const std::int64_t len : opts.prompt_tokens) {
        if (opts.progress)
          opts.progress("offload tier: " + std::to_string(len) + " tokens, cached, evicted, again");
        const std::string body = chat_body(opts.model, unique_text(len), 1);
        record(send_all(client, {body}).front(), "cold_prefill", len, 1);
        record(send_all(client, {body}).front(), "cached_prefix", len, 1);
        if (!(can_evict = evict(len))) break;
        record(send_all(client, {body}).front(), "tier_hit", len, 1);
      }
      // The same load while k others decode (tier_hit_busy): their answers are long enough
      // (4 x decode_tokens, at least 64) that a load which waits for one of them to finish
      // shows as a first token after that end.
      const int largest = *std::max_element(opts.batch_sizes.begin(), opts.batch_sizes.end());
      const std::int64_t len =
          *std::min_element(opts.prompt_tokens.begin(), opts.prompt_tokens.end());
      const std::int64_t others_tokens = std::max<std::int64_t>(4 * opts.decode_tokens, 64);
      for (int k = 1; can_evict && k < largest; ++k) {
        if (opts.progress) {
          opts.progress("offload tier: " + std::to_string(len) + " tokens again while " +
                        std::to_string(k) + " other request(s) decode");
        }
        const std::string body = chat_body(opts.model, unique_text(len), 1);
        send_all(client, {body});
        if (!(can_evict = evict(len))) break;
        std::vector<std::uint64_t> others;
        others.reserve(static_cast<std::size_t>(k));
        for (int i = 0; i < k; ++i) {
          others.push_back(client.start("/v1/chat/completions",
                                        chat_body(opts.model, unique_text(64), others_tokens)));
        }
        std::vector<StreamOutcome> done;
        const auto decoding = [&] {
          return std::all_of(others.begin(), others.end(),
                             [&](std::uint64_t id) { return client.first_token(id) >= 0; });
        };
        while (done.empty() && !decoding()) {
          for (auto& o : client.poll(5 * kMillisecond)) done.push_back(std::move(o));
        }
        if (!done.empty()) {  // one of them ended (failed) before all decoded: no point
          while (client.active() > 0) client.poll(200 * kMillisecond);
          res.errors.push_back("tier_hit_busy " + std::to_string(k) +
                               ": a request ended before all " + std::to_string(k) + " decoded");
          continue;
        }
        const std::uint64_t hit = client.start("/v1/chat/completions", body);
        while (client.active() > 0) {
          for (auto& o : client.poll(200 * kMillisecond)) done.push_back(std::move(o));
        }
        const auto h =
            std::find_if(done.begin(), done.end(), [&](const auto& o) { return o.id == hit; });
        SimTime first_end = std::numeric_limits<SimTime>::max();
        bool others_ok = true;
        for (const auto& o : done) {
          if (o.id == hit) continue;
          others_ok = others_ok && o.ok && o.chat.last_token >= 0;
          if (o.ok) first_end = std::min(first_end, o.chat.last_token);
        }
        if (h == done.end()) continue;
        record(*h, "tier_hit_busy", len, k + 1);
        if (!h->ok) continue;
        if (!others_ok) {
          res.points.pop_back();
          res.errors.push_back("tier_hit_busy " + std::to_string(k) + ": another request failed");
          continue;
        }
        res.points.back().others_done_ms = to_ms(first_end - h->sent);
      }
    }
    for (const int b : opts.batch_sizes) {
      for (const std::int64_t ctx : opts.decode_contexts) {
        if (opts.progress) {
          opts.progress("decode " + std::to_string(b) + " x " + std::to_string(opts.decode_tokens) +
                        " tokens at " + std::to_string(ctx) + " tokens of context");
        }
        std::vector<std::string> bodies;
        bodies.reserve(static_cast<std::size_t>(b));
        for (int i = 0; i < b; ++i)
          bodies.push_back(chat_body(opts.model, unique_text(ctx), opts.decode_tokens));
        const std::vector<StreamOutcome> outcomes = send_all(client, bodies);
        std::vector<const ChatResult*> answered;
        for (const auto& o : outcomes) {
          if (o.ok) answered.push_back(&o.chat);
        }
        // The window needs every request of the batch; with one failed it is not b decoding.
        const std::vector<double> concurrent = answered.size() == outcomes.size()
                                                   ? concurrent_tpot_ms(answered)
                                                   : std::vector<double>(outcomes.size(), 0.0);
        for (std::size_t i = 0; i < outcomes.size(); ++i) {
          record(outcomes[i], "decode", ctx, b);
          if (outcomes[i].ok) res.points.back().concurrent_tpot_ms = concurrent[i];
        }
      }
    }
  }
  return res;
}

std::string probe_json(const ProbeResult& r) {
  ordered_json j;
  j["format"] = "kvsim-probe";
  j["url"] = r.url;
  j["model"] = r.model;
  j["tokenizer"] = r.tokenizer;
  j["decode_tokens"] = r.decode_tokens;
  if (!r.tier_eviction.empty()) j["tier_eviction"] = r.tier_eviction;
  j["errors"] = r.errors;
  ordered_json pts = ordered_json::array();
  for (const auto& p : r.points) {
    pts.push_back({{"kind", p.kind},
                   {"prompt_tokens", p.prompt_tokens},
                   {"server_prompt_tokens", p.server_prompt_tokens},
                   {"cached_tokens", p.cached_tokens},
                   {"batch", p.batch},
                   {"output_tokens", p.output_tokens},
                   {"ttft_ms", p.ttft_ms},
                   {"tpot_ms", p.tpot_ms}});
    if (p.concurrent_tpot_ms >= 0) pts.back()["concurrent_tpot_ms"] = p.concurrent_tpot_ms;
    if (p.others_done_ms >= 0) pts.back()["others_done_ms"] = p.others_done_ms;
  }
  j["points"] = pts;
  return j.dump(2) + "\n";
}

ProbeResult load_probe(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, 0, "cannot read the probe file");
  std::stringstream ss;
  ss << in.rdbuf();
  const auto j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (!j.is_object() || j.value("format", "") != "kvsim-probe") {
    throw InputError(path, 0, 0, "not a probe file (written by kvsim probe)");
  }
  ProbeResult r;
  try {
    r.url = j.value("url", "");
    r.model = j.value("model", "");
    r.tokenizer = j.value("tokenizer", "");
    r.decode_tokens = j.value("decode_tokens", std::int64_t{0});
    r.tier_eviction = j.value("tier_eviction", "");
    for (const auto& p : j.at("points")) {
      ProbePoint q;
      q.kind = p.at("kind").get<std::string>();
      q.prompt_tokens = p.at("prompt_tokens").get<std::int64_t>();
      q.server_prompt_tokens = p.value("server_prompt_tokens", std::int64_t{-1});
      q.cached_tokens = p.value("cached_tokens", std::int64_t{-1});
      q.batch = p.value("batch", 1);
      q.output_tokens = p.value("output_tokens", std::int64_t{0});
      q.ttft_ms = p.at("ttft_ms").get<double>();
      q.tpot_ms = p.value("tpot_ms", 0.0);
      q.concurrent_tpot_ms = p.value("concurrent_tpot_ms", -1.0);
      q.others_done_ms = p.value("others_done_ms", -1.0);
      r.points.push_back(q);
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path, 0, 0, std::string("bad probe point: ") + e.what());
  }
  return r;
}

ProbeFit fit_probe(const ProbeResult& probe) {
  struct Row {
    std::array<double, 6> x;
    std::vector<double> ys_us;  // the repeats (and for a decode point, the batch's requests)
    const ProbePoint* p;
    double y_us = 0;  // their median
  };
  // One row per kind, new tokens, batch and cached tokens (context, for a decode), fitted to the
  // median of its measurements: a loaded machine only ever adds time, and one late request must
  // not move the fit.
  std::map<std::tuple<std::string, double, double, int>, std::size_t> index;
  std::vector<Row> rows;  // in the order of their first point
  int cold = 0, decode = 0;
  const auto add = [&](const ProbePoint& p, double c, const std::array<double, 6>& x, double y_ms) {
    const auto [it, fresh] = index.try_emplace({p.kind, x[1], c, p.batch}, rows.size());
    if (fresh) rows.push_back({x, {}, &p});
    rows[it->second].ys_us.push_back(y_ms * 1e3);
    return fresh ? 1 : 0;
  };
  for (const auto& p : probe.points) {
    const double len =
        static_cast<double>(p.server_prompt_tokens > 0 ? p.server_prompt_tokens : p.prompt_tokens);
    if (p.kind == "cold_prefill") {
      cold += add(p, 0, {1, len, len * (len + 1) / 2, 0, 0, 1}, p.ttft_ms);
    } else if (p.kind == "cached_prefix") {
      const double c = p.cached_tokens >= 0 ? static_cast<double>(p.cached_tokens) : len - 1;
      const double nt = std::max(1.0, len - c);
      add(p, c, {1, nt, nt * c + nt * (nt + 1) / 2, c, 0, 1}, p.ttft_ms);
    } else if (p.kind == "decode") {
      // While all of the batch decodes; files from before that was measured give the whole
      // request's TPOT, which for a batch > 1 includes waits for the others' prefills.
      const double tpot = p.concurrent_tpot_ms >= 0 ? p.concurrent_tpot_ms : p.tpot_ms;
      if (tpot <= 0) continue;
      const double n = p.batch;
      const double ctx = len + static_cast<double>(probe.decode_tokens) / 2;
      decode += add(p, ctx, {1, n, 0, 0, n * ctx, n}, tpot);
    }
  }
  if (cold < 2 || decode < 2) {
    throw InputError(
        "", 0, 0,
        "calibrate --measured: the probe needs cold prefills of at least 2 lengths and decode "
        "points at at least 2 batch sizes or contexts");
  }
  for (Row& r : rows) r.y_us = median_of(r.ys_us);
  std::array<bool, 6> active{true, true, true, true, true, true};
  Eigen::VectorXd coef = Eigen::VectorXd::Zero(6);
  for (int iter = 0; iter < 5; ++iter) {
    std::vector<int> cols;
    for (int k = 0; k < 6; ++k) {
      if (active[static_cast<std::size_t>(k)]) cols.push_back(k);
    }
    Eigen::MatrixXd a(static_cast<Eigen::Index>(rows.size()),
                      static_cast<Eigen::Index>(cols.size()));
    Eigen::VectorXd b(static_cast<Eigen::Index>(rows.size()));
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const double w = 1.0 / std::max(rows[i].y_us, 1.0);
      for (std::size_t k = 0; k < cols.size(); ++k) {
        a(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(k)) =
            rows[i].x[static_cast<std::size_t>(cols[k])] * w;
      }
      b(static_cast<Eigen::Index>(i)) = 1.0;
    }
    const Eigen::VectorXd sol = a.colPivHouseholderQr().solve(b);
    coef.setZero();
    bool negative = false;
    for (std::size_t k = 0; k < cols.size(); ++k) {
      coef(cols[k]) = sol(static_cast<Eigen::Index>(k));
      if (sol(static_cast<Eigen::Index>(k)) < 0) {
        active[static_cast<std::size_t>(cols[k])] = false;
        negative = true;
      }
    }
    if (!negative) break;
    coef = coef.cwiseMax(0.0);
  }
  ProbeFit fit;
  fit.s_us = coef(0);
  fit.t_us = coef(1);
  fit.q_us = coef(2);
  fit.r_us = coef(3);
  fit.d_us = coef(4);
  fit.u_us = coef(5);
  for (const Row& r : rows) {
    double y = 0;
    for (int k = 0; k < 6; ++k) y += r.x[static_cast<std::size_t>(k)] * coef(k);
    fit.residuals.push_back({r.p->kind, r.p->prompt_tokens, r.p->batch, r.y_us / 1e3, y / 1e3});
  }
  return fit;
}

models::FittedCoefficients probe_coefficients(const ProbeFit& fit, const ProbeResult& probe,
                                              int num_layers, const std::string& source) {
  if (num_layers <= 0)
    throw InputError("", 0, 0, "calibrate --measured: the model's num_layers must be > 0");
  const double layers = num_layers;
  models::FittedCoefficients c;
  c.source_dir = source;
  c.model = probe.model;
  c.gpu = "measured by kvsim probe at " + probe.url;
  c.vllm_version = "n/a";
  c.profiled_at = "";
  c.attribution = "kvsim probe measurements (validation/src/probe.hpp)";
  c.launch_floor_us = 0;
  c.dense_knee_tokens = 1e12;  // no tile steps
  c.dense_layer_us = {0, fit.t_us / layers, 0, 0};
  c.dense_step_us.assign(models::kDenseStepTerms, 0.0);
  c.dense_step_us[0] = fit.s_us;
  c.attention_layer_us.assign(models::kAttentionTerms, 0.0);
  c.attention_layer_us[2] = fit.q_us / layers;
  c.attention_layer_us[3] = fit.r_us / layers;
  c.attention_layer_us[11] = fit.d_us / layers;
  c.attention_layer_us[13] = fit.d_us / layers;
  c.per_sequence_us = {0, fit.u_us};
  return c;
}

bool has_tier_points(const ProbeResult& probe) {
  return std::any_of(probe.points.begin(), probe.points.end(),
                     [](const ProbePoint& p) { return p.kind == "tier_hit"; });
}

TierFit fit_tier(const ProbeResult& probe, double kv_bytes_per_token) {
  // Per prompt length, the median of the repeats: a loaded machine only ever adds time, and one
  // late request must not move the fit.
  std::map<std::int64_t, std::vector<double>> gpu, tier, tier_tokens;
  for (const auto& p : probe.points) {
    if (p.kind == "cached_prefix") {
      gpu[p.prompt_tokens].push_back(p.ttft_ms);
    } else if (p.kind == "tier_hit") {
      tier[p.prompt_tokens].push_back(p.ttft_ms);
      tier_tokens[p.prompt_tokens].push_back(
          static_cast<double>(p.cached_tokens >= 0 ? p.cached_tokens : p.prompt_tokens));
    }
  }
  TierFit fit;
  for (auto& [len, ttfts] : tier) {
    const auto g = gpu.find(len);
    if (g == gpu.end()) continue;
    fit.points.push_back({len, median_of(tier_tokens[len]) * kv_bytes_per_token,
                          median_of(ttfts) - median_of(g->second), 0});
  }
  if (fit.points.size() < 2) {
    throw InputError("", 0, 0,
                     "calibrate --measured: the offload-tier fit needs tier_hit points at 2 or more "
                     "prompt lengths (kvsim probe --offload)");
  }
  Eigen::MatrixXd a(static_cast<Eigen::Index>(fit.points.size()), 2);
  Eigen::VectorXd b(static_cast<Eigen::Index>(fit.points.size()));
  for (std::size_t i = 0; i < fit.points.size(); ++i) {
    const auto r = static_cast<Eigen::Index>(i);
    a(r, 0) = 1;
    a(r, 1) = fit.points[i].bytes;
    b(r) = fit.points[i].measured_extra_ms * 1e3;  // us
  }
  Eigen::VectorXd sol = a.colPivHouseholderQr().solve(b);
  fit.rate_resolved = sol(1) > 0;
  if (!fit.rate_resolved) {
    // The per-byte time is below the noise at the probed sizes: the least-squares fit with the
    // slope held at zero (latency = the mean extra), and the slowest rate the points allow, the
    // largest load's bytes over the rms deviation of the extras from that mean.
    sol(0) = b.mean();
    sol(1) = 0;
    const double rms_us = std::sqrt((b.array() - sol(0)).square().mean());
    if (!(sol(0) > 0)) {
      throw InputError("", 0, 0,
                       "calibrate --measured: loading from the offload tier was not slower than a "
                       "GPU hit; no tier rate can be fitted");
    }
    sol(1) = std::max(rms_us, 1.0) / a.col(1).maxCoeff();
  }
  fit.latency_us = std::max(sol(0), 0.0);
  fit.bytes_per_s = 1e6 / sol(1);
  double sq = 0;
  for (auto& p : fit.points) {
    p.fitted_extra_ms = (sol(0) + (fit.rate_resolved ? sol(1) * p.bytes : 0)) / 1e3;
    sq += (p.fitted_extra_ms - p.measured_extra_ms) * (p.fitted_extra_ms - p.measured_extra_ms);
  }
  fit.rms_error_ms = std::sqrt(sq / static_cast<double>(fit.points.size()));
  return fit;
}

bool has_busy_tier_points(const ProbeResult& probe) {
  return std::any_of(probe.points.begin(), probe.points.end(),
                     [](const ProbePoint& p) { return p.kind == "tier_hit_busy"; });
}

LoadGate fit_load_gate(const ProbeResult& probe) {
  std::map<int, std::vector<const ProbePoint*>> by_others;
  for (const auto& p : probe.points) {
    if (p.kind != "tier_hit_busy" || p.others_done_ms < 0 || p.batch < 2) continue;
    const std::int64_t len = p.server_prompt_tokens > 0 ? p.server_prompt_tokens : p.prompt_tokens;
    if (2 * p.cached_tokens < len) continue;  // not loaded from the tier
    by_others[p.batch - 1].push_back(&p);
  }
  LoadGate gate;
  for (const auto& [k, points] : by_others) {
    LoadGate::Row row;
    row.others = k;
    row.points = static_cast<int>(points.size());
    std::vector<double> ttft, done;
    for (const ProbePoint* p : points) {
      row.waited += p->ttft_ms > p->others_done_ms ? 1 : 0;
      ttft.push_back(p->ttft_ms);
      done.push_back(p->others_done_ms);
    }
    row.median_ttft_ms = median_of(ttft);
    row.median_others_done_ms = median_of(done);
    if (gate.prepare_max_running < 0 && 2 * row.waited > row.points)
      gate.prepare_max_running = k - 1;
    gate.rows.push_back(row);
  }
  return gate;
}

ProbeNoise probe_noise(const ProbeResult& probe) {
  std::map<std::tuple<std::string, std::int64_t, int>, std::vector<double>> ttft, tpot;
  for (const auto& p : probe.points) {
    const auto key = std::make_tuple(p.kind, p.prompt_tokens, p.batch);
    if (p.kind == "decode") {
      const double v = p.concurrent_tpot_ms > 0 ? p.concurrent_tpot_ms : p.tpot_ms;
      if (v > 0) tpot[key].push_back(v);
    } else if (p.kind == "tier_hit_busy") {
      continue;  // its TTFT is the others' timing, not a repeat of one measurement
    } else if (p.ttft_ms > 0) {
      ttft[key].push_back(p.ttft_ms);
    }
  }
  auto spread = [](const auto& groups, int& samples) {
    double deviation = 0;  // sum (x - m)^2
    double magnitude = 0;  // sum m^2
    samples = 0;
    for (const auto& [key, values] : groups) {
      if (values.size() < 2) continue;
      const double med = median_of(values);
      if (!(med > 0)) continue;
      for (const double x : values) {
        deviation += (x - med) * (x - med);
        magnitude += med * med;
        ++samples;
      }
    }
    return magnitude > 0 ? std::sqrt(deviation / magnitude) : 0.0;
  };
  ProbeNoise n;
  n.ttft_spread = spread(ttft, n.ttft_samples);
  n.tpot_spread = spread(tpot, n.tpot_samples);
  return n;
}

std::vector<std::string> widen_for_noise(std::map<std::string, double>& tolerances,
                                         const ProbeNoise& noise, double k) {
  std::vector<std::string> lines;
  auto percent = [](double v) {
    std::ostringstream os;
    os << std::fixed << std::setprecision(1) << v << " %";
    return os.str();
  };
  auto number = [](double v) {
    std::ostringstream os;
    os << v;
    return os.str();
  };
  for (auto& [name, bound] : tolerances) {
    double spread = 0;
    std::string source;
    if (name.rfind("ttft_", 0) == 0) {
      spread = noise.ttft_spread;
      source = "TTFT";
    } else if (name.rfind("tpot_", 0) == 0) {
      spread = noise.tpot_spread;
      source = "TPOT";
    } else if (name.rfind("latency_", 0) == 0 || name == "requests_per_sec") {
      spread = std::max(noise.ttft_spread, noise.tpot_spread);
      source = "TTFT and TPOT";
    } else {
      continue;
    }
    const double from_noise = k * 100.0 * spread;
    const double before = bound;
    bound = std::max(bound, from_noise);
    std::ostringstream line;
    line << name << " tolerance " << percent(bound) << " = max(" << percent(before) << ", "
         << number(k) << " x " << percent(100.0 * spread) << " run-to-run spread of the probe's "
         << source << " repeats)";
    lines.push_back(line.str());
  }
  return lines;
}

}  // namespace kvsim::validation
