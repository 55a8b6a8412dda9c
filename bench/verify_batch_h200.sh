#!/usr/bin/env bash
# The figures of docs/benchmarks.md, section "Batched pair verification (issue 13, helper
# verify13)", in one device call, for binaries built on dev: the CUDA batch scorer's tests in
# the default (FMA) build and in a VIDMAP_CUDA_NO_FMA build; TUM fr1-rpy, all 150 frames of
# the benchmarks' list, --device cuda, with the binary of the commit before (per-pair
# verification on 16 threads) and of this one (the pairs of a keyframe in lock-step, one GPU
# scoring call per round), twice each, alternated: wall times, mapper stages, ATE and rotation
# error (reconstruct_eval), and the model files' md5 (the two paths give the same model); and
# two_view_batch_bench (synthetic keyframes: per pair, batched CPU, batched CUDA).
#   bench/verify_batch_h200.sh BEFORE_VIDMAP AFTER_VIDMAP EVAL CUDA_TEST NOFMA_CUDA_TEST BENCH LIST GT OUT
# Binaries built on dev need Debian's libjpeg.so.62 there: carry it in a folder named by
# LD_LIBRARY_PATH.
set -u
BEFORE=$1 AFTER=$2 EVAL=$3 CTEST=$4 CTEST_NOFMA=$5 BENCH=$6 LIST=$7 GT=$8 OUT=$9
S=$OUT/summary.txt
export OMP_WAIT_POLICY=passive
T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$S"
timeout 60 "$CTEST" --gtest_filter='CudaBatchScorer*:CudaScorer*' >"$OUT/cuda_test.log" 2>&1
echo "cuda_test (FMA) rc $?: $(grep -E 'PASSED|FAILED|worst' "$OUT/cuda_test.log" | tr '\n' ' ')" >>"$S"
timeout 60 "$CTEST_NOFMA" --gtest_filter='CudaBatchScorer*:CudaScorer*' >"$OUT/cuda_test_nofma.log" 2>&1
echo "cuda_test (no FMA) rc $?: $(grep -E 'PASSED|FAILED|worst' "$OUT/cuda_test_nofma.log" | tr '\n' ' ')" >>"$S"
one() {  # NAME VIDMAP
  local name=$1 bin=$2 o=/tmp/$1
  rm -rf "$o"
  timeout 60 "$bin" reconstruct "$LIST" -o "$o" -q --device cuda --all-frames >"/tmp/$name.log" 2>&1
  local rc=$?
  "$EVAL" --model "$o/sparse" --list "$LIST" --groundtruth "$GT" --max-dt 0.02 >"/tmp/$name.eval.json" 2>&1
  python3 - "$o/run.json" "/tmp/$name.eval.json" "$name rc $rc" >>"$S" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); c = r.get("counts", {}); st = r.get("stages", {})
try: m = json.load(open(sys.argv[2]))["models"][0]
except Exception: m = {}
g = lambda n: round(st.get(n, {}).get("wall_ms", 0))
k = r.get("kernels", {}).get("mapper.verify", r.get("kernels", {}))
print(sys.argv[3], "wall_ms", round(r["wall_ms"]), "mapper", g("mapper"), "verify", g("mapper.verify"),
      "register", g("mapper.register"), "triangulate", g("mapper.triangulate"),
      "pairs_verified", c.get("pairs_verified"), "verify_rounds", c.get("verify_rounds"),
      "verify_hypotheses", c.get("verify_hypotheses"), "images", m.get("images"),
      "ate_rot_aligned_mm", round(1000 * m.get("ate_rot_aligned_rmse", -1), 2),
      "rot_aligned_deg", m.get("rot_aligned_rmse_deg"))
PY
  cp "$o/run.json" "$OUT/$name.run.json" 2>/dev/null
  echo "$name md5 $(md5sum "$o"/sparse/0/*.bin | cut -c1-12 | tr '\n' ' ')" >>"$S"
}
timeout 60 "$BENCH" 8 800 5 10 >>"$S" 2>&1
one before_1 "$BEFORE"
one after_1 "$AFTER"
one before_2 "$BEFORE"
one after_2 "$AFTER"
echo "done $(($(date +%s) - T0)) s" >>"$S"
