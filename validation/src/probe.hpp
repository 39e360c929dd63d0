#pragma once
// kvsim probe: measures a live deployment with controlled requests, and the fit that turns the
// measurements into a compute model a scenario can use (compute.kind fitted).
//
// Measurements (one user message of exactly sized text, min_tokens = max_tokens, streamed):
//   cold_prefill  a prompt no earlier request shares (unique text): TTFT against prompt length
//   cached_prefix the same prompt sent again right after: TTFT with the prefix cached (the
//                 server reports cached_tokens)
//   tier_hit      (with offload) the prompt once more after it was pushed out of the GPU KV cache
//                 (POST /reset_prefix_cache, which vLLM offers in dev mode and which leaves
//                 offloaded KV in place; else distinct prompts totalling more than the GPU's KV
//                 tokens): TTFT with the prefix loaded back from the offload tier
//   tier_hit_busy (with offload) the same, sent while k = 1 .. (largest batch size - 1) other
//                 requests decode long answers: whether the server starts the load at once or
//                 only once one of them finished (others_done_ms: from the hit's send to the
//                 first of them ending); fit_load_gate reads it
//   decode        b requests at once (b = 1, 2, 4, ...) of a given context, each generating
//                 decode_tokens: TPOT = time per output token while b sequences decode, read
//                 from the chunks that arrived while all b were past their first token and
//                 none had finished (concurrent_tpot_ms); over a whole request (tpot_ms) a
//                 stream's decode would also wait for the prefills of the others
// Step-time model fitted to them (microseconds; T = new tokens of the step, c = cached tokens
// of a prefill, n = decoding sequences, D = their summed context):
//   prefill step  = s + t T + q (T c + T (T + 1) / 2) + r c + u
//   decode step   = s + t n + d D + u n
//   TTFT (cold, L tokens)    = s + t L + q L (L + 1) / 2 + u
//   TTFT (cached c of L)     = s + t (L - c) + q ((L - c) c + (L - c)(L - c + 1) / 2) + r c + u
//   TPOT (n sequences, C)    = s + t n + d n C + u n,  C = context + decode_tokens / 2
// s holds everything per request or per step the server adds (HTTP, scheduling); u what each
// sequence of a step adds beyond its token's compute (sampling, the server's per-token work, and
// on an engine that does not batch every decoding sequence into every step, the steps it
// runs apart): told apart from t by the decode points at several batch sizes. The
// fit is least squares on relative errors (one row per kind, length and batch, at the median of
// its repeats, divided by it; Eigen), with coefficients held at zero when the unconstrained fit
// makes them negative. The result maps onto the fitted compute model (models/fitted_model.hpp)
// per layer: a1 = t / L, e2 = q / L, e3 = r / L, e11 = d / L, dense_step b0 = s, per_sequence
// c1 = u, everything else 0, so that FittedModel with compute.overheads.enabled false gives
// these step times.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "models/fitted_model.hpp"
#include "validation/src/http_client.hpp"

namespace kvsim::validation {

struct ProbeOptions {
  std::string url;
  std::string model;
  HttpTimeouts timeouts;
  std::vector<std::int64_t> prompt_tokens{64, 256, 512, 1024, 1536};
  std::vector<int> batch_sizes{1, 2, 4};
  std::vector<std::int64_t> decode_contexts{64, 1024};
  std::int64_t decode_tokens = 32;
  int repeats = 2;
  bool offload = false;             // measure tier_hit points
  std::int64_t gpu_kv_tokens = 0;   // for the flood when the server has no /reset_prefix_cache
  std::function<void(const std::string&)> progress;
};

struct ProbePoint {
  std::string kind;  // cold_prefill | cached_prefix | tier_hit | tier_hit_busy | decode
  std::int64_t prompt_tokens = 0;          // content tokens sent (per request)
  std::int64_t server_prompt_tokens = -1;  // usage.prompt_tokens
  std::int64_t cached_tokens = -1;         // usage cached_tokens
  int batch = 1;
  std::int64_t output_tokens = 0;
  double ttft_ms = 0;
  double tpot_ms = 0;  // first to last token, over the whole request
  // decode points: TPOT while every request of the batch was decoding (concurrent_tpot_ms below);
  // 0 when that window held no interval of this request, -1 when not measured (older files)
  double concurrent_tpot_ms = -1;
  // tier_hit_busy: from the hit's send to the end of the first of the other requests to finish
  // (its last token); -1 for other kinds.
  double others_done_ms = -1;
};

// For requests sent at once (one decode point's batch), each request's time per output token
// over the intervals between its content chunks that lie wholly inside the window in which every
// request was decoding: from the latest first token to the earliest last token. A request whose
// usage reports more tokens than chunks counts completion_tokens / content_chunks per chunk.
// 0 for a request with no interval inside the window (or no chunk times).
std::vector<double> concurrent_tpot_ms(const std::vector<const ChatResult*>& batch);

struct ProbeResult {
  std::string url;
  std::string model;
  std::string tokenizer;
  std::int64_t decode_tokens = 0;
  std::string tier_eviction;  // how tier_hit prompts left the GPU: reset_prefix_cache | flood
  std::vector<ProbePoint> points;
  std::vector<std::string> errors;
};

// Runs the probe; server failures are collected in `errors` (a point is skipped), bad options
// throw InputError.
ProbeResult run_probe(const ProbeOptions& options);
std::string probe_json(const ProbeResult& r);
ProbeResult load_probe(const std::string& path);

struct ProbeFit {
  double s_us = 0, t_us = 0, q_us = 0, r_us = 0, d_us = 0, u_us = 0;
  // Per row (kind, length, batch): the median measured and the fitted (ms), for the residual table.
  struct Residual {
    std::string kind;
    std::int64_t prompt_tokens;
    int batch;
    double measured_ms;
    double fitted_ms;
  };
  std::vector<Residual> residuals;
};

// Throws InputError when there are too few points of a kind to fit.
ProbeFit fit_probe(const ProbeResult& probe);
// The fit as fitted-model coefficients for a model with `num_layers` layers.
models::FittedCoefficients probe_coefficients(const ProbeFit& fit, const ProbeResult& probe,
                                              int num_layers, const std::string& source);

// The offload tier's load path fitted to the tier_hit points (Eigen least squares over the
// prompt lengths): for each, t_tier - t_gpu_hit = latency + bytes / rate, with t_tier and
// t_gpu_hit the medians over the repeats of the tier_hit and cached_prefix TTFTs at that length,
// bytes = cached tokens (usage) x the model's KV bytes per token.
struct TierFit {
  double latency_us = 0;
  double bytes_per_s = 0;
  double rms_error_ms = 0;  // of the fitted extra TTFT against the measured one
  // false: the extra TTFT did not grow with the bytes at the probed sizes (the per-byte time is
  // below the noise): latency = the mean extra, bytes_per_s = the slowest rate the points allow
  // (the largest load's bytes over the rms deviation of the extras from their mean).
  bool rate_resolved = true;
  struct Point {
    std::int64_t prompt_tokens;
    double bytes;
    double measured_extra_ms;
    double fitted_extra_ms;
  };
  std::vector<Point> points;
};
// Throws InputError when there are fewer than 2 prompt lengths with tier_hit and cached_prefix
// points, or a load was on average not slower than a GPU hit.
TierFit fit_tier(const ProbeResult& probe, double kv_bytes_per_token);
bool has_tier_points(const ProbeResult& probe);

// Whether a load from the offload tier waits for the engine to be nearly idle, from the
// tier_hit_busy points: with k other requests decoding, the load waited when the hit's first
// token came after the first of them finished (ttft_ms > others_done_ms); only points whose
// prefix was really loaded count (cached tokens at least half the prompt). For each k the
// majority of its repeats decides; prepare_max_running = (the smallest k whose loads waited)
// - 1, or -1 when none waited (no gate seen up to the largest k probed): the scenario key
// engine.prepare_max_running.
struct LoadGate {
  int prepare_max_running = -1;
  struct Row {
    int others = 0;  // k
    int points = 0;  // usable repeats
    int waited = 0;  // of them, loads that waited for one of the k to finish
    double median_ttft_ms = 0;
    double median_others_done_ms = 0;
  };
  std::vector<Row> rows;  // by k
};
bool has_busy_tier_points(const ProbeResult& probe);
LoadGate fit_load_gate(const ProbeResult& probe);

// The run-to-run noise of timing on the probed machine, from the probe's repeats: over every
// point (kind, prompt length, batch) measured two or more times, each repeat x's deviation from
// its point's median m, spread = sqrt(sum (x - m)^2 / sum m^2): the RMS deviation relative to
// the RMS time, so a few milliseconds of jitter on a 10 ms cached-prefix TTFT do not count as
// much as on a 1 s prefill (one late request on a loaded machine still counts, squared). TTFT: the
// cold_prefill, cached_prefix and tier_hit points; TPOT: the decode points' concurrent TPOT
// (their whole-request TPOT when the window held none).
struct ProbeNoise {
  double ttft_spread = 0;  // fraction
  double tpot_spread = 0;
  int ttft_samples = 0;    // repeats that entered each
  int tpot_samples = 0;
};
ProbeNoise probe_noise(const ProbeResult& probe);

// Tolerances no tighter than the noise allows: each timing bound given (ttft_*, tpot_*,
// latency_*, requests_per_sec) becomes max(bound, k x spread), with the TTFT spread for ttft_*,
// the TPOT spread for tpot_*, the larger of the two for latency_* and requests_per_sec (a
// request's latency is its TTFT plus its decode). Bounds on tokens and the cache hit rate are
// not timing and stay. Returns one line per bound saying what it became and why, for the report.
std::vector<std::string> widen_for_noise(std::map<std::string, double>& tolerances,
                                         const ProbeNoise& noise, double k);

}  // namespace kvsim::validation
