#!/usr/bin/env bash
# Stop 31, lead: the final tree on the H200. Builds the eight CUDA test binaries (FMA, the
# default), runs each whole natively, all at once, and features_cuda_test (the matcher's new
# kDecide, SIFT's shared code of cpu29) whole under memcheck and racecheck beside them; then the
# -fmad=false features_cuda_test and klt_cuda_test (the oracle equalities).
set -u
export OUT=$(realpath "$OUT")
source .device/setup.sh > "$OUT/setup.log" 2>&1
t0=$(date +%s)
S="$OUT/summary.txt"
echo "commit $(git rev-parse --short HEAD 2>/dev/null) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" > "$S"
T="ba_cuda_test features_cuda_test geometry_cuda_test gpu_smoke_test io_gpu_test klt_cuda_test mvs_cuda_test pipeline_gpu_test"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j 16 -t $T >> "$OUT/build.log" 2>&1
echo "[build fma] rc=$? $(( $(date +%s) - t0 )) s" >> "$S"
export VIDMAP_SOURCE_DIR=$PWD OMP_WAIT_POLICY=passive
mkdir -p "$OUT/logs"
for t in $T; do
  (
    a=$(date +%s)
    b=$(find build-gpu/src -name $t -type f -perm -u+x | head -1)
    (cd "$(dirname "$b")" && timeout 420 "./$t") > "$OUT/logs/$t.log" 2>&1
    echo "[$t] rc=$? $(( $(date +%s) - a )) s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$OUT/logs/$t.log" | tr '\n' ' ')" >> "$S"
  ) &
done
for tool in memcheck racecheck; do
  (
    a=$(date +%s)
    b=$(find build-gpu/src -name features_cuda_test -type f -perm -u+x | head -1)
    (cd "$(dirname "$b")" && VIDMAP_UNDER_SANITIZER=1 timeout 420 compute-sanitizer --tool $tool \
      --error-exitcode 9 ./features_cuda_test) > "$OUT/logs/features_$tool.log" 2>&1
    echo "[features_cuda_test $tool] rc=$? $(( $(date +%s) - a )) s; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/logs/features_$tool.log" | tail -1); $(grep -E '^\[  (PASSED|FAILED) ' "$OUT/logs/features_$tool.log" | tr '\n' ' ')" >> "$S"
  ) &
done
# The no-FMA pair, built while the tests run (the host has 16 cores).
(
  a=$(date +%s)
  cmake -S . -B build-nofma -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DVIDMAP_CUDA_NO_FMA=ON > "$OUT/build_nofma.log" 2>&1 &&
    cmake --build build-nofma -j 8 -t features_cuda_test klt_cuda_test >> "$OUT/build_nofma.log" 2>&1
  echo "[build nofma] rc=$? $(( $(date +%s) - a )) s" >> "$S"
  for t in features_cuda_test klt_cuda_test; do
    (
      a=$(date +%s)
      b=$(find build-nofma/src -name $t -type f -perm -u+x | head -1)
      (cd "$(dirname "$b")" && timeout 300 "./$t") > "$OUT/logs/nofma_$t.log" 2>&1
      echo "[nofma $t] rc=$? $(( $(date +%s) - a )) s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$OUT/logs/nofma_$t.log" | tr '\n' ' ')" >> "$S"
    ) &
  done
  wait
) &
wait
echo "total $(( $(date +%s) - t0 )) s" >> "$S"
cat "$S"
cd "$OUT" && tar czf logs.tgz logs build.log build_nofma.log && rm -rf logs
