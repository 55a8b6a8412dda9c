#!/usr/bin/env bash
# Issue 15 on the H200 (device tool; see docs/benchmarks.md, "Kernels at the hardware's limit"):
# builds the FMA and the -fmad=false variants of the targets it needs (in parallel), runs the
# KLT GPU tests of both (bit-exact equality on nofma), the benchmarks, Nsight Compute on the
# KLT, SIFT and matching kernels and compute-sanitizer on the KLT binary. Logs go to $OUT
# (one tarball: the device tool brings back at most 8 files).
# Usage (from the tree's root, after `source .device/setup.sh`):
#   bash scripts/kernels_h200.sh [build] [tests] [bench] [ncu] [sanitize]
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
if has build; then
  build() {  # variant, flag, targets...
    local v=$1 f=$2
    shift 2
    cmake -S . -B build-$v -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DVIDMAP_CUDA_NO_FMA=$f > $L/build_$v.log 2>&1 &&
      cmake --build build-$v -j 8 -t "$@" >> $L/build_$v.log 2>&1
    echo "[build $v] rc=$?" >> $S
  }
  build nofma ON klt_cuda_test &
  build fma OFF klt_cuda_test klt_cuda_bench ${FMA_TARGETS:-features_bench} &
  wait
  stamp build
fi
if has tests; then
  for v in nofma fma; do
    timeout 120 build-$v/src/vidmap/klt/klt_cuda_test > $L/test_klt_$v.log 2>&1
    echo "[klt_cuda_test $v] rc=$? $(grep -E '^\[  (PASSED|FAILED)' $L/test_klt_$v.log | tr '\n' ' ')" >> $S
  done
  stamp tests
fi
B=build-fma/bench
if has bench; then
  timeout 120 $B/klt_cuda_bench --quick --no-throughput --kernels ${KLT_KERNELS:-warp,warp-shared} \
    > $L/bench_klt.json 2>> $S
  echo "[bench klt] rc=$?" >> $S
  if [ -x $B/features_bench ]; then
    timeout 90 $B/features_bench --repeat 11 > $L/bench_features.json 2>> $S
    echo "[bench features] rc=$?" >> $S
  fi
  stamp bench
fi
if has ncu; then
  N=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  sec="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis"
  nc() { local name=$1; shift; timeout 100 $N --clock-control none $sec "$@" > $L/ncu_$name.txt 2>&1;
         echo "[ncu $name] rc=$?" >> $S; }
  K="$B/klt_cuda_bench --width 1280 --tracks 1024 --no-throughput --reps 3"
  nc klt_pyramid_warp -k 'regex:grayFrom|pyrDown|scharr|trackFused' -c 15 $K --kernels warp
  nc klt_warpshared -k regex:trackFused -c 1 $K --kernels warp-shared
  nc klt_select -k 'regex:trackFused|alive|eigenMap|bucket|selectCell|keepPick|rankPick|compactPick' \
    --launch-skip 8 -c 10 $K --kernels warp
  if [ -x $B/features_bench ]; then
    nc sift_blur -k 'regex:kUpsample|kBlur|kDownsample|kCopy' -c 15 $B/features_bench --repeat 2
    nc sift_points -k 'regex:kDog|kGradient|kExtrema|kOrient|kDescribe' -c 23 $B/features_bench --repeat 2
    nc match -k 'regex:gemm|Gemm|kRowTop2|kColBest|kNorms' -c 5 $B/features_bench --repeat 2
  fi
  cuobjdump -res-usage $B/klt_cuda_bench 2>&1 | grep -A1 -E 'track(Fused|Warp)Kernel' \
    | c++filt > $L/res_usage_klt.txt
  stamp ncu
fi
if has sanitize; then
  t=build-nofma/src/vidmap/klt/klt_cuda_test
  filter='CudaCases.FailureCases:CudaSelect.CheckerboardAndFlat:CudaBatch.*'
  for tool in memcheck racecheck; do
    timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $t --gtest_filter="$filter" \
      > $L/sanitize_$tool.log 2>&1
    echo "[sanitize $tool] rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/sanitize_$tool.log | tail -1)" >> $S
  done
  stamp sanitize
fi
(cd $OUT && tar czf kernels.tgz k && cp k/summary.txt summary.txt && rm -rf k)
cat $OUT/summary.txt
