#!/usr/bin/env bash
# Stop 37, lead, call d: the final tree (new: pairs verified ahead, the second pass pipelined, the camera published when it changes)
# against d8be436 (old: stop 36's head, .xfer/lead37/head.tgz) on one machine, interleaved runs
# with the defaults, scored by reconstruct_eval; then ctest -L gpu on the new tree.
set -u
export OUT=$(realpath "$OUT")
source .device/setup.sh > "$OUT/setup.log" 2>&1
S="$OUT/summary.txt"
t0=$(date +%s)
rm -rf /tmp/oldsrc && mkdir /tmp/oldsrc && tar xzf .xfer/lead37/head.tgz -C /tmp/oldsrc
(cd /tmp/oldsrc && cmake -S . -B build-old -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build_old.log" 2>&1 &&
  cmake --build build-old -j 8 -t vidmap >> "$OUT/build_old.log" 2>&1) &
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j 16 >> "$OUT/build.log" 2>&1
echo "[build new] rc=$? $(( $(date +%s) - t0 )) s" | tee -a "$S"
wait
echo "[build old] $(( $(date +%s) - t0 )) s" | tee -a "$S"
export OMP_WAIT_POLICY=passive
new=$(find build-gpu/src -name vidmap -type f -perm -u+x | head -1)
old=$(find /tmp/oldsrc/build-old/src -name vidmap -type f -perm -u+x | head -1)
ev=$(find build-gpu/bench -name reconstruct_eval -type f -perm -u+x | head -1)
D=.device/data
run() { local name=$1 v=$2 list=$3 gt=$4; shift 4; local o=/tmp/r/$name; rm -rf $o
  timeout 120 $v reconstruct $list -o $o -q --device cuda "$@" > "$OUT/$name.log" 2>&1
  $ev --model $o/sparse --list $list --groundtruth $gt --max-dt 0.02 > /tmp/r/$name.eval 2>&1
  python3 -c "
import json; r=json.load(open('$o/run.json')); s=r['stages']; c=r['counts']
try: E=json.load(open('/tmp/r/$name.eval')); e=E['models'][0]; reg=E['registered_images']
except Exception: e={}; reg='?'
g=lambda k: round(s[k]['wall_ms']) if k in s else '-'
print('[$name] run', round(r['wall_ms']), 'mapper', g('mapper'), 'verify', g('mapper.verify'), 'ahead_ms', g('verify_ahead'), 'taken', c.get('pairs_verified_ahead'), 'differed', c.get('pairs_ahead_differed'), 'guided', g('guided_match'), 'lba', g('mapper.local_ba'), 'gba', g('mapper.global_ba'), 'mwait', g('pipeline.mapper_wait'), 'fwait', g('pipeline.frontend_wait'), 'img', reg, 'ate_mm', round(e.get('ate_rmse',0)*1000,2), 'rot', e.get('rot_aligned_rmse_deg'), 'md5', '$(md5sum $o/sparse/0/images.bin 2>/dev/null | cut -c1-12)')" | tee -a "$S" 2>&1
}
R="$D/tum/rgb_subset150.txt $D/tum/groundtruth.txt"
X="$D/xyz/rgb.txt $D/xyz/groundtruth.txt"
K="$D/desk/rgb.txt $D/desk/groundtruth.txt"
run warm $new $R --all-frames
for i in 1 2; do
  run desk4_new_$i $new $K
  run desk4_old_$i $old $K
  run xyz4_new_$i $new $X
  run xyz4_old_$i $old $X
  run rpy_new_$i $new $R --all-frames
  run rpy_old_$i $old $R --all-frames
done
run xyzall_new $new $X --all-frames
run xyzall_old $old $X --all-frames
run deskall_new $new $K --all-frames
run deskall_old $old $K --all-frames
ctest --test-dir build-gpu -L gpu -j 4 > "$OUT/ctest_gpu.log" 2>&1
echo "[ctest -L gpu] rc=$? $(grep -E 'tests passed|tests failed' $OUT/ctest_gpu.log)" | tee -a "$S"
grep -E "Test +#" $OUT/ctest_gpu.log | tee -a "$S"
