#!/usr/bin/env bash
# The figures of docs/benchmarks.md, section "mvs speed to the goals (issue 14, helper
# dense2)", in one device call: fountain-P11's dense stage at 1536x1024 and the synthetic
# facade at 1280x960 for the binary of the commit before (BEFORE) and this one (AFTER), the
# AFTER kernel's variants (VIDMAP_MVS_MIN_BLOCKS=6, 5, 1: 80, 96 registers, no cap;
# VIDMAP_MVS_LOCAL_WINDOW=1: window weights in local memory; VIDMAP_MVS_EARLY_EXIT=0: every
# source of every hypothesis scored), the CUDA tests, and Nsight Compute on the update kernel
# of both. Results are concatenated into OUT/results.txt (the device tool returns a limited
# number of files).
# MODE=variants (the first call) or final (the default: the second call).
#   [MODE=...] bench/mvs_goals_h200.sh BEFORE_MVS_BENCH AFTER_MVS_BENCH MVS_CUDA_TEST FOUNTAIN_DIR OUT
set -u
BEFORE=$1 AFTER=$2 CTEST=$3 FOUNTAIN=$4 OUT=$5
mkdir -p "$OUT"
source "$(dirname "$0")/../scripts/device_lib.sh"  # run NAME SECONDS COMMAND...
F="strecha $FOUNTAIN --max-size 1536 --sources 8"
S1280="synthetic --width 1280 --height 960 --views 6 --sources 5"
S640="synthetic --width 640 --height 480 --views 6 --sources 5"
run cuda_test 90 "$CTEST"
case "${MODE:-final}" in
variants)  # the first call: kernel variants and Nsight Compute, at 6 photometric iterations
  run fountain_before 60 $BEFORE $F --reps 3
  run fountain_after 60 $AFTER $F --reps 3
  for b in 6 5 1; do
    run fountain_after_b$b 60 env VIDMAP_MVS_MIN_BLOCKS=$b $AFTER $F --reps 1
  done
  run fountain_after_local 60 env VIDMAP_MVS_LOCAL_WINDOW=1 $AFTER $F --reps 1
  run fountain_after_noexit 60 env VIDMAP_MVS_EARLY_EXIT=0 $AFTER $F --reps 1
  run syn1280_before 60 $BEFORE $S1280 --reps 3
  run syn1280_after 60 $AFTER $S1280 --reps 3
  NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
  if [ -n "$NCU" ]; then
    ncu() {  # NAME COMMAND...
      local name=$1
      shift
      timeout 60 "$NCU" --clock-control none -k regex:updateKernel -c 2 --section SpeedOfLight \
        --section Occupancy --section LaunchStats --section WarpStateStats \
        --section MemoryWorkloadAnalysis "$@" $S1280 --reps 0 >"$OUT/ncu_$name.txt" 2>&1
    }
    ncu before $BEFORE
    ncu after $AFTER
    VIDMAP_MVS_MIN_BLOCKS=1 ncu after_b1 $AFTER
  fi
  ;;
final)  # the second call: the defaults (5 photometric iterations) against BEFORE and 6
  for size in 1280 640; do
    eval "args=\$S$size"
    run syn${size}_before 60 $BEFORE $args --reps 3
    run syn${size}_after 60 $AFTER $args --reps 3
    run syn${size}_after_it6 60 $AFTER $args --reps 3 --photometric-iterations 6
  done
  run fountain_before 60 $BEFORE $F --reps 3
  run fountain_after 60 $AFTER $F --reps 3
  run fountain_after_it6 60 $AFTER $F --reps 3 --photometric-iterations 6
  run fountain_before_again 60 $BEFORE $F --reps 3
  ;;
esac
for f in "$OUT"/*.json; do
  echo "== $(basename "$f" .json)"
  cat "$f"
done >"$OUT/results.txt"
rm -f "$OUT"/*.json
