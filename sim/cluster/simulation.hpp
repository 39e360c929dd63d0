#pragma once
// The façade the CLI and the GUI use: build a Simulation from a Scenario, run it, get the
// per-request records, the run's figures and (through a callback) one record per engine step.
// A Simulation owns everything it uses: no globals, so many can run at once.
// Units: records carry milliseconds and seconds as their names say.
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <vector>

#include "sim/io/results.hpp"
#include "sim/io/trace_events.hpp"
#include "sim/scenario/scenario.hpp"

namespace kvsim::workload {
class Driver;
}

namespace kvsim::cluster {

struct RunResult {
  std::vector<io::RequestRecord> requests;  // in completion order
  io::RunInfo info;
};

using StepCallback = std::function<void(const io::StepRecord&)>;
// Sees each request record as the request completes (completion order). When given, the
// records in RunResult::requests are kept without their conversation_id (all the summary
// needs), so a long run streams its records out instead of holding them.
using RecordCallback = std::function<void(const io::RequestRecord&)>;
// Sees the KV held per tier and the link load at the end of every sampling interval.
using UsageCallback = std::function<void(const io::UsageSample&)>;
// See what happens to each request (arrival, scheduling, loads, preemptions, first token, end)
// and each KV transfer as it ends: a run's timeline (io::TraceEventsWriter).
using RequestEventCallback = std::function<void(const io::RequestEvent&)>;
using TransferCallback = std::function<void(const io::TransferEvent&)>;

// What a caller may add to a run without changing any of its results.
// - on_usage: a sample at every multiple of usage_interval_s of simulated time, and one at the
//   run's end. Samples are taken lazily, when the event loop first passes the boundary, from
//   the state as it stands (every event at or before the boundary done): no event is added.
//   Without on_usage the run pays nothing.
// - on_request: every request event, in simulated-time order per request; on_transfer: every
//   KV transfer of the offload tiers as it ends (and every promotion into host DRAM). The
//   engines and the offload system report them only when these are set: without them the run
//   pays a pointer test per event, and with them its results are the same.
// - stop: checked every few thousand events; a stop request ends the run with RunCancelled.
// - on_progress: called every few thousand events with how far the run has come (for a
//   progress display); it sees state, never changes it.
struct RunProgress {
  double simulated_s = 0;          // simulated time reached
  std::int64_t requests_done = 0;  // requests finished so far (warmup ones included)
};
using ProgressCallback = std::function<void(const RunProgress&)>;
struct RunControl {
  UsageCallback on_usage;
  double usage_interval_s = 1.0;  // simulated seconds, > 0
  RequestEventCallback on_request;
  TransferCallback on_transfer;
  std::stop_token stop;
  ProgressCallback on_progress;
};

// Simulation::run was asked to stop: the partial run is discarded.
class RunCancelled : public std::runtime_error {
 public:
  RunCancelled() : std::runtime_error("run cancelled") {}
};

class Simulation {
 public:
  // Builds engines, compute model and workload; throws InputError on a scenario that cannot
  // run (e.g. max_model_len does not fit in the KV cache, as vLLM refuses to start).
  explicit Simulation(const scenario::Scenario& scenario);
  // The same, driven by `driver` instead of the scenario's workload section (e.g. a workload
  // rebuilt from a measured run); null: the scenario's workload.
  Simulation(const scenario::Scenario& scenario, std::unique_ptr<workload::Driver> driver);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // Runs to the end. `on_step` (optional) sees every engine step as it happens. Throws
  // RunCancelled when `control.stop` is requested before the end.
  RunResult run(const StepCallback& on_step = {}, const RecordCallback& on_record = {},
                const RunControl& control = {});

  // Figures known before running (KV capacity and the like).
  const io::RunInfo& info() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvsim::cluster
