#!/usr/bin/env bash
# The reconstruction benchmark: vidmap reconstruct and COLMAP 3.8 (CPU) on the same frames, on
# the same machine, one after the other, scored by build/bench/reconstruct_eval against the
# ground truth.
#
#   scripts/bench_reconstruct.sh [OUT] [CASES]      CASES: "tum fountain" (default both)
#
# tum:      TUM RGB-D fr1/rpy, the 150 frames of the data folder (30 Hz, 640x480), every frame
#           (--all-frames) and at the default 4 fps (20 frames), with the TUM intrinsics and
#           distortion (FULL_OPENCV) and without them (unknown SIMPLE_RADIAL camera, as
#           COLMAP's default). COLMAP: feature_extractor, sequential_matcher (overlap 10),
#           mapper, on the same 150 frames (default camera, and the known one held fixed) and
#           on the same 20 frames.
# fountain: Strecha fountain-P11 (11 photos, 3072x2048) as an image folder, unknown camera,
#           vidmap at 640 and 1280 px; COLMAP at its default size (full resolution).
# Prints one JSON line per run; figures go to docs/benchmarks.md. Without COLMAP installed (or
# with SKIP_COLMAP=1) only vidmap runs; VIDMAP_DEVICE=cuda runs vidmap with --device cuda.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${VIDMAP_BUILD:-$root/build}
vidmap=$build/src/vidmap/cli/vidmap
evaluate=$build/bench/reconstruct_eval
data=${VIDMAP_DATA:-$root/../shared/data}
out=${1:-/tmp/vidmap_bench_reconstruct}
cases=${2:-tum fountain}
export OMP_WAIT_POLICY=passive
device=${VIDMAP_DEVICE:-auto}
skip_colmap=${SKIP_COLMAP:-0}
command -v colmap >/dev/null 2>&1 || skip_colmap=1
mkdir -p "$out"
commit=$(git -C "$root" rev-parse --short HEAD)
echo "{\"commit\": \"$commit\", \"cores\": $(nproc), \"cpu\": \"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)\"}"

# vidmap NAME INPUT EVAL_ARGS... -- VIDMAP_ARGS...
run_vidmap() {
  local name=$1 input=$2
  shift 2
  local eval_args=()
  while [[ $1 != -- ]]; do eval_args+=("$1"); shift; done
  shift
  rm -rf "$out/$name"
  local t0 t1
  t0=$(date +%s.%N)
  "$vidmap" reconstruct "$input" -o "$out/$name" -q --device "$device" "$@"
  t1=$(date +%s.%N)
  python3 - "$out/$name/run.json" "$name" "$t0" "$t1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
stages = {k: round(v["wall_ms"] / 1000, 2) for k, v in r["stages"].items()}
c, m = r["counts"], r["metrics"]
print(json.dumps({"run": sys.argv[2], "total_s": round(float(sys.argv[4]) - float(sys.argv[3]), 2),
                  "stages_s": stages, "frames": c["frames"], "keyframes": c["keyframes"],
                  "models": c["models"], "registered_keyframes": c["registered_keyframes"],
                  "localized_frames": c.get("localized_frames", 0),
                  "landmarks": c["landmarks"], "pairs": c["pairs_verified"],
                  "mean_track_length": round(m["mean_track_length"], 2),
                  "mean_reprojection_error_px": round(m["mean_reprojection_error_px"], 3)}))
PY
  "$evaluate" --model "$out/$name/sparse" "${eval_args[@]}" | tr -d '\n' | sed 's/  */ /g'
  echo
}

run_colmap() {
  [[ $skip_colmap == 1 ]] && return 0
  local name=$1 images=$2
  shift 2
  local eval_args=()
  while [[ $1 != -- ]]; do eval_args+=("$1"); shift; done
  shift
  echo "{\"run\": \"$name\", $("$root/scripts/colmap_run.sh" "$images" "$out/$name" "$@" | tr -d '{}')}"
  "$evaluate" --model "$out/$name/sparse" "${eval_args[@]}" | tr -d '\n' | sed 's/  */ /g'
  echo
}

if [[ " $cases " == *" tum "* ]]; then
  tum=$data/tum-fr1-rpy
  list=$tum/rgb_subset150.txt
  cam="FULL_OPENCV 517.3,516.5,318.6,255.3,0.2624,-0.9531,-0.0054,0.0026,1.1633,0,0,0"
  ev=(--list "$list" --groundtruth "$tum/groundtruth.txt")
  # Every frame (--all-frames), and the default 4 fps sampling (20 of the 150 frames).
  run_vidmap vidmap_tum_all_known "$list" "${ev[@]}" -- --all-frames --camera "$cam"
  run_vidmap vidmap_tum_all_unknown "$list" "${ev[@]}" -- --all-frames
  run_vidmap vidmap_tum_4fps_known "$list" "${ev[@]}" -- --camera "$cam"
  run_vidmap vidmap_tum_4fps_unknown "$list" "${ev[@]}" -- --fps 4
  # The same frames for COLMAP, as folders: all 150, and the 20 the 4 fps sampling took.
  all=$out/tum_frames_all
  rm -rf "$all" && mkdir -p "$all"
  grep -v '^#' "$list" | while read -r _ f; do ln -s "$tum/$f" "$all/"; done
  four=$out/tum_frames_4fps
  rm -rf "$four" && mkdir -p "$four"
  # vidmap's time sampler (io/frame_source_impl.h): the first frame at or after each 1/4 s.
  python3 - "$list" <<'PY' | while read -r f; do ln -s "$tum/$f" "$four/"; done
import math, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")]
t0, nxt = float(rows[0][0]), 0.0
for t, f in ((float(r[0]) - t0, r[1]) for r in rows):
    if t < nxt / 4 - 1e-6:
        continue
    nxt = math.floor((t + 1e-6) * 4) + 1
    print(f)
PY
  echo "{\"tum_frames_4fps\": $(ls "$four" | wc -l)}"
  run_colmap colmap_tum_all_default "$all" "${ev[@]}" --
  run_colmap colmap_tum_all_known "$all" "${ev[@]}" -- FULL_OPENCV \
    517.3,516.5,318.6,255.3,0.2624,-0.9531,-0.0054,0.0026,1.1633,0,0,0
  run_colmap colmap_tum_4fps_default "$four" "${ev[@]}" --
  # Accuracy on the frames both register (each against the other).
  for pair in "vidmap_tum_all_known colmap_tum_all_default" \
    "vidmap_tum_all_unknown colmap_tum_all_default" \
    "vidmap_tum_4fps_known colmap_tum_4fps_default" \
    "vidmap_tum_4fps_unknown colmap_tum_4fps_default"; do
    read -r a b <<< "$pair"
    [[ -d $out/$a/sparse && -d $out/$b/sparse ]] || continue
    for x in "$a $b" "$b $a"; do
      read -r m o <<< "$x"
      echo -n "{\"run\": \"$m on the frames of $o\", \"eval\": "
      "$evaluate" --model "$out/$m/sparse" "${ev[@]}" --common-with "$out/$o/sparse" |
        tr -d '\n' | sed 's/  */ /g'
      echo "}"
    done
  done
fi

if [[ " $cases " == *" fountain "* ]]; then
  f=$data/strecha/fountain-P11
  ev=(--strecha "$f/gt_dense_cameras")
  run_vidmap vidmap_fountain_640 "$f/images" "${ev[@]}" -- --width 640
  run_vidmap vidmap_fountain_1280 "$f/images" "${ev[@]}" -- --width 1280
  run_colmap colmap_fountain_default "$f/images" "${ev[@]}" --
fi
