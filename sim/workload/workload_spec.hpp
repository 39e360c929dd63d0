#pragma once
// What a scenario's `workload:` section says: vLLM's multi-turn benchmark (its synthetic
// generation config or a conversations file, driven by its closed-loop client model) or an
// open-loop trace replay. Field meanings follow benchmarks/multi_turn/ in vLLM
// (see docs/workloads.md).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/units.hpp"

namespace kvsim::workload {

// One numeric field of vLLM's generation config: {"distribution": name, ...params}.
enum class DistKind { kConstant, kUniform, kLognormal, kZipf, kPoisson };

struct Distribution {
  DistKind kind = DistKind::kConstant;
  double value = 0;          // constant
  double min = 0, max = 0;   // uniform (inclusive); max also caps lognormal/zipf/poisson
  bool has_max = false;
  bool integer_bounds = true;  // uniform: both bounds were integers (randint) or not (uniform)
  // lognormal: either average (+ median_ratio) or mean + sigma of the underlying normal
  bool has_average = false;
  double average = 0, median_ratio = 0.85;
  double mean = 0, sigma = 0;
  double alpha = 0;  // zipf exponent / poisson lambda
};

// vLLM bench_dataset.py generation config ("filetype": "generate_conversations").
struct GenerationConfig {
  int num_conversations = 24;
  std::vector<std::string> text_files;  // accepted and recorded; token counts need no text
  bool print_stats = false;
  Distribution num_turns;                 // messages (user+assistant), rounded up to even, >= 2
  Distribution common_prefix_num_tokens;  // sampled once for all conversations
  Distribution prefix_num_tokens;         // per conversation, first user turn only
  Distribution num_tokens;                // user turn length
  Distribution output_num_tokens;         // assistant turn length
};

// Chat-template tokens the server adds around message contents (content-only token counts
// are what the benchmark reports; the server computes over the templated prompt).
// Llama 3.1 defaults: <|begin_of_text|> plus the default system header with its dates,
// <|start_header_id|>role<|end_header_id|>\n\n (4) ... <|eot_id|> (1) per message,
// and the 4-token assistant header as the generation prompt.
struct ChatTemplate {
  int preamble_tokens = 26;
  int per_message_tokens = 5;
  int generation_prompt_tokens = 4;
};

// How a client picks its next active conversation (--conversation-sampling).
enum class ConversationSampling : std::uint8_t { kRoundRobin, kRandom };

// The benchmark's client model (benchmark_serving_multi_turn.py flags).
struct ClientSpec {
  int num_clients = 1;
  int max_active_conversations = 0;  // 0: = num_clients
  ConversationSampling conversation_sampling = ConversationSampling::kRoundRobin;
  double request_rate = 0;           // per client, req/s; 0 = no delay
  std::int64_t max_num_requests = 0;  // 0 = unlimited
  int max_turns = 0;                 // 0 = unlimited (messages, user+assistant)
  bool warmup_step = false;
  bool early_stop = true;
  int limit_min_tokens = 0;  // 0: from dataset; <0: no limit; >0 with limit_max_tokens
  int limit_max_tokens = 0;
};

// Filters of vLLM's benchmarks/multi_turn/convert_sharegpt_to_openai.py, for raw ShareGPT input
// (0 means "not given", as the script's `if x:` tests treat it).
struct ShareGptFilter {
  std::int64_t seed = 0;             // --seed (random.seed: shuffle, then sample)
  std::int64_t max_items = 0;        // --max-items: sample this many conversations; 0 = all
  int min_turns = 0;                 // --min-turns: messages, before max_turns truncation
  int max_turns = 0;                 // --max-turns: keep the first messages; 0 = all
  std::int64_t min_content_len = 0;  // --min-content-len, characters (code points)
  std::int64_t max_content_len = 0;  // --max-content-len
  bool exclude_non_english = true;   // keep only all-ASCII conversations (--no-exclude-non-english)
};

// The trace formats kvsim reads (sim/workload/trace.hpp); kAuto detects one from the content.
enum class TraceFormat : std::uint8_t {
  kAuto,
  kMooncake,
  kBailian,
  kAzure,
  kBurstGpt,
  kShareGpt,
  kOpenAi,
};

// Every format, in the order the scenario reference lists them.
inline constexpr std::array<TraceFormat, 7> kTraceFormats{
    TraceFormat::kAuto,     TraceFormat::kMooncake, TraceFormat::kBailian, TraceFormat::kAzure,
    TraceFormat::kBurstGpt, TraceFormat::kShareGpt, TraceFormat::kOpenAi};

// The scenario's spelling: "auto", "mooncake", "bailian", "azure", "burstgpt", "sharegpt",
// "openai".
constexpr const char* trace_format_name(TraceFormat f) {
  switch (f) {
    case TraceFormat::kAuto:
      return "auto";
    case TraceFormat::kMooncake:
      return "mooncake";
    case TraceFormat::kBailian:
      return "bailian";
    case TraceFormat::kAzure:
      return "azure";
    case TraceFormat::kBurstGpt:
      return "burstgpt";
    case TraceFormat::kShareGpt:
      return "sharegpt";
    case TraceFormat::kOpenAi:
      return "openai";
  }
  return "auto";
}

// open: each request at its timestamp; closed: a turn also waits for its previous turn's answer.
enum class TraceMode : std::uint8_t { kOpen, kClosed };

// The scenario's spelling: "open", "closed".
constexpr const char* trace_mode_name(TraceMode m) {
  switch (m) {
    case TraceMode::kOpen:
      return "open";
    case TraceMode::kClosed:
      return "closed";
  }
  return "open";
}

struct TraceSpec {
  std::string file;
  TraceFormat format = TraceFormat::kAuto;
  TraceMode mode = TraceMode::kOpen;
  double time_scale = 1.0;        // multiply inter-arrival times
  double rate_scale = 1.0;        // multiply the request rate (divide times)
  SimTime start = 0;              // window start, in the trace's own time
  SimTime duration = 0;           // window length; 0 = to the end
  std::int64_t max_requests = 0;  // 0 = all
  int hash_block_tokens = 0;      // tokens per trace hash id; 0 = the format's (Mooncake 512)
};

struct WorkloadSpec {
  enum class Kind { kMultiTurn, kTrace };
  Kind kind = Kind::kMultiTurn;
  // Multi-turn input: exactly one of an inline generation config or a vLLM input file
  // (JSON dict = generation config, JSON list = conversations).
  std::optional<GenerationConfig> generation;
  std::string input_file;
  ShareGptFilter sharegpt;  // applies when input_file is a raw ShareGPT file
  ClientSpec clients;
  ChatTemplate chat_template;
  TraceSpec trace;
  std::vector<double> warmup_percentages{0.0};
};

}  // namespace kvsim::workload
