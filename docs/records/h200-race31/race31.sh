#!/usr/bin/env bash
# Stop 31, lead: racecheck what stop 30's calls left (totals from bench/launch_counter in call 3):
# the run-record test's BA family launches 6600-24915, the same test's other kernels 1800-2399
# (a sanitizer internal error cut that process), klt EqualsSeparateTrackers 10800-11079.
set -u
export OUT=$(realpath "$OUT")
L=$(realpath .xfer/lead)
source .device/setup.sh > "$OUT/setup.log" 2>&1
t0=$(date +%s)
export LD_LIBRARY_PATH=$L:${LD_LIBRARY_PATH:-}
P=$L/pipeline_gpu_test
K=$L/klt_cuda_test
left=540
export VIDMAP_UNDER_SANITIZER=1 OMP_WAIT_POLICY=passive OMP_NUM_THREADS=2
one() {  # one DIR N TEST FLAGS SKIP COUNT BIN
  mkdir -p "$OUT/$1"
  (
    a=$(date +%s)
    timeout "$left" compute-sanitizer --tool racecheck --error-exitcode 9 $4 \
      --launch-skip $5 --launch-count $6 "$7" --gtest_filter="$3" > "$OUT/$1/$2.log" 2>&1
    rc=$?
    echo "[$1 $2: $3 $4 launches $5-$(($5 + $6 - 1))] rc=$rc $(( $(date +%s) - a )) s; $(grep -E 'RACECHECK SUMMARY' "$OUT/$1/$2.log" | tail -1); internal errors: $(grep -c 'Internal Sanitizer Error' "$OUT/$1/$2.log"); $(grep -E '^\[  (PASSED|FAILED) ' "$OUT/$1/$2.log" | tr '\n' ' ')" >> "$OUT/summary_all.txt"
  ) &
}
R=ReconstructGpu.RunRecordHoldsEachStagesKernelsAndDeviceBytes
BA="--kernel-name kns=vidmap2ba"
REST="--kernel-name-exclude kns=vidmap2ba --kernel-name-exclude kns=vidmap8features"
n=0
for ((s = 6600; s < 24916; s += 680)); do n=$((n + 1)); one rb $n $R "$BA" $s 680 $P; done
one rr 1 $R "$REST" 1800 600 $P
one k 1 CudaBatch.EqualsSeparateTrackers "" 10800 300 $K
wait
sort -t: -k1,1 "$OUT/summary_all.txt"
cd "$OUT" && tar czf logs.tgz rb rr k && rm -rf rb rr k
