#include "sim/workload/trace.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>

#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/limits.hpp"
#include "sim/workload/azure_trace.hpp"
#include "sim/workload/bailian_trace.hpp"
#include "sim/workload/burstgpt_trace.hpp"
#include "sim/workload/distributions.hpp"
#include "sim/workload/mooncake_trace.hpp"
#include "sim/workload/sharegpt.hpp"
#include "sim/workload/vllm_input.hpp"

namespace kvsim::workload {
namespace {

constexpr std::uint64_t kTraceTailSalt = 0x74726163657461ULL;      // "tracea"
constexpr std::uint64_t kTraceOutputSalt = 0x74726163656f7574ULL;  // "traceout"
constexpr int kConversationBlockTokens = 16;                       // vLLM's default block size
constexpr std::size_t kDetectBytes = 1 << 16;

std::string read_all(const std::string& path) { return read_input(path, "the trace file"); }

// The first key of the first object in a JSON list's head: "conversations" or "messages" decide;
// kAuto when neither is there.
TraceFormat list_format(const std::string& head) {
  const auto conv = head.find("\"conversations\"");
  const auto msgs = head.find("\"messages\"");
  if (conv == std::string::npos && msgs == std::string::npos) return TraceFormat::kAuto;
  return conv < msgs ? TraceFormat::kShareGpt : TraceFormat::kOpenAi;
}

}  // namespace

const std::vector<std::string>& trace_formats() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    out.reserve(kTraceFormats.size());
    for (const auto f : kTraceFormats) out.emplace_back(trace_format_name(f));
    return out;
  }();
  return names;
}

TraceFormat parse_trace_format(const std::string& name, const std::string& where) {
  for (const auto f : kTraceFormats) {
    if (name == trace_format_name(f)) return f;
  }
  std::string valid;
  for (const auto& n : trace_formats()) valid += (valid.empty() ? "" : ", ") + n;
  throw InputError(
      Diagnostic{"", 0, 0, where, "unknown trace format '" + name + "' (valid: " + valid + ")"});
}

TraceFormat detect_trace_format(const std::string& file) {
  const auto in = open_input(file, "the trace file");
  const std::string path = input_display_name(file);
  std::string head(kDetectBytes, '\0');
  in->read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in->gcount()));
  if (head.rfind("\xEF\xBB\xBF", 0) == 0) head.erase(0, 3);
  const auto first = head.find_first_not_of(" \t\r\n");
  const std::string known = "; kvsim reads " +
                            std::string("Mooncake and Bailian JSONL, Azure and BurstGPT CSV, ") +
                            "raw ShareGPT and OpenAI-messages JSON (docs/workloads.md)";
  if (first == std::string::npos) throw InputError(path, 0, 0, "empty trace file");
  if (head[first] == '[') {
    const TraceFormat f = list_format(head);
    if (f == TraceFormat::kAuto) {
      throw InputError(
          path, 1, 1,
          "a JSON list whose first item has neither \"conversations\" (ShareGPT) nor \"messages\" "
          "(OpenAI messages)" +
              known);
    }
    return f;
  }
  const auto eol = head.find('\n', first);
  std::string line = head.substr(first, eol == std::string::npos ? std::string::npos : eol - first);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const int line_no =
      1 + static_cast<int>(
              std::count(head.begin(), head.begin() + static_cast<std::ptrdiff_t>(first), '\n'));
  if (head[first] == '{') {
    if (line.find("\"chat_id\"") != std::string::npos) return TraceFormat::kBailian;
    if (line.find("\"hash_ids\"") != std::string::npos &&
        line.find("\"timestamp\"") != std::string::npos) {
      return TraceFormat::kMooncake;
    }
    throw InputError(path, line_no, 1,
                     "the first line is neither a Mooncake row (timestamp, input_length, "
                     "output_length, hash_ids) "
                     "nor a Bailian row (chat_id, parent_chat_id, ...)" +
                         known);
  }
  if (line.find("ContextTokens") != std::string::npos &&
      line.find("GeneratedTokens") != std::string::npos) {
    return TraceFormat::kAzure;
  }
  if (line.find("Request tokens") != std::string::npos &&
      line.find("Response tokens") != std::string::npos) {
    return TraceFormat::kBurstGpt;
  }
  throw InputError(path, line_no, 1,
                   "unknown trace format (first line: '" + line.substr(0, 80) + "')" + known);
}

Trace read_trace(const std::string& file, const TraceReadOptions& opt) {
  if (opt.hash_block_tokens < 0) {
    throw InputError(
        Diagnostic{"", 0, 0, "trace.hash_block_tokens", "must be >= 0 (0: the format's own)"});
  }
  const TraceFormat format =
      opt.format == TraceFormat::kAuto ? detect_trace_format(file) : opt.format;
  const std::string path = input_display_name(file);
  const auto block = [&](int own) {
    return opt.hash_block_tokens > 0 ? opt.hash_block_tokens : own;
  };
  const auto conversations = [&](const std::vector<Conversation>& list) {
    return conversations_to_trace(list, opt.chat_template, block(kConversationBlockTokens),
                                  trace_format_name(format), path);
  };
  switch (format) {
    case TraceFormat::kShareGpt:
      return conversations(to_conversations(read_sharegpt(file, opt.sharegpt)));
    case TraceFormat::kOpenAi: {
      VllmInput input = parse_vllm_input(read_all(file), path);
      if (input.generation) {
        throw InputError(
            path, 1, 1,
            "a generation config, not a conversation list: it has no requests to replay");
      }
      return conversations(input.conversations);
    }
    case TraceFormat::kMooncake:
      return parse_mooncake(*open_input(file, "the trace file"), path, block(kMooncakeBlockTokens));
    case TraceFormat::kBailian:
      return parse_bailian(*open_input(file, "the trace file"), path, block(kBailianBlockTokens));
    case TraceFormat::kAzure:
      return parse_azure(*open_input(file, "the trace file"), path);
    case TraceFormat::kBurstGpt:
    case TraceFormat::kAuto:  // detect_trace_format never gives kAuto
      break;
  }
  return parse_burstgpt(*open_input(file, "the trace file"), path);
}

namespace {

// Milliseconds as the message writes them: "1e+12 ms".
std::string ms_text(double ms) {
  std::ostringstream os;
  os << ms << " ms";
  return os.str();
}

constexpr double kMaxDurationMs = static_cast<double>(limits::kMaxDuration) / 1e6;

// Every row within kvsim's stated limits (docs/limits.md): lengths in tokens, arrival in time.
void check_row_limits(const Trace& trace) {
  const auto past = [&](const TraceRequest& r, std::string message, const std::string& limit) {
    message += " is past kvsim's limit of ";
    message += limit;
    message += " (docs/limits.md)";
    throw InputError(Diagnostic{trace.source, r.line, 0, "", std::move(message)});
  };
  const auto tokens = [] { return std::to_string(limits::kMaxTokens) + " tokens per request"; };
  for (const TraceRequest& r : trace.requests) {
    if (r.input_length > limits::kMaxTokens)
      past(r, "input_length " + std::to_string(r.input_length), tokens());
    if (r.output_length > limits::kMaxTokens)
      past(r, "output_length " + std::to_string(r.output_length), tokens());
    if (!(r.timestamp_ms <= kMaxDurationMs))
      past(r, "the timestamp " + ms_text(r.timestamp_ms), ms_text(kMaxDurationMs) + " (about 3.2 years)");
  }
}

}  // namespace

void validate_window(const TraceWindow& w, const std::string& prefix) {
  std::vector<Diagnostic> errors;
  const auto positive = [&](double v, const char* key) {
    if (!std::isfinite(v) || v <= 0)
      errors.push_back(Diagnostic{"", 0, 0, prefix + "." + key, "must be > 0"});
  };
  const auto non_negative = [&](double v, const char* key) {
    if (!std::isfinite(v) || v < 0)
      errors.push_back(Diagnostic{"", 0, 0, prefix + "." + key, "must be >= 0"});
  };
  positive(w.time_scale, "time_scale");
  positive(w.rate_scale, "rate_scale");
  non_negative(w.start_s, "start");
  non_negative(w.duration_s, "duration");
  if (w.max_requests < 0) {
    errors.push_back(Diagnostic{"", 0, 0, prefix + ".max_requests", "must be >= 0 (0 = all)"});
  }
  if (!errors.empty()) throw InputError(std::move(errors));
}

Trace select(const Trace& trace, const TraceWindow& w) {
  validate_window(w);
  Trace out;
  out.format = trace.format;
  out.source = trace.source;
  out.hash_block_tokens = trace.hash_block_tokens;
  out.skipped_rows = trace.skipped_rows;
  const double start_ms = w.start_s * 1000.0;
  const double end_ms = w.duration_s > 0 ? start_ms + w.duration_s * 1000.0 : HUGE_VAL;
  const double scale = w.time_scale / w.rate_scale;
  std::vector<std::int64_t> new_index(trace.requests.size(), -1);
  for (std::size_t i = 0; i < trace.requests.size(); ++i) {
    const TraceRequest& r = trace.requests[i];
    if (r.timestamp_ms < start_ms || r.timestamp_ms >= end_ms) continue;
    if (w.max_requests > 0 && static_cast<std::int64_t>(out.requests.size()) >= w.max_requests)
      break;
    TraceRequest c = r;
    c.timestamp_ms = (r.timestamp_ms - start_ms) * scale;
    if (!(c.timestamp_ms <= kMaxDurationMs)) {
      throw InputError(Diagnostic{
          trace.source, r.line, 0, "",
          "the replayed arrival " + ms_text(c.timestamp_ms) + " (time_scale / rate_scale " +
              python_number_repr(scale) + ") is past kvsim's limit of " + ms_text(kMaxDurationMs) +
              " (about 3.2 years) of replayed time (docs/limits.md)"});
    }
    c.parent = r.parent >= 0 ? new_index[static_cast<std::size_t>(r.parent)] : -1;
    new_index[i] = static_cast<std::int64_t>(out.requests.size());
    out.requests.push_back(std::move(c));
  }
  return out;
}

void sort_trace(Trace& trace, std::vector<std::int64_t> parent_by_position) {
  check_row_limits(trace);
  const std::size_t n = trace.requests.size();
  if (parent_by_position.empty()) parent_by_position.assign(n, -1);
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return trace.requests[a].timestamp_ms < trace.requests[b].timestamp_ms;
  });
  std::vector<std::int64_t> position(n);
  for (std::size_t k = 0; k < n; ++k) position[order[k]] = static_cast<std::int64_t>(k);
  std::vector<TraceRequest> sorted;
  sorted.reserve(n);
  for (std::size_t k = 0; k < n; ++k) {
    TraceRequest r = std::move(trace.requests[order[k]]);
    const std::int64_t p = parent_by_position[order[k]];
    r.parent = p >= 0 ? position[static_cast<std::size_t>(p)] : -1;
    if (r.parent >= static_cast<std::int64_t>(k)) {
      const TraceRequest& parent = trace.requests[static_cast<std::size_t>(p)];
      throw InputError(Diagnostic{trace.source, r.line, 0, "parent",
                                  "the previous turn (line " + std::to_string(parent.line) +
                                      ") arrives after this request"});
    }
    sorted.push_back(std::move(r));
  }
  trace.requests = std::move(sorted);
}

std::vector<std::uint64_t> trace_block_streams(const TraceRequest& r, int hash_block_tokens) {
  std::vector<std::uint64_t> out;
  if (hash_block_tokens <= 0) return out;
  const std::int64_t full = std::min<std::int64_t>(r.input_length / hash_block_tokens,
                                                   static_cast<std::int64_t>(r.hash_ids.size()));
  out.reserve(static_cast<std::size_t>(full));
  for (std::int64_t i = 0; i < full; ++i) {
    out.push_back(content_id(ContentKind::kTraceBlock, static_cast<std::uint64_t>(r.hash_ids[static_cast<std::size_t>(i)])));
  }
  return out;
}

TokenSequence trace_prompt(const TraceRequest& r, std::size_t index, int hash_block_tokens) {
  TokenSequence seq;
  const std::vector<std::uint64_t> blocks = trace_block_streams(r, hash_block_tokens);
  seq.reserve(blocks.size() + 1);
  for (const std::uint64_t cid : blocks) append_tokens(seq, cid, hash_block_tokens);
  const std::int64_t covered = static_cast<std::int64_t>(blocks.size()) * hash_block_tokens;
  append_tokens(seq, content_id(ContentKind::kUnique, kTraceTailSalt, index), r.input_length - covered);
  return seq;
}

std::uint64_t trace_output_stream(std::size_t index) {
  return content_id(ContentKind::kUnique, kTraceOutputSalt, index);
}

}  // namespace kvsim::workload
