#!/usr/bin/env bash
# Issue 15, SIFT kernels on the H200 (device tool; docs/benchmarks.md, "Kernels: SIFT's frame
# forked per octave ... (issue 15, helper kernels2)"): builds this tree's features_bench and
# features_cuda_test (FMA and -fmad=false) and the features_bench of BEFORE (and of MID, a tree
# between, when given) side by side; runs the
# CUDA feature tests of both builds, the benchmark after/before in turn (twice each), Nsight
# Compute on the changed kernels of both trees and compute-sanitizer on the new tests. Each step
# refreshes the tarball under $OUT, so a call cut short still brings back what ran.
# Usage (from the tree's root, after `source .device/setup.sh`):
#   BEFORE=dir [MID=dir] bash scripts/kernels2_h200.sh
set -u
OUT=${OUT:-/tmp/kernels2_out}
L=$OUT/k
mkdir -p "$L"
S=$L/summary.txt
export OMP_WAIT_POLICY=passive
echo "host cores: $(nproc); $(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader)" >>$S
t0=$(date +%s)
stamp() { echo "[$1] $(($(date +%s) - t0)) s" >>$S; (cd $OUT && tar czf kernels2.tgz k && cp k/summary.txt summary.txt); }
BEFORE=${BEFORE:-}
MID=${MID:-}
source "$(dirname "$0")/device_lib.sh"
device_build . build-nofma ON features_cuda_test &
device_build . build-fma OFF features_bench features_cuda_test &
[ -n "$BEFORE" ] && device_build "$BEFORE" build-before OFF features_bench &
[ -n "$MID" ] && device_build "$MID" build-mid OFF features_bench &
wait
stamp build
for v in nofma fma; do
  b=build-$v/src/vidmap/features/features_cuda_test
  [ -x $b ] && { timeout 150 $b >$L/test_features_cuda_$v.log 2>&1; echo "[features_cuda_test $v] rc=$? $(grep -E '^\[  (PASSED|FAILED)' $L/test_features_cuda_$v.log | tr '\n' ' ')" >>$S; } &
done
wait
stamp tests
for r in 1 2; do
  for w in after mid before; do
    d=build-$w
    [ $w = after ] && d=build-fma
    [ -x $d/bench/features_bench ] || continue
    timeout 60 $d/bench/features_bench --gpu-only --repeat 21 >$L/bench_${w}_$r.json 2>>$S
    echo "[bench $w $r] rc=$?" >>$S
  done
done
stamp bench
N=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
sec="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis"
nc() {
  local name=$1
  shift
  timeout 90 $N --clock-control none "$@" >$L/ncu_$name.txt 2>&1
  echo "[ncu $name] rc=$? $(grep -c 'Context [0-9]*, Stream' $L/ncu_$name.txt) kernels" >>$S
}
# The first 1280x720 frame (launch by launch: the profiler is on for the first calls).
nc after $sec -k "regex:kDescribe|kFromBytes" -c 12 build-fma/bench/features_bench --gpu-only --repeat 1
[ -n "$MID" ] && nc mid $sec -k "regex:kDescribe" -c 1 build-mid/bench/features_bench --gpu-only --repeat 1
nc before $sec -k "regex:kDescribe" -c 1 build-before/bench/features_bench --gpu-only --repeat 1
stamp ncu
t=build-nofma/src/vidmap/features/features_cuda_test
for tool in memcheck racecheck; do
  f='SiftCuda.ByteFramesGiveTheFeaturesOfTheirFloatImage:SiftCuda.TiesAtTheCutGoAsOnTheCpu'
  [ $tool = memcheck ] && f=$f:SiftCuda.KeypointsAndDescriptorsAgreeWithTheCpu:SiftCuda.MoreExtremaThanRoomAreRedone
  timeout ${SAN_TIMEOUT:-60} compute-sanitizer --tool $tool --error-exitcode 9 $t \
    --gtest_filter=$f >$L/sanitize_sift_$tool.log 2>&1
  echo "[sanitize sift $tool] rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/sanitize_sift_$tool.log | tail -1)" >>$S
  stamp sanitize_$tool
done
cat $OUT/summary.txt
