#!/usr/bin/env bash
# Issue 15 on the H200 (device tool; see docs/benchmarks.md, "Kernels at the hardware's limit"):
# builds the FMA and the -fmad=false variants of the targets it needs (in parallel), runs the
# KLT and features GPU tests of both (bit-exact equality on nofma), the benchmarks, Nsight
# Compute on the KLT, SIFT and matching kernels and compute-sanitizer. Logs go to $OUT (one
# tarball: the device tool brings back at most 8 files).
# Usage (from the tree's root, after `source .device/setup.sh`):
#   [BEFORE=dir] bash scripts/kernels_h200.sh [build] [tests] [bench] [ncu] [details] [sanitize]
# BEFORE: a copy of the tree before a change; its features_bench and klt_cuda_bench are built
# too and run in turn with this tree's (before/after in one run).
# ncu: the profile (SpeedOfLight, Occupancy, LaunchStats, WarpStateStats, MemoryWorkloadAnalysis)
# of the KLT pyramid, tracking and selection kernels, SIFT and matching; details: the raw stall
# metrics of the KLT tracking kernel and the profile of the matcher's kernels.
set -u
OUT=${OUT:-/tmp/kernels_out}
mkdir -p "$OUT/k"
L=$OUT/k
modes=" ${*:-build tests bench ncu} "
has() { [[ "$modes" == *" $1 "* ]]; }
S=$L/summary.txt
export OMP_WAIT_POLICY=passive
echo "host cores: $(nproc); $(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader)" >> $S
t0=$(date +%s)
stamp() { echo "[$1] $(( $(date +%s) - t0 )) s" >> $S; }
BEFORE=${BEFORE:-}
if has build; then
  source "$(dirname "$0")/device_lib.sh"
  device_build . build-nofma ON klt_cuda_test features_cuda_test &
  device_build . build-fma OFF klt_cuda_test klt_cuda_bench features_bench features_cuda_test &
  [ -n "$BEFORE" ] && device_build $BEFORE build-before OFF features_bench klt_cuda_bench &
  wait
  stamp build
fi
if has tests; then
  for v in nofma fma; do
    for t in klt/klt_cuda_test features/features_cuda_test; do
      b=build-$v/src/vidmap/$t
      [ -x $b ] || continue
      timeout 120 $b > $L/test_$(basename $t)_$v.log 2>&1
      echo "[$(basename $t) $v] rc=$? $(grep -E '^\[  (PASSED|FAILED)' $L/test_$(basename $t)_$v.log | tr '\n' ' ')" >> $S
    done
  done
  stamp tests
fi
B=build-fma/bench
if has bench; then
  if [ -n "$BEFORE" ]; then
    for w in after before; do
      d=build-fma; [ $w = before ] && d=build-before
      timeout 120 $d/bench/klt_cuda_bench --quick > $L/bench_klt_$w.json 2>> $S
      echo "[bench klt $w] rc=$?" >> $S
    done
    for r in 1 2; do
      for w in after before; do
        d=build-fma; [ $w = before ] && d=build-before
        timeout 90 $d/bench/features_bench --repeat 11 > $L/bench_features_${w}_$r.json 2>> $S
        echo "[bench features $w $r] rc=$?" >> $S
      done
    done
  else
    timeout 120 $B/klt_cuda_bench --quick --no-throughput --kernels ${KLT_KERNELS:-warp,warp-shared} \
      > $L/bench_klt.json 2>> $S
    echo "[bench klt] rc=$?" >> $S
    timeout 90 $B/features_bench --repeat 11 > $L/bench_features.json 2>> $S
    echo "[bench features] rc=$?" >> $S
  fi
  stamp bench
fi
N=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
sec="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis"
nc() { local name=$1; shift; timeout 100 $N --clock-control none "$@" > $L/ncu_$name.txt 2>&1;
       echo "[ncu $name] rc=$?" >> $S; }
K="$B/klt_cuda_bench --width 1280 --tracks 1024 --no-throughput --reps 3"
if has ncu; then
  nc klt_pyramid_warp $sec -k 'regex:grayFrom|pyrDown|scharr|trackFused' -c 15 $K --kernels warp
  nc klt_warpshared $sec -k regex:trackFused -c 1 $K --kernels warp-shared
  nc klt_select $sec -k 'regex:trackFused|alive|eigenMap|bucket|selectCell|keepPick|rankPick|compactPick' \
    --launch-skip 8 -c 10 $K --kernels warp
  nc sift_blur $sec -k 'regex:kUpsample|kBlur|kDownsample|kCopy' -c 15 $B/features_bench --repeat 2
  nc sift_points $sec -k 'regex:kDog|kGradient|kExtrema|kOrient|kDescribe' -c 23 $B/features_bench --repeat 2
  nc match $sec -k 'regex:gemm|Gemm|kRowTop2|kColBest|kNorms' -c 5 $B/features_bench --repeat 2
  cuobjdump -res-usage $B/klt_cuda_bench 2>&1 | grep -A1 -E 'track(Fused|Warp)Kernel' \
    | c++filt > $L/res_usage_klt.txt
  stamp ncu
fi
if has details; then
  # Every stall reason of the tracking kernel (raw metrics), both forms, and the new matcher.
  for k in warp warp-shared; do
    nc klt_stalls_$k --section WarpStateStats --section InstructionStats --page raw \
      -k regex:trackFused -c 1 $K --kernels $k
  done
  nc match_after $sec -k 'regex:kRowTop2|kColBest|kNorms' -c 4 $B/features_bench --repeat 2
  stamp details
fi
if has sanitize; then
  t=build-nofma/src/vidmap/klt/klt_cuda_test
  filter='CudaCases.FailureCases:CudaSelect.CheckerboardAndFlat:CudaBatch.*'
  for tool in memcheck racecheck; do
    timeout ${SAN_TIMEOUT:-150} compute-sanitizer --tool $tool --error-exitcode 9 $t --gtest_filter="$filter" \
      > $L/sanitize_klt_$tool.log 2>&1
    echo "[sanitize klt $tool] rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/sanitize_klt_$tool.log | tail -1)" >> $S
  done
  t=build-nofma/src/vidmap/features/features_cuda_test
  if [ -x $t ]; then
    timeout ${SAN_TIMEOUT:-150} compute-sanitizer --tool racecheck --error-exitcode 9 $t \
      --gtest_filter='MatchCuda.PlainAndGuidedAgreeWithTheCpu' > $L/sanitize_match_racecheck.log 2>&1
    echo "[sanitize match racecheck] rc=$? $(grep -E 'RACECHECK SUMMARY' $L/sanitize_match_racecheck.log | tail -1)" >> $S
  fi
  stamp sanitize
fi
(cd $OUT && tar czf kernels.tgz k && cp k/summary.txt summary.txt && rm -rf k)
cat $OUT/summary.txt
