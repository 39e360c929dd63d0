#!/usr/bin/env bash
# Inputs at and past kvsim's stated limits (docs/limits.md), each a reproducer of a failure once
# seen: every one must exit 0 with a correct result or 2 with a message naming the place and the
# limit, never 3 or a crash. Run with the debug build (ASan/UBSan) in the suite.
# Usage: limits_test.sh KVSIM_BINARY SOURCE_DIR
set -uo pipefail
K=$(realpath "$1")
SRC=$(realpath "$2")
cd "$SRC"
G=tests/fixtures/golden/small-multiturn.yaml
NET=scenarios/seed/4x4090-nvme-net.yaml
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0

# expect CODE PATTERN -- command...: the exit code must be CODE and the output must match
# the extended regular expression PATTERN.
expect() {
  local code=$1 pattern=$2
  shift 3
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" != "$code" ] || ! grep -Eq -- "$pattern" <<<"$out"; then
    echo "FAIL: exit $rc (want $code), output does not match /$pattern/: $*" >&2
    tail -n 5 <<<"$out" | sed 's/^/    /' >&2
    fails=$((fails + 1))
  else
    echo "ok: exit $rc: $(grep -Em1 -- "$pattern" <<<"$out" | cut -c1-160)"
  fi
}

# 1. Many engines, native connector, remote tier, async scheduling, session affinity: every
#    request finishes (a lost wake-up left an engine idle with a deferred load).
expect 0 'requests' -- "$K" run "$NET" --set hardware.servers.0.count=32 \
  --set hardware.servers.0.gpus_per_server=1 --set workload.generation.num_conversations=32 \
  --set workload.clients.num_clients=8 --set workload.clients.max_active_conversations=32

# 2. Simulated time past its limit: refused with what took so long, never wrapped.
expect 2 "workload.clients.request_rate.*past kvsim's limit of 1e\+09 s" -- \
  "$K" run $G --set workload.clients.request_rate=1e-10
expect 2 "mooncake_conversation_head250.jsonl:[0-9]+: error: .*replayed arrival.*past kvsim's limit" -- \
  "$K" run $G --trace scenarios/traces/mooncake_conversation_head250.jsonl --set workload.trace.time_scale=1e9
expect 2 "KV transfer .*past kvsim's limit" -- \
  "$K" run "$NET" --set hardware.servers.0.nic.rate=1B/s --set workload.generation.num_conversations=16 \
  --set workload.clients.max_active_conversations=16
expect 2 "hardware.switch_latency: must be in \[0ns, 100000000s\], got 9000000000s" -- \
  "$K" run $G --set hardware.switch_latency=9000000000s

# 3. A step slower than the clock's limit is an error, not a 1 ns step.
expect 2 "forward step .*past kvsim's limit" -- \
  "$K" run $G --set hardware.servers.0.gpu.memory_bandwidth=1B/s --set compute.kind=roofline

# 4. Token counts are bounded before anything is allocated.
expect 2 "prompt_output.num_tokens.max: must be in \(0, 16777216\]" -- \
  "$K" run $G --set 'workload.generation.prompt_output.num_tokens={distribution: uniform, min: 200, max: 1e18}'
expect 2 "prompt_output.num_tokens.average: must be in \[1, 16777216\]" -- \
  "$K" run $G --set 'workload.generation.prompt_output.num_tokens={distribution: lognormal, average: 1e18}'
expect 2 "workload.generation.prompt_output.num_tokens: a sample of .* past kvsim's limit of 16777216" -- \
  "$K" run $G --set 'workload.generation.prompt_output.num_tokens={distribution: zipf, alpha: 1.0000001}'
printf '{"timestamp": 0, "input_length": 10, "output_length": 100000000000, "hash_ids": [1]}\n' >"$T/long.jsonl"
expect 2 "long.jsonl:1: error: output_length 100000000000 is past kvsim's limit of 16777216 tokens" -- \
  "$K" run $G --trace "$T/long.jsonl"

# 5. A block pool past its limit.
expect 2 "engine.num_gpu_blocks_override: must be in \[0, 16777216\]" -- \
  "$K" run $G --set engine.num_gpu_blocks_override=2000000000

# 6. Turns per conversation.
expect 2 "prompt_input.num_turns.value: must be in \[0, 100000\]" -- \
  "$K" run $G --set 'workload.generation.prompt_input.num_turns={distribution: constant, value: 1000000000}'

# 7. trace-stats: the rate series is bounded by a limit on its buckets, not sized by the span.
printf 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,10,20,30,Conversation log\n999999999999,ChatGPT,10,20,30,Conversation log\n' >"$T/burst.csv"
expect 2 "burst.csv:3: error: the timestamp .* past kvsim's limit" -- "$K" trace-stats "$T/burst.csv"
printf '{"timestamp": 0, "input_length": 10, "output_length": 5, "hash_ids": [1]}\n{"timestamp": 99999999999, "input_length": 10, "output_length": 5, "hash_ids": [2]}\n' >"$T/span.jsonl"
expect 0 "widened from 60 s: the series has at most 10000 buckets" -- "$K" trace-stats "$T/span.jsonl"
lines=$("$K" trace-stats "$T/span.jsonl" | wc -l)
if [ "$lines" -gt 10100 ]; then
  echo "FAIL: trace-stats printed $lines lines for two requests" >&2
  fails=$((fails + 1))
fi

# 8, 9. Integers past int64 in a trace row.
printf '{"timestamp": 0, "input_length": 18446744073709551616, "output_length": 5, "hash_ids": [1]}\n' >"$T/big.jsonl"
expect 2 "big.jsonl:1:.*input_length" -- "$K" trace-stats "$T/big.jsonl"
printf '{"timestamp": 0, "input_length": 10, "output_length": 9223372036854775807, "hash_ids": [1]}\n' >"$T/max.jsonl"
expect 2 "max.jsonl:1: error: output_length 9223372036854775807 is past kvsim's limit" -- \
  "$K" trace-stats "$T/max.jsonl"

# 10. The catalog from another folder, through KVSIM_CATALOG_DIR.
expect 0 "rtx4090" -- env -C "$T" KVSIM_CATALOG_DIR="$SRC/scenarios/catalog" "$K" catalog
expect 2 "no-such-folder: error: catalog folder not found" -- \
  env -C "$T" KVSIM_CATALOG_DIR="$T/no-such-folder" "$K" catalog

# 11. An unusable server URL.
expect 2 "--url: 'htp:/x' is not a server base URL" -- \
  "$K" replay $G --url htp:/x --model M --out "$T/r.json"

# 12. Smaller ones.
{ cat $G; printf -- '---\nname: second\n'; } >"$T/two-docs.yaml"
expect 2 "two-docs.yaml:[0-9]+:[0-9]+: error: a second YAML document" -- "$K" check-scenario "$T/two-docs.yaml"
expect 2 "--capacities: '1e29' is .* past the limit of 2\^53 blocks" -- \
  "$K" cache-curve scenarios/traces/mooncake_conversation_head250.jsonl --capacities 1e29
printf 'name: s\nscenarios: [%s]\naxes:\n  - path: workload.clients.num_clients\n    range: {from: 1, to: 8, count: 1000000000000}\n' \
  "$SRC/$G" >"$T/sweep.yaml"
expect 2 "count 1000000000000 is past the limit of 10000000 values" -- "$K" sweep "$T/sweep.yaml" --db "$T/s.db"
expect 2 "engine.num_gpu_blocks_override: num_gpu_blocks_override 1 leaves no block" -- \
  "$K" run $G --set engine.num_gpu_blocks_override=1
expect 2 "unknown command 'frobnicate'" -- "$K" frobnicate
# A 16 MB scalar: the file is refused before it is parsed; a 1 MB one is refused by its line.
python3 - "$T" "$SRC/$G" <<'EOF'
import sys
text = open(sys.argv[2]).read()
for name, size in (("big-scalar.yaml", 16 << 20), ("long-string.yaml", 1 << 20)):
    with open(sys.argv[1] + "/" + name, "w") as f:
        f.write(text.replace("name:", "description: " + "x" * size + "\nname:", 1))
EOF
expect 2 "big-scalar.yaml: error: the YAML text is [0-9]+ bytes, past kvsim's limit of 4194304 bytes" -- \
  "$K" check-scenario "$T/big-scalar.yaml"
expect 2 "long-string.yaml:[0-9]+:[0-9]+: error: description: a string of 1048576 bytes is past kvsim's limit of 65536 bytes" -- \
  "$K" check-scenario "$T/long-string.yaml"

if [ "$fails" -gt 0 ]; then
  echo "$fails limit case(s) failed" >&2
  exit 1
fi
echo "all limit cases passed"
