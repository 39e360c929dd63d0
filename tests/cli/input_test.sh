#!/usr/bin/env bash
# Inputs from standard input and gzip-compressed traces, and the progress line of a long run:
#   - a scenario piped to `kvsim run -` gives the same result as the file;
#   - a gzip-compressed trace, given by name or piped, gives the same statistics and run as the
#     plain file; a truncated one is refused (exit 2) naming the file;
#   - `kvsim run` shows a progress line only on a terminal (here a pseudo-terminal from script(1)),
#     not when stderr is a file, and not with --quiet.
# Usage: input_test.sh KVSIM_BINARY SOURCE_DIR
set -uo pipefail
K=$(realpath "$1")
SRC=$(realpath "$2")
cd "$SRC"
G=tests/fixtures/golden/small-multiturn.yaml
TRACE=scenarios/traces/mooncake_conversation_head250.jsonl
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

# The scenario from standard input (its relative paths resolve against the current folder: the
# scenario's own folder here, as for the file).
"$K" run "$G" --format json > "$T/file.json" || fail "run from the file"
(cd "$(dirname "$G")" && "$K" run - --format json < "$(basename "$G")") > "$T/stdin.json" || fail "run -"
if cmp -s "$T/file.json" "$T/stdin.json"; then ok "run - < scenario equals run scenario"; else fail "run - differs from the file"; fi

# A compressed trace: named .gz, piped, and named without a .gz suffix.
gzip -9c "$TRACE" > "$T/trace.jsonl.gz"
gzip -9c "$TRACE" > "$T/trace-plain-name.jsonl"
"$K" trace-stats "$TRACE" --format json > "$T/plain.json" || fail "trace-stats plain"
"$K" trace-stats "$T/trace.jsonl.gz" --format json > "$T/gz.json" || fail "trace-stats .gz"
"$K" trace-stats - --format json < "$T/trace.jsonl.gz" > "$T/gz-stdin.json" || fail "trace-stats - < .gz"
"$K" trace-stats "$T/trace-plain-name.jsonl" --format json > "$T/gz-noname.json" || fail "trace-stats gzip without .gz"
# The same statistics, whatever the file is called.
strip_path() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); [d.pop(k, None) for k in ("file", "trace", "source", "path")]; print(json.dumps(d, sort_keys=True))' "$1"; }
for f in gz gz-stdin gz-noname; do
  if [ "$(strip_path "$T/plain.json")" == "$(strip_path "$T/$f.json")" ]; then ok "trace-stats $f equals the plain file"; else fail "trace-stats $f differs from the plain file"; fi
done
"$K" run "$G" --trace "$TRACE" --format json > "$T/run-plain.json" || fail "run --trace plain"
"$K" run "$G" --trace - --format json < "$T/trace.jsonl.gz" > "$T/run-gz.json" || fail "run --trace - < .gz"
if cmp -s "$T/run-plain.json" "$T/run-gz.json"; then ok "run --trace - < trace.gz equals the plain trace"; else fail "run --trace - < .gz differs"; fi

# A truncated compressed trace: refused, naming the file; both inputs from stdin: refused.
head -c 3000 "$T/trace.jsonl.gz" > "$T/cut.jsonl.gz"
out=$("$K" trace-stats "$T/cut.jsonl.gz" 2>&1); rc=$?
if [ $rc == 2 ] && grep -q "cut.jsonl.gz.*gzip" <<<"$out"; then ok "truncated gzip: exit 2: $(head -c 160 <<<"$out")"; else fail "truncated gzip: exit $rc: $out"; fi
out=$("$K" run - --trace - < "$G" 2>&1); rc=$?
if [ $rc == 2 ] && grep -q "standard input already holds the scenario" <<<"$out"; then ok "run - --trace -: exit 2"; else fail "run - --trace -: exit $rc: $out"; fi

# Progress: on a terminal only. The run is long enough to reach a progress report (every 4096
# events) many times over.
LONG=(run "$G" --set workload.generation.num_conversations=400 --set workload.clients.num_clients=16
      --set workload.clients.max_active_conversations=32)
script -qefc "$(printf '%q ' "$K" "${LONG[@]}") > $T/tty-out.txt" "$T/tty.txt" > /dev/null 2>&1 || fail "run under a terminal"
if grep -q "kvsim run: simulated" "$T/tty.txt"; then ok "a terminal shows progress"; else fail "no progress line on a terminal"; fi
if grep -q "kvsim run: simulated" "$T/tty-out.txt"; then fail "progress reached stdout"; else ok "stdout holds the result only"; fi
script -qefc "$(printf '%q ' "$K" "${LONG[@]}" --quiet) > /dev/null" "$T/tty-quiet.txt" > /dev/null 2>&1 || fail "run --quiet under a terminal"
if grep -q "kvsim run: simulated" "$T/tty-quiet.txt"; then fail "--quiet showed progress"; else ok "--quiet shows none"; fi
"$K" "${LONG[@]}" > /dev/null 2> "$T/piped.txt" || fail "run with stderr to a file"
if grep -q "kvsim run: simulated" "$T/piped.txt"; then fail "progress written to a file"; else ok "stderr to a file: no progress"; fi

if [ $fails -gt 0 ]; then echo "$fails failed" >&2; exit 1; fi
echo "all passed"
