// Whole-simulation benchmarks: each case loads a scenario once, then builds and runs a
// Simulation per iteration and reports
//   sim_s_per_wall_s  simulated seconds per wall second
//   steps_per_s       engine steps per wall second
//   requests_per_s    finished requests per wall second
//   peak_rss_MiB      the process's peak resident memory (getrusage ru_maxrss), which is the
//                     case's own only when the case runs alone in its process (bench/run.sh)
// Wall times are the benchmark library's real time. Scenario paths are relative to the source
// tree (KVSIM_SOURCE_DIR); the Mooncake trace is scenarios/traces/mooncake_fast25_conversation_trace.jsonl.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <string>

#include "sim/io/summary.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/cluster/simulation.hpp"

namespace {

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

void run_case(benchmark::State& state, const char* relative_path) {
  const std::string path = std::string(KVSIM_SOURCE_DIR) + "/" + relative_path;
  kvsim::scenario::Scenario sc;
  try {
    sc = kvsim::scenario::load_scenario(path, {});
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  double simulated = 0;
  double steps = 0;
  double requests = 0;
  double stretch = 0;
  double skipped = 0;
  for (auto _ : state) {
    kvsim::cluster::Simulation sim(sc);
    auto result = sim.run();
    simulated += result.info.simulated_seconds;
    steps += static_cast<double>(result.info.engine_steps);
    requests += static_cast<double>(result.requests.size());
    stretch += static_cast<double>(result.info.stretch_steps);
    skipped += static_cast<double>(result.info.skipped_events);
    benchmark::DoNotOptimize(result.requests.data());
  }
  state.counters["sim_s_per_wall_s"] = benchmark::Counter(simulated, benchmark::Counter::kIsRate);
  state.counters["steps_per_s"] = benchmark::Counter(steps, benchmark::Counter::kIsRate);
  state.counters["requests_per_s"] = benchmark::Counter(requests, benchmark::Counter::kIsRate);
  state.counters["sim_s"] = simulated / static_cast<double>(state.iterations());
  state.counters["steps"] = steps / static_cast<double>(state.iterations());
  state.counters["requests"] = requests / static_cast<double>(state.iterations());
  state.counters["peak_rss_MiB"] = peak_rss_mib();
  // Shares of the steps taken inside decode stretches and ended without the event queue.
  state.counters["stretch_share"] = steps > 0 ? stretch / steps : 0.0;
  state.counters["unqueued_share"] = steps > 0 ? skipped / steps : 0.0;
}

void BM_Example4090(benchmark::State& state) {
  run_case(state, "scenarios/examples/rtx4090-llama3.1-8b-multiturn.yaml");
}
void BM_SeedNvmeNet(benchmark::State& state) { run_case(state, "scenarios/seed/4x4090-nvme-net.yaml"); }
void BM_Mooncake8Servers(benchmark::State& state) { run_case(state, "scenarios/bench/mooncake-8-servers.yaml"); }
void BM_Million(benchmark::State& state) { run_case(state, "scenarios/bench/million.yaml"); }

}  // namespace

BENCHMARK(BM_Example4090)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SeedNvmeNet)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Mooncake8Servers)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
BENCHMARK(BM_Million)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

BENCHMARK_MAIN();
