// kvsim map: break-even maps. A scenario's KV-tier variants run over a grid of two axes of
// scenario values through the sweep machinery (results database, resumable, shardable); the page
// shows each variant's gain over the others with contours at 1x, 2x, 3x and 4x
// (sim/planner/offload_map.hpp, map_report.hpp).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"
#include "sim/io/atomic_file.hpp"
#include "sim/planner/map_report.hpp"
#include "sim/planner/offload_map.hpp"
#include "sim/planner/progress.hpp"
#include "sim/planner/shard.hpp"

namespace kvsim::cli {
namespace {

struct MapCliOptions {
  std::string scenario;
  std::vector<std::string> x;
  std::vector<std::string> y;
  std::string variants;
  std::vector<std::string> custom;
  std::string metric = "requests_per_sec";
  std::string slo;
  std::string aggregate = "mean";
  std::int64_t max_users = 1024;
  int seeds = 1;
  int jobs = 0;
  std::string out = "kvsim-map";
  std::string db;
  std::optional<std::string> shard;
  std::optional<std::int64_t> shard_count;
  bool retry_failed = false;
  bool rerun_running = false;
  std::string progress = "auto";
  std::string format = "table";
};

std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    std::string name = text.substr(start, comma == std::string::npos ? comma : comma - start);
    const auto b = name.find_first_not_of(' ');
    const auto e = name.find_last_not_of(' ');
    if (b == std::string::npos)
      throw InputError("", 0, 0, "--variants '" + text + "': an empty name");
    out.push_back(name.substr(b, e - b + 1));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// A word for a POSIX shell: as it is when it holds only safe characters, else in single quotes.
std::string shell_word(const std::string& w) {
  const bool safe = !w.empty() && w.find_first_not_of(
                                      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
                                      "QRSTUVWXYZ0123456789_-+./:=,@%") == std::string::npos;
  if (safe) return w;
  std::string out = "'";
  for (const char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The options that define the map's content, as a command line (output, database, jobs, shard
// and progress left out): written into map.json, so a stored map says how to make it again.
std::string definition(const MapCliOptions& o, const CommonOptions& common) {
  std::string s = "kvsim map " + shell_word(o.scenario);
  const auto add = [&s](const std::string& flag, const std::string& value) {
    s += " " + flag + " " + shell_word(value);
  };
  for (const auto& x : o.x) add("--x", x);
  for (const auto& y : o.y) add("--y", y);
  for (const auto& v : common.sets) add("--set", v);
  if (!common.catalog_dir.empty()) add("--catalog", common.catalog_dir);
  if (!o.variants.empty()) add("--variants", o.variants);
  for (const auto& v : o.custom) add("--variant", v);
  if (o.slo.empty()) {
    if (o.metric != "requests_per_sec") add("--metric", o.metric);
  } else {
    add("--slo", o.slo);
    if (o.aggregate != "mean") add("--aggregate", o.aggregate);
    if (o.max_users != 1024) add("--max-users", std::to_string(o.max_users));
  }
  if (o.seeds != 1) add("--seeds", std::to_string(o.seeds));
  return s;
}

int cmd_map(const MapCliOptions& o, const CommonOptions& common) {
  planner::MapOptions mo;
  mo.definition = definition(o, common);
  mo.scenario_path = o.scenario;
  mo.load = load_options(common);
  mo.x = o.x;
  mo.y = o.y;
  if (!o.variants.empty()) mo.variant_names = split_names(o.variants);
  for (const auto& v : o.custom) mo.custom_variants.push_back(planner::parse_variant(v));
  mo.metric = o.metric;
  if (!o.slo.empty()) mo.slo = planner::parse_slo(o.slo);
  mo.aggregate = o.aggregate == "worst" ? planner::Aggregate::kWorst : planner::Aggregate::kMean;
  mo.max_users = o.max_users;
  mo.seeds = o.seeds;
  mo.sweep.jobs = o.jobs;
  mo.sweep.db_path = o.db.empty() ? (std::filesystem::path(o.out) / "map.db").string() : o.db;
  mo.sweep.shard = planner::resolve_shard(o.shard, o.shard_count,
                                          [](const char* name) { return std::getenv(name); });
  mo.sweep.policy.retry_failed = o.retry_failed;
  mo.sweep.policy.rerun_running = o.rerun_running;
  if (o.progress != "none") {
    const bool bar = o.progress == "bar" || (o.progress == "auto" && isatty(fileno(stderr)) != 0);
    mo.progress = [bar](std::int64_t total) {
      return std::make_unique<planner::Progress>(std::cerr, bar, total);
    };
  }
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec || !std::filesystem::is_directory(o.out))
    throw InputError(o.out, 0, 0, "--out: cannot create the folder: " + ec.message());

  auto map = planner::run_map(mo);
  // The outputs name the database relative to their folder when it is inside it (map.db by
  // default), so a copied or moved folder still finds its runs.
  {
    const auto db = std::filesystem::absolute(map.db_path).lexically_normal();
    const auto dir = std::filesystem::absolute(o.out).lexically_normal();
    const auto rel = db.lexically_relative(dir);
    map.db_path = !rel.empty() && *rel.begin() != ".." ? rel.string() : db.string();
  }
  for (const auto& m : map.messages) std::cerr << "kvsim map: " << m << '\n';

  const auto base = std::filesystem::path(o.out);
  const std::string html = (base / "map.html").string();
  const std::string json = (base / "map.json").string();
  const std::string csv = (base / "map.csv").string();
  const io::Json doc = planner::map_json(map);
  {
    io::AtomicFile f(json);
    io::write_json(f.stream(), doc, 2);
    f.commit();
  }
  {
    io::AtomicFile f(csv);
    planner::write_map_csv(f.stream(), map);
    f.commit();
  }
  {
    io::AtomicFile f(html);
    planner::write_map_html(f.stream(), map);
    f.commit();
  }
  if (o.format == "json") {
    io::write_json(std::cout, doc, 2);
  } else {
    std::cout << planner::format_map_text(map);
  }
  // stderr with --format json, so stdout stays one JSON document
  (o.format == "json" ? std::cerr : std::cout)
      << "map: " << html << ", " << json << ", " << csv << "; runs in " << mo.sweep.db_path << '\n';
  if (map.report.skipped_failed > 0)
    std::cerr << "kvsim map: retry failed runs with --retry-failed\n";
  return map.report.ran_failed + map.report.skipped_failed > 0 ? kExitCheckFailed : 0;
}

Command add_map(CLI::App& app, CommonOptions& common) {
  auto o = std::make_shared<MapCliOptions>();
  auto* cmd = app.add_subcommand(
      "map",
      "Break-even map: each KV-tier variant's gain over the others across two axes of scenario "
      "values (HTML heatmaps with 1x-4x contours, JSON, CSV; resumable, shardable)");
  cmd->add_option("scenario", o->scenario, "Scenario YAML file")->required()->type_name("FILE");
  cmd->add_option("--x", o->x,
                  "The x axis: PATH=FROM:TO:COUNT[:log] or PATH=V1,V2,...; PATH is a scenario path "
                  "or 'users' (the planner's load knob). Repeat to vary several paths together")
      ->required()
      ->type_name("PATH=RANGE");
  cmd->add_option("--y", o->y, "The y axis, as --x")->required()->type_name("PATH=RANGE");
  cmd->add_option("--variants", o->variants,
                  "Variant names, the first the baseline (default: vram-only,dram and nvme-net "
                  "when the hardware has a network store; also no-reuse)")
      ->type_name("A,B,...");
  cmd->add_option("--variant", o->custom,
                  "A further variant as 'NAME: path=value, ...' (repeatable; after --variants)");
  cmd->add_option("--metric", o->metric,
                  "The summary metric compared (default requests_per_sec; times compare as "
                  "inverse ratios)");
  cmd->add_option("--slo", o->slo,
                  "Compare the most users meeting this SLO instead (e.g. 'ttft_p90<=2s'); the "
                  "axes may then not set users");
  cmd->add_option("--aggregate", o->aggregate, "How seeds combine under --slo")
      ->check(CLI::IsMember({"mean", "worst"}));
  cmd->add_option("--max-users", o->max_users, "Largest load the --slo search probes")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 30));
  cmd->add_option("--seeds", o->seeds, "Seeds per cell and variant (repetition seeds)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("-j,--jobs", o->jobs, "Simulations at once (default: the number of cores)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("-o,--out", o->out,
                  "Folder for map.html, map.json, map.csv (and map.db unless --db); default "
                  "kvsim-map")
      ->type_name("DIR");
  cmd->add_option("--db", o->db, "Results database (default: OUT/map.db)")->type_name("FILE");
  cmd->add_option("--shard", o->shard,
                  "Run only shard K of N (K from 0); also from SLURM_ARRAY_TASK_ID or "
                  "JOB_COMPLETION_INDEX. A last run without it writes the whole map")
      ->type_name("K/N");
  cmd->add_option("--shard-count", o->shard_count,
                  "Number of shards when the index comes from the environment")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  cmd->add_flag("--retry-failed", o->retry_failed, "Run again the runs that failed before");
  cmd->add_flag("--rerun-running", o->rerun_running,
                "Take over runs left 'running' by processes on other hosts");
  cmd->add_option("--progress", o->progress,
                  "Progress display: auto (a bar on a terminal, lines otherwise), bar, lines, none")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}));
  cmd->add_option("--format", o->format, "Output on stdout")
      ->check(CLI::IsMember({"table", "json"}));
  add_common(cmd, common);
  return {cmd, [o, &common] { return cmd_map(*o, common); }};
}

const CommandRegistrar registrar(43, add_map);

}  // namespace
}  // namespace kvsim::cli
