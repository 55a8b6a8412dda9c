#!/usr/bin/env bash
# `vidmap batch --slurm` on a real Slurm: starts a private single-node cluster (munged,
# slurmctld and slurmd on this host, a generated slurm.conf, everything under one temporary
# folder, ports of its own), then
#   1. submits the generated job array for 4 small synthetic videos, one of them broken, and
#      checks 3 complete models, 1 recorded failure (OUT/failed.json) and batch-summary;
#   2. cancels an array in the middle (scancel), resubmits it, and checks that every item ends
#      complete, each reconstructed exactly once (the items complete before the cancellation
#      are skipped: their run.json is untouched and their logs say so).
# All daemons are stopped at the end (trap). Exit 77 (ctest: skipped) with the reason when
# Slurm cannot start here: not installed, not root (slurmd starts jobs as their user), or a
# daemon that does not come up.
#
#   scripts/slurm_ci_test.sh [path/to/vidmap]      (default: build/src/vidmap/cli/vidmap)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
vidmap=$(realpath "${1:-$root/build/src/vidmap/cli/vidmap}")
skip() {
  echo "slurm_ci_test: SKIPPED: $*"
  exit 77
}
fail() {
  echo "slurm_ci_test: FAILED: $*" >&2
  exit 1
}
[ -x "$vidmap" ] || fail "no vidmap binary at $vidmap"
for t in munged mungekey slurmctld slurmd sbatch squeue scancel scontrol; do
  command -v "$t" >/dev/null || skip "$t is not installed (Debian: apt-get install slurm-wlm munge; scripts/setup.sh installs them)"
done
[ "$(id -u)" = 0 ] || skip "slurmd must run as root (it starts each job as its user); run as root, as CI does"

T=$(mktemp -d /tmp/vidmap_slurm_ci.XXXXXX)
chmod 755 "$T"
pids=()
cleanup() {
  local rc=$?
  # Jobs first (their processes belong to slurmd), then the daemons, newest first.
  [ -f "$T/slurm.conf" ] && SLURM_CONF=$T/slurm.conf scancel --quiet --user=root 2>/dev/null || true
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
  done
  if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
    for f in slurmctld.log slurmd.log munged.log; do
      [ -f "$T/$f" ] && { echo "---- $f (last lines)"; tail -n 25 "$T/$f"; }
    done
    for f in "$T"/work/logs/*.log; do [ -f "$f" ] && { echo "---- $f"; tail -n 15 "$f"; }; done
  fi
  rm -rf "$T"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- a private Slurm -------------------------------------------------------------------------
host=$(hostname -s)
port=$((20000 + RANDOM % 20000))
mem=$(awk '/MemTotal/ {print int($2 / 1024 / 2)}' /proc/meminfo)
mkdir -p "$T/state" "$T/spool" "$T/munge"
chmod 700 "$T/munge"
mungekey --create --keyfile="$T/munge/munge.key" 2>/dev/null ||
  { dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none && chmod 600 "$T/munge/munge.key"; }
munged --foreground --force --key-file="$T/munge/munge.key" --socket="$T/munge/munge.sock" \
  --pid-file="$T/munge/munged.pid" --seed-file="$T/munge/seed" --log-file="$T/munged.log" \
  >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$T/munge/munge.sock" ] && break; sleep 0.1; done
[ -S "$T/munge/munge.sock" ] || skip "munged did not start: $(tail -n 3 "$T/munged.log" 2>/dev/null)"

cat >"$T/slurm.conf" <<EOF
# A single-node cluster for the test: no cgroups (CI runs in a container as root), no
# accounting database.
ClusterName=vidmapci
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$T/munge/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2
ReturnToService=2
KillWait=5
MinJobAge=600
InactiveLimit=0
NodeName=$host NodeAddr=127.0.0.1 CPUs=2 RealMemory=$mem State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$T/slurm.conf
slurmctld -D -i -f "$SLURM_CONF" >"$T/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$host" >"$T/slurmd.out" 2>&1 &
pids+=($!)
state=""
for _ in $(seq 60); do
  state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
  case "$state" in idle*|mixed*|allocated*) break ;; esac
  sleep 0.5
done
case "$state" in
  idle*|mixed*|allocated*) ;;
  *) skip "the node did not become idle (state '$state'): $(tail -n 3 "$T/slurmctld.log" "$T/slurmd.log" 2>/dev/null | tr '\n' ' ')" ;;
esac
echo "slurm_ci_test: Slurm $(sinfo -V | awk '{print $2}') up on $host (port $port), node $state"

# ---- inputs ---------------------------------------------------------------------------------
W=$T/work
mkdir -p "$W/videos"
synth() {  # NAME SEED: a short video (or image folder without FFmpeg) with known cameras
  if "$vidmap" synth "$W/frames_$1" --frames 12 --width 200 --height 150 --seed "$2" \
      --path orbit --video "$W/videos/$1.mkv" >/dev/null 2>&1; then
    echo "videos/$1.mkv"
  else
    rm -rf "$W/frames_$1"
    "$vidmap" synth "$W/videos/$1" --frames 12 --width 200 --height 150 --seed "$2" \
      --path orbit >/dev/null
    echo "videos/$1/rgb"
  fi
}
in=()
for i in 0 1 2 3 4 5; do in+=("$(synth "s$i" $((i + 1)))"); done
# A broken video: a truncated file with the size of a real one and garbage bytes.
head -c 20000 /dev/urandom >"$W/videos/broken.mkv"
{
  echo "input,output,all_frames,options"
  echo "${in[0]},models/a,true,"
  echo "${in[1]},models/b,true,--width 200"
  echo "videos/broken.mkv,models/broken,true,"
  echo "${in[2]},models/c,true,\"--max-features 2000\""
} >"$W/first.csv"

count() { grep -c "$1" "$2" || true; }
wait_job() {  # JOBID TIMEOUT_S
  local end=$((SECONDS + $2))
  while [ -n "$(squeue -h -j "$1" 2>/dev/null)" ]; do
    [ $SECONDS -lt $end ] || fail "job $1 still running after $2 s: $(squeue -j "$1")"
    sleep 1
  done
}

# ---- 1. an array of 4 items, one broken ----------------------------------------------------
t0=$SECONDS
"$vidmap" batch "$W/first.csv" --slurm --gpus-per-task 0 --cpus-per-task 1 --max-parallel 2 \
  --time 00:05:00 -o "$W/first.sbatch"
grep -q '^#SBATCH --array=0-3%2$' "$W/first.sbatch" || fail "no array line in the script"
job=$(sbatch --parsable "$W/first.sbatch")
echo "slurm_ci_test: submitted array $job (4 items)"
wait_job "$job" 240
"$vidmap" batch-summary "$W/first.csv" --format csv >"$W/first_summary.csv"
cat "$W/first_summary.csv"
[ "$(count ',done,' "$W/first_summary.csv")" = 3 ] || fail "expected 3 done items"
[ "$(count ',failed,' "$W/first_summary.csv")" = 1 ] || fail "expected 1 failed item"
grep -q '^2,.*,failed,' "$W/first_summary.csv" || fail "item 2 (the broken video) is not the failed one"
for m in a b c; do
  [ -f "$W/models/$m/run.json" ] && [ -f "$W/models/$m/sparse/0/images.bin" ] ||
    fail "models/$m is not a complete model"
done
[ -f "$W/models/broken/failed.json" ] || fail "no failed.json for the broken item"
grep -q '"exit_code": 1' "$W/models/broken/failed.json" || fail "failed.json lacks the exit code"
[ ! -e "$W/models/broken/sparse" ] || fail "a partial model was left for the broken item"
[ "$(ls "$W"/logs/*_"$job"_*.log | wc -l)" = 4 ] || fail "expected 4 per-task logs"
# Slurm saw the broken item's task fail and the others succeed.
# (Output captured first: with pipefail, grep -q closing the pipe early fails the writer.)
tasks=$(scontrol show job "$job")
grep -q 'ExitCode=1:0' <<<"$tasks" || fail "the broken task did not exit 1"
echo "slurm_ci_test: part 1 passed in $((SECONDS - t0)) s"

# ---- 2. cancel in the middle, resubmit ------------------------------------------------------
t0=$SECONDS
{
  echo "input,output,all_frames"
  for i in 0 1 2 3; do echo "${in[$((i + 2))]},models/r$i,true"; done
} >"$W/resume.csv"
"$vidmap" batch "$W/resume.csv" --slurm --gpus-per-task 0 --cpus-per-task 2 --max-parallel 1 \
  -o "$W/resume.sbatch"
job=$(sbatch --parsable "$W/resume.sbatch")
# Wait until item 0 is complete and item 1 is running, then cancel the whole array.
end=$((SECONDS + 120))
until [ -f "$W/models/r0/run.json" ] && [ -e "$W/models/.r1.lock" ]; do
  [ $SECONDS -lt $end ] || fail "item 0 of the resumable array did not complete"
  sleep 0.2
done
scancel "$job"
wait_job "$job" 60
"$vidmap" batch-summary "$W/resume.csv" --format csv >"$W/resume_cancelled.csv"
cat "$W/resume_cancelled.csv"
[ "$(count ',done,' "$W/resume_cancelled.csv")" -lt 4 ] || fail "the cancellation came too late"
[ "$(count ',failed,' "$W/resume_cancelled.csv")" = 0 ] || fail "a cancelled item was recorded as failed"
declare -A before
for i in 0 1 2 3; do
  if [ -f "$W/models/r$i/run.json" ]; then before[$i]=$(stat -c %Y.%s "$W/models/r$i/run.json"); fi
done
echo "slurm_ci_test: cancelled with items ${!before[*]} complete"
job2=$(sbatch --parsable "$W/resume.sbatch")
wait_job "$job2" 240
"$vidmap" batch-summary "$W/resume.csv" --format csv >"$W/resume_final.csv"
cat "$W/resume_final.csv"
[ "$(count ',done,' "$W/resume_final.csv")" = 4 ] || fail "not every item is complete after the resubmission"
for i in "${!before[@]}"; do
  [ "$(stat -c %Y.%s "$W/models/r$i/run.json")" = "${before[$i]}" ] ||
    fail "item $i was complete before the cancellation and was redone"
done
# Each item reconstructed exactly once over both submissions: one "done" line in the logs.
for i in 0 1 2 3; do
  n=$(cat "$W"/logs/*_"$job"_*.log "$W"/logs/*_"$job2"_*.log 2>/dev/null | grep -c "^batch: item $i done" || true)
  [ "$n" = 1 ] || fail "item $i was reconstructed $n times"
done
for i in "${!before[@]}"; do
  grep -q "^batch: item $i skipped" "$W"/logs/*_"$job2"_"$i".log || fail "item $i was not skipped on resubmission"
done
left=$(ls -a "$W/models")
grep -q '\.tmp-' <<<"$left" && fail "a temporary folder of a cancelled run was left behind"
echo "slurm_ci_test: part 2 passed in $((SECONDS - t0)) s"
echo "slurm_ci_test: PASSED"
