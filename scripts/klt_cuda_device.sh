#!/usr/bin/env bash
# Runs on the GPU machine (the device tool) in a folder that holds binaries built on the dev
# machine (they need only the system's libgomp and libstdc++; cudart is static):
#   nofma/klt_cuda_test  (built with -DVIDMAP_CUDA_NO_FMA=ON: bit-exact equality)
#   fma/klt_cuda_test, fma/klt_cuda_bench  (the default build)
#   klt_opencv_pyrlk.py  (the OpenCV peer)
# Usage: klt_cuda_device.sh [tests|bench|quick|all] [more modes]; logs and JSON go to $OUT.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
OUT=${OUT:-/tmp/klt_out}
modes=" ${*:-all} "
has() { [[ "$modes" == *" $1 "* ]] || [[ "$modes" == *" all "* ]]; }
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv \
  >> "$OUT/summary.txt" 2>&1
echo "host cores: $(nproc)" >> "$OUT/summary.txt"

# ctest over a carried binary: a one-test CTestTestfile labelled gpu.
ctest_dir() {
  printf 'add_test(klt_cuda_test "%s/%s/klt_cuda_test")\nset_tests_properties(klt_cuda_test PROPERTIES LABELS gpu)\n' \
    "$here" "$1" > "$here/$1/CTestTestfile.cmake"
  (cd "$here/$1" && timeout "$2" ctest -L gpu -V 2>&1) > "$OUT/ctest_$1.log"
  grep -E "tests passed|tests failed" "$OUT/ctest_$1.log" | sed "s/^/[$1] /" | tee -a "$OUT/summary.txt"
}

if has tests; then
  ctest_dir nofma 200
  ctest_dir fma 200
  filter='CudaCases.FailureCases:CudaSelect.CheckerboardAndFlat:CudaBatch.BadInputIsAnError:CudaBatch.EightBitFramesEqualFloatFrames'
  for tool in memcheck racecheck; do
    timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 nofma/klt_cuda_test \
      --gtest_filter="$filter" > "$OUT/sanitizer_$tool.log" 2>&1
    echo "[sanitizer $tool] exit $? : $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer_$tool.log" | tail -1)" | tee -a "$OUT/summary.txt"
  done
fi
if has bench || has quick; then
  q=""; has bench || q="--quick"
  rm -rf /tmp/klt_cases
  timeout 300 fma/klt_cuda_bench --dump /tmp/klt_cases $q > "$OUT/bench.json" 2>> "$OUT/summary.txt"
  echo "[bench] exit $?" | tee -a "$OUT/summary.txt"
  has bench || { cat "$OUT/summary.txt"; exit 0; }
  PYTHONUNBUFFERED=1 timeout 200 python3 klt_opencv_pyrlk.py /tmp/klt_cases --threads 16 \
    > "$OUT/opencv.json" 2>> "$OUT/summary.txt"
  echo "[opencv] exit $?" | tee -a "$OUT/summary.txt"
fi
cat "$OUT/summary.txt"
