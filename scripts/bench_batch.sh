#!/usr/bin/env bash
# Throughput of `vidmap batch --all`: items reconstructed per minute of wall time, for 1 and 2
# CPU workers (mode cpu) or for 1 GPU and every visible GPU (mode gpu), on N synthetic videos
# rendered once (SIZE frames of WxH, an orbit with known cameras). Prints one JSON line a
# configuration.
#
#   scripts/bench_batch.sh [vidmap] [N=8] [cpu|gpu] [FRAMES=12] [W=200] [H=150]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
vidmap=$(realpath "${1:-$root/build/src/vidmap/cli/vidmap}")
n=${2:-8}
mode=${3:-cpu}
frames=${4:-12}
w=${5:-200}
h=${6:-150}
T=$(mktemp -d /tmp/vidmap_bench_batch.XXXXXX)
trap 'rm -rf "$T"' EXIT
export OMP_WAIT_POLICY=passive
echo "input,output,all_frames" >"$T/m.csv"
for i in $(seq 0 $((n - 1))); do
  "$vidmap" synth "$T/v$i" --frames "$frames" --width "$w" --height "$h" --seed $((i + 1)) \
    --path orbit >/dev/null
  echo "v$i/rgb,out/v$i,true" >>"$T/m.csv"
done
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
run() {  # LABEL WORKERS ARGS...
  local label=$1 workers=$2
  shift 2
  rm -rf "$T/out" "$T"/.v*.lock
  local TIMEFORMAT='%R %U %S' times
  # Wall time, and the CPU time (user + sys) of the batch and its children.
  times=$({ time "$vidmap" batch "$T/m.csv" --all "$@" >"$T/log.txt" 2>&1; } 2>&1) ||
    { cat "$T/log.txt" >&2; exit 1; }
  grep -q "$n done" "$T/log.txt" || { cat "$T/log.txt" >&2; exit 1; }
  echo "$times" | awk -v l="$label" -v k="$workers" -v n="$n" -v c="$commit" \
    -v f="$frames" -v w="$w" -v h="$h" -v load="$(cut -d' ' -f1 /proc/loadavg)" '{
      printf "{\"bench\": \"batch_all\", \"config\": \"%s\", \"workers\": %d, \"items\": %d, " \
             "\"frames\": %d, \"size\": \"%dx%d\", \"seconds\": %.2f, \"items_per_min\": %.2f, " \
             "\"cpu_seconds_per_item\": %.2f, \"load_average\": %s, \"commit\": \"%s\"}\n",
             l, k, n, f, w, h, $1, 60 * n / $1, ($2 + $3) / n, load, c }'
}
if [ "$mode" = cpu ]; then
  run cpu-1 1 --jobs 1 --no-gpu
  run cpu-2 2 --jobs 2 --no-gpu
else
  all=$(nvidia-smi -L | wc -l)
  CUDA_VISIBLE_DEVICES=0 run gpu-1 1
  [ "$all" -gt 1 ] && run "gpu-$all" "$all"
  # Two items per GPU at once (overlap decode and CPU stages with another item's GPU work).
  run "gpu-$all-x2" $((2 * all)) --jobs $((2 * all))
fi
