#!/usr/bin/env bash
# kvsim map from the command line: a map killed part-way and run again finishes only the runs
# that were missing, and ends equal to a map run without interruption; the outputs (JSON, CSV,
# HTML) agree with each other; bad input exits 2 naming the problem and leaves earlier outputs.
# Usage: map_cli_test.sh KVSIM SOURCE_DIR
set -euo pipefail
kvsim=$(realpath "$1")
src=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$src"
fail() { echo "map_cli_test: FAIL: $*" >&2; exit 1; }

# The seed deployment with fewer, shorter conversations, so the debug build is quick.
small=(--set workload.generation.num_conversations=32 --set workload.clients.num_clients=8
       --set workload.clients.max_active_conversations=24
       --set workload.generation.prompt_input.num_turns.min=4
       --set workload.generation.prompt_input.num_turns.max=8)
map=(scenarios/seed/4x4090-vram-only.yaml --x users=4:16:4
     --y workload.generation.prompt_output.num_tokens.max=250,400 "${small[@]}" --progress none)
total=24   # 4 x 2 cells, 3 variants, 1 seed

# 1. Uninterrupted.
"$kvsim" map "${map[@]}" -o "$work/whole" >"$work/whole.txt"
grep -q "runs: $total in the map; ran $total done, 0 failed; skipped 0 already done" "$work/whole.txt" ||
  fail "first run: $(tail -3 "$work/whole.txt")"

# 2. Killed once a few runs are in the database, then run again.
done_runs() {
  python3 - "$1" <<'EOF'
import sqlite3, sys
try:
    db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, timeout=5)
    print(db.execute("SELECT count(*) FROM runs WHERE status = 'done'").fetchone()[0])
except sqlite3.Error:
    print(0)
EOF
}
mkdir -p "$work/cut"
"$kvsim" map "${map[@]}" -j 1 -o "$work/cut" >"$work/cut1.txt" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  [[ -f "$work/cut/map.db" ]] && (( $(done_runs "$work/cut/map.db") >= 4 )) && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
kill -9 "$pid" 2>/dev/null || fail "the map finished before it could be killed"
wait "$pid" 2>/dev/null || true
before=$(done_runs "$work/cut/map.db")
(( before >= 4 && before < total )) || fail "killed with $before of $total runs done"
[[ ! -f "$work/cut/map.json" ]] || fail "a killed map wrote map.json"
"$kvsim" map "${map[@]}" -o "$work/cut" >"$work/cut2.txt"
ran=$(sed -n 's/.*; ran \([0-9]*\) done, 0 failed; skipped \([0-9]*\) already done.*/\1 \2/p' "$work/cut2.txt")
read -r ran_now skipped <<<"$ran"
[[ "$skipped" == "$before" ]] || fail "rerun skipped $skipped, but $before were done before the kill"
(( ran_now + skipped == total )) || fail "rerun ran $ran_now and skipped $skipped of $total"
echo "killed after $before of $total runs; the rerun ran $ran_now and skipped $skipped"

# 3. The interrupted map equals the whole one; JSON, CSV and HTML agree.
python3 - "$work/whole" "$work/cut" <<'EOF'
import csv, json, math, sys
whole = json.load(open(f"{sys.argv[1]}/map.json"))
cut = json.load(open(f"{sys.argv[2]}/map.json"))
assert whole["missing_cells"] == 0 and cut["missing_cells"] == 0
assert whole["definition"] == cut["definition"], (whole["definition"], cut["definition"])
assert whole["definition"].startswith("kvsim map scenarios/seed/4x4090-vram-only.yaml --x users=4:16:4")
for a, b in zip(whole["cells"], cut["cells"]):
    assert a["gains"] == b["gains"], (a["x"], a["y"], a["gains"], b["gains"])
    for name, v in a["variants"].items():
        assert v["value"] == b["variants"][name]["value"]
        assert v["run_keys"] == b["variants"][name]["run_keys"]
assert [v["name"] for v in whole["variants"]] == ["vram-only", "dram", "nvme-net"]
assert whole["x"]["values"] == ["4", "8", "12", "16"] and whole["y"]["values"] == ["250", "400"]
# The gain is the ratio of the two variants' values, and the CSV holds the same values.
rows = list(csv.DictReader(open(f"{sys.argv[1]}/map.csv")))
assert len(rows) == 8 * 3, len(rows)
for c in whole["cells"]:
    v = c["variants"]
    g = c["gains"]["nvme-net / vram-only"]["gain"]
    assert math.isclose(g, v["nvme-net"]["value"] / v["vram-only"]["value"], rel_tol=1e-12)
    row = [r for r in rows if r["ix"] == str(c["ix"]) and r["iy"] == str(c["iy"]) and r["variant"] == "nvme-net"][0]
    assert math.isclose(float(row["requests_per_sec"]), v["nvme-net"]["value"], rel_tol=1e-15)
    assert math.isclose(float(row["gain_vs_vram-only"]), g, rel_tol=1e-15)
html = open(f"{sys.argv[1]}/map.html").read()
assert html.count('<g class="cell">') == 8 * 3, "one cell per pair and cell"
assert html.count("<h2>") == 3
print("interrupted map equals the whole map; JSON, CSV and HTML agree")
EOF

# 4. A cell's value equals `kvsim run` of its scenario (users 8 = the scenario's own clients).
rps=$("$kvsim" run scenarios/seed/4x4090-vram-only.yaml "${small[@]}" \
      --set workload.generation.prompt_output.num_tokens.max=400 --format json |
      python3 -c 'import json,sys; print(repr(json.load(sys.stdin)["requests_per_sec"]))')
python3 - "$work/whole/map.json" "$rps" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
cell = [c for c in d["cells"] if c["x"] == "8" and c["y"] == "400"][0]
assert repr(cell["variants"]["vram-only"]["value"]) == sys.argv[2], (cell["variants"]["vram-only"]["value"], sys.argv[2])
print("cell (8 users, 400) equals kvsim run:", sys.argv[2], "requests/s")
EOF

# 5. --format json is one document on stdout.
"$kvsim" map "${map[@]}" -o "$work/whole" --format json >"$work/doc.json" 2>"$work/doc.err"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["command"]=="map" and d["this_invocation"]["ran_done"]==0' "$work/doc.json"

# 6. Bad input: exit 2, a message naming the problem, earlier outputs kept.
cp "$work/whole/map.json" "$work/keep.json"
expect_bad() {
  local want=$1; shift
  set +e
  "$kvsim" map "$@" >"$work/bad.out" 2>"$work/bad.err"
  local rc=$?
  set -e
  [[ $rc == 2 ]] || fail "exit $rc (want 2) for: $* ($(cat "$work/bad.err"))"
  grep -qF -- "$want" "$work/bad.err" || fail "no '$want' in: $(cat "$work/bad.err")"
}
expect_bad "expected PATH=FROM:TO:COUNT" scenarios/seed/4x4090-vram-only.yaml --x users --y a.b=1 -o "$work/whole"
expect_bad "round to the same value" scenarios/seed/4x4090-vram-only.yaml --x users=1:3:9 --y a.b=1 -o "$work/whole"
expect_bad "no variant 'tape'" scenarios/seed/4x4090-vram-only.yaml --x users=4,8 --y engine.max_num_seqs=8 --variants vram-only,tape -o "$work/whole"
expect_bad "lots" scenarios/seed/4x4090-vram-only.yaml --x users=4,8 --y engine.max_num_seqs=8,lots -o "$work/whole"
expect_bad "cannot set them" scenarios/seed/4x4090-vram-only.yaml --x users=4,8 --y engine.max_num_seqs=8 --slo 'ttft_p90<=2s' -o "$work/whole"
touch "$work/file"
expect_bad "--out" scenarios/seed/4x4090-vram-only.yaml --x users=4,8 --y engine.max_num_seqs=8 -o "$work/file"
cmp -s "$work/keep.json" "$work/whole/map.json" || fail "a failed map changed the earlier map.json"
echo "map_cli_test: passed"
