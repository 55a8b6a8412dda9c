#!/usr/bin/env bash
# COLMAP 3.8 (CPU) on a folder of images, as a new user runs it on a video: SIFT extraction,
# sequential matching (overlap 10), incremental mapper. Prints the seconds of each stage.
#   scripts/colmap_run.sh IMAGE_DIR WORK_DIR [CAMERA_MODEL [CAMERA_PARAMS]]
# The camera is one shared camera (single_camera 1); with CAMERA_PARAMS it is given and held
# fixed (no focal/distortion refinement), as vidmap does with --camera MODEL params.
set -euo pipefail
images=$1
work=$2
model=${3:-SIMPLE_RADIAL}
params=${4:-}
export QT_QPA_PLATFORM=offscreen
rm -rf "$work"
mkdir -p "$work/sparse"
db="$work/database.db"
cam=(--ImageReader.camera_model "$model" --ImageReader.single_camera 1)
refine=()
if [[ -n "$params" ]]; then
  cam+=(--ImageReader.camera_params "$params")
  refine=(--Mapper.ba_refine_focal_length 0 --Mapper.ba_refine_extra_params 0)
fi
t0=$(date +%s.%N)
colmap feature_extractor --database_path "$db" --image_path "$images" "${cam[@]}" \
  --SiftExtraction.use_gpu 0 >"$work/extract.log" 2>&1
t1=$(date +%s.%N)
colmap sequential_matcher --database_path "$db" --SequentialMatching.overlap 10 \
  --SiftMatching.use_gpu 0 >"$work/match.log" 2>&1
t2=$(date +%s.%N)
# The mapper fails when it finds no initial pair: that is a result (no model), not an error.
colmap mapper --database_path "$db" --image_path "$images" --output_path "$work/sparse" \
  "${refine[@]}" >"$work/mapper.log" 2>&1 || echo "colmap mapper failed (see $work/mapper.log)" >&2
t3=$(date +%s.%N)
python3 - "$t0" "$t1" "$t2" "$t3" <<'PY'
import sys
t = [float(x) for x in sys.argv[1:]]
print('{"colmap_extract_s": %.2f, "colmap_match_s": %.2f, "colmap_mapper_s": %.2f, "colmap_total_s": %.2f}'
      % (t[1] - t[0], t[2] - t[1], t[3] - t[2], t[3] - t[0]))
PY
