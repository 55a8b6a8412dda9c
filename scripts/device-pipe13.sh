#!/usr/bin/env bash
# Runs on the GPU machine (device tool, carry [".device"]): builds vidmap and the gpu tests of
# the run record, the batched scorer and the CUDA reconstruction, runs them, and measures the
# kernel profiler's cost (a synthetic 640x480 orbit, CUDA, profiling on and off, twice each).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/vidmap_out}
mkdir -p "$OUT"
# .device is at the root of the tree that travels (this copy may sit in .xfer/NAME below it).
for d in . ../..; do [ -f $d/.device/setup.sh ] && { source $d/.device/setup.sh; break; }; done \
  > "$OUT/summary.txt" 2>&1
export OMP_WAIT_POLICY=passive
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  > "$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j 16 -t vidmap io_gpu_test pipeline_gpu_test geometry_cuda_test \
    >> "$OUT/build.log" 2>&1
echo "[build] rc=$? $(date -u +%T)" >> "$OUT/summary.txt"
B=build-gpu/src/vidmap
{
  $B/io/io_gpu_test
  $B/geometry/geometry_cuda_test
  $B/pipeline/pipeline_gpu_test
} > "$OUT/tests.log" 2>&1
grep -E '^\[  (PASSED|FAILED) |^\[  FAILED|^\[       OK' "$OUT/tests.log" >> "$OUT/summary.txt"
V=$B/cli/vidmap
$V synth /tmp/s --frames 150 --fps 30 > /dev/null 2>&1
for i in 1 2; do
  for p in on off; do
    f=""
    [ $p = off ] && f=--no-kernel-profile
    /usr/bin/time -f "[cost] profile $p run $i: %e s wall" $V reconstruct /tmp/s/rgb.txt \
      -o /tmp/o_${p}_$i -q --device cuda --all-frames $f >> "$OUT/summary.txt" 2>&1
  done
done
cp /tmp/o_on_1/run.json "$OUT/run_on.json"
cp /tmp/o_off_1/run.json "$OUT/run_off.json"
cp /tmp/o_on_2/run.json "$OUT/run_on2.json"
echo "[done] $(date -u +%T)" >> "$OUT/summary.txt"
