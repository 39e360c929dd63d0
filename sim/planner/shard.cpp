#include "sim/planner/shard.hpp"

#include <charconv>

#include "sim/core/error.hpp"

namespace kvsim::planner {
namespace {

std::optional<std::int64_t> parse_int(const std::string& s) {
  std::int64_t v = 0;
  const auto res = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || res.ec != std::errc() || res.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::int64_t env_int(const EnvLookup& env, const char* name, bool required) {
  const char* v = env(name);
  if (v == nullptr || *v == '\0') {
    if (required) throw InputError("", 0, 0, std::string(name) + " is not set");
    return -1;
  }
  const auto n = parse_int(v);
  if (!n || *n < 0)
    throw InputError("", 0, 0, std::string(name) + "=" + v + ": expected a non-negative integer");
  return *n;
}

Shard checked(std::int64_t index, std::int64_t count, std::string source) {
  if (count < 1) throw InputError("", 0, 0, source + ": the shard count must be at least 1");
  if (index < 0 || index >= count) {
    throw InputError("", 0, 0,
                     source + ": shard index " + std::to_string(index) + " is outside 0.." +
                         std::to_string(count - 1));
  }
  return Shard{index, count, std::move(source)};
}

}  // namespace

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  const auto k = slash == std::string::npos ? std::nullopt : parse_int(text.substr(0, slash));
  const auto n = slash == std::string::npos ? std::nullopt : parse_int(text.substr(slash + 1));
  if (!k || !n)
    throw InputError("", 0, 0,
                     "--shard " + text + ": expected K/N, e.g. --shard 0/4 (K counts from 0)");
  return checked(*k, *n, "--shard " + text);
}

Shard resolve_shard(const std::optional<std::string>& shard_flag,
                    std::optional<std::int64_t> shard_count, const EnvLookup& env) {
  if (shard_flag) {
    Shard s = parse_shard(*shard_flag);
    if (shard_count && *shard_count != s.count) {
      throw InputError("", 0, 0,
                       "--shard-count " + std::to_string(*shard_count) +
                           " disagrees with --shard " + *shard_flag);
    }
    return s;
  }
  if (const char* id = env("SLURM_ARRAY_TASK_ID"); id != nullptr && *id != '\0') {
    const std::int64_t task = env_int(env, "SLURM_ARRAY_TASK_ID", true);
    std::int64_t min = env_int(env, "SLURM_ARRAY_TASK_MIN", false);
    if (min < 0) min = 0;
    std::int64_t step = env_int(env, "SLURM_ARRAY_TASK_STEP", false);
    if (step < 1) step = 1;
    std::int64_t count = shard_count ? *shard_count : env_int(env, "SLURM_ARRAY_TASK_COUNT", false);
    if (count < 0)
      throw InputError("", 0, 0,
                       "Slurm job array: SLURM_ARRAY_TASK_COUNT is not set; pass --shard-count");
    if (task < min || (task - min) % step != 0) {
      throw InputError("", 0, 0,
                       "Slurm job array: task " + std::to_string(task) + " is not on the grid " +
                           std::to_string(min) + ", " + std::to_string(min + step) +
                           ", ...; use --array=A-B[:S] or --shard K/N");
    }
    return checked((task - min) / step, count,
                   "Slurm job array (SLURM_ARRAY_TASK_ID=" + std::to_string(task) + ", MIN " +
                       std::to_string(min) + ", STEP " + std::to_string(step) + ", COUNT " +
                       std::to_string(count) + ")");
  }
  if (const char* idx = env("JOB_COMPLETION_INDEX"); idx != nullptr && *idx != '\0') {
    const std::int64_t index = env_int(env, "JOB_COMPLETION_INDEX", true);
    std::int64_t count = shard_count ? *shard_count : env_int(env, "KVSIM_SHARD_COUNT", false);
    if (count < 0) {
      throw InputError("", 0, 0,
                       "Kubernetes Indexed Job: JOB_COMPLETION_INDEX is set but the number of "
                       "completions is not; "
                       "pass --shard-count N or set KVSIM_SHARD_COUNT");
    }
    return checked(index, count,
                   "Kubernetes Indexed Job (JOB_COMPLETION_INDEX=" + std::to_string(index) + ")");
  }
  if (shard_count && *shard_count != 1) {
    throw InputError("", 0, 0,
                     "--shard-count needs --shard, a Slurm job array or JOB_COMPLETION_INDEX");
  }
  return Shard{0, 1, "whole sweep"};
}

}  // namespace kvsim::planner
