#!/usr/bin/env bash
# End-to-end checks of the kvsim command line: exit codes, diagnostics with locations,
# determinism, and that results written before a failure are not lost.
# Usage: cli_test.sh KVSIM_BINARY SOURCE_DIR
set -uo pipefail
kvsim=$1
src=$2
example="$src/scenarios/examples/rtx4090-llama3.1-8b-multiturn.yaml"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
pass=0

check() {  # check NAME CONDITION-RESULT
  if [ "$2" = 0 ]; then pass=$((pass + 1)); echo "ok   $1"; else failures=$((failures + 1)); echo "FAIL $1"; fi
}

# 1. --version and --help succeed.
"$kvsim" --version | grep -q "^kvsim [0-9]"; check "version" $?
"$kvsim" --help | grep -q "run"; check "help lists run" $?

# 2. An unknown flag: exit 2 and a message naming it.
"$kvsim" run "$example" --no-such-flag >"$work/out" 2>"$work/err"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--no-such-flag" "$work/err"; check "unknown flag -> exit 2 naming it" $?

# 3. Malformed YAML: exit 2, file:line:col in the message.
printf 'name: x\nengine:\n  max_num_seqs: [1, 2\n' >"$work/bad.yaml"
"$kvsim" check-scenario "$work/bad.yaml" >"$work/out" 2>"$work/err"; rc=$?
[ $rc -eq 2 ] && grep -Eq "bad.yaml:[0-9]+:[0-9]+: error" "$work/err"; check "malformed YAML -> exit 2 with file:line:col" $?

# 4. A trace with a bad line: exit 2, the line number in the message.
head -3 "$src/scenarios/traces/mooncake_fast25_conversation_trace.jsonl" >"$work/trace.jsonl"
printf '{"timestamp": 10, "input_length": "many", "output_length": 5, "hash_ids": [1]}\n' >>"$work/trace.jsonl"
line=$(wc -l <"$work/trace.jsonl")
"$kvsim" run "$example" --trace "$work/trace.jsonl" >"$work/out" 2>"$work/err"; rc=$?
[ $rc -eq 2 ] && grep -q "trace.jsonl:$line:" "$work/err"; check "bad trace line -> exit 2 with its line" $?

# 4b. Every trace reader: a malformed row -> exit 2 naming file:line; each sample replays.
traces="$src/scenarios/traces"
bad_trace() {  # bad_trace NAME FILE LINE
  "$kvsim" run "$example" --trace "$2" --max-requests 20 >"$work/out" 2>"$work/err"; rc=$?
  [ $rc -eq 2 ] && grep -q "$(basename "$2"):$3:" "$work/err"; check "$1: bad row -> exit 2 with its line" $?
}
{ head -2 "$traces/bailian_example.jsonl"
  printf '{"chat_id": 99, "parent_chat_id": -1, "timestamp": 3, "input_length": 20, "output_length": 3, "hash_ids": [1]}\n'; } >"$work/bad_bailian.jsonl"
bad_trace bailian "$work/bad_bailian.jsonl" 3
{ head -3 "$traces/azure_conv_2023_head250.csv"; printf '2023-11-16 18:15:50.1,12x,7\n'; } >"$work/bad_azure.csv"
bad_trace azure "$work/bad_azure.csv" 4
{ head -2 "$traces/burstgpt_example.csv"; printf 'soon,ChatGPT,10,5,15,API log\n'; } >"$work/bad_burstgpt.csv"
bad_trace burstgpt "$work/bad_burstgpt.csv" 3
printf '[\n{"id": "a_0", "conversations": [{"from": "robot", "value": "x"}]}\n]\n' >"$work/bad_sharegpt.json"
bad_trace sharegpt "$work/bad_sharegpt.json" 2
for f in mooncake_conversation_head250.jsonl mooncake_fast25_synthetic_trace.jsonl bailian_example.jsonl azure_conv_2023_head250.csv azure_llm_inference_2023_code.csv azure_code_2024_example.csv burstgpt_example.csv; do
  "$kvsim" run "$example" --trace "$traces/$f" --max-requests 20 --rate-scale 2 --trace-mode closed --format json >"$work/t.json" 2>"$work/err"
  [ $? -eq 0 ] && grep -q '"ttft_ms"' "$work/t.json"; check "replay $f" $?
done
"$kvsim" convert-sharegpt "$traces/sharegpt_example.json" "$work/conv.json" --seed 1 2>"$work/err" &&
  python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); assert [x["id"] for x in c] == ["b", "a"], c' "$work/conv.json"
check "convert-sharegpt writes vLLM's conversation file" $?

# 5. A good run: table printed, same seed gives byte-identical JSON twice.
"$kvsim" run "$example" >"$work/table" 2>"$work/err"; rc=$?
[ $rc -eq 0 ] && grep -q "ttft_ms" "$work/table" && grep -q "requests_per_sec" "$work/table"; check "run prints the table" $?
"$kvsim" run "$example" --format json >"$work/a.json" && "$kvsim" run "$example" --format json >"$work/b.json"
cmp -s "$work/a.json" "$work/b.json"; check "same seed -> byte-identical JSON" $?
"$kvsim" run "$example" --format json --seed 7 >"$work/c.json"
! cmp -s "$work/a.json" "$work/c.json"; check "another seed -> different JSON" $?
# KVSIM_PLAIN_STEPS=1, which kvsim reads and passes to the engines, gives the same results.
KVSIM_PLAIN_STEPS=1 "$kvsim" run "$example" --format json >"$work/plain.json"
cmp -s "$work/a.json" "$work/plain.json"; check "KVSIM_PLAIN_STEPS=1 -> byte-identical JSON" $?

# 6. Prefix caching off gives a higher mean TTFT on the multi-turn workload.
mean_ttft() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ttft_ms"]["mean"])' "$1"; }
"$kvsim" run "$example" --format json --set engine.enable_prefix_caching=false >"$work/off.json"
on=$(mean_ttft "$work/a.json"); off=$(mean_ttft "$work/off.json")
python3 -c "import sys; sys.exit(0 if $off > $on else 1)"; check "prefix caching off -> higher mean TTFT ($on ms on, $off ms off)" $?

# 7. --requests-out and --timeseries-out write their files; a later failing run does not
#    destroy them.
"$kvsim" run "$example" --requests-out "$work/req.json" --timeseries-out "$work/ts.csv" >/dev/null
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert len(r) > 0 and "ttft_ms" in r[0] and "cached_tokens" in r[0]' "$work/req.json"
check "requests JSON written" $?
head -1 "$work/ts.csv" | grep -q "^time_s,"; check "time series CSV written" $?
cp "$work/req.json" "$work/req.before"
"$kvsim" run "$work/bad.yaml" --requests-out "$work/req.json" >/dev/null 2>&1
cmp -s "$work/req.json" "$work/req.before"; check "failed run keeps earlier results" $?

# 8. catalog lists GPUs and models.
"$kvsim" catalog >"$work/cat" 2>&1 && grep -q rtx4090 "$work/cat" && grep -q llama-3.1-70b "$work/cat"; check "catalog lists rtx4090 and llama-3.1-70b" $?

# 9. compare runs the KV-tier variants: VRAM-only beats no-reuse on requests/s.
"$kvsim" compare "$example" --format json >"$work/cmp.json" 2>"$work/err"; rc=$?
[ $rc -eq 0 ] && python3 -c '
import json, sys
rows = {r["variant"]: r for r in json.load(open(sys.argv[1]))["variants"]}
assert rows["vram-only"]["requests_per_sec"] > rows["no-reuse"]["requests_per_sec"], rows
assert rows["no-reuse"]["prefix_cache_hit_rate"] == 0
' "$work/cmp.json"; check "compare: vram-only serves more requests/s than no-reuse" $?
"$kvsim" compare "$example" --variant "bad variant spec: engine.max_num_seqs" >/dev/null 2>"$work/err"; rc=$?
[ $rc -eq 2 ] && grep -q "engine.max_num_seqs" "$work/err"; check "compare: bad --variant -> exit 2" $?

# 10. Golden scenario through the command line: the JSON summary equals the reviewed one (its
#     text exactly, its numbers within a relative 1e-9: tests/support/json_close.py says why).
#     KVSIM_UPDATE_GOLDEN=1 rewrites it instead.
golden="$src/tests/fixtures/golden/small-multiturn"
if [ "${KVSIM_UPDATE_GOLDEN:-0}" = 1 ]; then
  "$kvsim" run "$golden.yaml" --format json >"$golden.summary.json"
  echo "updated $golden.summary.json"
fi
"$kvsim" run "$golden.yaml" --format json >"$work/golden.json"
python3 "$src/tests/support/json_close.py" "$golden.summary.json" "$work/golden.json"
check "golden scenario matches" $?

# 9. cache-curve and trace-stats on the shipped Mooncake sample: JSON holds a list of points with
#    the documented keys, rates are percentages that never fall as capacity grows (LRU), the HTML
#    page holds an SVG chart; a trace without prefix information is refused with exit 2.
sample="$src/scenarios/traces/mooncake_conversation_head250.jsonl"
"$kvsim" cache-curve "$sample" --capacities 10,100,1000 --format json --html "$work/cc.html" >"$work/cc.json" 2>"$work/err"
[ $? -eq 0 ] && python3 - "$work/cc.json" <<'PY'; check "cache-curve JSON: list of points, monotone LRU curve" $?
import json, sys
pts = json.load(open(sys.argv[1]))["points"]
assert isinstance(pts, list) and [p["capacity_blocks"] for p in pts] == [10, 100, 1000]
rates = [p["token_hit_rate_percent"] for p in pts]
assert all(0 <= r <= 100 for r in rates) and rates == sorted(rates), rates
PY
grep -q "<svg" "$work/cc.html"; check "cache-curve --html writes a chart" $?
"$kvsim" cache-curve "$src/scenarios/traces/azure_conv_2023_head250.csv" >"$work/out" 2>"$work/err"
[ $? -eq 2 ] && grep -q "no prefix information" "$work/err"; check "cache-curve on a trace without prefixes -> exit 2" $?
"$kvsim" trace-stats "$sample" --format json >"$work/ts.json" 2>"$work/err"
[ $? -eq 0 ] && python3 -c "import json,sys; s=json.load(open(sys.argv[1])); assert s['requests']==250 and s['format']=='mooncake'" "$work/ts.json"
check "trace-stats JSON counts the sample's 250 requests" $?

# 13. GPUs and models beyond the 4090: check-scenario names the compute model chosen and, for the
#     data-parallel MoE example, each rank's weights and KV cache; calibrate fits a bundle per
#     tensor-parallel degree with every component's median error under 5 %.
moe="$src/scenarios/examples/rtxpro6000-qwen3-30b-a3b-multiturn.yaml"
"$kvsim" check-scenario "$moe" >"$work/out" 2>"$work/err"; rc=$?
[ $rc -eq 0 ] && grep -q "compute model: auto: fitted .*rtxpro6000-qwen3-30b-a3b-instruct-2507-vllm0.19-tp1.yaml" "$work/out" &&
  grep -q "64 of the 128 experts" "$work/out" && grep -q "GPU KV cache size = " "$work/out" && grep -q "2 engines" "$work/out"
check "check-scenario on the MoE example: compute model, per-rank weights and KV" $?
# A small bundle of two degrees (the Qwen3-32B tables, attention cut to its first 400 rows so
# that the fit is quick under the sanitizers): one fitted file per degree, recording its degree.
b="$work/bundle"
mkdir -p "$b/tp1" "$b/tp2"
cp "$src/models/profiles/rtxpro6000-qwen3-32b-vllm0.19/meta.yaml" "$b/"
for t in tp1 tp2; do
  cp "$src/models/profiles/rtxpro6000-qwen3-32b-vllm0.19/$t/dense.csv" "$src/models/profiles/rtxpro6000-qwen3-32b-vllm0.19/$t/per_sequence.csv" "$b/$t/"
  head -401 "$src/models/profiles/rtxpro6000-qwen3-32b-vllm0.19/$t/attention.csv" >"$b/$t/attention.csv"
done
"$kvsim" calibrate --profile "$b" --out "$work/fits/" >"$work/out" 2>"$work/err"; rc=$?
[ $rc -eq 0 ] && grep -q "tensor_parallel_size: 2" "$work/fits/bundle-tp2.yaml" && grep -q "tensor_parallel_size: 1" "$work/fits/bundle-tp1.yaml" &&
  grep -q "= qwen3-32b" "$work/out" && grep -q "= rtx-pro-6000-server" "$work/out"
check "calibrate: a bundle of two degrees writes one file per degree" $?
"$kvsim" calibrate --profile "$b" --tp 4 >"$work/out" 2>"$work/err"; rc=$?
[ $rc -eq 2 ] && grep -q "no tables for tensor-parallel degree 4" "$work/err"; check "calibrate: a missing degree -> exit 2" $?
"$kvsim" calibrate --roofline "$src/models/profiles/rtx4090-llama-3.1-8b-vllm0.19.yaml" \
  "$src/models/profiles/rtxpro6000-llama-3.1-8b-vllm0.19-tp1.yaml" >"$work/out" 2>"$work/err"; rc=$?
[ $rc -eq 0 ] && grep -q "^mean (the roofline's defaults)" "$work/out" && grep -q "leave-one-GPU-out" "$work/out"
check "calibrate --roofline: anchors of two GPUs, their mean, leave-one-GPU-out" $?

# Timelines: a malformed --trace-events-window or a --trace-events-max of 0 -> exit 2 naming
# the option, before anything runs.
for w in 5 a:b 3:2 -1:2 4:4; do
  "$kvsim" run "$example" --trace-events-out "$work/timeline.json" --trace-events-window "$w" >"$work/out" 2>"$work/err"; rc=$?
  [ $rc -eq 2 ] && grep -q -- "--trace-events-window" "$work/err" && [ ! -e "$work/timeline.json" ]
  check "run --trace-events-window $w -> exit 2 naming the option" $?
done
"$kvsim" run "$example" --trace-events-out "$work/timeline.json" --trace-events-max 0 >"$work/out" 2>"$work/err"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--trace-events-max" "$work/err"; check "run --trace-events-max 0 -> exit 2 naming the option" $?
"$kvsim" run "$example" --trace-events-out "$work/timeline.json" --trace-events-max 50 >"$work/out" 2>"$work/err"; rc=$?
[ $rc -eq 0 ] && grep -q "timeline is truncated" "$work/err" &&
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["otherData"]["truncated"] and len(j["traceEvents"]) <= 50' "$work/timeline.json"
check "run --trace-events-max 50 -> a note on stderr, a valid file saying truncated" $?

echo "$pass passed, $failures failed"
[ $failures -eq 0 ]
