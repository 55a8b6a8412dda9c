#!/usr/bin/env bash
# Stop 36, lead, call e: the final tree: ctest -L gpu, fr1-rpy all frames (md5), and the held-out
# pan at 70 degrees (rendered here by vidmap synth) on CUDA with the defaults (the last try).
set -u
export OUT=$(realpath "$OUT")
source .device/setup.sh > "$OUT/setup.log" 2>&1
S="$OUT/summary.txt"
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j 16 >> "$OUT/build.log" 2>&1
echo "[build] rc=$? $(( $(date +%s) - t0 )) s" >> "$S"
ctest --test-dir build-gpu -L gpu -j 4 > "$OUT/ctest_gpu.log" 2>&1
echo "[ctest -L gpu] rc=$? $(grep -E 'tests passed|tests failed' $OUT/ctest_gpu.log)" >> "$S"
grep -E "Test +#" $OUT/ctest_gpu.log >> "$S"
export OMP_WAIT_POLICY=passive
v=$(find build-gpu/src -name vidmap -type f -perm -u+x | head -1)
ev=$(find build-gpu/bench -name reconstruct_eval -type f -perm -u+x | head -1)
D=.device/data
for i in 1 2; do
  rm -rf /tmp/r/rpy; timeout 120 $v reconstruct $D/tum/rgb_subset150.txt --all-frames -o /tmp/r/rpy -q --device cuda > /dev/null 2>&1
  python3 -c "import json; r=json.load(open('/tmp/r/rpy/run.json')); print('[rpy_$i] run', round(r['wall_ms']))" >> "$S"
  echo "  md5 $(md5sum /tmp/r/rpy/sparse/0/images.bin | cut -c1-12)" >> "$S"
done
$v synth /tmp/pan70 --scene room --path pan --frames 48 --fps 8 --width 640 --height 480 --hfov 70 --seed 22 > /dev/null 2>&1
timeout 120 $v reconstruct /tmp/pan70/rgb.txt -o /tmp/r/pan70 --device cuda > "$OUT/pan70.log" 2>&1
echo "[pan70] rc=$? $(grep -E 'sparse/0|error' $OUT/pan70.log | head -2)" >> "$S"
$ev --model /tmp/r/pan70/sparse --list /tmp/pan70/rgb.txt --groundtruth /tmp/pan70/groundtruth.txt --max-dt 0.001 >> "$S" 2>&1
python3 -c "import json; r=json.load(open('/tmp/r/pan70/run.json')); print('  init_last_resort', r['counts']['init_last_resort'], 'run', round(r['wall_ms']))" >> "$S" 2>&1
cat "$S"
