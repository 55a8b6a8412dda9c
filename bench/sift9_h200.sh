#!/usr/bin/env bash
# The figures of docs/benchmarks.md, section "SIFT at 1080p and the matcher's wall (issue 15,
# helper sift9)", in one device call, for binaries built on dev (sm_90, OpenCV off so that they
# run there): BIN/after (FMA build of this work), BIN/nofma (-DVIDMAP_CUDA_NO_FMA=ON),
# BIN/before (features_bench of the branch point). In order of importance, each result
# appended to OUT/summary.txt at once: features_cuda_test and geometry_cuda_test in both builds;
# features_bench after (with the band sweep) and before; compute-sanitizer memcheck on
# features_cuda_test's band, RGB8 and matcher tests; an Nsight Systems trace of both trees'
# --gpu-only runs (the kernels and gaps of a frame), as CSV; the benchmarks again if time is
# left.
#   LD_LIBRARY_PATH=DIR_WITH_libjpeg.so.62 bash bench/sift9_h200.sh BIN OUT
set -u
B=$1 OUT=$2
S=$OUT/summary.txt
T0=$(date +%s)
el() { echo $(($(date +%s) - T0)); }
stamp() { echo "[$(el) s] $*" >>"$S"; }
export OMP_WAIT_POLICY=passive
export PATH="/usr/local/cuda/bin:$PATH"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader >>"$S"
echo "host cores: $(nproc)" >>"$S"
for v in after nofma; do
  (timeout 80 "$B/$v/features_cuda_test" >"$OUT/features_cuda_test_$v.log" 2>&1
   echo "[features_cuda_test $v] rc=$? $(grep -E '^\[  (PASSED|FAILED)' "$OUT/features_cuda_test_$v.log" | tr '\n' ' ')" >>"$S") &
  (timeout 60 "$B/$v/geometry_cuda_test" >"$OUT/geometry_cuda_test_$v.log" 2>&1
   echo "[geometry_cuda_test $v] rc=$? $(grep -E '^\[  (PASSED|FAILED)' "$OUT/geometry_cuda_test_$v.log" | tr '\n' ' ')" >>"$S") &
done
wait
stamp tests
bench() {  # bench ROUND [FLAGS]: after, then before
  local r=$1
  shift
  timeout 40 "$B/after/features_bench" --no-cpu "$@" --repeat 21 >"$OUT/bench_after_$r.json" 2>>"$S"
  stamp "bench after $r rc=$?"
  timeout 40 "$B/before/features_bench" --repeat 21 >"$OUT/bench_before_$r.json" 2>>"$S"
  stamp "bench before $r rc=$?"
}
bench 1 --bands-sweep
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
if [ -n "$SAN" ]; then
  timeout 50 "$SAN" --tool memcheck --error-exitcode 9 "$B/after/features_cuda_test" \
    --gtest_filter='SiftCuda.BandedUploadGivesTheSameFeatures:SiftCuda.RgbFramesGiveTheFeaturesOfTheirHostLuma:SiftCuda.GaussiansEqualTheCpu:MatchCuda.PlainAndGuidedAgreeWithTheCpu:MatchCuda.ManyAgreeWithTheCpu' \
    >"$OUT/memcheck.log" 2>&1
  stamp "memcheck rc=$? $(grep -E 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1) $(grep -E '^\[  (PASSED|FAILED)' "$OUT/memcheck.log" | tr '\n' ' ')"
fi
NSYS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
if [ -n "$NSYS" ]; then
  for v in after before; do
    [ "$(el)" -gt 95 ] && break
    timeout 40 "$NSYS" profile -t cuda --cuda-graph-trace=node -o "/tmp/nsys_$v" -f true \
      "$B/$v/features_bench" --gpu-only --repeat 2 >"$OUT/nsys_$v.log" 2>&1
    timeout 30 "$NSYS" stats -q --report cuda_gpu_trace --format csv -o "$OUT/nsys_$v" \
      "/tmp/nsys_$v.nsys-rep" >>"$OUT/nsys_$v.log" 2>&1
    stamp "nsys $v rc=$? $(ls "$OUT" | grep -c "nsys_$v.*csv") csv"
  done
else
  stamp "no nsys"
fi
[ "$(el)" -lt 110 ] && bench 2
stamp done
