#!/usr/bin/env bash
# The figures of docs/benchmarks.md, section "mvs: the photometric pass at 50 ms/MP (issue 14,
# helper dense4)", in one device call, for the binaries of main's tip (BEFORE) and this branch
# (AFTER: downloads through a pinned buffer, the copy out on a worker while the next
# reference's kernels run), built on dev: fountain-P11 at 1536x1024 and the synthetic facade
# at 1280x960 for both (the fused clouds compared byte for byte); the CUDA tests of AFTER; the
# update kernel's variants (VIDMAP_MVS_MIN_BLOCKS=6, 5, 1 with the grey levels in shared
# memory; VIDMAP_MVS_BLOCK_X=8, 32); BEFORE and AFTER on the fountain again; Nsight Compute on
# the update kernel if time is left. In order of importance, each result appended to
# OUT/results.txt at once (a call cut short keeps what it measured).
#   bench/mvs_pinned_h200.sh BEFORE_MVS_BENCH AFTER_MVS_BENCH MVS_CUDA_TEST FOUNTAIN_DIR OUT
# Binaries built on dev need Debian's libjpeg.so.62 there: carry it in a folder named by
# LD_LIBRARY_PATH (the call of docs/benchmarks.md: .xfer/NAME/{bin,lib,bench,scripts}, then
# `cd .xfer/NAME && LD_LIBRARY_PATH=$PWD/lib bash bench/mvs_pinned_h200.sh bin/before/mvs_bench
# bin/after/mvs_bench bin/after/mvs_cuda_test ../../.device/data/fountain $OUT`).
set -u
BEFORE=$1 AFTER=$2 CTEST=$3 FOUNTAIN=$4 OUT=$5
mkdir -p "$OUT"
source "$(dirname "$0")/../scripts/device_lib.sh"  # run, collect NAME SECONDS COMMAND...
T0=$(date +%s)
stamp() { echo "[$(($(date +%s) - T0)) s] $*" >>"$OUT/log.txt"; }
same() {  # A B WHAT: byte comparison of two clouds, to the log
  if cmp "$1" "$2" >>"$OUT/log.txt" 2>&1; then
    stamp "$3: the clouds of BEFORE and AFTER are equal byte for byte ($(stat -c %s "$1") bytes)"
  else
    stamp "$3: the clouds of BEFORE and AFTER differ"
  fi
}
F="strecha $FOUNTAIN --max-size 1536 --sources 8"
S1280="synthetic --width 1280 --height 960 --views 6 --sources 5"
PLY=$(mktemp -d)
collect fountain_before 60 $BEFORE $F --reps 3 --ply "$PLY/fb.ply"
collect fountain_after 60 $AFTER $F --reps 3 --ply "$PLY/fa.ply"
same "$PLY/fb.ply" "$PLY/fa.ply" fountain
collect syn1280_before 60 $BEFORE $S1280 --reps 3 --ply "$PLY/sb.ply"
collect syn1280_after 60 $AFTER $S1280 --reps 3 --ply "$PLY/sa.ply"
same "$PLY/sb.ply" "$PLY/sa.ply" facade
collect cuda_test 120 "$CTEST"
for b in 6 5 1; do
  collect fountain_after_b$b 60 env VIDMAP_MVS_MIN_BLOCKS=$b $AFTER $F --reps 3 --ply "$PLY/f$b.ply"
  same "$PLY/fb.ply" "$PLY/f$b.ply" "fountain, MIN_BLOCKS=$b"
done
for x in 8 32; do
  collect fountain_after_x$x 60 env VIDMAP_MVS_BLOCK_X=$x $AFTER $F --reps 3 --ply "$PLY/x$x.ply"
  same "$PLY/fb.ply" "$PLY/x$x.ply" "fountain, BLOCK_X=$x"
done
rm -rf "$PLY"
collect fountain_before_again 60 $BEFORE $F --reps 3
collect fountain_after_again 60 $AFTER $F --reps 3
stamp "timed runs done"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
if [ -n "$NCU" ]; then
  timeout 60 "$NCU" --clock-control none -k regex:updateKernel -c 2 --section SpeedOfLight \
    --section Occupancy --section LaunchStats --section WarpStateStats --section InstructionStats \
    --section SchedulerStats $AFTER $S1280 --reps 0 >"$OUT/ncu_update.txt" 2>&1
  stamp "ncu update rc $?"
fi
