#pragma once
// The trace-selection flags every command that reads a trace shares (kvsim run, cache-curve,
// trace-stats): --time-scale, --rate-scale, --start, --duration (seconds of the trace's own
// time), --max-requests, and for replay --trace-mode and --trace-format. They become either a
// workload::TraceWindow (for commands that read the trace themselves, with select()) or
// `workload.trace.*` scenario overrides (kvsim run), so both paths mean the same thing.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "sim/scenario/scenario.hpp"
#include "sim/workload/trace.hpp"

namespace kvsim::cli {

struct TraceFlags {
  std::optional<double> time_scale;
  std::optional<double> rate_scale;
  std::optional<double> start_s;
  std::optional<double> duration_s;
  std::optional<std::int64_t> max_requests;
  std::string mode;    // replay only
  std::string format;  // empty: the scenario's (or auto)
};

// Adds the flags to `cmd`; `replay` adds --trace-mode too.
inline void add_trace_flags(CLI::App* cmd, TraceFlags& f, bool replay) {
  cmd->add_option("--time-scale", f.time_scale, "Multiply the trace's inter-arrival times by X")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--rate-scale", f.rate_scale,
                  "Multiply the trace's request rate by X (divide its times)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--start", f.start_s,
                  "Replay the trace from S seconds of its own time (re-based to 0)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--duration", f.duration_s, "Replay only D seconds of the trace (0: to the end)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-requests", f.max_requests,
                  "Replay at most N requests of the window (0: all)")
      ->check(CLI::NonNegativeNumber);
  std::vector<std::string> formats = workload::trace_formats();
  cmd->add_option("--trace-format", f.format, "Trace format (default: detected from the content)")
      ->check(CLI::IsMember(formats));
  if (replay) {
    cmd->add_option("--trace-mode", f.mode,
                    "open: every request at its timestamp; closed: a turn also waits for the "
                    "previous turn's answer")
        ->check(CLI::IsMember({"open", "closed"}));
  }
}

inline workload::TraceWindow trace_window(const TraceFlags& f) {
  workload::TraceWindow w;
  if (f.time_scale) w.time_scale = *f.time_scale;
  if (f.rate_scale) w.rate_scale = *f.rate_scale;
  if (f.start_s) w.start_s = *f.start_s;
  if (f.duration_s) w.duration_s = *f.duration_s;
  if (f.max_requests) w.max_requests = *f.max_requests;
  return w;
}

// Scenario overrides for the flags that were given.
inline std::vector<scenario::Override> trace_overrides(const TraceFlags& f) {
  std::vector<scenario::Override> o;
  const auto number = [](double v) {
    std::ostringstream s;
    s.precision(17);
    s << v;
    return s.str();
  };
  if (f.time_scale) o.push_back({"workload.trace.time_scale", number(*f.time_scale)});
  if (f.rate_scale) o.push_back({"workload.trace.rate_scale", number(*f.rate_scale)});
  if (f.start_s) o.push_back({"workload.trace.start", number(*f.start_s) + "s"});
  if (f.duration_s) o.push_back({"workload.trace.duration", number(*f.duration_s) + "s"});
  if (f.max_requests) o.push_back({"workload.trace.max_requests", std::to_string(*f.max_requests)});
  if (!f.mode.empty()) o.push_back({"workload.trace.mode", f.mode});
  if (!f.format.empty()) o.push_back({"workload.trace.format", f.format});
  return o;
}

}  // namespace kvsim::cli
