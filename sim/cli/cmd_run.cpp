// kvsim run and kvsim check-scenario: one scenario through the simulation façade.
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "sim/cli/command.hpp"
#include "sim/cli/trace_options.hpp"
#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"
#include "sim/io/atomic_file.hpp"
#include "sim/io/sinks.hpp"
#include "sim/io/summary.hpp"
#include "sim/io/trace_events.hpp"
#include "sim/cluster/simulation.hpp"

namespace kvsim::cli {
namespace {

struct RunOptions {
  std::string scenario;
  std::string trace;
  TraceFlags trace_flags;
  std::string format;
  std::string requests_out;
  std::string timeseries_out;
  std::string usage_out;
  std::string trace_events_out;
  std::string trace_events_window;
  std::int64_t trace_events_max = io::TraceEventsOptions{}.max_events;
  std::optional<std::uint64_t> seed;
  double warmup_percent = 0;
  bool warmup_set = false;
  bool quiet = false;
};

// One line on a terminal, rewritten in place at most five times a wall second while a run goes
// on: simulated time reached, requests finished, and how fast both advance (display only; the
// run's results do not depend on it). Cleared when the run ends, so the result starts clean.
class ProgressLine {
 public:
  explicit ProgressLine(std::ostream& os) : os_(os), start_(Clock::now()), last_(start_) {}
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine() { clear(); }

  void update(const cluster::RunProgress& p) {
    const auto now = Clock::now();
    if (drawn_ && now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    drawn_ = true;
    const double wall = std::chrono::duration<double>(now - start_).count();
    char buf[200];
    std::snprintf(
        buf, sizeof buf,
        "\rkvsim run: simulated %.1f s, %lld requests done (%.0f requests and %.1f simulated s "
        "per wall second)\033[K",
        p.simulated_s, static_cast<long long>(p.requests_done),
        wall > 0 ? static_cast<double>(p.requests_done) / wall : 0.0,
        wall > 0 ? p.simulated_s / wall : 0.0);
    os_ << buf << std::flush;
  }
  void clear() {
    if (drawn_) os_ << "\r\033[K" << std::flush;
    drawn_ = false;
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::ostream& os_;
  Clock::time_point start_;
  Clock::time_point last_;
  bool drawn_ = false;
};

int cmd_run(const RunOptions& ro, const CommonOptions& co) {
  const auto trace_opt = io::trace_events_options(ro.trace_events_window, ro.trace_events_max);
  auto lo = load_options(co);
  if (!ro.trace.empty()) {
    if (is_stdin_path(ro.trace) && is_stdin_path(ro.scenario))
      throw InputError(ro.trace, 0, 0, "--trace: standard input already holds the scenario");
    const auto abs =
        is_stdin_path(ro.trace) ? ro.trace : std::filesystem::absolute(ro.trace).string();
    if (!input_exists(abs)) throw InputError(ro.trace, 0, 0, "--trace: no such file");
    lo.overrides.push_back({"workload.kind", "trace"});
    // A YAML single-quoted scalar: any path (even "-" or one holding ": " or '#') stays a string.
    std::string quoted = "'";
    for (const char c : abs) quoted += c == '\'' ? std::string("''") : std::string(1, c);
    lo.overrides.push_back({"workload.trace.file", quoted + "'"});
  }
  for (auto& o : trace_overrides(ro.trace_flags)) lo.overrides.push_back(std::move(o));
  if (ro.seed) lo.overrides.push_back({"seed", std::to_string(*ro.seed)});
  if (!ro.format.empty()) lo.overrides.push_back({"output.format", ro.format});
  if (!ro.requests_out.empty()) lo.overrides.push_back({"output.requests_out", ro.requests_out});
  if (!ro.timeseries_out.empty()) lo.overrides.push_back({"output.timeseries_out", ro.timeseries_out});
  const auto sc = scenario::load_scenario(ro.scenario, lo);

  cluster::Simulation sim(sc);
  for (const auto& note : sim.info().notes) std::cerr << "note: " << note << '\n';
  std::unique_ptr<io::AtomicFile> ts_file;
  std::unique_ptr<io::TimeseriesCsvWriter> ts;
  cluster::StepCallback on_step;
  if (!sc.output.timeseries_out.empty()) {
    ts_file = std::make_unique<io::AtomicFile>(sc.output.timeseries_out);
    ts = std::make_unique<io::TimeseriesCsvWriter>(ts_file->stream());
    on_step = [&ts](const io::StepRecord& r) { ts->write(r); };
  }
  // Request records stream to their file as requests complete, so memory stays bounded.
  std::unique_ptr<io::AtomicFile> req_file;
  std::unique_ptr<io::RequestsJsonWriter> req_writer;
  cluster::RecordCallback on_record;
  if (!sc.output.requests_out.empty()) {
    req_file = std::make_unique<io::AtomicFile>(sc.output.requests_out);
    req_writer = std::make_unique<io::RequestsJsonWriter>(req_file->stream());
    on_record = [&req_writer](const io::RequestRecord& r) { req_writer->write(r); };
  }
  // KV held per tier and link utilisation, one row per simulated second.
  std::unique_ptr<io::AtomicFile> usage_file;
  std::unique_ptr<io::UsageCsvWriter> usage;
  cluster::RunControl control;
  if (!ro.usage_out.empty()) {
    usage_file = std::make_unique<io::AtomicFile>(ro.usage_out);
    usage = std::make_unique<io::UsageCsvWriter>(usage_file->stream());
    control.on_usage = [&usage](const io::UsageSample& u) { usage->write(u); };
  }
  // The run as a timeline (docs/results.md "Timelines"), streamed as it happens.
  std::unique_ptr<io::AtomicFile> te_file;
  std::unique_ptr<io::TraceEventsWriter> te;
  if (!ro.trace_events_out.empty()) {
    te_file = std::make_unique<io::AtomicFile>(ro.trace_events_out);
    te = std::make_unique<io::TraceEventsWriter>(te_file->stream(), sim.info(), trace_opt);
    on_step = [&ts, &te](const io::StepRecord& r) {
      if (ts) ts->write(r);
      te->step(r);
    };
    control.on_request = [&te](const io::RequestEvent& e) { te->request(e); };
    control.on_transfer = [&te](const io::TransferEvent& t) { te->transfer(t); };
  }
  // Progress on a terminal only: quiet when stderr is piped or redirected, or with --quiet.
  std::optional<ProgressLine> progress;
  if (!ro.quiet && isatty(STDERR_FILENO) == 1) {
    progress.emplace(std::cerr);
    control.on_progress = [&progress](const cluster::RunProgress& p) { progress->update(p); };
  }
  auto result = sim.run(on_step, on_record, control);
  if (progress) progress->clear();
  if (te_file) {
    te->finish();
    te_file->commit();
    if (te->truncated()) {
      std::cerr << "note: " << ro.trace_events_out << ": stopped at --trace-events-max " << ro.trace_events_max
                << " events; the timeline is truncated\n";
    }
  }
  if (ts_file) ts_file->commit();
  if (usage_file) usage_file->commit();
  if (req_file) {
    req_writer->finish();
    req_file->commit();
  }
  // --warmup-percent wins; otherwise the scenario's first warmup percentage.
  double warmup = ro.warmup_percent;
  if (!ro.warmup_set && !sc.workload.warmup_percentages.empty()) warmup = sc.workload.warmup_percentages.front();
  const auto summary = io::summarize(result.requests, result.info, warmup);
  std::ostringstream out;
  switch (sc.output.format) {
    case scenario::OutputFormat::kJson:
      io::write_summary_json(out, summary, result.info);
      break;
    case scenario::OutputFormat::kCsv:
      io::write_summary_csv(out, summary, result.info);
      break;
    case scenario::OutputFormat::kTable:
      io::write_table(out, summary, result.info);
      break;
  }
  std::cout << out.str();
  std::cout.flush();
  return 0;
}

int cmd_check(const std::string& path, const std::string& format, const CommonOptions& co) {
  const auto sc = scenario::load_scenario(path, load_options(co));
  cluster::Simulation sim(sc);  // also checks what only building can check (KV fit)
  const auto& info = sim.info();
  if (format == "json") {
    io::write_check_scenario_json(std::cout, path, info);
    return 0;
  }
  std::cout << path << ": ok (" << sc.name << "; GPU KV cache size: " << info.gpu_kv_cache_tokens
            << " tokens; " << info.num_engines << " engine" << (info.num_engines == 1 ? "" : "s") << ")\n";
  std::cout << "compute model: " << info.compute_model << '\n';
  for (const auto& note : info.notes) std::cout << "note: " << note << '\n';
  std::cout << "KV cache per engine, as vLLM sizes it:\n";
  for (const auto& line : info.memory_breakdown) std::cout << "  " << line << '\n';
  std::cout << "Step times, where they go:\n";
  for (const auto& line : info.step_times) std::cout << "  " << line << '\n';
  return 0;
}

Command add_run(CLI::App& app, CommonOptions& common) {
  auto ro = std::make_shared<RunOptions>();
  auto* run = app.add_subcommand("run", "Simulate a scenario and print the benchmark's statistics");
  run->add_option("scenario", ro->scenario, "Scenario YAML file (- reads it from standard input)")
      ->required()
      ->type_name("FILE");
  run->add_option("--trace", ro->trace,
                  "Replay a request trace (any format kvsim reads, gzip-compressed "
                  "or not; - reads standard input) instead of the scenario's workload")
      ->type_name("FILE");
  add_trace_flags(run, ro->trace_flags, true);
  run->add_option("--format", ro->format, "Summary format (default: the scenario's output.format)")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  run->add_option("--requests-out", ro->requests_out, "Write one JSON object per request to FILE")->type_name("FILE");
  run->add_option("--timeseries-out", ro->timeseries_out, "Write one CSV row per engine step to FILE")
      ->type_name("FILE");
  run->add_option("--usage-out", ro->usage_out,
                  "Write one CSV row per simulated second to FILE: KV bytes held on the GPUs and per "
                  "offload tier, and the busiest link's utilisation per link kind")
      ->type_name("FILE");
  run->add_option("--trace-events-out", ro->trace_events_out,
                  "Write the run's timeline to FILE in the Chrome trace-event format (Perfetto, "
                  "chrome://tracing): engine steps, requests' phases, KV transfers")
      ->type_name("FILE");
  run->add_option("--trace-events-window", ro->trace_events_window,
                  "Write only the timeline events that overlap simulated seconds FROM to TO")
      ->type_name("FROM:TO");
  run->add_option("--trace-events-max", ro->trace_events_max,
                  "Stop writing the timeline after N events (default 2000000)")
      ->type_name("N");
  run->add_option("--seed", ro->seed, "Root random seed (default: the scenario's seed)");
  run->add_option("--warmup-percent", ro->warmup_percent,
                  "Drop the first X% of requests (by start time) from the statistics, like the "
                  "benchmark's --warmup-percentages")
      ->check(CLI::Range(0.0, 100.0));
  run->add_flag("-q,--quiet", ro->quiet,
                "No progress line on the terminal (there is none when stderr is not a terminal)");
  add_common(run, common);
  return {run, [ro, run, &common] {
            ro->warmup_set = run->count("--warmup-percent") > 0;
            return cmd_run(*ro, common);
          }};
}

Command add_check(CLI::App& app, CommonOptions& common) {
  auto path = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("table");
  auto* check = app.add_subcommand("check-scenario", "Check a scenario and print diagnostics only");
  check->add_option("scenario", *path, "Scenario YAML file")->required()->type_name("FILE");
  check->add_option("--format", *format, "Output format")->check(CLI::IsMember({"table", "json"}));
  add_common(check, common);
  return {check, [path, format, &common] { return cmd_check(*path, *format, common); }};
}

const CommandRegistrar run_registrar(10, add_run);
const CommandRegistrar check_registrar(30, add_check);

}  // namespace
}  // namespace kvsim::cli
