#!/usr/bin/env bash
# Prints kvsim's speed figures, one benchmark case per process so each case's peak memory
# (getrusage ru_maxrss) is its own. Usage:
#   bench/run.sh [BUILD_DIR] [CASE_REGEX]      (default build/release, all cases)
# The case Sweep1000 runs `kvsim sweep scenarios/sweeps/seed-1000.yaml` (1,000 runs of the seed
# deployment) on all cores into a fresh database and prints its wall and CPU seconds. The case
# Map10x10 runs `kvsim map` on the seed deployment over a 10 x 10 grid (users x history length)
# with three variants (300 runs) into a fresh folder and prints the same.
# Build first, in Release:
#   cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release && cmake --build build/release --target kvsim_bench
# Columns: wall and CPU seconds per run, simulated seconds per wall second, engine steps per
# wall second, requests per wall second, peak resident memory.
set -euo pipefail
build=${1:-build/release}
filter=${2:-.}
bin="$build/bench/kvsim_bench"
[[ -x "$bin" ]] || { echo "no $bin: build the kvsim_bench target first" >&2; exit 2; }
cases=$("$bin" --benchmark_list_tests | grep -E "$filter" || true)
printf '%-28s %9s %9s %14s %12s %12s %10s\n' case wall_s cpu_s sim_s/wall_s steps/s requests/s peak_MiB
for c in $cases; do
  name=${c%/real_time}
  "$bin" --benchmark_filter="^${name}(/|\$)" --benchmark_format=json 2>/dev/null |
    python3 -c '
import json, sys
d = json.load(sys.stdin)
for b in d["benchmarks"]:
    unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b["time_unit"]]
    print("%-28s %9.3f %9.3f %14.0f %12.0f %12.0f %10.1f" % (
        b["name"].replace("/real_time", ""), b["real_time"] * unit, b["cpu_time"] * unit,
        b["sim_s_per_wall_s"], b["steps_per_s"], b["requests_per_s"], b["peak_rss_MiB"]))
'
done
if [[ "Sweep1000" =~ $filter ]]; then
  kvsim="$build/sim/cli/kvsim"
  [[ -x "$kvsim" ]] || { echo "no $kvsim: build the kvsim target first" >&2; exit 2; }
  db=$(mktemp -d)/seed-1000.db
  python3 - "$kvsim" "$db" <<'PY'
import resource, subprocess, sys, time
kvsim, db = sys.argv[1], sys.argv[2]
t0 = time.monotonic()
subprocess.run([kvsim, "sweep", "scenarios/sweeps/seed-1000.yaml", "--db", db, "--progress", "none"],
               check=True, stdout=subprocess.DEVNULL)
wall = time.monotonic() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print("Sweep1000: 1,000 runs of the seed deployment in %.1f s wall, %.1f s CPU (%.1f runs/s), "
      "largest process %.1f MiB" % (wall, ru.ru_utime + ru.ru_stime, 1000 / wall, ru.ru_maxrss / 1024))
PY
  rm -rf "$(dirname "$db")"
fi
if [[ "Map10x10" =~ $filter ]]; then
  kvsim="$build/sim/cli/kvsim"
  [[ -x "$kvsim" ]] || { echo "no $kvsim: build the kvsim target first" >&2; exit 2; }
  out=$(mktemp -d)
  python3 - "$kvsim" "$out" <<'PY'
import json, resource, subprocess, sys, time
kvsim, out = sys.argv[1], sys.argv[2]
t0 = time.monotonic()
subprocess.run([kvsim, "map", "scenarios/seed/4x4090-vram-only.yaml",
                "--x", "users=4:64:10",
                "--y", "workload.generation.prompt_input.prefix_num_tokens.average=500:12000:10:log",
                "-o", out, "--progress", "none"], check=True, stdout=subprocess.DEVNULL)
wall = time.monotonic() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
d = json.load(open(out + "/map.json"))
runs = d["this_invocation"]["ran_done"]
print("Map10x10: %d cells x %d variants = %d runs of the seed deployment in %.1f s wall, %.1f s CPU "
      "(%.1f runs/s), largest process %.1f MiB" % (len(d["cells"]), len(d["variants"]), runs, wall,
      ru.ru_utime + ru.ru_stime, runs / wall, ru.ru_maxrss / 1024))
PY
  rm -rf "$out"
fi
