#!/usr/bin/env bash
# The figures of docs/benchmarks.md, section "KLT at the hardware's limit (issue 15, helper
# klt3)", in one device call, for binaries built on dev: BIN/before (main's tip) and BIN/after
# (this work) klt_cuda_bench, BIN/after and BIN/nofma klt_cuda_test (the FMA build and the
# -fmad=false build). In order of importance, each result appended to OUT/results.txt at once
# (a call cut short keeps what it measured): before/after benchmarks (push at 640x360 and
# 1280x720 with 1024 and 8192 tracks, the batched throughput with the per-kernel times), the
# bit-exact tests, Nsight Compute on the fused tracking kernel (after: register and staged
# forms, then before), the tests of the FMA build, the OpenCV peer on the dumped cases, a second
# before/after pair at 1280x720, the resource usage and SASS of the new kernels.
#   bench/klt_limit_h200.sh BIN OUT
# The second call (`bench/klt_limit_h200.sh BIN OUT confirm`): BIN/mid holds the klt_cuda_bench
# of the first call's tree, BIN/after the final one: the tests of both builds, the three
# benchmarks in turn, Nsight Compute on the final staged and register forms, compute-sanitizer
# racecheck and memcheck on the staged form (its shared-memory stage has no barrier).
set -u
BIN=$1 OUT=$2 MODE=${3:-full}
mkdir -p "$OUT"
source "$(dirname "$0")/../scripts/device_lib.sh"  # run, collect, device_clock, stamp, young
export OMP_WAIT_POLICY=passive
device_clock  # T0, the GPU line; stamp and young (scripts/device_lib.sh)
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
SECTIONS="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section InstructionStats --section MemoryWorkloadAnalysis"
ONE="--width 1280 --tracks 1024 --no-throughput --reps 3"
profile() {  # profile NAME BINARY KERNEL: the first fused tracking kernel at 1280x720, 1024 tracks
  [ -n "$NCU" ] || return
  timeout 60 "$NCU" --clock-control none -k regex:trackFusedKernel -c 1 $SECTIONS \
    "$2" $ONE --kernels "$3" >"$OUT/ncu_$1.txt" 2>&1
  stamp "ncu $1 rc $?"
}
if [ "$MODE" = confirm ]; then
  collect test_nofma 60 "$BIN/nofma/klt_cuda_test"
  collect bench_after 60 "$BIN/after/klt_cuda_bench" --tracks 1024,8192 \
    --kernels warp,warp-shared,warp-staged
  collect bench_mid 30 "$BIN/mid/klt_cuda_bench" --width 1280 --tracks 1024 \
    --kernels warp,warp-staged --no-throughput
  collect bench_before 30 "$BIN/before/klt_cuda_bench" --width 1280 --tracks 1024 \
    --kernels warp,warp-shared --no-throughput
  collect test_fma 60 "$BIN/after/klt_cuda_test"
  profile after_staged "$BIN/after/klt_cuda_bench" warp-staged
  profile after_warp "$BIN/after/klt_cuda_bench" warp
  for r in 2 3; do
    collect bench_after_$r 30 "$BIN/after/klt_cuda_bench" --width 1280 --tracks 1024 \
      --kernels warp,warp-staged --no-throughput
    collect bench_mid_$r 30 "$BIN/mid/klt_cuda_bench" --width 1280 --tracks 1024 \
      --kernels warp,warp-staged --no-throughput
    collect bench_before_$r 30 "$BIN/before/klt_cuda_bench" --width 1280 --tracks 1024 \
      --kernels warp --no-throughput
  done
  SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
  F="--gtest_filter=CudaCases.FailureCases"
  if [ -n "$SAN" ] && young 100; then
    timeout 40 "$SAN" --tool racecheck "$BIN/after/klt_cuda_test" "$F" 2>&1 | tail -5 \
      >"$OUT/racecheck.txt"
    stamp "racecheck rc $?"
  fi
  if [ -n "$SAN" ] && young 150; then
    timeout 40 "$SAN" --tool memcheck "$BIN/after/klt_cuda_test" "$F" 2>&1 | tail -5 \
      >"$OUT/memcheck.txt"
    stamp "memcheck rc $?"
  fi
  stamp done
  exit 0
fi
DUMP=$(mktemp -d)
collect bench_after 90 "$BIN/after/klt_cuda_bench" --tracks 1024,8192 \
  --kernels warp,warp-shared,warp-staged --dump "$DUMP"
collect bench_before 90 "$BIN/before/klt_cuda_bench" --tracks 1024,8192 --kernels warp,warp-shared
collect test_nofma 120 "$BIN/nofma/klt_cuda_test"
stamp "benchmarks and the -fmad=false tests done"
profile after_warp "$BIN/after/klt_cuda_bench" warp
young 150 && profile after_staged "$BIN/after/klt_cuda_bench" warp-staged
young 160 && profile before_warp "$BIN/before/klt_cuda_bench" warp
young 170 && collect test_fma 120 "$BIN/after/klt_cuda_test"
if young 190 && python3 -c "import cv2" 2>/dev/null; then
  timeout 40 python3 "$(dirname "$0")/klt_opencv_pyrlk.py" "$DUMP" --threads 16 \
    >"$OUT/opencv.json" 2>>"$OUT/log.txt"
  stamp "opencv rc $?"
fi
rm -rf "$DUMP"
young 200 && collect bench_after_2 60 "$BIN/after/klt_cuda_bench" --width 1280 --tracks 1024 \
  --kernels warp,warp-shared,warp-staged
young 210 && collect bench_before_2 60 "$BIN/before/klt_cuda_bench" --width 1280 --tracks 1024 \
  --kernels warp,warp-shared --no-throughput
CUOBJDUMP=$(command -v cuobjdump || ls /usr/local/cuda/bin/cuobjdump 2>/dev/null)
if [ -n "$CUOBJDUMP" ]; then
  "$CUOBJDUMP" -res-usage "$BIN/after/klt_cuda_bench" 2>&1 | grep -A1 "track" >"$OUT/res_usage.txt"
  "$CUOBJDUMP" -sass "$BIN/after/klt_cuda_bench" 2>/dev/null | gzip >"$OUT/sass_after.txt.gz"
fi
stamp done
