#!/usr/bin/env bash
# Stop 30, lead, call 3 (binaries built on dev): count the launches (bench/launch_counter.cc, a CUPTI injection), then
# racecheck what call 1 left: pipeline_gpu_test's BA family and every other kernel from the
# 3600th launch, klt_cuda_test's EqualsSeparateTrackers from its 4500th, in ranges sized to end
# within the call.
set -u
export OUT=$(realpath "$OUT")
L=$(realpath .xfer/lead)
source .device/setup.sh > "$OUT/setup.log" 2>&1
t0=$(date +%s)
export LD_LIBRARY_PATH=$L:${LD_LIBRARY_PATH:-}
P=$L/pipeline_gpu_test
K=$L/klt_cuda_test
echo "prebuilt binaries" > "$OUT/summary_all.txt"
count() {  # count NAME BIN FILTER
  CUDA_INJECTION64_PATH=$L/liblaunch_counter.so \
    LAUNCH_COUNTER_OUT=$OUT/count_$1.txt "$2" --gtest_filter="$3" > "$OUT/count_$1.log" 2>&1
  echo "count $1 rc=$? $(( $(date +%s) - t0 )) s" >> "$OUT/summary_all.txt"
}
count orbit $P ReconstructGpu.OrbitOnCudaMatchesTheCpuBounds &
count record $P ReconstructGpu.RunRecordHoldsEachStagesKernelsAndDeviceBytes &
count equals $K CudaBatch.EqualsSeparateTrackers &
wait
tot() {  # tot FILE ba|rest|all: launches of the family
  awk -F'\t' -v fam=$2 'NR>1 { b = index($2,"vidmap2ba") > 0; f = index($2,"vidmap8features") > 0;
    if (fam=="all" || (fam=="ba" && b) || (fam=="rest" && !b && !f)) s += $1 } END { print s+0 }' "$1"
}
for c in orbit record; do
  for fam in ba rest; do echo "$c $fam $(tot $OUT/count_$c.txt $fam)"; done
done | tee -a "$OUT/summary_all.txt"
echo "equals all $(tot $OUT/count_equals.txt all)" | tee -a "$OUT/summary_all.txt"
left=$(( 545 - ($(date +%s) - t0) ))
per=${PER:-600}
slots=${MAXP:-28}
run() {  # run DIR TEST FILTERFLAGS START TOTAL BIN-NAME
  local d=$1 test=$2 flags=$3 start=$4 total=$5 n=0
  [ "$total" -gt 0 ] || { total=$((start + 3 * per)); echo "[$d] no count: assumed $total" >> "$OUT/summary_all.txt"; }
  for ((s = start; s < total; s += per)); do
    if [ "$slots" -le 0 ]; then echo "[$d] NOT CHECKED: launches $s-$total (no process left)" >> "$OUT/summary_all.txt"; break; fi
    slots=$((slots - 1))
    n=$((n + 1))
    (
      a=$(date +%s)
      timeout "$left" compute-sanitizer --tool racecheck --error-exitcode 9 $flags \
        --launch-skip $s --launch-count $per "$6" --gtest_filter="$test" > "$OUT/$d/$n.log" 2>&1
      rc=$?
      echo "[$d $n: $test $flags launches $s-$((s + per - 1)) of $total] rc=$rc $(( $(date +%s) - a )) s; $(grep -E 'RACECHECK SUMMARY' "$OUT/$d/$n.log" | tail -1); internal errors: $(grep -c 'Internal Sanitizer Error' "$OUT/$d/$n.log"); $(grep -E '^\[  (PASSED|FAILED) ' "$OUT/$d/$n.log" | tr '\n' ' ')" >> "$OUT/summary_all.txt"
    ) &
  done
}
export VIDMAP_UNDER_SANITIZER=1 OMP_WAIT_POLICY=passive OMP_NUM_THREADS=2
mkdir -p "$OUT/ob" "$OUT/or" "$OUT/rb" "$OUT/rr" "$OUT/k"
BA="--kernel-name kns=vidmap2ba"
REST="--kernel-name-exclude kns=vidmap2ba --kernel-name-exclude kns=vidmap8features"
run ob ReconstructGpu.OrbitOnCudaMatchesTheCpuBounds "$BA" 3600 "$(tot $OUT/count_orbit.txt ba)" $P
run or ReconstructGpu.OrbitOnCudaMatchesTheCpuBounds "$REST" 3600 "$(tot $OUT/count_orbit.txt rest)" $P
run rb ReconstructGpu.RunRecordHoldsEachStagesKernelsAndDeviceBytes "$BA" 3600 "$(tot $OUT/count_record.txt ba)" $P
run rr ReconstructGpu.RunRecordHoldsEachStagesKernelsAndDeviceBytes "$REST" 3600 "$(tot $OUT/count_record.txt rest)" $P
run k CudaBatch.EqualsSeparateTrackers "" 10800 "$(tot $OUT/count_equals.txt all)" $K
# Every other klt_cuda_test test, whole, in GoogleTest shards (which tests stops 28-29 covered
# is then no question).
mkdir -p "$OUT/ks"
for ((i = 0; i < ${KSHARDS:-6}; ++i)); do
  (
    a=$(date +%s)
    GTEST_TOTAL_SHARDS=${KSHARDS:-6} GTEST_SHARD_INDEX=$i timeout "$left" compute-sanitizer \
      --tool racecheck --error-exitcode 9 $K --gtest_filter=-CudaBatch.EqualsSeparateTrackers \
      > "$OUT/ks/$i.log" 2>&1
    rc=$?
    echo "[ks $i: klt_cuda_test shard $i of ${KSHARDS:-6} without EqualsSeparateTrackers] rc=$rc $(( $(date +%s) - a )) s; $(grep -E 'RACECHECK SUMMARY' "$OUT/ks/$i.log" | tail -1); internal errors: $(grep -c 'Internal Sanitizer Error' "$OUT/ks/$i.log"); $(grep -E '^\[  (PASSED|FAILED) |^\[       OK' "$OUT/ks/$i.log" | tr '\n' ' ')" >> "$OUT/summary_all.txt"
  ) &
done
wait
cat "$OUT/summary_all.txt"
cd "$OUT" && tar czf logs.tgz ob or rb rr k ks count_*.log && rm -rf ob or rb rr k ks count_*.log
