#!/usr/bin/env bash
# The mvs figures of docs/benchmarks.md (section "mvs: reconstruct --dense, real data, speed"),
# in one device call: PatchMatch speed per image and pass (synthetic facade at 640x480 and
# 1.2 MP with 3, 5 and 8 sources; coarse to fine), fountain-P11 at 1536x1024, the Middlebury
# temple and dino rings (clouds rendered to PNG), `vidmap reconstruct --dense` on a TUM fr1-xyz
# subset scored against the Kinect depth, mvs_cuda_test, and Nsight Compute on the
# photometric update kernel. Every result is a file under OUT.
#   bench/mvs_h200.sh BUILD OUT FOUNTAIN_DIR MIDDLEBURY_DIR TUM_DIR
set -u
B=$1 OUT=$2 FOUNTAIN=$3 MID=$4 TUM=$5
MB=$B/bench/mvs_bench
V=$B/src/vidmap/cli/vidmap
mkdir -p "$OUT"
source "$(dirname "$0")/../scripts/device_lib.sh"  # run NAME SECONDS COMMAND...
run syn640_s5 30 $MB synthetic --width 640 --height 480 --views 6 --sources 5 --reps 3
run syn640_s3 30 $MB synthetic --width 640 --height 480 --views 6 --sources 3 --reps 3
run syn640_s8 30 $MB synthetic --width 640 --height 480 --views 9 --sources 8 --reps 3
run syn640_s5_mr 30 $MB synthetic --width 640 --height 480 --views 6 --sources 5 --reps 3 --multi-res 1
run syn1280_s5 40 $MB synthetic --width 1280 --height 960 --views 6 --sources 5 --reps 3
run syn1280_s5_mr 40 $MB synthetic --width 1280 --height 960 --views 6 --sources 5 --reps 3 --multi-res 1
run fountain 60 $MB strecha "$FOUNTAIN" --max-size 1536 --sources 8 --reps 2 --render "$OUT/fountain.png" --render-view 5
run fountain_mr 60 $MB strecha "$FOUNTAIN" --max-size 1536 --sources 8 --reps 2 --multi-res 1
# The rings give each view 2-4 sources (optical axes within 45 degrees): fusion with COLMAP's
# 3 pixels and with 2.
for s in temple dino; do
  run $s 40 $MB middlebury "$MID/${s}SparseRing" --max-size 640 --sources 4 --reps 1
  run ${s}_min2 40 $MB middlebury "$MID/${s}SparseRing" --max-size 640 --sources 4 --reps 1 \
    --min-pixels 2 --render "$OUT/$s.png" --render-view 0
done
# TUM: the sparse model and the dense stage in one run, then the depth maps against the Kinect.
TUM_CAMERA="FULL_OPENCV 517.3,516.5,318.6,255.3,0.2624,-0.9531,-0.0054,0.0026,1.1633,0,0,0"
run tum_reconstruct 90 $V reconstruct "$TUM/rgb.txt" -o "$OUT/tum" --all-frames -q --camera "$TUM_CAMERA" --dense
run tum_eval 30 $MB tum "$TUM" "$OUT/tum"
run tum_eval_ds 30 $MB tum "$TUM" "$OUT/tum" --depth-factor 1.035
cp "$OUT/tum/run.json" "$OUT/tum_run.json" 2>/dev/null
rm -rf "$OUT/tum"
run mvs_cuda_test 60 $B/src/vidmap/mvs/mvs_cuda_test
# Nsight Compute: three launches of the photometric update kernel at 1.2 MP.
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
if [ -n "$NCU" ]; then
  timeout 90 "$NCU" --clock-control none -k regex:updateKernel -c 3 --section SpeedOfLight \
    --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
    --section ComputeWorkloadAnalysis --section WarpStateStats \
    $MB synthetic --width 1280 --height 960 --views 6 --sources 5 --reps 0 >"$OUT/ncu.txt" 2>&1
else
  echo "no ncu" >"$OUT/ncu.txt"
fi
