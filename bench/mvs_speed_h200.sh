#!/usr/bin/env bash
# The figures of docs/benchmarks.md, section "mvs speed (issue 14, helper dense)", in one
# device call: PatchMatch per image and pass (synthetic facade, 640x480 and 1280x960, 5
# sources) for the kernel variants (textures on/off; launch bound of 1, 6 or 8 blocks per SM:
# VIDMAP_MVS_MIN_BLOCKS; one row per block: VIDMAP_MVS_ROWS=1) against the binary of the
# commit before (BEFORE), fountain-P11 at 1536x1024 (single and coarse to fine), the CUDA
# tests, fusion alone on exact-depth maps, loading alone, and Nsight Compute on the update
# kernel. The results are concatenated into OUT/results.txt (the device tool returns a
# limited number of files).
#   bench/mvs_speed_h200.sh BEFORE_MVS_BENCH AFTER_MVS_BENCH MVS_CUDA_TEST FOUNTAIN_DIR OUT
set -u
BEFORE=$1 AFTER=$2 CTEST=$3 FOUNTAIN=$4 OUT=$5
mkdir -p "$OUT"
source "$(dirname "$0")/../scripts/device_lib.sh"  # run NAME SECONDS COMMAND...
S640="synthetic --width 640 --height 480 --views 6 --sources 5 --reps 3"
S1280="synthetic --width 1280 --height 960 --views 6 --sources 5 --reps 3"
run cuda_test 90 "$CTEST"
for size in 640 1280; do
  eval "args=\$S$size"
  run syn${size}_before 60 $BEFORE $args
  run syn${size}_t0_b1_rows 60 env VIDMAP_MVS_MIN_BLOCKS=1 VIDMAP_MVS_ROWS=1 $AFTER $args --textures 0
  run syn${size}_t0_b1 60 env VIDMAP_MVS_MIN_BLOCKS=1 $AFTER $args --textures 0
  run syn${size}_t0_b8 60 env VIDMAP_MVS_MIN_BLOCKS=8 $AFTER $args --textures 0
  run syn${size}_t1_b1 60 env VIDMAP_MVS_MIN_BLOCKS=1 $AFTER $args --textures 1
  run syn${size}_t1_b6 60 env VIDMAP_MVS_MIN_BLOCKS=6 $AFTER $args --textures 1
  run syn${size}_t1_b8 60 env VIDMAP_MVS_MIN_BLOCKS=8 $AFTER $args --textures 1
  run syn${size}_t1_b8_rows 60 env VIDMAP_MVS_MIN_BLOCKS=8 VIDMAP_MVS_ROWS=1 $AFTER $args --textures 1
  run syn${size}_t1_b8_mr 60 env VIDMAP_MVS_MIN_BLOCKS=8 $AFTER $args --textures 1 --multi-res 1
done
run fountain_before 90 $BEFORE strecha "$FOUNTAIN" --max-size 1536 --sources 8 --reps 2
run fountain_after 90 $AFTER strecha "$FOUNTAIN" --max-size 1536 --sources 8 --reps 3
run fountain_after_b6 90 env VIDMAP_MVS_MIN_BLOCKS=6 $AFTER strecha "$FOUNTAIN" --max-size 1536 --sources 8 --reps 3
run fountain_after_mr 90 $AFTER strecha "$FOUNTAIN" --max-size 1536 --sources 8 --reps 3 --multi-res 1
run fusion_exact 120 $AFTER fusion --width 1536 --height 1024 --views 11 --sources 8 --reps 3
run load 60 $AFTER strecha "$FOUNTAIN" --max-size 1536 --reps -1
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
if [ -n "$NCU" ]; then
  timeout 60 "$NCU" --clock-control none -k regex:updateKernel -c 2 --section SpeedOfLight \
    --section Occupancy --section LaunchStats --section WarpStateStats \
    $AFTER $S1280 --reps 0 >"$OUT/ncu.txt" 2>&1
fi
for f in "$OUT"/*.json; do
  echo "== $(basename "$f" .json)"
  cat "$f"
done >"$OUT/results.txt"
rm -f "$OUT"/*.json
