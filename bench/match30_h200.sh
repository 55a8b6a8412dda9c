#!/usr/bin/env bash
# The figures of docs/benchmarks.md, section "Matching 4096 x 4096 in 0.3 ms of wall (issue 15,
# helper match30)", in one device call, for binaries built on dev: BIN/after (this work:
# features_cuda_test in its build folder's layout, features_bench built without OpenCV) and
# BIN/before (the branch point's features_bench without OpenCV); BIN/nofma optionally
# (features_cuda_test built with -DVIDMAP_CUDA_NO_FMA=ON). features_cuda_test first, then
# ROUNDS rounds of features_bench (4096 x 4096: host-input, device-resident and host-decision
# rows, and the wall's breakdown), after and before alternately; results to OUT/results.txt.
#   bash bench/match30_h200.sh BIN OUT [ROUNDS]   (LD_LIBRARY_PATH with libjpeg.so.62)
set -u
BIN=$1 OUT=$2 ROUNDS=${3:-3}
mkdir -p "$OUT"
# run, collect, device_clock, stamp, young (DEVICE_LIB: where a copy of the script runs outside
# the repository)
source "${DEVICE_LIB:-$(dirname "$0")/../scripts/device_lib.sh}"
export OMP_WAIT_POLICY=passive
device_clock
tests() {  # tests NAME BINARY: its PASSED/FAILED lines and printed comparisons to results.txt
  (cd "$(dirname "$2")" && timeout 60 "./$(basename "$2")" >"$OUT/$1.full" 2>&1)
  stamp "$1 rc $?"
  echo "== $1" >>"$OUT/results.txt"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests ran|\[ [a-z ]+ \]" "$OUT/$1.full" \
    >>"$OUT/results.txt"
  grep -E -A4 "Failure" "$OUT/$1.full" | head -40 >>"$OUT/results.txt"
}
tests features_cuda_test "$BIN/after/build/src/vidmap/features/features_cuda_test"
# The same tests built with -fmad=false (BIN/nofma, when carried).
t=$BIN/nofma/build/src/vidmap/features/features_cuda_test
[ -x "$t" ] && tests features_cuda_test_nofma "$t"
for r in $(seq 1 "$ROUNDS"); do
  young 120 || break
  collect "bench_after_$r" 30 "$BIN/after/features_bench" --no-cpu --repeat 41
  collect "bench_before_$r" 30 "$BIN/before/features_bench" --no-cpu --repeat 41
  stamp "round $r"
done
stamp done
rm -f "$OUT"/*.full
