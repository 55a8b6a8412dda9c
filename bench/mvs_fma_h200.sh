#!/usr/bin/env bash
# The figures of docs/benchmarks.md, section "mvs: the photometric pass at 50 ms/MP (issue 14,
# helper dense5)", in one device call, for the binaries of main's tip (BEFORE) and this branch
# (AFTER: the photometric cost's hot loop with explicit fused multiply-adds, validity from the
# window's corners, the homography from per-pass parts), built on dev: fountain-P11 at
# 1536x1024 and the synthetic facade at 1280x960 for both (the maps change by rounding, so the
# clouds are compared by their points and the facade by its scores against the truth); the CUDA
# tests of AFTER (FMA build) and the CPU-vs-CUDA bit-equality test of AFTER built with
# -fmad=false (NOFMA_TEST); BEFORE and AFTER on the fountain again; Nsight Compute on the
# update kernel if time is left. In order of importance, each result appended to
# OUT/results.txt at once (a call cut short keeps what it measured).
#   bench/mvs_fma_h200.sh BEFORE_MVS_BENCH AFTER_MVS_BENCH MVS_CUDA_TEST NOFMA_TEST FOUNTAIN_DIR OUT
# Binaries built on dev need Debian's libjpeg.so.62 there: carry it in a folder named by
# LD_LIBRARY_PATH (as bench/mvs_pinned_h200.sh says).
set -u
BEFORE=$1 AFTER=$2 CTEST=$3 NOFMA=$4 FOUNTAIN=$5 OUT=$6
mkdir -p "$OUT"
source "$(dirname "$0")/../scripts/device_lib.sh"  # run, collect NAME SECONDS COMMAND...
T0=$(date +%s)
stamp() { echo "[$(($(date +%s) - T0)) s] $*" >>"$OUT/log.txt"; }
points() {  # PLY WHAT: the vertex count of a cloud, to the log
  stamp "$2: $(grep -a -m1 '^element vertex' "$1") ($(stat -c %s "$1") bytes)"
}
F="strecha $FOUNTAIN --max-size 1536 --sources 8"
S1280="synthetic --width 1280 --height 960 --views 6 --sources 5"
PLY=$(mktemp -d)
collect fountain_before 60 $BEFORE $F --reps 3 --ply "$PLY/fb.ply"
points "$PLY/fb.ply" "fountain before"
collect fountain_after 60 $AFTER $F --reps 3 --ply "$PLY/fa.ply"
points "$PLY/fa.ply" "fountain after"
collect syn1280_before 60 $BEFORE $S1280 --reps 3
collect syn1280_after 60 $AFTER $S1280 --reps 3
collect cuda_test 120 "$CTEST"
collect nofma_equal 120 "$NOFMA" --gtest_filter='PatchMatchCuda.EqualsTheCpuTwin:FusionCuda.*'
rm -rf "$PLY"
collect fountain_before_again 60 $BEFORE $F --reps 3
collect fountain_after_again 60 $AFTER $F --reps 3
stamp "timed runs done"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
if [ -n "$NCU" ]; then
  timeout 50 "$NCU" --clock-control none -k regex:updateKernel -c 2 --section SpeedOfLight \
    --section Occupancy --section LaunchStats --section WarpStateStats --section InstructionStats \
    --section SchedulerStats $AFTER $S1280 --reps 0 >"$OUT/ncu_update.txt" 2>&1
  stamp "ncu update rc $?"
fi
