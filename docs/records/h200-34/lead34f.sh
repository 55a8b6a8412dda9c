#!/usr/bin/env bash
# Stop 34, lead, call f: the final tree on the H200, the project's gpu tests through ctest.
set -u
export OUT=$(realpath "$OUT")
source .device/setup.sh > "$OUT/setup.log" 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j 16 >> "$OUT/build.log" 2>&1
echo "[build] rc=$?"
export OMP_WAIT_POLICY=passive
ctest --test-dir build-gpu -L gpu -j 4 --output-on-failure > "$OUT/ctest_gpu.log" 2>&1
echo "[ctest] rc=$?"
grep -E "tests passed|tests failed|Total Test time|Failed|\*\*\*" "$OUT/ctest_gpu.log"
