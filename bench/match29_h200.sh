#!/usr/bin/env bash
# The figures of docs/benchmarks.md, section "Device-resident descriptors for the matcher (issue
# 15, helper match29)", in one device call, for binaries built on dev: BIN/after (this work:
# features_cuda_test, pipeline_gpu_test in their build folders' layout, features_bench built
# without OpenCV, vidmap, reconstruct_eval) and BIN/before (main's tip: vidmap, and optionally
# features_bench without OpenCV). In order of
# importance, each result appended to OUT/log.txt or OUT/results.txt at once: features_cuda_test;
# features_bench after and before (4096 x 4096: host-input and device-resident rows); the pipeline on
# TUM fr1-rpy (DATA/rgb.txt, JPEG q95 of the 150 staged frames, --all-frames --device cuda),
# before and after alternately, profiled and not: run.json's match and sift stages, the
# uploaded descriptor bytes and the model's md5; pipeline_gpu_test if time is left.
#   bash bench/match29_h200.sh BIN DATA OUT   (LD_LIBRARY_PATH with libjpeg.so.62)
set -u
BIN=$1 DATA=$2 OUT=$3
mkdir -p "$OUT"
# run, collect, device_clock, stamp, young (DEVICE_LIB: where a copy of the script runs outside
# the repository)
source "${DEVICE_LIB:-$(dirname "$0")/../scripts/device_lib.sh}"
export OMP_WAIT_POLICY=passive
device_clock
tests() {  # tests NAME SECONDS BINARY: PASSED/FAILED lines and this work's printed lines
  (cd "$(dirname "$3")" && timeout "$2" "./$(basename "$3")" >"$OUT/$1.full" 2>&1)
  stamp "$1 rc $?"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests ran|\[ (plain|many|resident|sift) \]" \
    "$OUT/$1.full" >>"$OUT/results.txt"
  grep -E -A4 "Failure" "$OUT/$1.full" | head -40 >>"$OUT/results.txt"
}
tests features_cuda_test 100 "$BIN/after/build/src/vidmap/features/features_cuda_test"
bench() {  # bench ROUND: after, then before (main's features_bench, when carried)
  collect "bench_after_$1" 60 "$BIN/after/features_bench" --no-cpu --repeat 41
  [ -x "$BIN/before/features_bench" ] &&
    collect "bench_before_$1" 60 "$BIN/before/features_bench" --no-cpu --repeat 41
  stamp "bench $1"
}
bench 1
M=$OUT/runs.txt
pipeline() {  # pipeline NAME BINARY FLAGS...: one reconstruction, its figures to runs.txt
  local name=$1 bin=$2
  shift 2
  local o=/tmp/m29_$name
  rm -rf "$o"
  local t0
  t0=$(date +%s.%N)
  timeout 60 "$bin" reconstruct "$DATA/rgb.txt" -o "$o" -q --device cuda --all-frames "$@" \
    >"$OUT/$name.log" 2>&1
  local rc=$?
  local t1
  t1=$(date +%s.%N)
  {
    echo "== $name rc $rc wall $(awk "BEGIN{print $t1 - $t0}") s flags: $*"
    python3 - "$o/run.json" <<'PY' 2>&1
import json, sys
j = json.load(open(sys.argv[1]))
st = j.get("stages", {})
for k in ("sift", "match"):
    s = st.get(k, {})
    w, c, g = s.get("wall_ms"), s.get("calls"), s.get("gpu_ms")
    print(f"  {k}: wall_ms {w} calls {c} gpu_ms {g} per call {w / c if w and c else None}")
c = j.get("counts", {})
print("  counts:", {k: c.get(k) for k in ("match_uploaded_descriptor_bytes", "keyframes",
      "plain_matches", "guided_matches", "sift_calls")}, "run wall_ms", j.get("wall_ms"))
PY
    (cd "$o/sparse/0" 2>/dev/null && md5sum cameras.bin images.bin points3D.bin | cut -c1-12 | tr '\n' ' ')
    echo
    "$BIN/after/reconstruct_eval" --model "$o/sparse" --list "$DATA/rgb.txt" \
      --groundtruth "$DATA/groundtruth.txt" --max-dt 0.02 2>&1 | grep -iE "ate|registered" | head -4
  } >>"$M"
  cp "$o/run.json" "$OUT/run_$name.json" 2>/dev/null
  rm -f "$OUT/$name.log"
}
pipeline before1 "$BIN/before/vidmap"
pipeline after1 "$BIN/after/vidmap"
pipeline before2 "$BIN/before/vidmap"
pipeline after2 "$BIN/after/vidmap"
pipeline before_np "$BIN/before/vidmap" --no-profile-kernels
pipeline after_np "$BIN/after/vidmap" --no-profile-kernels
stamp pipelines
(cd "$OUT" && tar czf runs.tgz run_*.json && rm -f run_*.json)
young 170 && bench 2
young 160 && tests pipeline_gpu_test 90 "$BIN/after/build/src/vidmap/pipeline/pipeline_gpu_test"
stamp done
rm -f "$OUT"/*.full
