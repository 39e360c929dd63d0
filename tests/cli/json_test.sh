#!/usr/bin/env bash
# Every command that prints results, with --format json: the output is one JSON document that
# Python's json module parses, whose first keys are "schema_version": 1 and "kvsim_version",
# and which holds the keys docs/results.md lists for the command. Then paths with a double
# quote, a backslash, a space and non-ASCII letters: the path strings in the JSON must parse
# back to the real paths.
# Usage: json_test.sh KVSIM SOURCE_DIR
set -uo pipefail
kvsim=$(realpath "$1")
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
golden=$src/tests/fixtures/golden/small-multiturn.yaml
sample=$src/scenarios/traces/mooncake_conversation_head250.jsonl
small="--set workload.generation.num_conversations=8"

# doc NAME WANT_RC KEYS -- CMD...: CMD exits WANT_RC and prints a JSON document with the header
# and every key of the space-separated KEYS; the document is kept as $tmp/NAME.json.
doc() {
  local name=$1 want=$2 keys=$3
  shift 4
  "$@" >"$tmp/$name.json" 2>"$tmp/$name.err"
  local rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "FAIL: $name: exit $rc, want $want: $*"; tail -5 "$tmp/$name.err"; fail=1; return
  fi
  if python3 - "$tmp/$name.json" "$keys" <<'PY'; then echo "ok: $name"; else echo "FAIL: $name: $*"; fail=1; fi
import json, sys
text = open(sys.argv[1], encoding="utf-8").read()
d = json.loads(text)
assert isinstance(d, dict), type(d)
keys = list(d)
assert keys[:2] == ["schema_version", "kvsim_version"], keys[:3]
assert d["schema_version"] == 1 and isinstance(d["schema_version"], int)
assert isinstance(d["kvsim_version"], str) and d["kvsim_version"]
missing = [k for k in sys.argv[2].split() if k not in d]
assert not missing, ("missing keys", missing, keys)
assert text.endswith("}\n")
PY
}

# check PYTHON_CONDITION NAME: a condition on the parsed document $tmp/NAME.json (bound to d).
check() {
  if python3 -c "import json,sys; d=json.load(open(sys.argv[1], encoding='utf-8')); assert $1, d" "$tmp/$2.json" 2>"$tmp/check.err"; then
    echo "ok: $2: $1"
  else
    echo "FAIL: $2: $1"; tail -3 "$tmp/check.err"; fail=1
  fi
}

# --- every command -------------------------------------------------------------------------
doc run 0 "scenario seed ttft_ms requests_per_sec gpu_kv_cache_tokens" -- "$kvsim" run "$golden" --format json
check 'd["scenario"] == "golden-small-multiturn" and d["seed"] == 11 and d["ttft_ms"]["count"] > 0' run
doc compare 0 "command variants" -- "$kvsim" compare "$golden" $small --format json --variant "a:" --variant "b: engine.enable_prefix_caching=false"
check 'd["command"] == "compare" and [v["variant"] for v in d["variants"]] == ["a", "b"] and d["variants"][1]["prefix_cache_hit_rate"] == 0' compare
doc check-scenario 0 "command scenario_file scenario gpu_kv_cache_tokens num_engines compute_model notes memory_breakdown" -- "$kvsim" check-scenario "$golden" --format json
check 'd["gpu_kv_cache_tokens"] == 600 * 16 and d["num_engines"] == 1 and len(d["memory_breakdown"]) > 0 and d["scenario_file"].endswith("small-multiturn.yaml")' check-scenario
doc catalog 0 "command catalog_dir gpus models drives storage_nodes" -- "$kvsim" catalog --catalog "$src/scenarios/catalog" --format json
check 'd["catalog_dir"].rstrip("/").endswith("scenarios/catalog") and "rtx4090" in [g["name"] for g in d["gpus"]] and "llama-3.1-8b" in [m["name"] for m in d["models"]]' catalog
# llama-3.1-8b: 32 layers x 8 KV heads x 128 x 2 (K and V) x 2 bytes = 131072 bytes per token.
check '[m["kv_bytes_per_token"] for m in d["models"] if m["name"] == "llama-3.1-8b"] == [131072]' catalog
# calibrate: the residuals of the shipped 4090 profile against its own tables (each component's
# median error under 5 %, as docs/calibration.md states), and the roofline's anchors.
doc calibrate 0 "command mode profiles" -- "$kvsim" calibrate --residuals "$src/models/profiles/rtx4090-llama-3.1-8b-vllm0.19.yaml" --format json
check 'd["mode"] == "residuals" and len(d["profiles"]) == 1 and {r["component"] for r in d["profiles"][0]["residuals"]} == {"dense_layer", "dense_step", "attention_layer", "per_sequence"} and all(0 <= r["median_abs_rel_error"] < 0.05 for r in d["profiles"][0]["residuals"])' calibrate
doc calibrate-roofline 0 "command mode anchors mean leave_one_gpu_out" -- "$kvsim" calibrate --catalog "$src/scenarios/catalog" --roofline "$src/models/profiles/rtx4090-llama-3.1-8b-vllm0.19.yaml" "$src/models/profiles/rtxpro6000-llama-3.1-8b-vllm0.19-tp1.yaml" --format json
check 'len(d["anchors"]) == 2 and len(d["leave_one_gpu_out"]) == 2 and all(0 < a["memory"] <= 1 and 0 < a["gemm"] <= 1 for a in d["anchors"])' calibrate-roofline
doc trace-stats 0 "command source format requests input_length rate ideal_token_hit_rate_percent" -- "$kvsim" trace-stats "$sample" --format json
check 'd["requests"] == 250 and d["format"] == "mooncake" and d["rate"][0]["requests"] > 0' trace-stats
doc cache-curve 0 "command trace kind points infinite_token_hit_rate_percent" -- "$kvsim" cache-curve "$sample" --capacities 10,100,1000 --format json
check '[p["capacity_blocks"] for p in d["points"]] == [10, 100, 1000] and d["kind"] == "curve"' cache-curve
doc cache-curve-stack 0 "command trace kind tiers" -- "$kvsim" cache-curve "$sample" --tiers gpu=100,dram=1000 --format json
check '[t["tier"] for t in d["tiers"]] == ["gpu", "dram", "total"] and d["kind"] == "stack"' cache-curve-stack
doc plan 0 "command scenario slo load_knob seeds aggregate mode options" -- "$kvsim" plan -q "$golden" $small --catalog "$src/scenarios/catalog" --slo "ttft_p90<=60s" --variant "as-is:" --seeds 1 --max-load 4 -j 2 --format json
check 'd["options"][0]["variant"] == "as-is" and d["options"][0]["feasible"] and d["options"][0]["load"] >= 1 and len(d["options"][0]["probes"]) > 0' plan
cat >"$tmp/plan.yaml" <<YAML
name: json
scenarios:
  - {name: met, file: $golden, set: [workload.generation.num_conversations=8], slo: "ttft_p90<=60s,request_throughput>=1000"}
YAML
doc check 1 "command plan pass terms failures scenarios" -- "$kvsim" check -q "$tmp/plan.yaml" --format json
check 'd["pass"] is False and d["terms"] == 2 and d["failures"] == 1 and [t["pass"] for t in d["scenarios"][0]["terms"]] == [True, False]' check

# validate: a replay against the fake server of validation/testing, then --format json and --json-out.
python3 "$src/validation/testing/fake_server.py" --port 0 --token-ms 0 >"$tmp/server.out" 2>&1 &
server_pid=$!
for _ in $(seq 50); do grep -q "listening on" "$tmp/server.out" 2>/dev/null && break; sleep 0.1; done
url=$(sed -n 's/^listening on //p' "$tmp/server.out" | head -1)
if [ -z "$url" ]; then
  echo "FAIL: fake server did not start"; cat "$tmp/server.out"; fail=1
else
  "$kvsim" replay "$golden" $small --url "$url" --model m --out "$tmp/replay.json" >"$tmp/replay.out" 2>&1 ||
    { echo "FAIL: replay"; tail -5 "$tmp/replay.out"; fail=1; }
  doc validate 0 "command scenario metrics per_request notes pass" -- "$kvsim" validate --measured "$tmp/replay.json" --scenario "$golden" $small --format json --json-out "$tmp/validate-out.json"
  check 'd["command"] == "validate" and len(d["metrics"]) > 0 and d["pass"] is True' validate
  # The replayed workload is the measured one: every measured request has its predicted twin.
  check 'd["per_request"]["pairs_count"] > 0 and d["per_request"]["pairs_count"] == len(d["per_request"]["pairs"]) and d["per_request"]["measured_unpaired"] == 0 and d["per_request"]["predicted_unpaired"] == 0 and d["per_request"]["ttft"]["n"] == d["per_request"]["pairs_count"]' validate
  "$kvsim" validate --measured "$tmp/replay.json" --scenario "$golden" $small --tolerance ttft_request_corr=2 >/dev/null 2>"$tmp/tol.err"
  rc=$?
  if [ "$rc" -eq 2 ] && grep -q "ttft_request_corr=2.*from -1 to 1" "$tmp/tol.err"; then
    echo "ok: validate rejects a correlation bound outside [-1, 1]"
  else
    echo "FAIL: validate --tolerance ttft_request_corr=2: exit $rc"; cat "$tmp/tol.err"; fail=1
  fi
  cmp -s "$tmp/validate.json" "$tmp/validate-out.json" && echo "ok: validate --json-out equals stdout" ||
    { echo "FAIL: validate --json-out differs from stdout"; fail=1; }
fi

# --- paths that need escaping ---------------------------------------------------------------
weird="$tmp/we\"ird\\ dir"
mkdir -p "$weird"
trace="$weird/ünï 日本.jsonl"
scen="$weird/scé\"n\\ario 日本.yaml"
head -40 "$sample" >"$trace"
cp "$golden" "$scen"
doc weird-trace-stats 0 "source" -- "$kvsim" trace-stats "$trace" --format json
doc weird-cache-curve 0 "trace" -- "$kvsim" cache-curve "$trace" --capacities 10 --format json
doc weird-run 0 "scenario" -- "$kvsim" run "$scen" --trace "$trace" --max-requests 10 --format json
doc weird-check-scenario 0 "scenario_file" -- "$kvsim" check-scenario "$scen" --format json
python3 - "$tmp" "$trace" "$scen" <<'PY' && echo "ok: escaped paths read back as the real paths" || { echo "FAIL: escaped paths"; fail=1; }
import json, os, sys
tmp, trace, scen = sys.argv[1:4]
load = lambda n: json.load(open(os.path.join(tmp, n + ".json"), encoding="utf-8"))
assert '"' in trace and "\\" in trace and "日本" in trace
got = load("weird-trace-stats")["source"]
assert os.path.samefile(got, trace) and got.endswith("ünï 日本.jsonl"), got
got = load("weird-cache-curve")["trace"]
assert got == trace, (got, trace)
got = load("weird-check-scenario")["scenario_file"]
assert got == scen, (got, scen)
raw = open(os.path.join(tmp, "weird-check-scenario.json"), "rb").read()
assert "日本".encode() in raw, "UTF-8 written as is"
PY
exit $fail
