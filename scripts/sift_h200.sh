#!/usr/bin/env bash
# Issue 15, SIFT's per-frame path on the H200 (device tool; docs/benchmarks.md, "SIFT per-frame
# path"): builds this tree's features_bench and features_cuda_test (FMA and -fmad=false) and,
# with BEFORE=dir, that tree's features_bench; runs the SIFT GPU tests of both builds, the
# benchmark before/after in turn (twice each), Nsight Compute on the SIFT kernels and
# compute-sanitizer memcheck on the SIFT tests. Logs in one tarball under $OUT.
# Usage (from the tree's root, after `source .device/setup.sh`):
#   [BEFORE=dir] bash scripts/sift_h200.sh [build] [tests] [bench] [ncu] [sanitize]
set -u
OUT=${OUT:-/tmp/sift_out}
mkdir -p "$OUT/s"
L=$OUT/s
modes=" ${*:-build tests bench ncu sanitize} "
has() { [[ "$modes" == *" $1 "* ]]; }
S=$L/summary.txt
export OMP_WAIT_POLICY=passive
echo "host cores: $(nproc); $(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader)" >> $S
t0=$(date +%s)
stamp() { echo "[$1] $(( $(date +%s) - t0 )) s" >> $S; (cd $OUT && tar czf sift.tgz s && cp s/summary.txt summary.txt); }
BEFORE=${BEFORE:-}
if has build; then
  source "$(dirname "$0")/device_lib.sh"
  device_build . build-nofma ON features_cuda_test &
  device_build . build-fma OFF features_bench features_cuda_test &
  [ -n "$BEFORE" ] && device_build $BEFORE build-before OFF features_bench &
  wait
  stamp build
fi
if has tests; then
  for v in nofma fma; do
    b=build-$v/src/vidmap/features/features_cuda_test
    [ -x $b ] || continue
    timeout 120 $b > $L/test_features_cuda_$v.log 2>&1
    echo "[features_cuda_test $v] rc=$? $(grep -E '^\[  (PASSED|FAILED)' $L/test_features_cuda_$v.log | tr '\n' ' ')" >> $S
  done
  stamp tests
fi
B=build-fma/bench
if has bench; then
  for r in 1 2; do
    for w in after before; do
      d=build-fma; [ $w = before ] && d=build-before
      [ -x $d/bench/features_bench ] || continue
      timeout 60 $d/bench/features_bench --gpu-only --repeat 21 > $L/bench_${w}_$r.json 2>> $S
      echo "[bench $w $r] rc=$?" >> $S
    done
  done
  stamp bench
fi
N=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
sec="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis"
nc() { local name=$1; shift; timeout 90 $N --clock-control none "$@" > $L/ncu_$name.txt 2>&1;
       echo "[ncu $name] rc=$? $(grep -c '^  k' $L/ncu_$name.txt) kernels" >> $S; }
if has ncu; then
  # The first 1280x720 frame (ncu flushes the caches before each kernel): every SIFT kernel.
  nc sift_after $sec -k "${NCU_KERNELS:-regex:^k|DeviceRadix}" -c ${NCU_COUNT:-70} $B/features_bench --gpu-only --repeat 1
  stamp ncu
fi
if has sanitize; then
  t=build-nofma/src/vidmap/features/features_cuda_test
  for tool in memcheck racecheck; do
    f='SiftCuda.TiesAtTheCutGoAsOnTheCpu:SiftCuda.MoreExtremaThanRoomAreRedone'
    [ $tool = memcheck ] && f=$f:SiftCuda.KeypointsAndDescriptorsAgreeWithTheCpu
    timeout ${SAN_TIMEOUT:-100} compute-sanitizer --tool $tool --error-exitcode 9 $t \
      --gtest_filter=$f > $L/sanitize_sift_$tool.log 2>&1
    echo "[sanitize sift $tool] rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/sanitize_sift_$tool.log | tail -1)" >> $S
  done
  stamp sanitize
fi
cat $OUT/summary.txt
