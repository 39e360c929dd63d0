// kvsim cache-curve: timing-free prefix-cache hit rate against capacity for a trace.
#include <cstdint>
#include <memory>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "command.hpp"
#include "kvsim/core/error.hpp"
#include "kvsim/workload/cache_curve.hpp"
#include "kvsim/workload/mooncake_trace.hpp"

namespace kvsim::cli {
namespace {

struct CurveOptions {
  std::string trace;
  std::vector<std::int64_t> capacities{1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000, 256000};
  int block_tokens = 512;
  std::string model = "llama-3.1-8b";
  std::string format = "table";
};

// Timing-free LRU prefix-cache hit rate against capacity for a trace (Mattson stack distances).
int cmd_cache_curve(const CurveOptions& o, const CommonOptions& common) {
  const auto model = catalog_model(load_catalog(common), o.model);
  const double bytes_per_token = model.kv_bytes_per_token().as_double();
  const auto trace = workload::read_mooncake_trace(o.trace, o.block_tokens);
  const auto curve = workload::lru_cache_curve(trace, o.block_tokens, o.capacities);
  std::ostringstream out;
  out << std::fixed;
  if (o.format == "csv") {
    out << "capacity_blocks,capacity_tokens,capacity_bytes,token_hit_rate,request_hit_rate\n";
    for (const auto& p : curve.points) {
      const double tokens = static_cast<double>(p.capacity_blocks) * o.block_tokens;
      out << p.capacity_blocks << ',' << std::setprecision(0) << tokens << ',' << tokens * bytes_per_token << ','
          << std::setprecision(6) << p.token_hit_rate << ',' << p.request_hit_rate << '\n';
    }
  } else if (o.format == "json") {
    out << "{\"requests\": " << curve.requests << ", \"prompt_tokens\": " << curve.prompt_tokens
        << ", \"distinct_blocks\": " << curve.distinct_blocks << ", \"block_tokens\": " << o.block_tokens
        << ", \"infinite_token_hit_rate\": " << std::setprecision(6) << curve.infinite_token_hit_rate
        << ", \"points\": [";
    for (std::size_t i = 0; i < curve.points.size(); ++i) {
      const auto& p = curve.points[i];
      const double tokens = static_cast<double>(p.capacity_blocks) * o.block_tokens;
      out << (i ? ", " : "") << "{\"capacity_blocks\": " << p.capacity_blocks << ", \"capacity_tokens\": "
          << std::setprecision(0) << tokens << ", \"capacity_bytes\": " << tokens * bytes_per_token
          << ", \"token_hit_rate\": " << std::setprecision(6) << p.token_hit_rate
          << ", \"request_hit_rate\": " << p.request_hit_rate << "}";
    }
    out << "]}\n";
  } else {
    out << "LRU prefix-cache hit rate of " << o.trace << ": " << curve.requests << " requests, "
        << curve.prompt_tokens << " prompt tokens, " << curve.distinct_blocks << " distinct blocks of "
        << o.block_tokens << " tokens; KV of " << o.model << "\n";
    out << std::setw(12) << "blocks" << std::setw(14) << "tokens" << std::setw(12) << "GiB" << std::setw(12)
        << "token hit" << std::setw(14) << "request hit" << '\n';
    for (const auto& p : curve.points) {
      const double tokens = static_cast<double>(p.capacity_blocks) * o.block_tokens;
      out << std::setw(12) << p.capacity_blocks << std::setw(14) << std::setprecision(0) << tokens << std::setw(12)
          << std::setprecision(1) << tokens * bytes_per_token / 1073741824.0 << std::setw(11)
          << std::setprecision(1) << 100.0 * p.token_hit_rate << " %" << std::setw(12) << 100.0 * p.request_hit_rate
          << " %\n";
    }
    out << std::setprecision(1) << "unlimited cache: " << 100.0 * curve.infinite_token_hit_rate << " % of tokens\n";
  }
  std::cout << out.str();
  return 0;
}

Command add_cache_curve(CLI::App& app, CommonOptions& common) {
  auto curve = std::make_shared<CurveOptions>();
  auto* cache_curve = app.add_subcommand(
      "cache-curve", "Timing-free LRU prefix-cache hit rate against cache capacity for a Mooncake trace");
  cache_curve->add_option("trace", curve->trace, "Mooncake-format JSONL trace")->required()->type_name("FILE");
  cache_curve->add_option("--capacities", curve->capacities, "Capacities in hash blocks")
      ->delimiter(',')
      ->check(CLI::PositiveNumber)
      ->type_name("N,N,...");
  cache_curve->add_option("--block-tokens", curve->block_tokens, "Tokens per trace hash block")
      ->check(CLI::Range(1, 1 << 20));
  cache_curve->add_option("--model", curve->model, "Catalog model whose KV bytes size the capacities")
      ->type_name("NAME");
  cache_curve->add_option("--format", curve->format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}));
  add_catalog_option(cache_curve, common);
  return {cache_curve, [curve, &common] { return cmd_cache_curve(*curve, common); }};
}

const CommandRegistrar cache_curve_registrar(50, add_cache_curve);

}  // namespace
}  // namespace kvsim::cli
