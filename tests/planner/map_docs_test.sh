#!/usr/bin/env bash
# The maps of docs/offload.md come from the commands stored with them: re-runs one shard of a
# stored map from the command line in its map.json ("definition") and checks that every cell the
# shard completes equals the stored cell (each variant's value and figures, the gains).
# Usage: map_docs_test.sh KVSIM SOURCE_DIR [MAP_NAME SHARD]
#   (default 8b-history-users 5/50: cells 5 and 55 of its 10 x 10, three variants each)
set -euo pipefail
kvsim=$(realpath "$1")
src=$(realpath "$2")
name=${3:-8b-history-users}
shard=${4:-5/50}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$src"
stored="docs/maps/$name/map.json"
[[ -f "$stored" ]] || { echo "map_docs_test: no $stored" >&2; exit 1; }
definition=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["definition"])' "$stored")
[[ "$definition" == "kvsim map "* ]] || { echo "map_docs_test: bad definition: $definition" >&2; exit 1; }
echo "re-running shard $shard of: $definition"
# The definition is a shell command line (kvsim's own quoting); run it with this kvsim.
eval "\"\$kvsim\" ${definition#kvsim } --shard $shard -o \"\$work/map\" --progress none" >"$work/out.txt"
python3 - "$stored" "$work/map/map.json" <<'PY'
import json, math, sys
stored = json.load(open(sys.argv[1]))
fresh = json.load(open(sys.argv[2]))
assert fresh["definition"] == stored["definition"], (fresh["definition"], stored["definition"])
assert fresh["x"] == stored["x"] and fresh["y"] == stored["y"]
done = [c for c in fresh["cells"] if c["complete"]]
assert len(done) >= 2, f"the shard completed {len(done)} cells"
worst = 0.0
def close(a, b, where):
    global worst
    if a is None or b is None:
        assert a is None and b is None, (where, a, b)
        return
    err = abs(a - b) / max(abs(b), 1e-300)
    worst = max(worst, err)
    assert err <= 1e-9, (where, a, b)
for c in done:
    s = stored["cells"][c["iy"] * len(stored["x"]["values"]) + c["ix"]]
    assert (s["ix"], s["iy"]) == (c["ix"], c["iy"])
    for name, v in c["variants"].items():
        for key in ("value", "requests_per_sec", "ttft_ms_p50", "ttft_ms_p90", "ttft_ms_p99",
                    "tpot_ms_p50", "tpot_ms_p90", "tpot_ms_p99"):
            close(v[key], s["variants"][name][key], (c["x"], c["y"], name, key))
        assert v["run_keys"] == s["variants"][name]["run_keys"], (c["x"], c["y"], name)
    for pair, g in c["gains"].items():
        close(g["gain"], s["gains"][pair]["gain"], (c["x"], c["y"], pair))
    print("cell x=%s y=%s: %s" % (c["x"], c["y"], ", ".join(
        "%s %.3f" % (p, g["gain"]) for p, g in c["gains"].items())))
print("map_docs_test: %d cells of %s equal the stored map (largest relative difference %.1e)"
      % (len(done), sys.argv[1], worst))
PY
