#!/usr/bin/env bash
# kvsim-gui headless mode: each main view rendered after a run is a non-trivial PNG; a malformed
# scenario exits 2 with a message and still writes the window (showing the problem); a map.json
# opens in the Map tab with a cell selected, and a broken one exits 2 naming its line.
set -euo pipefail
gui=$1
src=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export QT_QPA_PLATFORM=offscreen
example=$src/scenarios/examples/rtx4090-llama3.1-8b-multiturn.yaml
for view in editor run whatif; do
  "$gui" --scenario "$example" --run --view "$view" --values "2, 8" --screenshot "$out/$view.png"
  size=$(stat -c %s "$out/$view.png")
  head -c 8 "$out/$view.png" | od -An -tx1 | grep -q "89 50 4e 47" || { echo "$view.png is not a PNG"; exit 1; }
  [ "$size" -gt 20000 ] || { echo "$view.png is only $size bytes"; exit 1; }
done
printf 'name: x\nengine: [1, 2\n' > "$out/bad.yaml"
set +e
"$gui" --scenario "$out/bad.yaml" --run --screenshot "$out/bad.png" 2> "$out/err.txt"
rc=$?
set -e
[ "$rc" -eq 2 ] || { echo "malformed scenario: exit $rc, expected 2"; exit 1; }
grep -q "not a valid scenario" "$out/err.txt" || { echo "no message:"; cat "$out/err.txt"; exit 1; }
[ -s "$out/bad.png" ] || { echo "no screenshot of the malformed scenario"; exit 1; }
cat > "$out/map.json" <<'JSON'
{"command": "map", "scenario": "by hand", "metric": "requests_per_sec", "seeds": 1, "db": "map.db",
 "x": {"name": "users", "values": ["4", "8"], "log": false},
 "y": {"name": "prefix tokens", "values": ["1000", "2000"], "log": false},
 "variants": [{"name": "vram-only"}, {"name": "dram"}],
 "pairs": [{"name": "dram / vram-only", "numerator": "dram", "denominator": "vram-only"}],
 "cells": [{"ix": 0, "iy": 0, "complete": true, "gains": {"dram / vram-only": {"gain": 0.8}}},
           {"ix": 1, "iy": 0, "complete": true, "gains": {"dram / vram-only": {"gain": 1.5}}},
           {"ix": 0, "iy": 1, "complete": true, "gains": {"dram / vram-only": {"gain": 2.5}}},
           {"ix": 1, "iy": 1, "complete": true, "gains": {"dram / vram-only": {"gain": 4.5}}}]}
JSON
"$gui" --map "$out/map.json" --map-cell 1,1 --screenshot "$out/map.png"
size=$(stat -c %s "$out/map.png")
[ "$size" -gt 20000 ] || { echo "map.png is only $size bytes"; exit 1; }
printf '{"x": {"name": "users",\n "values": [1,, 2]}}\n' > "$out/bad.json"
set +e
"$gui" --map "$out/bad.json" --screenshot "$out/bad-map.png" 2> "$out/err.txt"
rc=$?
set -e
[ "$rc" -eq 2 ] || { echo "malformed map: exit $rc, expected 2"; exit 1; }
grep -q "bad.json:2:.*not valid JSON" "$out/err.txt" || { echo "no message:"; cat "$out/err.txt"; exit 1; }
echo "headless screenshots ok"
