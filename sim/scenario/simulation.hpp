#pragma once
// The façade the CLI and the GUI use: build a Simulation from a Scenario, run it, get the
// per-request records, the run's figures and (through a callback) one record per engine step.
// A Simulation owns everything it uses: no globals, so many can run at once.
// Units: records carry milliseconds and seconds as their names say.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kvsim/io/results.hpp"
#include "kvsim/scenario/scenario.hpp"

namespace kvsim::scenario {

struct RunResult {
  std::vector<io::RequestRecord> requests;  // in completion order
  io::RunInfo info;
};

using StepCallback = std::function<void(const io::StepRecord&)>;
// Sees each request record as the request completes (completion order). When given, the
// records in RunResult::requests are kept without their conversation_id (all the summary
// needs), so a long run streams its records out instead of holding them.
using RecordCallback = std::function<void(const io::RequestRecord&)>;

class Simulation {
 public:
  // Builds engines, compute model and workload; throws InputError on a scenario that cannot
  // run (e.g. max_model_len does not fit in the KV cache, as vLLM refuses to start).
  explicit Simulation(const Scenario& scenario);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // Runs to the end. `on_step` (optional) sees every engine step as it happens.
  RunResult run(const StepCallback& on_step = {}, const RecordCallback& on_record = {});

  // Figures known before running (KV capacity and the like).
  const io::RunInfo& info() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvsim::scenario
