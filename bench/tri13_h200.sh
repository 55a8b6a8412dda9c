#!/usr/bin/env bash
# The figures of docs/benchmarks.md, section "Batched triangulation and PnP on the device
# (issue 13, helper tri13)", in one device call for binaries built on dev: the GPU tests of the
# batched triangulation and the device-scored PnP in the default (FMA)
# build and in a VIDMAP_CUDA_NO_FMA build; triangulation_batch_bench (CPU against CUDA by batch
# size: the crossover; PnP per sample against lock-step); TUM fr1-rpy, all 150 frames of the
# benchmarks' list, --device cuda, the binary of main before and of this branch, alternated:
# wall, mapper.triangulate and mapper.register times, ATE / rotation error, the model's md5.
#   bench/tri13_h200.sh BEFORE AFTER EVAL CUDA_TEST NOFMA_CUDA_TEST BENCH LIST GT OUT
# Binaries built on dev need Debian's libjpeg.so.62: carry it in a folder named by
# LD_LIBRARY_PATH.
set -u
BEFORE=$1 AFTER=$2 EVAL=$3 CTEST=$4 CTEST_NOFMA=$5 BENCH=$6 LIST=$7 GT=$8 OUT=$9
S=$OUT/summary.txt
export OMP_WAIT_POLICY=passive
T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$S"
F='CudaTriangulator*:PnPCuda*'
timeout 40 "$CTEST" --gtest_filter="$F" >"$OUT/cuda_test.log" 2>&1
echo "cuda_test (FMA) rc $?: $(grep -E 'PASSED|FAILED|worst' "$OUT/cuda_test.log" | tr '\n' ' ')" >>"$S"
timeout 40 "$CTEST_NOFMA" --gtest_filter="$F" >"$OUT/cuda_test_nofma.log" 2>&1
echo "cuda_test (no FMA) rc $?: $(grep -E 'PASSED|FAILED|worst' "$OUT/cuda_test_nofma.log" | tr '\n' ' ')" >>"$S"
timeout 40 "$BENCH" 7 >"$OUT/bench.json" 2>&1
echo "bench rc $?" >>"$S"
one() {  # NAME VIDMAP
  local name=$1 bin=$2 o=/tmp/$1
  rm -rf "$o"
  timeout 40 "$bin" reconstruct "$LIST" -o "$o" -q --device cuda --all-frames >"$OUT/$name.log" 2>&1
  local rc=$?
  "$EVAL" --model "$o/sparse" --list "$LIST" --groundtruth "$GT" --max-dt 0.02 >"/tmp/$name.eval.json" 2>&1
  python3 - "$o/run.json" "/tmp/$name.eval.json" "$name rc $rc" >>"$S" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); st = r.get("stages", {})
try: m = json.load(open(sys.argv[2]))["models"][0]
except Exception: m = {}
g = lambda n: round(st.get(n, {}).get("wall_ms", 0), 1)
print(sys.argv[3], "wall_ms", round(r["wall_ms"]), "mapper", g("mapper"), "triangulate",
      g("mapper.triangulate"), "register", g("mapper.register"), "verify", g("mapper.verify"),
      "images", m.get("images"), "ate_rot_aligned_mm", round(1000 * m.get("ate_rot_aligned_rmse", -1), 2),
      "rot_aligned_deg", m.get("rot_aligned_rmse_deg"))
PY
  cp "$o/run.json" "$OUT/$name.run.json" 2>/dev/null
  echo "$name md5 $(md5sum "$o"/sparse/0/*.bin | cut -c1-12 | tr '\n' ' ')" >>"$S"
}
one before_1 "$BEFORE"
one after_1 "$AFTER"
one before_2 "$BEFORE"
one after_2 "$AFTER"
echo "done $(($(date +%s) - T0)) s" >>"$S"
