// Loads a scenario, runs it and prints the benchmark's headline figures through the installed
// kvsim libraries: consumer SCENARIO [KEY=VALUE...]
#include <cmath>
#include <iostream>

#include "sim/core/error.hpp"
#include "sim/core/version.hpp"
#include "sim/io/summary.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/cluster/simulation.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: consumer SCENARIO [PATH=VALUE...]\n";
    return 2;
  }
  try {
    kvsim::scenario::LoadOptions options;
    for (int i = 2; i < argc; ++i)
      options.overrides.push_back(kvsim::scenario::parse_override(argv[i]));
    const auto scenario = kvsim::scenario::load_scenario(argv[1], options);
    kvsim::cluster::Simulation simulation(scenario);
    const auto result = simulation.run();
    const auto summary = kvsim::io::summarize(result.requests, result.info, 0);
    std::cout << "kvsim " << kvsim::kVersion << ": " << scenario.name << ": "
              << summary.num_requests << " requests, " << summary.requests_per_sec
              << " requests/s\n";
    return summary.num_requests > 0 && std::isfinite(summary.requests_per_sec) ? 0 : 1;
  } catch (const kvsim::InputError& e) {
    std::cerr << e.what() << '\n';
    return 2;
  }
}
