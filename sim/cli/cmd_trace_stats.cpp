// kvsim trace-stats: what a trace holds (rate over time, lengths, multi-turn structure, reuse of
// prefix blocks, the infinite-cache hit rate), from any trace format kvsim reads.
#include <cmath>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "sim/analysis/trace_stats.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/trace_options.hpp"
#include "sim/core/error.hpp"
#include "sim/core/limits.hpp"
#include "sim/io/json_writer.hpp"
#include "sim/scenario/units.hpp"

namespace kvsim::cli {
namespace {

struct StatsOptions {
  std::string trace;
  std::string format = "table";
  double bucket_s = 60;
  int block_tokens = 0;
  TraceFlags flags;
};

io::Json quantiles_json(const analysis::Quantiles& q) {
  return io::Json{{"count", q.count}, {"mean", io::json_number_or_null(q.mean)},
                  {"min", io::json_number_or_null(q.min)}, {"p50", io::json_number_or_null(q.p50)},
                  {"p90", io::json_number_or_null(q.p90)}, {"p99", io::json_number_or_null(q.p99)},
                  {"max", io::json_number_or_null(q.max)}};
}

void quantiles_row(std::ostream& out, const char* name, const analysis::Quantiles& q, int precision) {
  out << "  " << std::left << std::setw(26) << name << std::right << std::fixed << std::setprecision(precision)
      << std::setw(11) << q.mean << std::setw(11) << q.p50 << std::setw(11) << q.p90 << std::setw(11) << q.p99
      << std::setw(12) << q.max << '\n';
}

void write_json(std::ostream& out, const analysis::TraceStats& s) {
  const auto num = [](double v) { return io::json_number_or_null(v); };
  io::Json doc = io::json_document("trace-stats");
  doc["source"] = s.source;
  doc["format"] = s.format;
  doc["hash_block_tokens"] = s.hash_block_tokens;
  doc["requests"] = s.requests;
  doc["input_tokens"] = s.input_tokens;
  doc["output_tokens"] = s.output_tokens;
  doc["span_s"] = num(s.span_s);
  doc["mean_rate"] = num(s.mean_rate);
  doc["bucket_s"] = num(s.bucket_s);
  doc["bucket_widened_from_s"] = num(s.bucket_widened_from_s);
  doc["peak_bucket_rate"] = num(s.peak_bucket_rate);
  doc["input_length"] = quantiles_json(s.input_length);
  doc["output_length"] = quantiles_json(s.output_length);
  doc["interarrival_s"] = quantiles_json(s.interarrival_s);
  doc["has_conversations"] = s.has_conversations;
  doc["conversations"] = s.conversations;
  doc["turns_per_conversation"] = quantiles_json(s.turns_per_conversation);
  doc["turn_gap_s"] = quantiles_json(s.turn_gap_s);
  doc["continuations"] = s.continuations;
  doc["block_uses"] = s.block_uses;
  doc["distinct_blocks"] = s.distinct_blocks;
  doc["reuse_distance_blocks"] = quantiles_json(s.reuse_distance_blocks);
  doc["reuse_time_s"] = quantiles_json(s.reuse_time_s);
  doc["ideal_token_hit_rate_percent"] = num(100.0 * s.ideal_token_hit_rate);
  doc["ideal_request_hit_rate_percent"] = num(100.0 * s.ideal_request_hit_rate);
  io::Json rate = io::Json::array();
  for (const auto& b : s.rate) {
    rate.push_back(io::Json{{"start_s", num(b.start_s)},
                            {"requests", b.requests},
                            {"requests_per_s", num(b.requests_per_s)},
                            {"input_tokens", b.input_tokens}});
  }
  doc["rate"] = std::move(rate);
  io::write_json(out, doc);
}

void write_table(std::ostream& out, const analysis::TraceStats& s) {
  out << std::fixed << std::setprecision(2);
  out << s.source << " (" << s.format << ")\n";
  out << "  requests " << s.requests << ", prompt tokens " << s.input_tokens << ", output tokens " << s.output_tokens
      << "\n  span " << s.span_s << " s, mean rate " << s.mean_rate << " req/s, peak " << s.peak_bucket_rate
      << " req/s over " << std::setprecision(0) << s.bucket_s << " s buckets\n\n";
  out << "  " << std::left << std::setw(26) << "distribution" << std::right << std::setw(11) << "mean"
      << std::setw(11) << "p50" << std::setw(11) << "p90" << std::setw(11) << "p99" << std::setw(12) << "max"
      << '\n';
  quantiles_row(out, "input tokens", s.input_length, 0);
  quantiles_row(out, "output tokens", s.output_length, 0);
  quantiles_row(out, "inter-arrival (s)", s.interarrival_s, 3);
  if (s.has_conversations) {
    quantiles_row(out, "turns per conversation", s.turns_per_conversation, 1);
    quantiles_row(out, "turn gap (s)", s.turn_gap_s, 1);
  }
  if (s.hash_block_tokens > 0) {
    quantiles_row(out, "reuse distance (blocks)", s.reuse_distance_blocks, 0);
    quantiles_row(out, "reuse time (s)", s.reuse_time_s, 1);
  }
  out << '\n';
  if (s.has_conversations) {
    out << "  conversations " << s.conversations << " (turns linked to their parent turn in the trace)\n";
  }
  if (s.hash_block_tokens > 0) {
    out << std::setprecision(1) << "  prefix blocks of " << s.hash_block_tokens << " tokens: " << s.block_uses
        << " uses of " << s.distinct_blocks << " distinct blocks (" << s.reuse_distance_blocks.count
        << " reuses)\n  continuations (a prompt that starts with a whole earlier prompt of 2+ blocks): " << s.continuations
        << " of " << s.requests << "\n  ideal (never-evicting) prefix cache: " << 100.0 * s.ideal_token_hit_rate
        << " % of prompt tokens, " << 100.0 * s.ideal_request_hit_rate << " % per request\n";
  } else {
    out << "  no prefix information: every prompt is unique to its request\n";
  }
  out << "\n  request rate (" << std::setprecision(0) << s.bucket_s << " s buckets";
  if (s.bucket_widened_from_s > 0) {
    out << "; widened from " << scenario::shortest_double(s.bucket_widened_from_s)
        << " s: the series has at most " << limits::kMaxRateBuckets << " buckets";
  }
  out << ")\n";
  double peak = 0;
  for (const auto& b : s.rate) peak = std::max(peak, b.requests_per_s);
  for (const auto& b : s.rate) {
    const auto bar = peak > 0 ? std::lround(40.0 * b.requests_per_s / peak) : 0L;
    out << "  " << std::setw(8) << std::setprecision(0) << b.start_s << " s " << std::setw(9) << std::setprecision(2)
        << b.requests_per_s << " req/s  " << std::string(static_cast<std::size_t>(bar), '#') << '\n';
  }
}

int cmd_trace_stats(const StatsOptions& o) {
  workload::TraceReadOptions ro;
  if (!o.flags.format.empty())
    ro.format = workload::parse_trace_format(o.flags.format, "--trace-format");
  ro.hash_block_tokens = o.block_tokens;
  const auto window = trace_window(o.flags);
  workload::validate_window(window, "--");
  const auto trace = workload::select(workload::read_trace(o.trace, ro), window);
  const auto stats = analysis::trace_stats(trace, o.bucket_s);
  std::ostringstream out;
  if (o.format == "json") {
    write_json(out, stats);
  } else {
    write_table(out, stats);
  }
  std::cout << out.str();
  return 0;
}

Command add_trace_stats(CLI::App& app, CommonOptions&) {
  auto o = std::make_shared<StatsOptions>();
  auto* cmd = app.add_subcommand("trace-stats", "Describe a trace: rate over time, lengths, multi-turn structure, "
                                                "reuse of prefix blocks, ideal hit rate");
  cmd->add_option("trace", o->trace, "Request trace (any format kvsim reads)")->required()->type_name("FILE");
  cmd->add_option("--format", o->format, "Output format")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--bucket", o->bucket_s, "Seconds per bucket of the request-rate series")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--block-tokens", o->block_tokens, "Tokens per hash block (default: the format's own)")
      ->check(CLI::NonNegativeNumber);
  add_trace_flags(cmd, o->flags, false);
  return {cmd, [o] { return cmd_trace_stats(*o); }};
}

const CommandRegistrar trace_stats_registrar(55, add_trace_stats);

}  // namespace
}  // namespace kvsim::cli
