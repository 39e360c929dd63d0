#!/usr/bin/env bash
# kvsim sweep and kvsim merge through the command line: exit codes and messages for bad input,
# resuming after kill -9, two processes sweeping into one database, and merging shards.
# usage: sweep_cli_test.sh KVSIM SOURCE_DIR
set -uo pipefail
KVSIM=$(readlink -f "$1")
SRC=$(readlink -f "$2")
SWEEP="$SRC/tests/planner/data/tiny-sweep.yaml"
D=$(mktemp -d /tmp/kvsim-sweep-cli.XXXXXX)
trap 'rm -rf "$D"' EXIT
failures=0
check() {  # check NAME CONDITION...
  local name=$1
  shift
  if "$@"; then echo "ok: $name"; else echo "FAIL: $name" >&2; failures=$((failures + 1)); fi
}
count() { sqlite3 "$1" "$2"; }

# A bad sweep file: exit 2 and a file:line:col diagnostic.
printf 'name: bad\nscenarios: [%s]\naxes:\n  - {path: a, valuez: [1]}\n' "$SRC/scenarios/examples/rtx4090-llama3.1-8b-multiturn.yaml" > "$D/bad.yaml"
"$KVSIM" sweep "$D/bad.yaml" --db "$D/x.db" 2> "$D/err.txt"
check "bad sweep file exits 2" test $? = 2
check "bad sweep file names file:line:col" grep -q "bad.yaml:4:15: error: axes.0.valuez: unknown key" "$D/err.txt"
check "no database created for a bad sweep" test ! -e "$D/x.db"

# A file that is not a kvsim database: exit 2, file untouched.
echo "my notes" > "$D/notes.db"
"$KVSIM" sweep "$SWEEP" --db "$D/notes.db" --progress none > /dev/null 2> "$D/err.txt"
check "foreign database exits 2" test $? = 2
check "foreign database message" grep -q "not a kvsim results database" "$D/err.txt"
check "foreign database untouched" test "$(cat "$D/notes.db")" = "my notes"
"$KVSIM" merge "$D/missing.db" --out "$D/m.db" 2> "$D/err.txt"
check "merging a missing database exits 2" test $? = 2

# Dry run: lists the 8 runs without creating the database.
"$KVSIM" sweep "$SWEEP" --db "$D/dry.db" --dry-run > "$D/dry.txt"
check "dry run lists 8 runs" test "$(grep -c '  new  ' "$D/dry.txt")" = 8
check "dry run creates nothing" test ! -e "$D/dry.db"

# kill -9 mid-sweep, then the same command again: every run done exactly once. Longer
# conversations make each run take about a second; the kill comes as soon as the database
# shows a finished run (whatever the machine's speed), so it lands mid-sweep.
LONGER=(--set workload.generation.num_conversations=120 --set "workload.generation.prompt_input.num_turns={distribution: uniform, min: 12, max: 18}")
"$KVSIM" sweep "$SWEEP" --db "$D/kill.db" -j 1 --progress none "${LONGER[@]}" > /dev/null 2>&1 &
pid=$!
done_runs() {  # finished runs in the database, 0 while it or its table does not exist yet
  local n
  n=$(sqlite3 "$D/kill.db" "SELECT count(*) FROM runs WHERE status = 'done'" 2> /dev/null) || n=0
  echo "${n:-0}"
}
waited=0
while [ "$(done_runs)" -lt 1 ] && kill -0 $pid 2> /dev/null && [ $waited -lt 3000 ]; do
  sleep 0.05
  waited=$((waited + 1))
done
kill -9 $pid 2> /dev/null
wait $pid 2> /dev/null
check "kill -9 came after a finished run" test "$(done_runs)" -ge 1
echo "after kill -9: $(count "$D/kill.db" "SELECT group_concat(status || '=' || n) FROM (SELECT status, count(*) n FROM runs GROUP BY status)")"
check "kill -9 left runs to do" test "$(done_runs)" -lt 8
"$KVSIM" sweep "$SWEEP" --db "$D/kill.db" -j 2 --progress lines "${LONGER[@]}" > "$D/resume.txt" 2>&1
check "resume exits 0" test $? = 0
check "resume: 8 runs done" test "$(count "$D/kill.db" "SELECT count(*) FROM runs WHERE status = 'done'")" = 8
check "resume: one summary per run" test "$(count "$D/kill.db" "SELECT count(*) FROM summaries")" = 8
check "resume: no run left running" test "$(count "$D/kill.db" "SELECT count(*) FROM runs WHERE status != 'done'")" = 0
check "resume: progress lines" grep -q "sweep 8/8 runs" "$D/resume.txt"
"$KVSIM" sweep "$SWEEP" --db "$D/kill.db" --progress none "${LONGER[@]}" > "$D/again.txt"
check "third run skips all 8" grep -q "ran 0 done, 0 failed; skipped 8 already done" "$D/again.txt"

# Two processes sweeping into one database at once.
"$KVSIM" sweep "$SWEEP" --db "$D/two.db" -j 1 --progress none > "$D/p1.txt" 2>&1 &
p1=$!
"$KVSIM" sweep "$SWEEP" --db "$D/two.db" -j 1 --progress none > "$D/p2.txt" 2>&1 &
p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
check "two writers exit 0" test "$r1$r2" = 00
"$KVSIM" sweep "$SWEEP" --db "$D/two.db" --progress none > /dev/null 2>&1
check "two writers: integrity ok" test "$(count "$D/two.db" "PRAGMA integrity_check")" = ok
check "two writers: 8 runs done once" test "$(count "$D/two.db" "SELECT count(*) || '/' || count(DISTINCT run_key) FROM runs WHERE status = 'done'")" = 8/8
check "two writers: 8 summaries" test "$(count "$D/two.db" "SELECT count(*) FROM summaries")" = 8

# Shards by flag, merged, equal the two-writer database in run keys; merging again changes nothing.
for k in 0 1; do "$KVSIM" sweep "$SWEEP" --db "$D/s$k.db" --shard $k/2 --progress none > /dev/null || failures=$((failures + 1)); done
"$KVSIM" merge "$D/s0.db" "$D/s1.db" --out "$D/all.db" > /dev/null 2>&1
check "merge exits 0" test $? = 0
keys() { sqlite3 "$1" "SELECT run_key FROM runs WHERE status = 'done' ORDER BY run_key"; }
check "merged shards have the sweep's keys" test "$(keys "$D/all.db")" = "$(keys "$D/two.db")"
"$KVSIM" merge "$D/two.db" --out "$D/all.db" > "$D/merge2.txt" 2>&1
check "merging the whole sweep again finds 8 identical" grep -q "0 runs added, 8 identical" "$D/merge2.txt"
check "no temporary left" test -z "$(ls "$D" | grep merging)"

# Kubernetes Indexed Job: index from JOB_COMPLETION_INDEX, count from --shard-count.
JOB_COMPLETION_INDEX=1 "$KVSIM" sweep "$SWEEP" --db "$D/k8s.db" --shard-count 4 --dry-run > "$D/k8s.txt"
check "indexed job runs shard 1/4" grep -q "2 of 8 runs in Kubernetes Indexed Job" "$D/k8s.txt"
JOB_COMPLETION_INDEX=1 "$KVSIM" sweep "$SWEEP" --db "$D/k8s.db" --dry-run > /dev/null 2> "$D/err.txt"
check "indexed job without a count exits 2" test $? = 2

if [ $failures -ne 0 ]; then
  echo "sweep_cli_test: $failures failures" >&2
  exit 1
fi
echo "sweep_cli_test: PASS"
