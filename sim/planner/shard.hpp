#pragma once
// Sharding a sweep over the tasks of a cluster job: shard K of N (K counted from 0) holds the
// runs whose index i in the sweep's expansion has i mod N == K (round robin, so every shard
// gets a similar mix of small and large runs). Taken from --shard K/N, else from a Slurm job
// array (SLURM_ARRAY_TASK_ID, _MIN, _STEP, _COUNT), else from a Kubernetes Indexed Job
// (JOB_COMPLETION_INDEX with the count from --shard-count or KVSIM_SHARD_COUNT).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace kvsim::planner {

struct Shard {
  std::int64_t index = 0;
  std::int64_t count = 1;
  std::string source;  // where it came from, for messages: "--shard", "Slurm job array", ...

  bool holds(std::int64_t run_index) const { return run_index % count == index; }
};

// Parses "K/N" with 0 <= K < N; InputError naming --shard otherwise.
Shard parse_shard(const std::string& text);

// Reads an environment variable (nullptr when unset); std::getenv in the CLI, a map in tests.
using EnvLookup = std::function<const char*(const char*)>;

// The shard from --shard (when given), else the environment, else the whole sweep (0/1).
// `shard_count` is --shard-count. Throws InputError on inconsistent values.
Shard resolve_shard(const std::optional<std::string>& shard_flag,
                    std::optional<std::int64_t> shard_count, const EnvLookup& env);

}  // namespace kvsim::planner
