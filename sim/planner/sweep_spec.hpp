#pragma once
// A sweep file: base scenarios crossed with axes of `--set`-style overrides and repetitions
// with derived seeds, expanded into a deterministic, ordered list of runs. docs/sweeps.md
// describes the format. Values stay text, exactly as `--set path=value` takes them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/scenario/scenario.hpp"

namespace kvsim::planner {

// One axis: a path with its values, or several paths whose values vary together (zip).
struct Axis {
  std::vector<std::string> paths;                // one path, or the zipped paths in order
  std::vector<std::vector<std::string>> values;  // values[i] = the i-th point, one value per path
};

struct BaseScenario {
  std::string file;  // absolute or relative to the current folder (resolved from the sweep file)
  std::vector<scenario::Override> set;  // this scenario's fixed overrides
  std::vector<Axis> axes;               // this scenario's own axes, crossed after the global ones
};

struct SweepSpec {
  std::string name;
  std::string source_file;
  std::vector<BaseScenario> scenarios;
  std::vector<scenario::Override> set;  // fixed overrides for every run (before the scenario's)
  std::vector<Axis> axes;               // crossed; the first varies slowest
  std::int64_t repetitions = 1;
  std::optional<std::uint64_t> seed;  // root seed; unset: each scenario's own seed
  double warmup_percent = 0;          // statistics warmup drop, in percent
  bool warmup_set = false;            // false: the scenario's first warmup percentage
};

// One point of the expansion, before its scenario is loaded.
struct SweepPoint {
  std::int64_t index = 0;                     // position in the expansion (0-based)
  std::size_t scenario = 0;                   // index into SweepSpec::scenarios
  std::vector<scenario::Override> overrides;  // set, then the scenario's set, then axis values
  std::int64_t repetition = 0;
};

// Reads a sweep file; throws InputError with file:line:col on any problem.
SweepSpec load_sweep(const std::string& path);
SweepSpec load_sweep_text(const std::string& yaml_text, const std::string& display_name,
                          const std::string& base_dir);

// Every point in order: scenarios outermost, then the global axes, then the scenario's axes
// (each crossed, the first slowest; a zip group advances together), repetitions innermost.
std::vector<SweepPoint> expand(const SweepSpec& spec);

// The number of points expand() gives, without building them.
std::int64_t count_points(const SweepSpec& spec);

}  // namespace kvsim::planner
