// Sweep files (sim/planner/sweep_spec.hpp), as `kvsim sweep` reads them: load_sweep_text, then
// the expansion into runs. Relative scenario paths resolve from scenarios/sweeps/ of the source
// tree, so the shipped sweeps' `../seed/...` files exist. A sweep is capped at 10,000,000 runs;
// the expansion is built only up to 100,000 of them (each point holds its overrides), and it
// must have count_points() points.
#include "sim/planner/sweep_spec.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return kvsim::fuzz::expect_input_errors([&] {
    namespace p = kvsim::planner;
    const p::SweepSpec spec = p::load_sweep_text(kvsim::fuzz::as_text(data, size), "fuzz.yaml",
                                                 KVSIM_SOURCE_DIR "/scenarios/sweeps");
    const std::int64_t count = p::count_points(spec);
    if (count < 1 || count > 10'000'000) {
      kvsim::fuzz::property_failed("load_sweep_text accepted a sweep of " +
                                   std::to_string(count) + " runs");
    }
    if (count <= 100'000) {
      const auto points = p::expand(spec);
      if (static_cast<std::int64_t>(points.size()) != count) {
        kvsim::fuzz::property_failed("expand() gave " + std::to_string(points.size()) +
                                     " points, count_points() " + std::to_string(count));
      }
    }
  });
}
