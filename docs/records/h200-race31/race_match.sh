#!/usr/bin/env bash
# Stop 31, lead: racecheck of features_cuda_test's two tests the whole-binary run (final31.sh)
# did not reach in 420 s: the device decisions (kDecide) and the destroyed kept features.
set -u
export OUT=$(realpath "$OUT")
source .device/setup.sh > "$OUT/setup.log" 2>&1
t0=$(date +%s)
S="$OUT/summary.txt"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j 16 -t features_cuda_test >> "$OUT/build.log" 2>&1
echo "[build fma] rc=$? $(( $(date +%s) - t0 )) s" >> "$S"
export VIDMAP_SOURCE_DIR=$PWD OMP_WAIT_POLICY=passive VIDMAP_UNDER_SANITIZER=1
cd build-gpu/src/vidmap/features
for c in MatchCuda.DeviceDecisionsEqualTheHostDecisions MatchCuda.DestroyedKeptFeaturesAreNotRead; do
  (
    a=$(date +%s)
    timeout 400 compute-sanitizer --tool racecheck --error-exitcode 9 ./features_cuda_test \
      --gtest_filter=$c > "$OUT/$c.log" 2>&1
    echo "[$c racecheck] rc=$? $(( $(date +%s) - a )) s; $(grep -E 'RACECHECK SUMMARY' "$OUT/$c.log" | tail -1); $(grep -E '^\[  (PASSED|FAILED) ' "$OUT/$c.log" | tr '\n' ' ')" >> "$S"
  ) &
done
wait
cat "$S"
