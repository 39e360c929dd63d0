#!/usr/bin/env bash
# Makes the break-even maps of docs/offload.md: each map's map.json and map.html in
# docs/maps/NAME/ (runs go to a database in a scratch folder). Run from the repository root:
#   bash docs/maps/make.sh [KVSIM] [NAME...]    (default build/release/sim/cli/kvsim, every map)
# tests/planner/map_docs_test.sh re-runs part of a stored map from the command in its map.json.
set -euo pipefail
kvsim=${1:-build/release/sim/cli/kvsim}
shift || true
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

seed8=scenarios/seed/4x4090-vram-only.yaml
seed70=scenarios/seed/4x4090-70b-vram-only.yaml
history=(--x users=4:64:10 --y workload.generation.prompt_input.prefix_num_tokens.average=500:12000:10:log)
answer=(--x users=4:64:10
        --y workload.generation.prompt_output.num_tokens.min=50:800:10:log
        --y workload.generation.prompt_output.num_tokens.max=100:1600:10:log)
dram=(--x dram:kv_offload.tiers.0.capacity=4GiB:256GiB:10:log --y users=4:64:10)
network=(--x hardware.servers.0.nic.rate=1GB/s:50GB/s:10:log
         --y hardware.servers.0.count=1:8:8 --y users=16:128:8)

declare -A maps=(
  [8b-history-users]="$seed8 ${history[*]}"
  [8b-answer-users]="$seed8 ${answer[*]}"
  [8b-dram-users]="$seed8 ${dram[*]}"
  [8b-nic-servers]="$seed8 ${network[*]}"
  [70b-history-users]="$seed70 ${history[*]}"
  [70b-answer-users]="$seed70 ${answer[*]}"
  [70b-dram-users]="$seed70 ${dram[*]}"
  [70b-nic-servers]="$seed70 ${network[*]}"
)
names=("$@")
[[ ${#names[@]} -gt 0 ]] || names=(8b-history-users 8b-answer-users 8b-dram-users 8b-nic-servers
                                    70b-history-users 70b-answer-users 70b-dram-users 70b-nic-servers)
for name in "${names[@]}"; do
  [[ -n "${maps[$name]:-}" ]] || { echo "no map $name" >&2; exit 2; }
  mkdir -p "docs/maps/$name"
  # shellcheck disable=SC2086  # the words of the map's arguments (no spaces inside any)
  "$kvsim" map ${maps[$name]} -o "$scratch/$name" --progress none |
    grep -v '^map: ' >"docs/maps/$name/map.txt"
  cp "$scratch/$name/map.json" "$scratch/$name/map.html" "docs/maps/$name/"
  echo "$name: done"
done
