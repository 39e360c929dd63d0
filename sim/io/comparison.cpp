#include "sim/io/comparison.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "sim/io/json_writer.hpp"
#include "sim/io/text_format.hpp"

namespace kvsim::io {
namespace {

struct Column {
  const char* key;     // JSON/CSV key
  const char* header;  // table header
  int decimals;
  std::function<double(const ComparisonRow&)> get;
};

double tier_sum(const RunInfo& info, std::int64_t TierInfo::*m) {
  std::int64_t v = 0;
  for (const auto& t : info.tiers) v += t.*m;
  return static_cast<double>(v);
}

double pcie_peak(const RunInfo& info) {
  double u = 0;
  for (const auto& l : info.links) {
    if (l.kind == "pcie") u = std::max({u, l.max_utilization_forward, l.max_utilization_backward});
  }
  return u;
}

const std::vector<Column>& columns() {
  static const std::vector<Column> cols = {
      {"requests_per_sec", "req/s", 3, [](const ComparisonRow& r) { return r.summary.requests_per_sec; }},
      {"output_tokens_per_sec", "out tok/s", 1, [](const ComparisonRow& r) { return r.summary.output_tokens_per_sec; }},
      {"ttft_ms_mean", "TTFT mean", 1, [](const ComparisonRow& r) { return r.summary.ttft_ms.mean; }},
      {"ttft_ms_p50", "TTFT p50", 1, [](const ComparisonRow& r) { return r.summary.ttft_ms.percentile(0.5); }},
      {"ttft_ms_p90", "TTFT p90", 1, [](const ComparisonRow& r) { return r.summary.ttft_ms.percentile(0.9); }},
      {"ttft_ms_p99", "TTFT p99", 1, [](const ComparisonRow& r) { return r.summary.ttft_ms.percentile(0.99); }},
      {"tpot_ms_p50", "TPOT p50", 2, [](const ComparisonRow& r) { return r.summary.tpot_ms.percentile(0.5); }},
      {"tpot_ms_p90", "TPOT p90", 2, [](const ComparisonRow& r) { return r.summary.tpot_ms.percentile(0.9); }},
      {"latency_ms_mean", "lat mean", 1, [](const ComparisonRow& r) { return r.summary.latency_ms.mean; }},
      {"prefix_cache_hit_rate", "GPU hit", 3, [](const ComparisonRow& r) { return r.summary.prefix_cache_hit_rate; }},
      {"offload_hit_tokens", "tier hit tok", 0, [](const ComparisonRow& r) { return static_cast<double>(r.info.external_hit_tokens); }},
      {"tier_gb_read", "tier GB rd", 2, [](const ComparisonRow& r) { return tier_sum(r.info, &TierInfo::bytes_read) / 1e9; }},
      {"tier_gb_written", "tier GB wr", 2, [](const ComparisonRow& r) { return tier_sum(r.info, &TierInfo::bytes_written) / 1e9; }},
      {"pcie_max_utilization", "PCIe util", 3, [](const ComparisonRow& r) { return pcie_peak(r.info); }},
      {"preemptions", "preempt", 0, [](const ComparisonRow& r) { return static_cast<double>(r.summary.preemptions); }},
      {"num_requests", "requests", 0, [](const ComparisonRow& r) { return static_cast<double>(r.summary.num_requests); }},
  };
  return cols;
}

std::string cell(double v, int decimals) { return std::isnan(v) ? std::string("NaN") : format_fixed(v, decimals); }

}  // namespace

void write_comparison_table(std::ostream& os, const std::vector<ComparisonRow>& rows, const RunInfo& info) {
  std::size_t name_w = 7;
  for (const auto& r : rows) name_w = std::max(name_w, r.variant.size());
  const auto& cols = columns();
  std::vector<std::size_t> widths;
  for (const auto& c : cols) {
    std::size_t w = std::string(c.header).size();
    for (const auto& r : rows) w = std::max(w, cell(c.get(r), c.decimals).size());
    widths.push_back(w);
  }
  os << "Comparison of " << rows.size() << " runs; ratios against the first (" << info.scenario_name << "), seed " << info.seed
     << ", kvsim " << info.kvsim_version << "; times in ms\n";
  std::string line = pad_right("variant", name_w);
  for (std::size_t i = 0; i < cols.size(); ++i) line += "  " + pad_left(cols[i].header, widths[i]);
  os << line << '\n' << std::string(line.size(), '-') << '\n';
  for (const auto& r : rows) {
    std::string l = pad_right(r.variant, name_w);
    for (std::size_t i = 0; i < cols.size(); ++i) l += "  " + pad_left(cell(cols[i].get(r), cols[i].decimals), widths[i]);
    os << l << '\n';
  }
  if (!rows.empty()) {
    os << "\nAgainst " << rows.front().variant << ":\n";
    const Summary& base = rows.front().summary;
    for (const auto& r : rows) {
      os << "  " << pad_right(r.variant, name_w) << "  requests/s x" << cell(r.summary.requests_per_sec / base.requests_per_sec, 2)
         << ", mean TTFT x" << cell(r.summary.ttft_ms.mean / base.ttft_ms.mean, 2) << ", mean TPOT x"
         << cell(r.summary.tpot_ms.mean / base.tpot_ms.mean, 2) << "   (" << r.description << ")\n";
      for (const auto& t : r.info.tiers) {
        os << "  " << pad_right("", name_w) << "    tier " << t.kind << ": " << t.hit_tokens << " hit tokens, "
           << format_fixed(static_cast<double>(t.bytes_read) / 1e9, 2) << " GB read, "
           << format_fixed(static_cast<double>(t.bytes_written) / 1e9, 2) << " GB written, " << t.evictions
           << " evictions\n";
      }
      for (const auto& l : r.info.links) {
        os << "  " << pad_right("", name_w) << "    link " << l.kind << ": "
           << format_fixed(static_cast<double>(l.bytes_forward) / 1e9, 2) << " GB forward (busiest "
           << format_fixed(100.0 * l.max_utilization_forward, 1) << "%), "
           << format_fixed(static_cast<double>(l.bytes_backward) / 1e9, 2) << " GB backward (busiest "
           << format_fixed(100.0 * l.max_utilization_backward, 1) << "%)\n";
      }
    }
  }
  os << "GPU KV cache size: " << format_thousands(info.gpu_kv_cache_tokens) << " tokens per engine, "
     << info.num_engines << " engine" << (info.num_engines == 1 ? "" : "s") << '\n';
}

void write_comparison_json(std::ostream& os, const std::vector<ComparisonRow>& rows) {
  Json doc = json_document("compare");
  Json variants = Json::array();
  for (const ComparisonRow& row : rows) {
    Json v = Json::object();
    v["variant"] = row.variant;
    v["description"] = row.description;
    for (const auto& c : columns()) v[c.key] = json_number_or_null(c.get(row));
    Json tiers = Json::array();
    for (const TierInfo& x : row.info.tiers) {
      tiers.push_back(Json{{"kind", x.kind},
                           {"hit_tokens", x.hit_tokens},
                           {"bytes_read", x.bytes_read},
                           {"bytes_written", x.bytes_written},
                           {"evictions", x.evictions}});
    }
    v["tiers"] = std::move(tiers);
    Json links = Json::array();
    for (const LinkInfo& x : row.info.links) {
      links.push_back(Json{{"kind", x.kind},
                           {"bytes_forward", x.bytes_forward},
                           {"bytes_backward", x.bytes_backward},
                           {"max_utilization_forward", json_number_or_null(x.max_utilization_forward)},
                           {"max_utilization_backward", json_number_or_null(x.max_utilization_backward)}});
    }
    v["links"] = std::move(links);
    variants.push_back(std::move(v));
  }
  doc["variants"] = std::move(variants);
  write_json(os, doc, 2);
}

void write_comparison_csv(std::ostream& os, const std::vector<ComparisonRow>& rows) {
  os << "variant,description";
  for (const auto& c : columns()) os << ',' << c.key;
  os << '\n';
  for (const auto& r : rows) {
    os << csv_field(r.variant) << ',' << csv_field(r.description);
    for (const auto& c : columns()) os << ',' << csv_number(c.get(r));
    os << '\n';
  }
}

}  // namespace kvsim::io
