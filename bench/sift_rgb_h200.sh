#!/usr/bin/env bash
# The figures of docs/benchmarks.md, section "SIFT: RGB8 frames end to end (issue 15, helper
# sift8)", in one device call, for binaries built on dev (BEFORE: the branch point, AFTER: this
# work), in order of importance, each result appended to OUT/summary.txt at once:
# features_cuda_test's SiftCuda tests (FMA build); features_bench --gpu-only (float, 8-bit and
# RGB8 entries); `vidmap reconstruct LIST --all-frames --device cuda` before, after, before,
# after (run.json's sift stage, the model's md5), after with the kernel profiler off;
# compute-sanitizer memcheck on the RGB8 test.
#   bench/sift_rgb_h200.sh BEFORE_DIR AFTER_DIR LIST OUT
# Binaries built on dev need Debian's libjpeg.so.62 there: carry it in a folder named by
# LD_LIBRARY_PATH (the call of docs/benchmarks.md: `LD_LIBRARY_PATH=$PWD/.xfer/sift8/lib bash
# .xfer/sift8/bench/sift_rgb_h200.sh .xfer/sift8/bin/before .xfer/sift8/bin/after
# .device/data/tum/rgb_subset150.txt $OUT`). features_bench built on dev links dev's OpenCV 4.6,
# which the H200 machine lacks (the call of that section: rc 127): configure its dev build with
# -DCMAKE_DISABLE_FIND_PACKAGE_OpenCV=ON (the GPU figures need no peer), or build it there.
set -u
B=$1 A=$2 LIST=$3 OUT=$4
S=$OUT/summary.txt
T0=$(date +%s)
stamp() { echo "[$(($(date +%s) - T0)) s] $*" >>"$S"; }
export OMP_WAIT_POLICY=passive
timeout 60 "$A/features_cuda_test" --gtest_filter='SiftCuda.*' >"$OUT/features_cuda_test.log" 2>&1
stamp "features_cuda_test rc $?"
grep -E "^\[  (PASSED|FAILED)|\[ rgb|\[ bytes" "$OUT/features_cuda_test.log" >>"$S"
timeout 60 "$A/features_bench" --gpu-only --repeat 21 >"$OUT/features_bench.json" 2>>"$S"
stamp "features_bench rc $?"
# one NAME BIN ARGS...: a reconstruction, its sift stage and model md5 to the summary.
one() {
  local name=$1 bin=$2
  shift 2
  rm -rf /tmp/o
  timeout 60 "$bin/vidmap" reconstruct "$LIST" -o /tmp/o -q --device cuda --all-frames "$@" \
    >"$OUT/$name.log" 2>&1
  local rc=$?
  python3 - /tmp/o/run.json "$name rc $rc" >>"$S" 2>&1 <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); st = r.get("stages", {})
s = st.get("sift", {}); calls = max(1, s.get("calls", 1))
g = s.get("gpu_ms")
print(sys.argv[2], "wall_ms", round(r["wall_ms"]), "sift calls", s.get("calls"),
      "wall_ms/call %.3f" % (s.get("wall_ms", 0) / calls),
      "gpu_ms/call", "%.3f" % (g / calls) if g is not None else None,
      "upload/convert ms/call", {k: round(v.get("gpu_ms", 0) / calls, 4)
                                  for k, v in s.get("kernels", {}).items()
                                  if "upload" in k or "from" in k})
PY
  cp /tmp/o/run.json "$OUT/$name.run.json" 2>/dev/null
  md5sum /tmp/o/sparse/0/*.bin | cut -c1-12 | tr '\n' ' ' >>"$S"
  echo >>"$S"
}
one before_1 "$B"
one after_1 "$A"
one before_2 "$B"
one after_2 "$A"
one after_unprofiled "$A" --no-profile-kernels
stamp "runs done"
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
if [ -n "$SAN" ]; then
  timeout 45 "$SAN" --tool memcheck "$A/features_cuda_test" \
    --gtest_filter='SiftCuda.RgbFramesGiveTheFeaturesOfTheirHostLuma' >"$OUT/memcheck.log" 2>&1
  stamp "memcheck rc $? $(grep -E 'ERROR SUMMARY' "$OUT/memcheck.log")"
fi
stamp "done"
