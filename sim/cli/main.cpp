// kvsim command line: thin commands over the scenario façade (kvsim::scenario::Simulation).
// Exit codes: 0 success, 2 bad input (scenario, trace, CLI), 3 internal error.
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "kvsim/core/error.hpp"
#include "kvsim/io/comparison.hpp"
#include "kvsim/models/fitted_model.hpp"
#include "kvsim/models/profile_bundle.hpp"
#include "kvsim/io/sinks.hpp"
#include "kvsim/io/summary.hpp"
#include "kvsim/scenario/catalog.hpp"
#include "kvsim/scenario/scenario.hpp"
#include "kvsim/scenario/simulation.hpp"
#include "kvsim/version.hpp"
#include "kvsim/workload/cache_curve.hpp"
#include "kvsim/workload/mooncake_trace.hpp"

namespace {

constexpr int kExitBadInput = 2;
constexpr int kExitInternal = 3;

using kvsim::InputError;

// Writes a file through a temporary in the same folder and renames it into place, so an
// interrupted or failed run never leaves a half-written file over an earlier result.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path) : path_(std::move(path)), tmp_(path_ + ".tmp") {
    out_.open(tmp_, std::ios::binary | std::ios::trunc);
    if (!out_) throw InputError("", 0, 0, "cannot write '" + path_ + "': " + std::strerror(errno));
  }
  ~AtomicFile() {
    if (!committed_) {
      out_.close();
      std::error_code ec;
      std::filesystem::remove(tmp_, ec);
    }
  }
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  std::ostream& stream() { return out_; }
  void commit() {
    out_.flush();
    out_.close();
    if (!out_) throw InputError("", 0, 0, "failed writing '" + path_ + "'");
    std::error_code ec;
    std::filesystem::rename(tmp_, path_, ec);
    if (ec) throw InputError("", 0, 0, "cannot move '" + tmp_ + "' to '" + path_ + "': " + ec.message());
    committed_ = true;
  }

 private:
  std::string path_;
  std::string tmp_;
  std::ofstream out_;
  bool committed_ = false;
};

struct CommonOptions {
  std::vector<std::string> sets;
  std::string catalog_dir;
};

kvsim::scenario::LoadOptions load_options(const CommonOptions& o) {
  kvsim::scenario::LoadOptions lo;
  for (const auto& s : o.sets) lo.overrides.push_back(kvsim::scenario::parse_override(s));
  lo.catalog_dir = o.catalog_dir;
  return lo;
}

void add_common(CLI::App* cmd, CommonOptions& o) {
  cmd->add_option("--set", o.sets,
                  "Override a scenario value before decoding, e.g. --set engine.max_num_seqs=128 "
                  "(repeatable)")
      ->type_name("PATH=VALUE");
  cmd->add_option("--catalog", o.catalog_dir, "Folder of the GPU and model catalog (default: found "
                                              "next to the scenario, then the built-in one)")
      ->type_name("DIR");
}

struct RunOptions {
  std::string scenario;
  std::string trace;
  std::string format;
  std::string requests_out;
  std::string timeseries_out;
  std::optional<std::uint64_t> seed;
  double warmup_percent = 0;
  bool warmup_set = false;
};

int cmd_run(const RunOptions& ro, const CommonOptions& co) {
  auto lo = load_options(co);
  if (!ro.trace.empty()) {
    const auto abs = std::filesystem::absolute(ro.trace).string();
    if (!std::filesystem::exists(abs)) throw InputError(ro.trace, 0, 0, "--trace: no such file");
    lo.overrides.push_back({"workload.kind", "trace"});
    lo.overrides.push_back({"workload.trace.file", abs});
  }
  if (ro.seed) lo.overrides.push_back({"seed", std::to_string(*ro.seed)});
  if (!ro.format.empty()) lo.overrides.push_back({"output.format", ro.format});
  if (!ro.requests_out.empty()) lo.overrides.push_back({"output.requests_out", ro.requests_out});
  if (!ro.timeseries_out.empty()) lo.overrides.push_back({"output.timeseries_out", ro.timeseries_out});
  const auto sc = kvsim::scenario::load_scenario(ro.scenario, lo);

  kvsim::scenario::Simulation sim(sc);
  std::unique_ptr<AtomicFile> ts_file;
  std::unique_ptr<kvsim::io::TimeseriesCsvWriter> ts;
  kvsim::scenario::StepCallback on_step;
  if (!sc.output.timeseries_out.empty()) {
    ts_file = std::make_unique<AtomicFile>(sc.output.timeseries_out);
    ts = std::make_unique<kvsim::io::TimeseriesCsvWriter>(ts_file->stream());
    on_step = [&ts](const kvsim::io::StepRecord& r) { ts->write(r); };
  }
  auto result = sim.run(on_step);
  if (ts_file) ts_file->commit();
  if (!sc.output.requests_out.empty()) {
    AtomicFile f(sc.output.requests_out);
    kvsim::io::write_requests_json(f.stream(), result.requests);
    f.commit();
  }
  // --warmup-percent wins; otherwise the scenario's first warmup percentage.
  double warmup = ro.warmup_percent;
  if (!ro.warmup_set && !sc.workload.warmup_percentages.empty()) warmup = sc.workload.warmup_percentages.front();
  const auto summary = kvsim::io::summarize(result.requests, result.info, warmup);
  std::ostringstream out;
  if (sc.output.format == "json") {
    kvsim::io::write_summary_json(out, summary, result.info);
  } else if (sc.output.format == "csv") {
    kvsim::io::write_summary_csv(out, summary, result.info);
  } else {
    kvsim::io::write_table(out, summary, result.info);
  }
  std::cout << out.str();
  std::cout.flush();
  return 0;
}

int cmd_check(const std::string& path, const CommonOptions& co) {
  const auto sc = kvsim::scenario::load_scenario(path, load_options(co));
  kvsim::scenario::Simulation sim(sc);  // also checks what only building can check (KV fit)
  const auto& info = sim.info();
  std::cout << path << ": ok (" << sc.name << "; GPU KV cache size: " << info.gpu_kv_cache_tokens
            << " tokens; " << info.num_engines << " engine" << (info.num_engines == 1 ? "" : "s") << ")\n";
  std::cout << "KV cache per engine, as vLLM sizes it:\n";
  for (const auto& line : info.memory_breakdown) std::cout << "  " << line << '\n';
  return 0;
}

struct Variant {
  std::string name;
  std::string description;
  std::vector<kvsim::scenario::Override> overrides;
};

// "NAME: path=value, path=value" (the part after the colon may be empty).
Variant parse_variant(const std::string& text) {
  const auto colon = text.find(':');
  Variant v;
  v.name = text.substr(0, colon);
  while (!v.name.empty() && v.name.back() == ' ') v.name.pop_back();
  if (v.name.empty()) throw InputError("", 0, 0, "--variant '" + text + "': expected NAME: path=value, ...");
  if (colon != std::string::npos) {
    std::string rest = text.substr(colon + 1);
    // The next comma outside brackets and braces (values may be YAML flow lists and maps).
    auto next_comma = [&rest](std::size_t from) {
      int depth = 0;
      for (std::size_t i = from; i < rest.size(); ++i) {
        const char ch = rest[i];
        if (ch == '[' || ch == '{') ++depth;
        if (ch == ']' || ch == '}') --depth;
        if (ch == ',' && depth == 0) return i;
      }
      return std::string::npos;
    };
    std::size_t start = 0;
    while (start <= rest.size()) {
      const auto comma = next_comma(start);
      std::string part = rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      const auto b = part.find_first_not_of(' ');
      const auto e = part.find_last_not_of(' ');
      if (b != std::string::npos) {
        part = part.substr(b, e - b + 1);
        v.overrides.push_back(kvsim::scenario::parse_override(part));
        v.description += (v.description.empty() ? "" : ", ") + part;
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (v.description.empty()) v.description = "the scenario as written";
  return v;
}

// The KV-tier variants of a scenario: the GPU's prefix cache alone (VRAM only); a host DRAM tier
// through vLLM's native offloading; the network store, when the hardware has one; and no KV
// reuse at all (every turn recomputes its history).
std::vector<Variant> default_variants(const kvsim::scenario::Scenario& sc) {
  std::vector<Variant> v = {
      {"vram-only", "GPU prefix cache only", {{"kv_offload.connector", "none"}, {"kv_offload.tiers", "[]"}}},
      {"dram", "native offloading to 64 GiB of host DRAM per server",
       {{"kv_offload.connector", "native"}, {"kv_offload.tiers", "[{kind: host_dram, capacity: 64GiB}]"}}},
  };
  bool nics = true;
  for (const auto& s : sc.hardware.servers) nics = nics && s.nic.rate.value > 0;
  if (sc.hardware.remote_store && nics) {
    v.push_back({"nvme-net", "native offloading to the network NVMe store (8 TB)",
                 {{"kv_offload.connector", "native"}, {"kv_offload.tiers", "[{kind: remote, capacity: 8TB}]"}}});
  }
  v.push_back({"no-reuse", "prefix caching off: every turn recomputes its history",
               {{"engine.enable_prefix_caching", "false"}, {"kv_offload.connector", "none"}, {"kv_offload.tiers", "[]"}}});
  return v;
}

struct CompareOptions {
  std::vector<std::string> scenarios;
  std::vector<std::string> variants;
  std::string format = "table";
  std::optional<std::uint64_t> seed;
};

int cmd_compare(const CompareOptions& co, const CommonOptions& common) {
  // Several files: each file is a variant. One file: its variants (--variant, or the defaults).
  std::vector<std::pair<std::string, Variant>> runs;
  if (co.scenarios.size() > 1) {
    if (!co.variants.empty()) throw InputError("", 0, 0, "--variant takes one scenario file, got " + std::to_string(co.scenarios.size()));
    for (const auto& f : co.scenarios) {
      runs.push_back({f, Variant{std::filesystem::path(f).stem().string(), f, {}}});
    }
  } else {
    std::vector<Variant> variants;
    for (const auto& t : co.variants) variants.push_back(parse_variant(t));
    if (variants.empty()) variants = default_variants(kvsim::scenario::load_scenario(co.scenarios.front(), load_options(common)));
    for (auto& v : variants) runs.push_back({co.scenarios.front(), std::move(v)});
  }
  std::vector<kvsim::io::ComparisonRow> rows;
  kvsim::io::RunInfo first_info;
  for (const auto& [file, v] : runs) {
    auto lo = load_options(common);
    if (co.seed) lo.overrides.push_back({"seed", std::to_string(*co.seed)});
    for (const auto& o : v.overrides) lo.overrides.push_back(o);
    const auto sc = kvsim::scenario::load_scenario(file, lo);
    kvsim::scenario::Simulation sim(sc);
    auto result = sim.run();
    if (rows.empty()) first_info = result.info;
    rows.push_back({v.name, v.description, kvsim::io::summarize(result.requests, result.info), result.info});
  }
  std::ostringstream out;
  if (co.format == "json") kvsim::io::write_comparison_json(out, rows);
  else if (co.format == "csv") kvsim::io::write_comparison_csv(out, rows);
  else kvsim::io::write_comparison_table(out, rows, first_info);
  std::cout << out.str();
  return 0;
}

// The catalog named by --catalog, or the one found next to the working folder or built in.
kvsim::scenario::Catalog load_catalog(const CommonOptions& o) {
  return kvsim::scenario::load_catalog(o.catalog_dir.empty() ? kvsim::scenario::find_catalog_dir("") : o.catalog_dir);
}

kvsim::models::ModelSpec catalog_model(const kvsim::scenario::Catalog& cat, const std::string& name) {
  auto it = cat.models.find(name);
  if (it == cat.models.end()) throw InputError("", 0, 0, "--model: no model '" + name + "' in the catalog");
  return it->second;
}

struct CalibrateOptions {
  std::string profile;
  std::string out;
  std::string model = "llama-3.1-8b";
};

// Fits the compact step-time model to a profile bundle, prints the residuals and writes the
// coefficients with their provenance.
int cmd_calibrate(const CalibrateOptions& o, const CommonOptions& common) {
  const auto model = catalog_model(load_catalog(common), o.model);
  const auto bundle = kvsim::models::load_profile_bundle(o.profile);
  const auto report = kvsim::models::fit_profile(bundle, model);
  std::cout << "Fitted " << o.profile << " (" << bundle.meta.gpu << ", " << bundle.meta.model << ", vLLM "
            << bundle.meta.vllm_version << ", profiled " << bundle.meta.profiled_at << ")\n";
  std::cout << std::left << std::setw(18) << "component" << std::right << std::setw(8) << "points" << std::setw(16)
            << "median |error|" << std::setw(14) << "max |error|" << '\n';
  for (const auto& r : report.residuals) {
    std::cout << std::left << std::setw(18) << r.component << std::right << std::setw(8) << r.points
              << std::setw(15) << std::fixed << std::setprecision(2) << 100.0 * r.median_abs_rel_error << "%"
              << std::setw(13) << 100.0 * r.max_abs_rel_error << "%\n";
  }
  std::cout.unsetf(std::ios::floatfield);
  if (!o.out.empty()) {
    AtomicFile f(o.out);
    f.stream() << kvsim::models::write_fitted_yaml(report.coefficients);
    f.commit();
    std::cout << "wrote " << o.out << '\n';
  }
  return 0;
}

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
  const auto trace = kvsim::workload::read_mooncake_trace(o.trace, o.block_tokens);
  const auto curve = kvsim::workload::lru_cache_curve(trace, o.block_tokens, o.capacities);
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

std::string human(double v, const char* unit, double scale) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << v / scale << ' ' << unit;
  return os.str();
}

int cmd_catalog(const CommonOptions& co) {
  const auto cat = load_catalog(co);
  std::cout << "GPUs (" << cat.dir << "/gpus.yaml)\n";
  std::cout << std::left << std::setw(16) << "name" << std::right << std::setw(12) << "memory" << std::setw(14)
            << "mem BW" << std::setw(14) << "BF16 dense" << std::setw(14) << "FP8 dense" << std::setw(10)
            << "host" << '\n';
  for (const auto& [name, g] : cat.gpus) {
    std::ostringstream host;
    host << "Gen" << kvsim::hw::pcie_generation(g.host_link.gen) << " x" << g.host_link.lanes;
    std::cout << std::left << std::setw(16) << name << std::right << std::setw(12)
              << human(g.memory.as_double(), "GiB", 1073741824.0) << std::setw(14)
              << human(g.memory_bandwidth.value, "GB/s", 1e9) << std::setw(14)
              << human(g.bf16_dense.value, "TF", 1e12) << std::setw(14)
              << (g.fp8_dense.value > 0 ? human(g.fp8_dense.value, "TF", 1e12) : std::string("-")) << std::setw(10)
              << host.str() << '\n';
  }
  std::cout << "\nModels (" << cat.dir << "/models.yaml)\n";
  std::cout << std::left << std::setw(16) << "name" << std::right << std::setw(10) << "params" << std::setw(8)
            << "layers" << std::setw(8) << "hidden" << std::setw(7) << "heads" << std::setw(9) << "kv_heads"
            << std::setw(10) << "head_dim" << std::setw(14) << "KV/token" << std::setw(12) << "weights" << '\n';
  for (const auto& [name, m] : cat.models) {
    std::cout << std::left << std::setw(16) << name << std::right << std::setw(10)
              << human(static_cast<double>(m.num_params), "B", 1e9) << std::setw(8) << m.num_layers << std::setw(8)
              << m.hidden_size << std::setw(7) << m.num_attention_heads << std::setw(9) << m.num_kv_heads
              << std::setw(10) << m.head_dim << std::setw(14) << human(m.kv_bytes_per_token().as_double(), "KiB", 1024.0)
              << std::setw(12) << human(m.weight_bytes().as_double(), "GiB", 1073741824.0) << '\n';
  }
  std::cout << "\nNVMe drives (" << cat.dir << "/drives.yaml)\n";
  std::cout << std::left << std::setw(18) << "name" << std::right << std::setw(12) << "read" << std::setw(12)
            << "write" << std::setw(14) << "read lat" << '\n';
  for (const auto& [name, d] : cat.drives) {
    std::cout << std::left << std::setw(18) << name << std::right << std::setw(12)
              << human(d.read.value, "GB/s", 1e9) << std::setw(12) << human(d.write.value, "GB/s", 1e9)
              << std::setw(14) << human(static_cast<double>(d.read_latency), "us", 1e3) << '\n';
  }
  std::cout << "\nStorage nodes (" << cat.dir << "/storage.yaml)\n";
  std::cout << std::left << std::setw(26) << "name" << std::right << std::setw(12) << "NIC" << std::setw(14)
            << "controller" << std::setw(8) << "drives" << '\n';
  for (const auto& [name, n] : cat.storage) {
    std::cout << std::left << std::setw(26) << name << std::right << std::setw(12) << human(n.nic.value, "GB/s", 1e9)
              << std::setw(14) << human(n.controller.value, "GB/s", 1e9) << std::setw(8) << n.num_drives << '\n';
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kvsim: simulate LLM serving with KV-cache offload (vLLM V1) and plan capacity"};
  app.set_version_flag("--version", std::string("kvsim ") + kvsim::kVersion);
  app.require_subcommand(1);
  app.footer("Exit codes: 0 success, 2 bad input, 3 internal error.\nDocs: docs/README.md");

  CommonOptions common;
  RunOptions ro;
  auto* run = app.add_subcommand("run", "Simulate a scenario and print the benchmark's statistics");
  run->add_option("scenario", ro.scenario, "Scenario YAML file")->required()->type_name("FILE");
  run->add_option("--trace", ro.trace, "Replay a Mooncake-format JSONL trace open-loop instead of the "
                                       "scenario's workload")->type_name("FILE");
  run->add_option("--format", ro.format, "Summary format (default: the scenario's output.format)")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  run->add_option("--requests-out", ro.requests_out, "Write one JSON object per request to FILE")->type_name("FILE");
  run->add_option("--timeseries-out", ro.timeseries_out, "Write one CSV row per engine step to FILE")
      ->type_name("FILE");
  run->add_option("--seed", ro.seed, "Root random seed (default: the scenario's seed)");
  run->add_option("--warmup-percent", ro.warmup_percent,
                  "Drop the first X% of requests (by start time) from the statistics, like the "
                  "benchmark's --warmup-percentages")
      ->check(CLI::Range(0.0, 100.0));
  add_common(run, common);

  CompareOptions cmp;
  auto* compare = app.add_subcommand("compare", "Run a scenario's KV-tier variants and compare them side by side");
  compare->add_option("scenarios", cmp.scenarios,
                      "Scenario YAML file, or several files to compare with each other")
      ->required()
      ->type_name("FILE...");
  compare->add_option("--variant", cmp.variants,
                      "A variant as 'NAME: path=value, path=value' (repeatable; default: vram-only, "
                      "dram, nvme-net when the hardware has a store, no-reuse). The first variant is "
                      "the baseline of the ratios.")
      ->type_name("SPEC");
  compare->add_option("--format", cmp.format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}));
  compare->add_option("--seed", cmp.seed, "Root random seed (default: the scenario's seed)");
  add_common(compare, common);

  std::string check_path;
  auto* check = app.add_subcommand("check-scenario", "Check a scenario and print diagnostics only");
  check->add_option("scenario", check_path, "Scenario YAML file")->required()->type_name("FILE");
  add_common(check, common);

  CalibrateOptions cal;
  auto* calibrate = app.add_subcommand(
      "calibrate", "Fit the step-time model to a measured profile bundle and write its coefficients");
  calibrate->add_option("--profile", cal.profile, "Profile bundle folder (dense.csv, attention.csv, ...)")
      ->required()
      ->type_name("DIR");
  calibrate->add_option("--out", cal.out, "Write the fitted coefficients (YAML) to FILE")->type_name("FILE");
  calibrate->add_option("--model", cal.model, "Catalog model the profile was measured on")->type_name("NAME");
  calibrate->add_option("--catalog", common.catalog_dir, "Catalog folder")->type_name("DIR");

  CurveOptions curve;
  auto* cache_curve = app.add_subcommand(
      "cache-curve", "Timing-free LRU prefix-cache hit rate against cache capacity for a Mooncake trace");
  cache_curve->add_option("trace", curve.trace, "Mooncake-format JSONL trace")->required()->type_name("FILE");
  cache_curve->add_option("--capacities", curve.capacities, "Capacities in hash blocks")
      ->delimiter(',')
      ->check(CLI::PositiveNumber)
      ->type_name("N,N,...");
  cache_curve->add_option("--block-tokens", curve.block_tokens, "Tokens per trace hash block")
      ->check(CLI::Range(1, 1 << 20));
  cache_curve->add_option("--model", curve.model, "Catalog model whose KV bytes size the capacities")
      ->type_name("NAME");
  cache_curve->add_option("--format", curve.format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}));
  cache_curve->add_option("--catalog", common.catalog_dir, "Catalog folder")->type_name("DIR");

  auto* catalog = app.add_subcommand("catalog", "List the catalog's GPUs, models, drives and storage nodes");
  catalog->add_option("--catalog", common.catalog_dir, "Catalog folder")->type_name("DIR");

  try {
    app.parse(argc, argv);
    ro.warmup_set = run->count("--warmup-percent") > 0;
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitBadInput;
  }

  try {
    if (*run) return cmd_run(ro, common);
    if (*check) return cmd_check(check_path, common);
    if (*compare) return cmd_compare(cmp, common);
    if (*calibrate) return cmd_calibrate(cal, common);
    if (*cache_curve) return cmd_cache_curve(curve, common);
    if (*catalog) return cmd_catalog(common);
  } catch (const InputError& e) {
    std::cerr << e.what() << '\n';
    return kExitBadInput;
  } catch (const kvsim::InternalError& e) {
    std::cerr << "kvsim: internal error: " << e.what() << '\n';
    return kExitInternal;
  } catch (const std::exception& e) {
    std::cerr << "kvsim: error: " << e.what() << '\n';
    return kExitInternal;
  }
  return 0;
}
