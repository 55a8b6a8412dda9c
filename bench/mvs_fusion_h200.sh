#!/usr/bin/env bash
# The figures of docs/benchmarks.md, section "mvs: fusion on the GPU and the photometric pass
# (issue 14, helper dense3)", in one device call: builds this tree (AFTER), then the commit
# before (BEFORE: this tree with BEFORE_DIR's files laid over it and the files named in
# BEFORE_DIR/ADDED removed; an incremental build of the same folder) while the CUDA tests of
# AFTER run; then fountain-P11's dense stage at 1536x1024 for BEFORE, AFTER (fusion's
# per-pixel phase on the GPU) and AFTER with fusion on the CPU (the fused clouds compared byte
# for byte), fusion alone on exact-depth maps (GPU and CPU, the clouds compared), the synthetic facade at 1280x960
# (F1), and Nsight Compute on fusion's kernel. Results are concatenated into OUT/results.txt
# (the device tool returns a limited number of files).
#   bench/mvs_fusion_h200.sh SRC BEFORE_DIR FOUNTAIN_DIR OUT
set -u
SRC=$(realpath "$1") BEFORE_DIR=$(realpath "$2") FOUNTAIN=$(realpath "$3") OUT=$4
mkdir -p "$OUT"
source "$SRC/scripts/device_lib.sh"  # run NAME SECONDS COMMAND...
L=$OUT S=$OUT/summary.txt
B=$SRC/build-gpu BIN=$SRC/bin
mkdir -p "$BIN/after" "$BIN/before"
t0=$(date +%s)
cmake -S "$SRC" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  >"$L/build_after.log" 2>&1 &&
  cmake --build "$B" -j 16 -t mvs_bench mvs_cuda_test >>"$L/build_after.log" 2>&1
echo "[build after] rc=$? $(($(date +%s) - t0)) s" >>"$S"
cp "$B/bench/mvs_bench" "$BIN/after/" && cp "$B/src/vidmap/mvs/mvs_cuda_test" "$BIN/after/"
# The commit before, in the same build folder (only what differs is rebuilt).
(
  cd "$SRC" && cp -r "$BEFORE_DIR"/src "$BEFORE_DIR"/bench . &&
    xargs rm -f <"$BEFORE_DIR/ADDED" &&
    cmake --build "$B" -j 12 -t mvs_bench >"$L/build_before.log" 2>&1
  echo "[build before] rc=$? $(($(date +%s) - t0)) s" >>"$S"
  cp "$B/bench/mvs_bench" "$BIN/before/"
) &
build=$!
run cuda_test 150 "$BIN/after/mvs_cuda_test"
wait $build
BEFORE=$BIN/before/mvs_bench AFTER=$BIN/after/mvs_bench
F="strecha $FOUNTAIN --max-size 1536 --sources 8"
S1280="synthetic --width 1280 --height 960 --views 6 --sources 5"
run fountain_before 60 $BEFORE $F --reps 3
run fountain_after 60 $AFTER $F --reps 3 --ply "$SRC/after_gpu.ply"
run fountain_after_cpufusion 60 $AFTER $F --reps 3 --fusion-device cpu --ply "$SRC/after_cpu.ply"
cmp "$SRC/after_gpu.ply" "$SRC/after_cpu.ply" >>"$S" 2>&1 && echo "fountain clouds: GPU fusion = CPU fusion, byte for byte" >>"$S"
run fusion_exact 120 $AFTER fusion --width 1536 --height 1024 --views 11 --sources 8 --reps 3
run syn1280_before 60 $BEFORE $S1280 --reps 3
run syn1280_after 60 $AFTER $S1280 --reps 3
run fountain_before_again 60 $BEFORE $F --reps 3
run fountain_after_again 60 $AFTER $F --reps 3
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
if [ -n "$NCU" ]; then
  timeout 60 "$NCU" --clock-control none -k regex:matchKernel -c 2 --section SpeedOfLight \
    --section Occupancy --section LaunchStats --section WarpStateStats \
    --section MemoryWorkloadAnalysis $AFTER fusion --width 1536 --height 1024 --views 11 \
    --sources 8 --reps 1 >"$OUT/ncu_fusion.txt" 2>&1
fi
for f in "$OUT"/*.json; do
  echo "== $(basename "$f" .json)"
  cat "$f"
done >"$OUT/results.txt"
rm -f "$OUT"/*.json
echo "[done] $(($(date +%s) - t0)) s" >>"$S"
