#!/usr/bin/env bash
# Design 7.3: vidmap's KLT against OpenCV calcOpticalFlowPyrLK on the design's synthetic pair
# and on the Middlebury flow pairs (../shared/data/middlebury-flow), then the CPU push rate of
# both. Needs a build with OpenCV (the tools are skipped without it). Writes JSON to $OUT
# (default build/klt-compare).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/klt-compare}
cmake -S . -B "$BUILD" -G Ninja >/dev/null
cmake --build "$BUILD" -j2 --target klt_opencv_compare klt_cpu_bench
mkdir -p "$OUT"
# On a shared machine OpenMP threads must not spin while they wait.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
"$BUILD/bench/klt_opencv_compare" --json "$OUT/compare.json" ${VIDMAP_DATA:+--data "$VIDMAP_DATA"}
"$BUILD/bench/klt_cpu_bench" | tee "$OUT/cpu_bench.json"
echo "written: $OUT/compare.json $OUT/cpu_bench.json"
