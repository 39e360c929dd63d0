#include "sim/io/sinks.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

#include "sim/core/error.hpp"
#include "sim/core/version.hpp"
#include "sim/io/json_writer.hpp"
#include "sim/io/text_format.hpp"

namespace kvsim::io {
namespace {

// bench_utils.py: TEXT_SEPARATOR = "-" * 100
const std::string kSeparator(100, '-');

std::string version_of(const RunInfo& info) {
  return info.kvsim_version.empty() ? std::string(kVersion) : info.kvsim_version;
}

// A percentile fraction as pandas' format_percentiles labels it, without the '%':
// 0.25 -> "25", 0.999 -> "99.9", 0.9999 -> "99.99".
std::string percent_label(double q) {
  std::string s = format_fixed(q * 100.0, 4);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

// The key of a percentile inside a metric object: 0.5 -> "p50", 0.999 -> "p99_9".
std::string percentile_key(double q) {
  std::string s = "p";
  s += percent_label(q);
  for (char& c : s) {
    if (c == '.') c = '_';
  }
  return s;
}

// One scalar or metric of the summary, in the order JSON and CSV both use.
struct Field {
  enum class Kind { kString, kInt, kUInt, kNumber, kMetric };
  std::string key;
  Kind kind = Kind::kNumber;
  std::string text;
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double d = 0;
  const Describe* metric = nullptr;
};

Field make_field(std::string key, Field::Kind kind) {
  Field f;
  f.key = std::move(key);
  f.kind = kind;
  return f;
}
Field str_field(std::string key, std::string v) {
  Field f = make_field(std::move(key), Field::Kind::kString);
  f.text = std::move(v);
  return f;
}
Field int_field(std::string key, std::int64_t v) {
  Field f = make_field(std::move(key), Field::Kind::kInt);
  f.i = v;
  return f;
}
Field uint_field(std::string key, std::uint64_t v) {
  Field f = make_field(std::move(key), Field::Kind::kUInt);
  f.u = v;
  return f;
}
Field num_field(std::string key, double v) {
  Field f = make_field(std::move(key), Field::Kind::kNumber);
  f.d = v;
  return f;
}

std::vector<Field> summary_fields(const Summary& s, const RunInfo& info) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  std::vector<Field> fs;
  fs.push_back(str_field("kvsim_version", version_of(info)));
  fs.push_back(str_field("scenario", info.scenario_name));
  fs.push_back(uint_field("seed", info.seed));
  fs.push_back(str_field("compute_model", info.compute_model));
  fs.push_back(int_field("num_samples", s.num_samples));
  fs.push_back(num_field("warmup_percent", s.warmup_percent));
  fs.push_back(int_field("warmup_samples", s.warmup_samples));
  fs.push_back(int_field("num_requests", s.num_requests));
  fs.push_back(num_field("runtime_sec", s.runtime_sec));
  fs.push_back(num_field("requests_per_sec", s.requests_per_sec));
  fs.push_back(num_field("output_tokens_per_sec", s.output_tokens_per_sec));
  fs.push_back(num_field("warmup_runtime_sec", s.has_warmup_step ? s.warmup_runtime_sec : kNaN));
  fs.push_back(num_field("total_runtime_incl_warmup_sec",
                         s.has_warmup_step ? s.total_runtime_incl_warmup_sec : kNaN));
  for (const MetricRow& row : metric_rows(s)) {
    Field f = make_field(std::string(row.name), Field::Kind::kMetric);
    f.metric = row.stats;
    fs.push_back(std::move(f));
  }
  fs.push_back(num_field("prefix_cache_hit_rate", s.prefix_cache_hit_rate));
  fs.push_back(int_field("prefix_cache_queries", s.prefix_cache_queries));
  fs.push_back(int_field("prefix_cache_hits", s.prefix_cache_hits));
  fs.push_back(int_field("preemptions", s.preemptions));
  fs.push_back(int_field("failed_requests", s.failed_requests));
  fs.push_back(int_field("gpu_kv_cache_tokens", s.gpu_kv_cache_tokens));
  fs.push_back(int_field("num_gpu_blocks", s.num_gpu_blocks));
  fs.push_back(num_field("max_concurrency", s.max_concurrency));
  fs.push_back(int_field("max_model_len", s.max_model_len));
  fs.push_back(int_field("num_engines", s.num_engines));
  fs.push_back(int_field("engine_steps", s.engine_steps));
  fs.push_back(num_field("simulated_seconds", s.simulated_seconds));
  fs.push_back(int_field("external_hit_tokens", info.external_hit_tokens));
  for (const TierInfo& t : info.tiers) {
    const std::string p = "tier_" + t.kind + "_";
    fs.push_back(int_field(p + "capacity_bytes", t.capacity_bytes));
    fs.push_back(int_field(p + "hit_tokens", t.hit_tokens));
    fs.push_back(int_field(p + "bytes_read", t.bytes_read));
    fs.push_back(int_field(p + "bytes_written", t.bytes_written));
    fs.push_back(int_field(p + "bytes_promoted", t.bytes_promoted));
    fs.push_back(int_field(p + "evictions", t.evictions));
    fs.push_back(int_field(p + "stores_dropped", t.stores_dropped));
  }
  for (const LinkInfo& l : info.links) {
    const std::string p = "link_" + l.kind + "_";
    fs.push_back(int_field(p + "bytes_forward", l.bytes_forward));
    fs.push_back(int_field(p + "bytes_backward", l.bytes_backward));
    fs.push_back(num_field(p + "max_utilization_forward", l.max_utilization_forward));
    fs.push_back(num_field(p + "max_utilization_backward", l.max_utilization_backward));
  }
  return fs;
}

// The entries of a metric object: count, mean, std, min, every stored percentile, max.
std::vector<std::pair<std::string, double>> metric_entries(const Describe& d) {
  std::vector<std::pair<std::string, double>> out;
  out.emplace_back("mean", d.mean);
  out.emplace_back("std", d.std);
  out.emplace_back("min", d.min);
  for (const double q : kAllPercentiles) out.emplace_back(percentile_key(q), d.percentile(q));
  out.emplace_back("max", d.max);
  return out;
}

// A scalar field as text: strings through `quote`, numbers through `number` (the JSON and CSV
// spellings differ only there).
std::string scalar_text(const Field& f, std::string (*quote)(std::string_view), std::string (*number)(double)) {
  switch (f.kind) {
    case Field::Kind::kString:
      return quote(f.text);
    case Field::Kind::kInt:
      return std::to_string(f.i);
    case Field::Kind::kUInt:
      return std::to_string(f.u);
    case Field::Kind::kNumber:
      return number(f.d);
    case Field::Kind::kMetric:
      break;
  }
  KVSIM_ASSERT(false, "metric field has no scalar form");
  return {};
}


// describe().T printed by pandas: one row per metric, one column per statistic; every column
// formatted on its own (pandas_float_column), right-aligned to the wider of its header and
// its cells; the index column left-aligned; columns joined by one space (pandas adjoin).
void write_describe_table(std::ostream& os, const Summary& s) {
  const auto rows = metric_rows(s);
  struct Column {
    std::string header;
    std::vector<double> values;
  };
  std::vector<Column> cols;
  const auto add = [&](std::string header, auto get) {
    Column c{std::move(header), {}};
    for (const MetricRow& r : rows) c.values.push_back(get(*r.stats));
    cols.push_back(std::move(c));
  };
  add("count", [](const Describe& d) { return static_cast<double>(d.count); });
  add("mean", [](const Describe& d) { return d.mean; });
  add("std", [](const Describe& d) { return d.std; });
  add("min", [](const Describe& d) { return d.min; });
  for (const double q : s.table_percentiles) {
    add(percent_label(q) + "%", [q](const Describe& d) { return d.percentile(q); });
  }
  add("max", [](const Describe& d) { return d.max; });

  std::size_t index_width = 0;
  for (const MetricRow& r : rows) index_width = std::max(index_width, r.name.size());

  std::vector<std::vector<std::string>> cells;
  std::vector<std::size_t> widths;
  for (const Column& c : cols) {
    cells.push_back(pandas_float_column(c.values, 2));
    std::size_t w = c.header.size();
    for (const auto& cell : cells.back()) w = std::max(w, cell.size());
    widths.push_back(w);
  }

  std::string line = std::string(index_width, ' ');
  for (std::size_t c = 0; c < cols.size(); ++c) line += ' ' + pad_left(cols[c].header, widths[c]);
  os << line << '\n';
  for (std::size_t r = 0; r < rows.size(); ++r) {
    line = pad_right(std::string(rows[r].name), index_width);
    for (std::size_t c = 0; c < cols.size(); ++c) line += ' ' + pad_left(cells[c][r], widths[c]);
    os << line << '\n';
  }
}

// The benchmark's "{k} = {v:.3f}" for floats and "{k} = {v}" for integers.
void write_kv(std::ostream& os, std::string_view key, double v) {
  os << key << " = " << format_fixed(v, 3) << '\n';
}
void write_kv(std::ostream& os, std::string_view key, std::int64_t v) {
  os << key << " = " << std::to_string(v) << '\n';
}

// Appends a number to a line without allocating beyond the line's capacity.
void append_int(std::string& line, std::int64_t v) {
  std::array<char, 24> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  line.append(buf.data(), res.ptr);
}
void append_double(std::string& line, double v) {
  if (!std::isfinite(v)) return;  // an empty CSV field
  std::array<char, 32> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  line.append(buf.data(), res.ptr);
}

}  // namespace

void write_table(std::ostream& os, const Summary& s, const RunInfo& info) {
  os << kSeparator << '\n' << "Parameters:\n";
  for (const auto& l : info.header_lines) os << l << '\n';
  os << kSeparator << '\n';

  if (s.num_requests == 0) {
    os << "No samples to process\n" << kSeparator << '\n';
  } else {
    if (s.warmup_percent > 0) {
      // f"(assuming {percent:.0%} warmup samples)", percent being the fraction X / 100.
      const double fraction = s.warmup_percent / 100.0;
      os << "Statistics summary (assuming " << format_fixed(fraction * 100.0, 0)
         << "% warmup samples):\n";
    } else {
      os << "Statistics summary:\n";
    }
    write_kv(os, "runtime_sec", s.runtime_sec);
    write_kv(os, "requests_per_sec", s.requests_per_sec);
    if (s.has_warmup_step) {
      write_kv(os, "warmup_runtime_sec", s.warmup_runtime_sec);
      write_kv(os, "total_runtime_incl_warmup_sec", s.total_runtime_incl_warmup_sec);
    }
    os << kSeparator << '\n';
    write_describe_table(os, s);
    os << kSeparator << '\n';
  }

  os << "Simulation summary:\n";
  write_kv(os, "output_tokens_per_sec", s.output_tokens_per_sec);
  write_kv(os, "prefix_cache_hit_rate", s.prefix_cache_hit_rate);
  write_kv(os, "preemptions", s.preemptions);
  write_kv(os, "failed_requests", s.failed_requests);
  write_kv(os, "engine_steps", s.engine_steps);
  write_kv(os, "simulated_seconds", s.simulated_seconds);
  write_kv(os, "num_engines", static_cast<std::int64_t>(s.num_engines));
  if (!info.tiers.empty()) {
    write_kv(os, "external_hit_tokens", info.external_hit_tokens);
    for (const TierInfo& t : info.tiers) {
      // Share of all finished requests' prompt tokens this tier served (its hit rate).
      const double share = s.prompt_tokens > 0 ? 100.0 * static_cast<double>(t.hit_tokens) /
                                                     static_cast<double>(s.prompt_tokens)
                                               : 0.0;
      os << "tier " << t.kind << ": hit_tokens " << t.hit_tokens << " (" << format_fixed(share, 1)
         << "% of prompt tokens), read "
         << format_fixed(static_cast<double>(t.bytes_read) / 1e9, 2) << " GB, written "
         << format_fixed(static_cast<double>(t.bytes_written) / 1e9, 2) << " GB, evictions "
         << t.evictions << '\n';
    }
    for (const LinkInfo& l : info.links) {
      os << "link " << l.kind << ": " << format_fixed(static_cast<double>(l.bytes_forward) / 1e9, 2)
         << " GB forward (busiest " << format_fixed(100.0 * l.max_utilization_forward, 1) << "%), "
         << format_fixed(static_cast<double>(l.bytes_backward) / 1e9, 2) << " GB backward (busiest "
         << format_fixed(100.0 * l.max_utilization_backward, 1) << "%)\n";
    }
  }
  // vllm/v1/core/kv_cache_utils.py logs, per engine:
  //   "GPU KV cache size: %s tokens" with f"{num_tokens:,}"
  //   "Maximum concurrency for %s tokens per request: %.2fx" with f"{max_model_len:,}"
  os << "GPU KV cache size: " << format_thousands(s.gpu_kv_cache_tokens) << " tokens\n";
  os << "Maximum concurrency for " << format_thousands(s.max_model_len)
     << " tokens per request: " << format_fixed(s.max_concurrency, 2) << "x\n";
  os << "scenario = " << info.scenario_name << '\n';
  os << "seed = " << std::to_string(info.seed) << '\n';
  if (!info.compute_model.empty()) os << "compute_model = " << info.compute_model << '\n';
  os << "kvsim_version = " << version_of(info) << '\n';
  os << kSeparator << '\n';
}

void write_summary_json(std::ostream& os, const Summary& s, const RunInfo& info) {
  // The summary is also stored and read back outside `kvsim run` (results databases), so it
  // carries no "command" key.
  Json doc = json_document("", version_of(info));
  for (const Field& f : summary_fields(s, info)) {
    switch (f.kind) {
      case Field::Kind::kString:
        doc[f.key] = f.text;
        break;
      case Field::Kind::kInt:
        doc[f.key] = f.i;
        break;
      case Field::Kind::kUInt:
        doc[f.key] = f.u;
        break;
      case Field::Kind::kNumber:
        doc[f.key] = json_number_or_null(f.d);
        break;
      case Field::Kind::kMetric: {
        Json m = Json::object();
        m["count"] = f.metric->count;
        for (const auto& [key, value] : metric_entries(*f.metric)) m[key] = json_number_or_null(value);
        doc[f.key] = std::move(m);
        break;
      }
    }
  }
  write_json(os, doc);
}

void write_check_scenario_json(std::ostream& os, const std::string& scenario_path, const RunInfo& info) {
  Json doc = json_document("check-scenario", version_of(info));
  doc["scenario_file"] = scenario_path;
  doc["scenario"] = info.scenario_name;
  doc["ok"] = true;
  doc["gpu_kv_cache_tokens"] = info.gpu_kv_cache_tokens;
  doc["num_gpu_blocks"] = info.num_gpu_blocks;
  doc["max_model_len"] = info.max_model_len;
  doc["max_concurrency"] = json_number_or_null(info.max_concurrency);
  doc["num_engines"] = info.num_engines;
  doc["compute_model"] = info.compute_model;
  doc["notes"] = info.notes;
  doc["memory_breakdown"] = info.memory_breakdown;
  doc["step_times"] = info.step_times;
  write_json(os, doc, 2);
}

void write_summary_csv(std::ostream& os, const Summary& s, const RunInfo& info) {
  const auto fields = summary_fields(s, info);
  std::string header;
  std::string values;
  const auto add = [&](const std::string& key, const std::string& value) {
    if (!header.empty()) {
      header += ',';
      values += ',';
    }
    header += csv_field(key);
    values += value;
  };
  for (const Field& f : fields) {
    if (f.kind != Field::Kind::kMetric) {
      add(f.key, scalar_text(f, csv_field, csv_number));
      continue;
    }
    add(f.key + "_count", std::to_string(f.metric->count));
    for (const auto& [key, value] : metric_entries(*f.metric)) {
      add(f.key + "_" + key, csv_number(value));
    }
  }
  os << header << '\n' << values << '\n';
}

void RequestsJsonWriter::write(const RequestRecord& r) {
  os_ << (count_ == 0 ? "[\n" : ",\n");
  ++count_;
  // One token per streamed chunk (see Summary::output_num_chunks): the chunks after the
  // first, and the tokens of the first chunk.
  const std::int64_t chunks = std::max<std::int64_t>(0, r.output_num_tokens - 1);
  const std::int64_t first_chunk_tokens = r.output_num_tokens > 0 ? 1 : 0;
  os_ << "  {\"ttft_ms\": " << json_number(r.ttft_ms)
      << ", \"tpot_ms\": " << json_number(r.tpot_ms)
      << ", \"latency_ms\": " << json_number(r.latency_ms)
      << ", \"start_time_ms\": " << json_number(r.start_time_ms)
      << ", \"input_num_turns\": " << std::to_string(r.input_num_turns)
      << ", \"input_num_tokens\": " << std::to_string(r.input_num_tokens)
      << ", \"output_num_tokens\": " << std::to_string(r.output_num_tokens)
      << ", \"output_num_chunks\": " << std::to_string(chunks)
      << ", \"output_num_first_chunk_tokens\": " << std::to_string(first_chunk_tokens)
      << ", \"conversation_id\": " << json_quote(r.conversation_id)
      << ", \"client_id\": " << std::to_string(r.client_id)
      << ", \"request_id\": " << std::to_string(r.request_id)
      << ", \"prompt_tokens\": " << std::to_string(r.prompt_tokens)
      << ", \"cached_tokens\": " << std::to_string(r.cached_tokens)
      << ", \"preemptions\": " << std::to_string(r.preemptions)
      << ", \"server\": " << std::to_string(r.server)
      << ", \"counted\": " << (r.counted ? "true" : "false") << '}';
}

void RequestsJsonWriter::finish() {
  if (finished_) return;
  finished_ = true;
  os_ << (count_ == 0 ? "[]\n" : "\n]\n");
}

void write_requests_json(std::ostream& os, const std::vector<RequestRecord>& records) {
  RequestsJsonWriter w(os);
  for (const RequestRecord& r : records) w.write(r);
  w.finish();
}

TimeseriesCsvWriter::TimeseriesCsvWriter(std::ostream& os) : os_(os) {
  line_.reserve(256);
  os_ << kHeader << '\n';
}

void TimeseriesCsvWriter::write(const StepRecord& step) {
  line_.clear();
  append_double(line_, step.time_s);
  line_ += ',';
  append_int(line_, step.server);
  line_ += ',';
  append_double(line_, step.duration_ms);
  line_ += ',';
  append_int(line_, step.running);
  line_ += ',';
  append_int(line_, step.waiting);
  line_ += ',';
  append_int(line_, step.batch_tokens);
  line_ += ',';
  append_int(line_, step.prefill_requests);
  line_ += ',';
  append_int(line_, step.decode_requests);
  line_ += ',';
  append_double(line_, step.kv_usage);
  line_ += ',';
  append_int(line_, step.preemptions);
  line_ += '\n';
  os_.write(line_.data(), static_cast<std::streamsize>(line_.size()));
}

void UsageCsvWriter::write(const UsageSample& sample) {
  line_.clear();
  if (!header_) {
    header_ = true;
    line_ += "time_s,interval_s,gpu_bytes_held";
    for (const auto& t : sample.tiers) line_ += "," + t.kind + "_bytes_held";
    for (const auto& l : sample.links) line_ += "," + l.kind + "_util_forward," + l.kind + "_util_backward";
    line_ += '\n';
  }
  append_double(line_, sample.time_s);
  line_ += ',';
  append_double(line_, sample.interval_s);
  line_ += ',';
  append_int(line_, sample.gpu_bytes_held);
  for (const auto& t : sample.tiers) {
    line_ += ',';
    append_int(line_, t.bytes_held);
  }
  for (const auto& l : sample.links) {
    line_ += ',';
    append_double(line_, l.utilization_forward);
    line_ += ',';
    append_double(line_, l.utilization_backward);
  }
  line_ += '\n';
  os_.write(line_.data(), static_cast<std::streamsize>(line_.size()));
}

}  // namespace kvsim::io
