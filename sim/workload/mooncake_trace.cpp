#include "sim/workload/mooncake_trace.hpp"

#include <fstream>

#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"
#include "sim/workload/trace_jsonl.hpp"

namespace kvsim::workload {

namespace {

// A cursor over one row for read_mooncake_row(): every reader returns false on anything it
// does not take, and the row goes to the general reader.
class RowScanner {
 public:
  explicit RowScanner(std::string_view s) : s_(s) {}
  void skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  bool take(char c) {
    skip_space();
    if (i_ >= s_.size() || s_[i_] != c) return false;
    ++i_;
    return true;
  }
  bool at_end() {
    skip_space();
    return i_ == s_.size();
  }
  // A key of plain letters and underscores (no escapes) and its colon.
  bool key(std::string_view& out) {
    if (!take('"')) return false;
    const std::size_t start = i_;
    while (i_ < s_.size() && ((s_[i_] >= 'a' && s_[i_] <= 'z') || s_[i_] == '_')) ++i_;
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    out = s_.substr(start, i_ - start);
    ++i_;
    return take(':');
  }
  // A non-negative integer: digits only, no leading zero, at most 18 digits (fits int64), and
  // not followed by a fraction or exponent.
  bool integer(std::int64_t& out) {
    skip_space();
    const std::size_t start = i_;
    std::int64_t v = 0;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
      if (i_ - start < 18) v = v * 10 + (s_[i_] - '0');  // a 19th digit is refused below
      ++i_;
    }
    const std::size_t digits = i_ - start;
    if (digits == 0 || digits > 18 || (digits > 1 && s_[start] == '0')) return false;
    if (i_ < s_.size() && (s_[i_] == '.' || s_[i_] == 'e' || s_[i_] == 'E')) return false;
    out = v;
    return true;
  }

 private:
  std::string_view s_;
  std::size_t i_ = 0;
};

}  // namespace

std::optional<TraceRequest> read_mooncake_row(std::string_view text, int hash_block_tokens) {
  RowScanner in(text);
  if (!in.take('{')) return std::nullopt;
  TraceRequest r;
  bool timestamp = false;
  bool input = false;
  bool output = false;
  bool ids = false;
  for (bool first = true;; first = false) {
    if (!first && !in.take(',')) break;
    std::string_view k;
    if (!in.key(k)) return std::nullopt;
    std::int64_t v = 0;
    if (k == "timestamp" && !timestamp) {
      if (!in.integer(v)) return std::nullopt;
      r.timestamp_ms = static_cast<double>(v);
      timestamp = true;
    } else if (k == "input_length" && !input) {
      if (!in.integer(v) || v < 1) return std::nullopt;
      r.input_length = v;
      input = true;
    } else if (k == "output_length" && !output) {
      if (!in.integer(v) || v < 1) return std::nullopt;
      r.output_length = v;
      output = true;
    } else if (k == "hash_ids" && !ids) {
      if (!in.take('[')) return std::nullopt;
      if (!in.take(']')) {
        do {
          if (!in.integer(v)) return std::nullopt;
          r.hash_ids.push_back(v);
        } while (in.take(','));
        if (!in.take(']')) return std::nullopt;
      }
      ids = true;
    } else {
      return std::nullopt;
    }
  }
  if (!in.take('}') || !in.at_end() || !(timestamp && input && output && ids)) return std::nullopt;
  if (hash_block_tokens < 1) return std::nullopt;
  if (static_cast<std::int64_t>(r.hash_ids.size()) != detail::hash_id_count(r.input_length, hash_block_tokens)) {
    return std::nullopt;
  }
  return r;
}

Trace parse_mooncake(std::istream& in, const std::string& display_name, int hash_block_tokens) {
  Trace trace = detail::hashed_trace("mooncake", display_name, hash_block_tokens);
  const auto fast = [&](const std::string& text, int line) {
    std::optional<TraceRequest> r = read_mooncake_row(text, hash_block_tokens);
    if (!r) return false;
    r->line = line;
    trace.requests.push_back(std::move(*r));
    return true;
  };
  detail::for_each_jsonl_row(in, display_name, fast, [&](const detail::JsonLine& row, int line) {
    TraceRequest r;
    r.line = line;
    r.timestamp_ms = row.non_negative("timestamp", "milliseconds");
    r.input_length = row.integer("input_length", 1);
    r.output_length = row.integer("output_length", 1);
    r.hash_ids = detail::hash_ids(row, r.input_length, hash_block_tokens);
    trace.requests.push_back(std::move(r));
  });
  sort_trace(trace, {});
  return trace;
}

std::vector<TraceRequest> parse_mooncake_trace(std::istream& in, const std::string& display_name,
                                               int hash_block_tokens) {
  return parse_mooncake(in, display_name, hash_block_tokens).requests;
}

std::vector<TraceRequest> read_mooncake_trace(const std::string& path, int hash_block_tokens) {
  const auto in = open_input(path, "the trace file");
  return parse_mooncake_trace(*in, input_display_name(path), hash_block_tokens);
}

}  // namespace kvsim::workload
