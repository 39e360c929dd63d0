// kvsim cache-curve: timing-free prefix-cache hit rate against capacity for a trace, for one
// cache (every capacity at once) or for a stack of tiers.
#include <cctype>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "sim/analysis/cache_curve.hpp"
#include "sim/analysis/cache_options.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/trace_options.hpp"
#include "sim/core/error.hpp"
#include "sim/io/atomic_file.hpp"
#include "sim/io/json_writer.hpp"
#include "sim/io/svg_chart.hpp"
#include "sim/scenario/units.hpp"
#include "sim/workload/trace.hpp"

namespace kvsim::cli {
namespace {

struct CurveOptions {
  std::string trace;
  std::vector<std::string> capacities;
  std::vector<std::string> tiers;
  int block_tokens = 0;  // 0: the trace format's own
  std::string model = "llama-3.1-8b";
  std::string policy = "lru";
  std::string rules = "published";
  std::string format = "table";
  std::string html;  // write a chart of the curve or the stack to this file
  TraceFlags flags;
};

std::string to_upper_copy(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

using engine::eviction_policy_name;

struct Sizes {
  double tokens;
  double bytes;
};

class Printer {
 public:
  Printer(const CurveOptions& o, double bytes_per_token) : o_(o), bytes_per_token_(bytes_per_token) {}
  double bytes_per_token() const { return bytes_per_token_; }
  Sizes sizes(std::int64_t blocks) const {
    const double tokens = static_cast<double>(blocks) * o_.block_tokens;
    return {tokens, tokens * bytes_per_token_};
  }

  void curve(std::ostream& out, const analysis::CacheCurve& c) const {
    out << std::fixed;
    if (o_.format == "csv") {
      out << "capacity_blocks,capacity_tokens,capacity_bytes,policy,rules,token_hit_rate_percent,"
             "request_hit_rate_percent,hit_tokens\n";
      for (const auto& p : c.points) {
        const auto s = sizes(p.capacity_blocks);
        out << p.capacity_blocks << ',' << std::setprecision(0) << s.tokens << ',' << s.bytes << ',' << o_.policy
            << ',' << o_.rules << ',' << std::setprecision(4) << 100.0 * p.token_hit_rate << ','
            << 100.0 * p.request_hit_rate << ',' << p.hit_tokens << '\n';
      }
    } else if (o_.format == "json") {
      io::Json doc = header();
      doc["policy"] = o_.policy;
      doc["distinct_blocks"] = c.distinct_blocks;
      doc["requests"] = c.requests;
      doc["prompt_tokens"] = c.prompt_tokens;
      doc["infinite_token_hit_rate_percent"] = io::json_number_or_null(100.0 * c.infinite_token_hit_rate);
      doc["infinite_request_hit_rate_percent"] = io::json_number_or_null(100.0 * c.infinite_request_hit_rate);
      io::Json points = io::Json::array();
      for (const auto& p : c.points) {
        const auto s = sizes(p.capacity_blocks);
        points.push_back(io::Json{{"capacity_blocks", p.capacity_blocks},
                                  {"capacity_tokens", io::json_number_or_null(s.tokens)},
                                  {"capacity_bytes", io::json_number_or_null(s.bytes)},
                                  {"policy", o_.policy},
                                  {"rules", o_.rules},
                                  {"token_hit_rate_percent", io::json_number_or_null(100.0 * p.token_hit_rate)},
                                  {"request_hit_rate_percent", io::json_number_or_null(100.0 * p.request_hit_rate)},
                                  {"hit_tokens", p.hit_tokens}});
      }
      doc["points"] = std::move(points);
      io::write_json(out, doc, 2);
    } else {
      out << to_upper_copy(o_.policy) << " prefix-cache hit rate of " << o_.trace << " (" << o_.rules << " rules): "
          << c.requests << " requests, " << c.prompt_tokens << " prompt tokens, " << c.distinct_blocks
          << " distinct blocks of " << o_.block_tokens << " tokens; bytes for the KV of " << o_.model << "\n";
      out << std::setw(12) << "blocks" << std::setw(14) << "tokens" << std::setw(12) << "GiB" << std::setw(12)
          << "token hit" << std::setw(14) << "request hit" << '\n';
      for (const auto& p : c.points) {
        const auto s = sizes(p.capacity_blocks);
        out << std::setw(12) << p.capacity_blocks << std::setw(14) << std::setprecision(0) << s.tokens
            << std::setw(12) << std::setprecision(1) << s.bytes / 1073741824.0 << std::setw(11)
            << std::setprecision(1) << 100.0 * p.token_hit_rate << " %" << std::setw(12)
            << 100.0 * p.request_hit_rate << " %\n";
      }
      out << std::setprecision(1) << "cache that never evicts: " << 100.0 * c.infinite_token_hit_rate
          << " % of tokens, " << 100.0 * c.infinite_request_hit_rate << " % per request\n";
    }
  }

  void stack(std::ostream& out, const analysis::TierStackResult& r,
             const std::vector<analysis::TierLevel>& levels) const {
    std::vector<analysis::TierHits> rows = r.tiers;
    rows.push_back(r.total);
    auto policy_of = [&](std::size_t i) { return i < levels.size() ? eviction_policy_name(levels[i].policy) : "-"; };
    out << std::fixed;
    if (o_.format == "csv") {
      out << "tier,capacity_blocks,capacity_tokens,capacity_bytes,policy,token_hit_rate_percent,"
             "request_hit_rate_percent,hit_tokens\n";
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto s = sizes(rows[i].capacity_blocks);
        out << rows[i].name << ',' << rows[i].capacity_blocks << ',' << std::setprecision(0) << s.tokens << ','
            << s.bytes << ',' << policy_of(i) << ',' << std::setprecision(4) << 100.0 * rows[i].token_hit_rate
            << ',' << 100.0 * rows[i].request_hit_rate << ',' << rows[i].hit_tokens << '\n';
      }
    } else if (o_.format == "json") {
      io::Json doc = header();
      doc["requests"] = r.requests;
      doc["prompt_tokens"] = r.prompt_tokens;
      io::Json tiers = io::Json::array();
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto s = sizes(rows[i].capacity_blocks);
        tiers.push_back(io::Json{{"tier", rows[i].name},
                                 {"capacity_blocks", rows[i].capacity_blocks},
                                 {"capacity_tokens", io::json_number_or_null(s.tokens)},
                                 {"capacity_bytes", io::json_number_or_null(s.bytes)},
                                 {"policy", policy_of(i)},
                                 {"token_hit_rate_percent", io::json_number_or_null(100.0 * rows[i].token_hit_rate)},
                                 {"request_hit_rate_percent", io::json_number_or_null(100.0 * rows[i].request_hit_rate)},
                                 {"hit_tokens", rows[i].hit_tokens}});
      }
      doc["tiers"] = std::move(tiers);
      io::write_json(out, doc, 2);
    } else {
      out << "Tier stack over " << o_.trace << " (" << o_.rules << " rules): " << r.requests << " requests, "
          << r.prompt_tokens << " prompt tokens; bytes for the KV of " << o_.model << "\n";
      out << std::left << std::setw(10) << "tier" << std::right << std::setw(8) << "policy" << std::setw(12)
          << "blocks" << std::setw(14) << "tokens" << std::setw(10) << "GiB" << std::setw(12) << "token hit"
          << std::setw(14) << "request hit" << '\n';
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto s = sizes(rows[i].capacity_blocks);
        out << std::left << std::setw(10) << rows[i].name << std::right << std::setw(8) << policy_of(i)
            << std::setw(12) << rows[i].capacity_blocks << std::setw(14) << std::setprecision(0) << s.tokens
            << std::setw(10) << std::setprecision(1) << s.bytes / 1073741824.0 << std::setw(11)
            << 100.0 * rows[i].token_hit_rate << " %" << std::setw(12) << 100.0 * rows[i].request_hit_rate
            << " %\n";
      }
    }
  }

 private:
  // The keys every JSON document of cache-curve starts with: what was asked for.
  io::Json header() const {
    io::Json doc = io::json_document("cache-curve");
    doc["trace"] = o_.trace;
    doc["model"] = o_.model;
    doc["rules"] = o_.rules;
    doc["block_tokens"] = o_.block_tokens;
    doc["kind"] = o_.tiers.empty() ? "curve" : "stack";
    return doc;
  }

  const CurveOptions& o_;
  double bytes_per_token_;
};

// A self-contained HTML page with the curve (token- and request-weighted hit rate against
// capacity in GiB of the model's KV) or the stack's tokens per tier.
void write_html(const std::string& path, const CurveOptions& o, const Printer& printer,
                const analysis::CacheCurve* curve, const analysis::TierStackResult* stack,
                const std::vector<analysis::TierLevel>& levels) {
  std::ostringstream body;
  if (curve != nullptr) {
    io::LineChart chart;
    chart.title = to_upper_copy(o.policy) + " prefix-cache hit rate (" + o.rules + " rules)";
    chart.x_label = "cache capacity (GiB of " + o.model + " KV)";
    chart.y_label = "hit rate (%)";
    io::ChartSeries tokens{"token-weighted", {}}, requests{"request-weighted", {}};
    for (const auto& p : curve->points) {
      const double gib = printer.sizes(p.capacity_blocks).bytes / 1073741824.0;
      tokens.points.emplace_back(gib, 100.0 * p.token_hit_rate);
      requests.points.emplace_back(gib, 100.0 * p.request_hit_rate);
    }
    chart.series = {tokens, requests};
    chart.threshold = io::ChartLine{100.0 * curve->infinite_token_hit_rate, "cache that never evicts (tokens)"};
    chart.width = 900;
    chart.height = 480;
    body << io::render_line_chart(chart);
  } else if (stack != nullptr) {
    io::BarChart chart;
    chart.title = "Prompt tokens served per tier (" + o.rules + " rules)";
    chart.y_label = "token hit rate (%)";
    for (const auto& t : stack->tiers) chart.bars.emplace_back(t.name, 100.0 * t.token_hit_rate);
    chart.bars.emplace_back("total", 100.0 * stack->total.token_hit_rate);
    chart.width = 900;
    chart.height = 480;
    body << io::render_bar_chart(chart);
  }
  std::ostringstream table;
  CurveOptions as_table = o;
  as_table.format = "table";
  const Printer p(as_table, printer.bytes_per_token());
  if (curve != nullptr) p.curve(table, *curve);
  if (stack != nullptr) p.stack(table, *stack, levels);
  io::AtomicFile f(path);
  f.stream() << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>kvsim cache-curve</title></head>\n"
             << "<body style=\"font-family: sans-serif; margin: 24px\">\n<h1>kvsim cache-curve</h1>\n<p>"
             << io::xml_escape(o.trace) << "</p>\n"
             << body.str() << "\n<pre>" << io::xml_escape(table.str()) << "</pre>\n</body></html>\n";
  f.commit();
}

int cmd_cache_curve(CurveOptions o, const CommonOptions& common) {
  const auto model = catalog_model(load_catalog(common), o.model);
  const double bytes_per_token = model.kv_bytes_per_token().as_double();
  workload::TraceReadOptions ro;
  if (!o.flags.format.empty())
    ro.format = workload::parse_trace_format(o.flags.format, "--trace-format");
  ro.hash_block_tokens = o.block_tokens;
  const auto window = trace_window(o.flags);
  workload::validate_window(window, "--");
  const auto trace = workload::select(workload::read_trace(o.trace, ro), window);
  if (trace.hash_block_tokens <= 0) {
    throw InputError(o.trace, 0, 0,
                     "a " + trace.format + " trace has no prefix information (every prompt is unique), so no "
                     "cache can hit: there is no curve to draw");
  }
  o.block_tokens = trace.hash_block_tokens;
  analysis::CurveOptions co;
  co.block_tokens = o.block_tokens;
  co.rules = o.rules == "vllm" ? analysis::CurveRules::kVllm : analysis::CurveRules::kPublished;
  co.policy = analysis::parse_eviction_policy(o.policy, "--policy");
  const Printer printer(o, bytes_per_token);

  std::vector<std::int64_t> capacities;
  for (const auto& c : o.capacities) {
    capacities.push_back(analysis::parse_capacity_blocks(c, "--capacities", o.block_tokens, bytes_per_token));
  }
  const auto levels = analysis::parse_tier_levels(o.tiers, "--tiers", o.block_tokens, bytes_per_token);
  if (!levels.empty() && !o.capacities.empty()) {
    throw InputError("", 0, 0, "--capacities and --tiers are exclusive: a tier stack has its own capacities");
  }
  if (capacities.empty()) capacities = analysis::default_curve_capacities();

  std::ostringstream out;
  if (!levels.empty()) {
    const auto stack = analysis::tier_stack_hits(trace.requests, levels, co);
    printer.stack(out, stack, levels);
    if (!o.html.empty()) write_html(o.html, o, printer, nullptr, &stack, levels);
  } else {
    const auto curve = analysis::cache_curve(trace.requests, capacities, co);
    printer.curve(out, curve);
    if (!o.html.empty()) write_html(o.html, o, printer, &curve, nullptr, levels);
  }
  std::cout << out.str();
  return 0;
}

Command add_cache_curve(CLI::App& app, CommonOptions& common) {
  auto o = std::make_shared<CurveOptions>();
  auto* cmd = app.add_subcommand(
      "cache-curve", "Timing-free prefix-cache hit rate of a trace against cache capacity, or per tier of a stack");
  cmd->add_option("trace", o->trace, "Request trace")->required()->type_name("FILE");
  cmd->add_option("--capacities", o->capacities,
                  "Capacities: blocks (4000), tokens (2Mtok) or bytes of the model's KV (64GiB) "
                  "(default: 20 points from 354 to 256,000 blocks)")
      ->delimiter(',')
      ->type_name("C,C,...");
  cmd->add_option("--tiers", o->tiers,
                  "A tier stack, fastest first, as NAME=CAPACITY[:lru|arc], e.g. "
                  "gpu=2600,dram=64GiB,nvme=2TB:arc; prints the tokens each tier serves")
      ->delimiter(',')
      ->type_name("T,T,...");
  cmd->add_option("--policy", o->policy, "Eviction policy of the single cache")->check(CLI::IsMember({"lru", "arc"}));
  cmd->add_option("--rules", o->rules,
                  "published: the trace's published curve (every id one block, the partial last one too, "
                  "touched first to last); vllm: vLLM's prefix cache (full blocks only, touched last to first)")
      ->check(CLI::IsMember({"published", "vllm"}));
  cmd->add_option("--block-tokens", o->block_tokens, "Tokens per trace hash block (default: the format's own)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--model", o->model, "Catalog model whose KV bytes size the capacities")->type_name("NAME");
  cmd->add_option("--format", o->format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}));
  cmd->add_option("--html", o->html, "Also write a self-contained HTML page with a chart and the table")
      ->type_name("FILE");
  add_trace_flags(cmd, o->flags, false);
  add_catalog_option(cmd, common);
  return {cmd, [o, &common] { return cmd_cache_curve(*o, common); }};
}

const CommandRegistrar cache_curve_registrar(50, add_cache_curve);

}  // namespace
}  // namespace kvsim::cli
