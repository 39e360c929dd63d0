#!/usr/bin/env bash
# Builds kvsim with profile-guided optimization (GCC): an instrumented build runs a training set
# of scenarios, then every module is compiled again with the branch and call counts it wrote.
# The result is the same program (no floating-point option changes; `cmp` of --requests-out
# against the plain release build is identical) that runs 10-20 % faster on the benchmark
# cases (docs/performance.md). Worth it for long sweeps; the plain release build is the default.
# Usage:
#   bench/build-pgo.sh [BUILD_DIR]        (default build/pgo; JOBS=N sets the build's jobs, default 2)
# Then: BUILD_DIR/sim/cli/kvsim, and bench/run.sh BUILD_DIR for the figures.
# The training set is not the benchmark cases: the seed deployment with host DRAM (LRU and ARC,
# the native connector and LMCache), VRAM only, the 70B model, the two-box seed, and the first
# 250 rows of the Mooncake conversation trace on the two boxes.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/pgo}
jobs=${JOBS:-2}
cxx=${CXX:-c++}
if ! "$cxx" --version 2>/dev/null | grep -qiE "gcc|g\+\+|free software foundation"; then
  echo "bench/build-pgo.sh: needs GCC (found: $("$cxx" --version 2>/dev/null | head -1))" >&2
  exit 2
fi
common=(-DCMAKE_BUILD_TYPE=Release -DKVSIM_BUILD_TESTS=OFF -DKVSIM_BUILD_GUI=OFF)

# 1. Instrumented build. Counts land beside each object file (*.gcda); stale ones go first.
find "$build" -name '*.gcda' -delete 2>/dev/null || true
cmake -S . -B "$build" "${common[@]}" \
  -DCMAKE_CXX_FLAGS="-fprofile-generate -fprofile-update=single" -DCMAKE_EXE_LINKER_FLAGS="-fprofile-generate"
cmake --build "$build" -j"$jobs" --target kvsim

# 2. Training runs.
kvsim="$build/sim/cli/kvsim"
mooncake=(--set workload.kind=trace --set workload.trace.format=mooncake
          --set "workload.trace.file=$PWD/scenarios/traces/mooncake_conversation_head250.jsonl")
train() {
  echo "training: $*"
  "$kvsim" run "$@" > /dev/null
}
train scenarios/seed/4x4090-dram.yaml
train scenarios/seed/4x4090-dram.yaml --set kv_offload.tiers.0.eviction=arc
train scenarios/seed/4x4090-dram.yaml --set kv_offload.connector=lmcache
train scenarios/seed/4x4090-vram-only.yaml
train scenarios/seed/4x4090-70b-dram.yaml
train scenarios/seed/multi-box-nvme-net.yaml
train scenarios/seed/multi-box-nvme-net.yaml --set routing.policy=prefix_aware "${mooncake[@]}"

# 3. The optimized build, from the same build tree (GCC finds each object's counts by its path).
# Code the training never ran (other commands, the benchmark driver) is optimized as usual.
cmake -S . -B "$build" "${common[@]}" \
  -DCMAKE_CXX_FLAGS="-fprofile-use -fprofile-partial-training -Wno-missing-profile" -DCMAKE_EXE_LINKER_FLAGS=""
targets=(kvsim)
if [[ "$(cmake --build "$build" --target help)" == *" kvsim_bench"* ]]; then targets+=(kvsim_bench); fi
cmake --build "$build" -j"$jobs" --target "${targets[@]}"
echo "built $kvsim with profile-guided optimization"
