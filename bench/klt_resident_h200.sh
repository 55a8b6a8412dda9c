#!/usr/bin/env bash
# The figures of docs/benchmarks.md, section "KLT push with the tables on the device (issue 15,
# helper kltwall28)", in one device call, for binaries built on dev: BIN/fma (klt_cuda_test,
# klt_cuda_bench) and BIN/nofma (klt_cuda_test built with -DVIDMAP_CUDA_NO_FMA=ON). In order
# of importance, each result appended to OUT/results.txt at once (a call cut short keeps what
# it measured; the device tool returns 8 files): the -fmad=false tests (bit-equality to the
# CPU, the pipelined push equal to push()), the push at 1280x720 with 1024 tracks (synchronous,
# klt4's pipelined order, the resident pipelined push, CudaBatchTracker's calls) with the
# OpenCV peer on the same frames and points, compute-sanitizer memcheck on the pipelined tests,
# the FMA tests, a second bench run, 8192 tracks, racecheck on the two-in-flight test.
#   bench/klt_resident_h200.sh BIN OUT
set -u
BIN=$1 OUT=$2
mkdir -p "$OUT"
source "$(dirname "$0")/../scripts/device_lib.sh"  # run, collect, device_clock, stamp, young
export OMP_WAIT_POLICY=passive
device_clock  # T0, the GPU line; stamp and young (scripts/device_lib.sh)
tests() {  # tests NAME SECONDS BINARY [ARGS]: the summary and any failure, into results.txt
  local name=$1 limit=$2
  shift 2
  timeout "$limit" "$@" >"$OUT/$name.full" 2>&1
  stamp "$name rc $?"
  {
    echo "== $name"
    grep -E "PASSED|FAILED|tests ran|Failure|Expected|Which is|ERROR SUMMARY|RACECHECK SUMMARY|\
hazard|Invalid|Error|pipelined-modes .* push 9" "$OUT/$name.full" | head -120
  } >>"$OUT/results.txt"
  rm -f "$OUT/$name.full"
}
PIPE="--gtest_filter=CudaBatch.Pipelined*:CudaBatch.EngineHolds*"
tests test_nofma 120 "$BIN/nofma/klt_cuda_test"
DUMP=$(mktemp -d)
collect bench_1024 60 "$BIN/fma/klt_cuda_bench" --width 1280 --tracks 1024 --reps 50 \
  --kernels warp,warp-staged --no-throughput --dump "$DUMP"
if python3 -c "import cv2" 2>/dev/null; then
  timeout 30 python3 "$(dirname "$0")/klt_opencv_pyrlk.py" "$DUMP" --threads 16 \
    >"$OUT/opencv.json" 2>>"$OUT/log.txt"
  stamp "opencv rc $?"
fi
rm -rf "$DUMP"
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
[ -n "$SAN" ] && young 150 && tests memcheck 110 "$SAN" --tool memcheck "$BIN/fma/klt_cuda_test" "$PIPE"
young 180 && tests test_fma 90 "$BIN/fma/klt_cuda_test"
young 200 && collect bench_1024_2 30 "$BIN/fma/klt_cuda_bench" --width 1280 --tracks 1024 \
  --reps 50 --kernels warp --no-throughput
young 215 && collect bench_8192 40 "$BIN/fma/klt_cuda_bench" --width 1280 --tracks 8192 \
  --kernels warp,warp-shared --no-throughput
[ -n "$SAN" ] && young 230 && tests racecheck 30 "$SAN" --tool racecheck \
  "$BIN/fma/klt_cuda_test" --gtest_filter=CudaBatch.EngineHolds*
stamp done
