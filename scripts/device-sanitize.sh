#!/usr/bin/env bash
# Runs on the GPU machine (device tool, carry [".device"]): builds every CUDA test binary
# (-fmad=false variant) and runs each whole under compute-sanitizer memcheck and racecheck,
# all at once (the sanitizers are host-bound; the H200 host has 16 cores). Logs go to $OUT,
# one line per binary and tool to $OUT/summary.txt.
# Usage: bash scripts/device-sanitize.sh [seconds per run, default 420]
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
OUT=${OUT:-/tmp/vidmap_out}
limit=${1:-420}
mkdir -p "$OUT"
source .device/setup.sh >> "$OUT/summary.txt" 2>&1
export OMP_WAIT_POLICY=passive OMP_NUM_THREADS=2
tests="ba_cuda_test features_cuda_test geometry_cuda_test gpu_smoke_test io_gpu_test
  klt_cuda_test mvs_cuda_test pipeline_gpu_test"
cmake -S . -B build-san -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DVIDMAP_CUDA_NO_FMA=ON > "$OUT/build.log" 2>&1 &&
  cmake --build build-san -j 16 -t $tests >> "$OUT/build.log" 2>&1
echo "[build] rc=$? commit $(git rev-parse --short HEAD 2>/dev/null)" >> "$OUT/summary.txt"
for t in $tests; do
  bin=$(find build-san/src -name "$t" -type f -perm -u+x | head -1)
  [ -n "$bin" ] || { echo "[$t] not built" >> "$OUT/summary.txt"; continue; }
  for tool in memcheck racecheck; do
    (
      start=$(date +%s)
      # --error-exitcode: a finding fails the run; tests run from the binary's folder (data paths).
      timeout "$limit" compute-sanitizer --tool $tool --error-exitcode 9 "$bin" \
        > "$OUT/${t}_$tool.log" 2>&1
      rc=$?
      end=$(date +%s)
      echo "[$t $tool] rc=$rc $((end - start)) s; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' \
        "$OUT/${t}_$tool.log" | tail -1); $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' \
        "$OUT/${t}_$tool.log" | tr '\n' ' ')" >> "$OUT/summary.txt"
    ) &
  done
done
wait
cat "$OUT/summary.txt"
