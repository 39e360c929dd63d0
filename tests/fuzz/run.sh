#!/usr/bin/env bash
# Builds and runs the libFuzzer targets (docs/fuzzing.md).
#   bash tests/fuzz/run.sh [--runs N | --seconds S] [--jobs J] [--timeout T] [--keep-going] [target...]
# Configures and builds build/fuzz (clang, -DKVSIM_FUZZ=ON), runs every regression input of
# tests/fuzz/regressions/<target>/ once (each must pass), builds each target's seed corpus in
# build/fuzz/corpus/<target> (the shipped scenarios, traces and sweeps of its kind, and the
# regression inputs that pass), then fuzzes each target for N executions (default 20000; 2000
# for fuzz_scenario, whose inputs each build a simulation) or S seconds, J targets at a time
# (default 2). Findings go to build/fuzz/artifacts/<target>/, logs to build/fuzz/logs/.
# --keep-going: a target goes on after a finding (libFuzzer's fork mode) and reports them all.
# --timeout T: seconds one input may take before it is a finding (default 10; raise it when
# the machine is shared, where a starved process can pass 10 s of wall time on a fast input).
# Exits 1 when a regression input fails or a target finds something, 2 on a usage error.
set -uo pipefail
cd "$(dirname "$0")/../.."

all_targets=(fuzz_scenario fuzz_trace_mooncake fuzz_trace_bailian fuzz_trace_azure
  fuzz_trace_burstgpt fuzz_trace_sharegpt fuzz_trace_openai fuzz_trace_stats fuzz_sweep_spec)
runs=
seconds=
jobs=2
timeout=10
keep_going=0
targets=()
usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=${2:?--runs needs a number}; seconds=; shift 2 ;;
    --seconds) seconds=${2:?--seconds needs a number}; shift 2 ;;
    --jobs) jobs=${2:?--jobs needs a number}; shift 2 ;;
    --timeout) timeout=${2:?--timeout needs a number}; shift 2 ;;
    --keep-going) keep_going=1; shift ;;
    -h|--help) usage ;;
    -*) echo "run.sh: unknown option $1" >&2; usage ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  case " ${all_targets[*]} " in *" $t "*) ;; *) echo "run.sh: unknown target $t (known: ${all_targets[*]})" >&2; exit 2 ;; esac
done

build=build/fuzz
# Optimized enough to fuzz fast, line tables only (file:line in stack traces, quick to build);
# no GUI, benchmarks, tests or link-time optimization; only the fuzz targets are built.
if [ ! -f "$build/CMakeCache.txt" ]; then
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  mkdir -p "$build"
  cmake -S . -B "$build" "${generator[@]}" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE= \
    -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" -DKVSIM_FUZZ=ON -DKVSIM_BUILD_TESTS=OFF \
    -DKVSIM_BUILD_GUI=OFF -DKVSIM_BUILD_BENCH=OFF -DKVSIM_LTO=OFF >"$build/configure.log" 2>&1 ||
    { cat "$build/configure.log" >&2; rm -f "$build/CMakeCache.txt"; echo "run.sh: configuring $build failed" >&2; exit 1; }
fi
cmake --build "$build" -j2 --target "${targets[@]}" || { echo "run.sh: the build failed" >&2; exit 1; }

# Seeds: a file's head (its first 40 lines when over 16 KiB), named by its path.
seed() {
  local file=$1 dir=$2 name
  name=$(echo "$file" | tr '/' '_')
  if [ "$(stat -c %s "$file")" -gt 16384 ]; then head -n 40 "$file" >"$dir/$name"; else cp "$file" "$dir/$name"; fi
}
# The format of a trace file by its content, as kvsim detects it (first line, or a JSON list's keys).
trace_format() {
  local head first
  head=$(head -c 4096 "$1" | tr -d '\r')
  first=$(printf '%s\n' "$head" | grep -m1 -v '^[[:space:]]*$')
  case "$first" in
    '{'*chat_id*) echo bailian ;;
    '{'*hash_ids*) echo mooncake ;;
    '{'*) printf '%s' "$head" | grep -q '"filetype"' && echo openai ;;
    '['*) if printf '%s' "$head" | grep -q '"conversations"'; then echo sharegpt
          elif printf '%s' "$head" | grep -q '"messages"'; then echo openai; fi ;;
    *ContextTokens*GeneratedTokens*) echo azure ;;
    *'Request tokens'*'Response tokens'*) echo burstgpt ;;
  esac
}
seed_files() {
  case "$1" in
    fuzz_scenario)
      # Not scenarios/bench/: a million requests take seconds to build, each time.
      find scenarios tests/fixtures -name '*.yaml' -not -path '*/catalog/*' -not -path '*/sweeps/*' \
        -not -path '*/plans/*' -not -path 'scenarios/bench/*' ;;
    fuzz_sweep_spec)
      grep -rlE --include='*.yaml' '^scenarios:' scenarios tests ;;
    fuzz_trace_stats)
      for f in scenarios/traces/* tests/fixtures/workload/*; do [ -n "$(trace_format "$f")" ] && echo "$f"; done ;;
    fuzz_trace_*)
      local want=${1#fuzz_trace_}
      for f in scenarios/traces/* tests/fixtures/workload/*; do [ "$(trace_format "$f")" = "$want" ] && echo "$f"; done ;;
  esac
}

mkdir -p "$build/logs"
# The kvsim-specific outcome of a libFuzzer log: the first report line.
outcome() {
  grep -m1 -E 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|runtime error:|terminate called|kvsim fuzz: property failed|==[0-9]+== ?ERROR' "$1" |
    sed -E 's/^==[0-9]+==//' | cut -c1-200
}
limits=(-rss_limit_mb=2048 -timeout="$timeout")
# UBSan reports with their stack, like AddressSanitizer's.
export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

failed=0
regressions_failed=()
echo "== regression inputs (tests/fuzz/regressions/<target>/)"
for t in "${targets[@]}"; do
  for f in tests/fuzz/regressions/"$t"/*; do
    [ -f "$f" ] || continue
    log=$build/logs/$t.regression.log
    if "$build/tests/fuzz/$t" "${limits[@]}" "$f" >"$log" 2>&1; then
      echo "  pass  $t  $f"
    else
      echo "  FAIL  $t  $f: $(outcome "$log")"
      regressions_failed+=("$t $f")
      failed=1
    fi
  done
done

# One target: refresh its corpus, fuzz, and write a one-line summary to $build/logs/<t>.summary.
fuzz_one() {
  local t=$1 corpus=$build/corpus/$1 artifacts=$build/artifacts/$1 log=$build/logs/$1.log rc f
  mkdir -p "$corpus" "$artifacts"
  while IFS= read -r f; do seed "$f" "$corpus"; done < <(seed_files "$t")
  # The regression inputs that pass seed the corpus (one that fails would stop the target at once).
  for f in tests/fuzz/regressions/"$t"/*; do
    [ -f "$f" ] || continue
    case " ${regressions_failed[*]} " in *" $t $f "*) continue ;; esac
    cp "$f" "$corpus/regression_$(basename "$f")"
  done
  local n=$runs
  [ -n "$n" ] || { [ "$t" = fuzz_scenario ] && n=2000 || n=20000; }
  local budget=(-runs="$n")
  [ -n "$seconds" ] && budget=(-max_total_time="$seconds")
  [ $keep_going -eq 1 ] && budget+=(-fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1)
  touch "$build/logs/$t.start"
  "$build/tests/fuzz/$t" "${limits[@]}" "${budget[@]}" -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1
  rc=$?
  local found
  found=$(find "$artifacts" -type f -not -name 'slow-unit-*' -newer "$build/logs/$t.start" | wc -l)
  [ "$found" -gt 0 ] && [ $rc -eq 0 ] && rc=1
  local execs
  execs=$(grep -m1 -oE 'stat::number_of_executed_units: [0-9]+' "$log" | grep -oE '[0-9]+$')
  [ -n "$execs" ] || execs=$(grep -oE '^#[0-9]+' "$log" | tail -n1 | tr -d '#')
  if [ $rc -eq 0 ]; then
    printf '  ok     %-20s %10s executions, corpus %s files\n' "$t" "${execs:-?}" "$(ls "$corpus" | wc -l)" >"$build/logs/$t.summary"
  else
    {
      printf '  FOUND  %-20s %10s executions: %s\n' "$t" "${execs:-?}" "$(outcome "$log")"
      find "$artifacts" -type f -not -name 'slow-unit-*' -newer "$build/logs/$t.start" | head -n 5 | sed 's/^/           input: /'
      [ "$found" -gt 5 ] && echo "           ... $((found - 5)) more inputs in $artifacts/"
      echo "           log: $log"
    } >"$build/logs/$t.summary"
  fi
}

if [ -n "$seconds" ]; then echo "== fuzzing ${seconds} s per target"; else echo "== fuzzing ${runs:-20000 (fuzz_scenario 2000)} executions per target"; fi
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  rm -f "$build/logs/$t.summary"
  fuzz_one "$t" &
done
wait
for t in "${targets[@]}"; do
  s=$build/logs/$t.summary
  if [ -f "$s" ]; then cat "$s"; else echo "  FOUND  $t: no outcome (see $build/logs/$t.log)"; failed=1; fi
  grep -q '^  FOUND' "$s" 2>/dev/null && failed=1
done
if [ ${#regressions_failed[@]} -gt 0 ]; then
  echo "run.sh: ${#regressions_failed[@]} regression input(s) fail (listed above)"
fi
[ $failed -eq 0 ] && echo "run.sh: no findings" || echo "run.sh: findings (docs/fuzzing.md tells what to do)"
exit $failed
