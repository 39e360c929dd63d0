#!/usr/bin/env bash
# A real Slurm cluster of one node on localhost: munged, slurmctld and slurmd started here with
# a minimal slurm.conf (proctrack/linuxproc, task/none) in a temporary folder; a sweep submitted
# as a job array (sbatch --array=0-2 --wait), each task running the shard that Slurm's
# environment names; the shard databases merged; and the merged database checked equal in
# content (run keys, statuses, seeds, scenarios and every summary value) to a local run of the
# same sweep. Needs root (as CI runs), Debian's slurm-wlm and munge. If Slurm cannot run here,
# the test says why and fails.
# usage: slurm_test.sh KVSIM SOURCE_DIR
set -uo pipefail
KVSIM=$(readlink -f "$1")
SRC=$(readlink -f "$2")
SWEEP="$SRC/tests/planner/data/tiny-sweep.yaml"

fail() {
  echo "slurm_test: FAIL: $*" >&2
  for f in "$D"/munged.log "$D"/slurmctld.log "$D"/slurmd.log "$D"/out-*.txt; do
    [ -f "$f" ] && { echo "--- $f (last lines)" >&2; tail -n 25 "$f" >&2; }
  done
  exit 1
}

D=$(mktemp -d /tmp/kvsim-slurm.XXXXXX)
chmod 755 "$D"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$D"
}
trap cleanup EXIT

for tool in munged slurmctld slurmd sbatch sinfo python3; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (Debian: apt-get install slurm-wlm munge python3)"
done
[ "$(id -u)" = 0 ] || fail "must run as root to start slurmd (CI runs as root)"

# munge: a fresh key and a private socket.
mkdir -p "$D/munge"
chmod 711 "$D/munge"
dd if=/dev/urandom of="$D/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$D/munge/munge.key"
munged --foreground --force --key-file="$D/munge/munge.key" --socket="$D/munge/munge.socket" \
  --pid-file="$D/munge/munged.pid" --log-file="$D/munged.log" --seed-file="$D/munge/munged.seed" \
  >>"$D/munged.log" 2>&1 &
pids+=($!)
for _ in $(seq 300); do [ -S "$D/munge/munge.socket" ] && break; sleep 0.1; done
[ -S "$D/munge/munge.socket" ] || fail "munged did not start"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
CTLD_PORT=$(free_port)
SLURMD_PORT=$(free_port)
CPUS=$(nproc)
mkdir -p "$D/state" "$D/spool"
export SLURM_CONF="$D/slurm.conf"
cat > "$SLURM_CONF" <<CONF
ClusterName=kvsimtest
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$D/munge/munge.socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF

slurmctld -D -c -f "$SLURM_CONF" >>"$D/slurmctld.log" 2>&1 &
pids+=($!)
slurmd -D -N localhost -f "$SLURM_CONF" >>"$D/slurmd.log" 2>&1 &
pids+=($!)
state=""
for _ in $(seq 120); do
  state=$(sinfo -h -n localhost -o %T 2>/dev/null | head -n1)
  [ "$state" = idle ] && break
  sleep 0.5
done
[ "$state" = idle ] || fail "the Slurm node did not become idle (state: '${state:-none}')"
echo "slurm_test: slurmctld and slurmd up on localhost ($CPUS CPUs, ports $CTLD_PORT/$SLURMD_PORT)"

# The job array: each task runs the shard Slurm's environment names, into its own database.
cat > "$D/job.sh" <<JOB
#!/usr/bin/env bash
exec "$KVSIM" sweep "$SWEEP" --db "$D/shard-\${SLURM_ARRAY_TASK_ID}.db" -j 1 --progress none
JOB
chmod +x "$D/job.sh"
cd "$D" || fail "cannot enter $D"
timeout 240 sbatch --wait --array=0-2 --cpus-per-task=1 --output="$D/out-%a.txt" --job-name=kvsim-sweep "$D/job.sh" \
  || fail "sbatch --array=0-2 --wait failed"
for k in 0 1 2; do
  grep -q "shard $k/3, Slurm job array" "$D/out-$k.txt" || fail "task $k did not run shard $k/3 from Slurm's environment"
  cat "$D/out-$k.txt"
done

"$KVSIM" merge "$D"/shard-0.db "$D"/shard-1.db "$D"/shard-2.db --out "$D/merged.db" || fail "kvsim merge failed"
"$KVSIM" sweep "$SWEEP" --db "$D/local.db" -j 2 --progress none || fail "the local sweep failed"

python3 - "$D/merged.db" "$D/local.db" <<'PY' || fail "the merged database differs from the local run"
import sqlite3, sys
# Content of a results database: per run key, the run's identity and every summary value.
def content(path):
    db = sqlite3.connect(path)
    db.row_factory = sqlite3.Row
    rows = db.execute("SELECT runs.run_key, runs.status, runs.seed, runs.run_index, runs.scenario_yaml, summaries.* "
                      "FROM runs JOIN summaries ON summaries.run_id = runs.id").fetchall()
    out = {}
    for r in rows:
        d = dict(r)
        d.pop("run_id")
        out[d["run_key"]] = d
    return out
a, b = content(sys.argv[1]), content(sys.argv[2])
if len(a) != 8 or set(a) != set(b):
    sys.exit(f"run keys differ: {len(a)} merged, {len(b)} local")
for k in a:
    if a[k] != b[k]:
        diff = [c for c in a[k] if a[k][c] != b[k].get(c)]
        sys.exit(f"run {k[:12]} differs in {diff}")
print(f"slurm_test: merged database equals the local run: {len(a)} runs, {len(next(iter(a.values())))} values each")
PY
echo "slurm_test: PASS"
