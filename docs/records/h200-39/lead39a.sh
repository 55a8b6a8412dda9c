#!/usr/bin/env bash
# Stop 39, lead, call a: the tree of stop 38 (d2ae438's code) on the H200: the defaults on the TUM
# sequences (fr1-rpy all frames 3 runs, 4 fps; fr1-xyz and fr1-desk at 4 fps 2 runs, all frames 1),
# scored by reconstruct_eval, each run's run.json kept (runs.tgz); then ctest -L gpu.
set -u
export OUT=$(realpath "$OUT")
source .device/setup.sh > "$OUT/setup.log" 2>&1
S="$OUT/summary.txt"
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j 16 >> "$OUT/build.log" 2>&1
echo "[build] rc=$? $(( $(date +%s) - t0 )) s" | tee -a "$S"
export OMP_WAIT_POLICY=passive
new=$(find build-gpu/src -name vidmap -type f -perm -u+x | head -1)
ev=$(find build-gpu/bench -name reconstruct_eval -type f -perm -u+x | head -1)
D=.device/data
mkdir -p /tmp/runs
run() { local name=$1 v=$2 list=$3 gt=$4; shift 4; local o=/tmp/r/$name; rm -rf $o
  timeout 120 $v reconstruct $list -o $o -q "$@" > "$OUT/$name.log" 2>&1
  $ev --model $o/sparse --list $list --groundtruth $gt --max-dt 0.02 > /tmp/r/$name.eval 2>&1
  cp $o/run.json /tmp/runs/$name.json 2>/dev/null
  python3 -c "
import json; r=json.load(open('$o/run.json')); s=r['stages']; c=r['counts']
try: E=json.load(open('/tmp/r/$name.eval')); e=E['models'][0]; reg=E['registered_images']
except Exception: e={}; reg='?'
g=lambda k: round(s[k]['wall_ms']) if k in s else '-'
print('[$name] run', round(r['wall_ms']), 'mapper', g('mapper'), 'verify', g('mapper.verify'), 'lba', g('mapper.local_ba'), 'gba', g('mapper.global_ba'), 'focal', g('focal_check'), 'sift', g('sift'), 'klt', g('klt_track'), 'mwait', g('pipeline.mapper_wait'), 'fwait', g('pipeline.frontend_wait'), 'img', reg, 'ate_mm', round(e.get('ate_rmse',0)*1000,2), 'rot', e.get('rot_aligned_rmse_deg'), 'md5', '$(md5sum $o/sparse/0/images.bin 2>/dev/null | cut -c1-12)')" | tee -a "$S" 2>&1
}
R="$D/tum/rgb_subset150.txt $D/tum/groundtruth.txt"
X="$D/xyz/rgb.txt $D/xyz/groundtruth.txt"
K="$D/desk/rgb.txt $D/desk/groundtruth.txt"
run warm $new $R --all-frames --device cuda
for i in 1 2 3; do run rpy_cuda_$i $new $R --all-frames --device cuda; done
run rpy_cpu16 $new $R --all-frames --device cpu
run rpy4_cuda $new $R --device cuda
for i in 1 2; do run xyz4_cuda_$i $new $X --device cuda; run desk4_cuda_$i $new $K --device cuda; done
run xyzall_cuda $new $X --all-frames --device cuda
run deskall_cuda $new $K --all-frames --device cuda
tar czf "$OUT/runs.tgz" -C /tmp/runs .
ctest --test-dir build-gpu -L gpu -j 4 > "$OUT/ctest_gpu.log" 2>&1
echo "[ctest -L gpu] rc=$? $(grep -E 'tests passed|tests failed' $OUT/ctest_gpu.log)" | tee -a "$S"
grep -E "Test +#" $OUT/ctest_gpu.log | tee -a "$S"
which nsys ncu | tee -a "$S"
