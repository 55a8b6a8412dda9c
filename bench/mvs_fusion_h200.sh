#!/usr/bin/env bash
# The figures of docs/benchmarks.md, section "mvs: fusion on the GPU and the photometric pass
# (issue 14, helper dense3)", in one device call, for the binaries of the commit before
# (BEFORE) and this one (AFTER), built on dev: the CUDA tests of AFTER (also with the window's
# grey levels in registers as before, VIDMAP_MVS_SHARED_VALUES=0); fountain-P11's dense stage
# at 1536x1024 for BEFORE, AFTER (fusion's per-pixel phase on the GPU, grey levels in shared
# memory), AFTER with fusion on the CPU (the two fused clouds compared byte for byte) and AFTER
# with the grey levels in registers; fusion
# alone on exact-depth maps (GPU, then CPU on the same maps, the clouds compared); the
# synthetic facade at 1280x960 (F1); BEFORE and AFTER on the fountain again; Nsight Compute on
# the update kernel (grey levels in shared memory) and on fusion's kernel. In order of importance,
# each result appended to OUT/results.txt at once (a call cut short keeps what it measured).
#   bench/mvs_fusion_h200.sh BEFORE_MVS_BENCH AFTER_MVS_BENCH MVS_CUDA_TEST FOUNTAIN_DIR OUT
# Binaries built on dev need Debian's libjpeg.so.62 there: carry it in a folder named by
# LD_LIBRARY_PATH (the call of docs/benchmarks.md: .xfer/NAME/{bin,lib,bench,scripts}, then
# `cd .xfer/NAME && LD_LIBRARY_PATH=$PWD/lib bash bench/mvs_fusion_h200.sh bin/before/mvs_bench
# bin/after/mvs_bench bin/after/mvs_cuda_test ../../.device/data/fountain $OUT`).
set -u
BEFORE=$1 AFTER=$2 CTEST=$3 FOUNTAIN=$4 OUT=$5
mkdir -p "$OUT"
source "$(dirname "$0")/../scripts/device_lib.sh"  # run, collect NAME SECONDS COMMAND...
T0=$(date +%s)
stamp() { echo "[$(($(date +%s) - T0)) s] $*" >>"$OUT/log.txt"; }
F="strecha $FOUNTAIN --max-size 1536 --sources 8"
S1280="synthetic --width 1280 --height 960 --views 6 --sources 5"
PLY=$(mktemp -d)
collect cuda_test 120 "$CTEST"
collect fountain_before 60 $BEFORE $F --reps 3
collect fountain_after 60 $AFTER $F --reps 3 --ply "$PLY/gpu.ply"
collect fountain_after_cpufusion 60 $AFTER $F --reps 3 --fusion-device cpu --ply "$PLY/cpu.ply"
if cmp "$PLY/gpu.ply" "$PLY/cpu.ply" >>"$OUT/log.txt" 2>&1; then
  stamp "fountain: the cloud of GPU fusion equals the CPU's byte for byte ($(stat -c %s "$PLY/gpu.ply") bytes)"
else
  stamp "fountain: the clouds of GPU and CPU fusion differ"
fi
rm -rf "$PLY"
collect fountain_after_regs 60 env VIDMAP_MVS_SHARED_VALUES=0 $AFTER $F --reps 3
collect fusion_exact 120 $AFTER fusion --width 1536 --height 1024 --views 11 --sources 8 --reps 3
collect syn1280_before 60 $BEFORE $S1280 --reps 3
collect syn1280_after 60 $AFTER $S1280 --reps 3
collect syn1280_after_regs 60 env VIDMAP_MVS_SHARED_VALUES=0 $AFTER $S1280 --reps 3
collect cuda_test_regs 120 env VIDMAP_MVS_SHARED_VALUES=0 "$CTEST" --gtest_filter='PatchMatchCuda.*'
collect fountain_before_again 60 $BEFORE $F --reps 3
collect fountain_after_again 60 $AFTER $F --reps 3
stamp "timed runs done"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
if [ -n "$NCU" ]; then
  SECTIONS="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis"
  timeout 60 "$NCU" --clock-control none -k regex:updateKernel -c 2 \
    $SECTIONS $AFTER $S1280 --reps 0 >"$OUT/ncu_update.txt" 2>&1
  stamp "ncu update rc $?"
  timeout 60 "$NCU" --clock-control none -k regex:matchKernel -c 2 $SECTIONS \
    $AFTER fusion --width 1536 --height 1024 --views 11 --sources 8 --reps 0 >"$OUT/ncu_fusion.txt" 2>&1
  stamp "ncu fusion rc $?"
fi
