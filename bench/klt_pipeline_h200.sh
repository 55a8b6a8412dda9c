#!/usr/bin/env bash
# The figures of docs/benchmarks.md, section "KLT push and batch at the goals (issue 15, helper
# klt4)", in one device call, for binaries built on dev: BIN/before (main's tip) and BIN/after
# (this work) klt_cuda_bench, BIN/after and BIN/nofma klt_cuda_test (the FMA build and the
# -fmad=false build). In order of importance, each result appended to OUT/results.txt at once
# (a call cut short keeps what it measured): the -fmad=false tests (bit-equality to the CPU,
# the pipelined push equal to push()), after/before at 1280x720 (push and pipelined push, 1024
# and 8192 tracks, the batched throughput), compute-sanitizer racecheck and memcheck, the FMA
# tests, Nsight Compute on the fused tracking kernel, the OpenCV peer, a second after/before
# pair, 640x360.
#   bench/klt_pipeline_h200.sh BIN OUT
set -u
BIN=$1 OUT=$2
mkdir -p "$OUT"
source "$(dirname "$0")/../scripts/device_lib.sh"  # run, collect, device_clock, stamp, young
export OMP_WAIT_POLICY=passive
device_clock  # T0, the GPU line; stamp and young (scripts/device_lib.sh)
tests() {  # tests NAME BINARY: the agreement lines and the summary
  timeout 90 "$2" >"$OUT/$1.full" 2>&1
  stamp "$1 rc $?"
  grep -E "^\[(agree|pipelined)|PASSED|FAILED|OK \]|tests ran" "$OUT/$1.full" >"$OUT/$1.txt"
  rm -f "$OUT/$1.full"
}
tests test_nofma "$BIN/nofma/klt_cuda_test"
DUMP=$(mktemp -d)
collect bench_after 120 "$BIN/after/klt_cuda_bench" --width 1280 --tracks 1024,8192 \
  --kernels warp,warp-shared,warp-staged,warp-staged-16w,warp-staged-20w --dump "$DUMP"
collect bench_before 60 "$BIN/before/klt_cuda_bench" --width 1280 --tracks 1024,8192 \
  --kernels warp,warp-shared,warp-staged
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
F="--gtest_filter=CudaCases.FailureCases:CudaBatch.PipelinedEqualsPush"
if [ -n "$SAN" ]; then
  for tool in racecheck memcheck; do
    timeout 60 "$SAN" --tool $tool "$BIN/after/klt_cuda_test" "$F" >"$OUT/$tool.full" 2>&1
    stamp "$tool rc $?"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard|PASSED|FAILED" "$OUT/$tool.full" | tail -8 \
      >"$OUT/$tool.txt"
    rm -f "$OUT/$tool.full"
  done
fi
young 150 && tests test_fma "$BIN/after/klt_cuda_test"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
if [ -n "$NCU" ] && young 160; then
  timeout 40 "$NCU" --clock-control none -k regex:trackFusedKernel -c 1 --section SpeedOfLight \
    --section Occupancy --section LaunchStats --section WarpStateStats \
    "$BIN/after/klt_cuda_bench" --width 1280 --tracks 8192 --no-throughput --reps 3 \
    --kernels warp-staged >"$OUT/ncu_8192_staged.txt" 2>&1
  stamp "ncu rc $?"
  timeout 40 "$NCU" --clock-control none -k regex:trackFusedKernel -c 1 --section SpeedOfLight \
    --section Occupancy --section LaunchStats --section WarpStateStats \
    "$BIN/after/klt_cuda_bench" --width 1280 --tracks 8192 --no-throughput --reps 3 \
    --kernels warp-staged-16w >"$OUT/ncu_8192_staged16.txt" 2>&1
  stamp "ncu 16w rc $?"
fi
if young 175 && python3 -c "import cv2" 2>/dev/null; then
  timeout 30 python3 "$(dirname "$0")/klt_opencv_pyrlk.py" "$DUMP" --threads 16 \
    >"$OUT/opencv.json" 2>>"$OUT/log.txt"
  stamp "opencv rc $?"
fi
rm -rf "$DUMP"
young 190 && collect bench_after_2 30 "$BIN/after/klt_cuda_bench" --width 1280 --tracks 1024 \
  --kernels warp,warp-staged --no-throughput
young 195 && collect bench_before_2 30 "$BIN/before/klt_cuda_bench" --width 1280 --tracks 1024 \
  --kernels warp --no-throughput
young 200 && collect bench_after_640 40 "$BIN/after/klt_cuda_bench" --width 640 \
  --tracks 1024,8192 --kernels warp,warp-shared

CUOBJDUMP=$(command -v cuobjdump || ls /usr/local/cuda/bin/cuobjdump 2>/dev/null)
[ -n "$CUOBJDUMP" ] && "$CUOBJDUMP" -res-usage "$BIN/after/klt_cuda_bench" 2>&1 |
  grep -A1 "trackFusedKernel" >"$OUT/res_usage.txt"
stamp done
