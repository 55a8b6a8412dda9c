#!/usr/bin/env bash
# Stop 39, lead, call b: where fr1-rpy's local BA goes on the H200 (CPU or CUDA per window, ms,
# iterations: --verbose), the crossover (--ba-cuda-min-observations) swept on fr1-rpy all frames
# and fr1-xyz at 4 fps, and ba_bench's CPU and CUDA per iteration on windows of the local BA's
# size. Everything under $OUT/b.tgz and summary.txt.
set -u
export OUT=$(realpath "$OUT")
W=/tmp/w; mkdir -p $W/runs
source .device/setup.sh > "$W/setup.log" 2>&1
S="$OUT/summary.txt"
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$W/build.log" 2>&1 &&
  cmake --build build-gpu -j 16 -t vidmap reconstruct_eval ba_bench >> "$W/build.log" 2>&1
echo "[build] rc=$? $(( $(date +%s) - t0 )) s" | tee -a "$S"
export OMP_WAIT_POLICY=passive
new=$(find build-gpu/src -name vidmap -type f -perm -u+x | head -1)
ev=$(find build-gpu/bench -name reconstruct_eval -type f -perm -u+x | head -1)
bb=$(find build-gpu/bench -name ba_bench -type f -perm -u+x | head -1)
D=.device/data
run() { local name=$1 v=$2 list=$3 gt=$4; shift 4; local o=/tmp/r/$name; rm -rf $o
  timeout 120 $v reconstruct $list -o $o -q "$@" > "$W/$name.log" 2>&1
  $ev --model $o/sparse --list $list --groundtruth $gt --max-dt 0.02 > /tmp/r/$name.eval 2>&1
  cp $o/run.json $W/runs/$name.json 2>/dev/null
  python3 -c "
import json; r=json.load(open('$o/run.json')); s=r['stages']; c=r['counts']
try: E=json.load(open('/tmp/r/$name.eval')); e=E['models'][0]; reg=E['registered_images']
except Exception: e={}; reg='?'
g=lambda k: round(s[k]['wall_ms']) if k in s else '-'
print('[$name] run', round(r['wall_ms']), 'mapper', g('mapper'), 'verify', g('mapper.verify'), 'lba', g('mapper.local_ba'), 'gba', g('mapper.global_ba'), 'focal', g('focal_check'), 'tri', g('mapper.triangulate'), 'filter', g('mapper.filter'), 'reg', g('mapper.register'), 'loc', g('mapper.localize'), 'mwait', g('pipeline.mapper_wait'), 'fwait', g('pipeline.frontend_wait'), 'img', reg, 'ate_mm', round(e.get('ate_rmse',0)*1000,2), 'rot', e.get('rot_aligned_rmse_deg'), 'md5', '$(md5sum $o/sparse/0/images.bin 2>/dev/null | cut -c1-12)')" | tee -a "$S" 2>&1
}
R="$D/tum/rgb_subset150.txt $D/tum/groundtruth.txt"
X="$D/xyz/rgb.txt $D/xyz/groundtruth.txt"
run warm $new $R --all-frames --device cuda
run rpy_verbose $new $R --all-frames --device cuda --verbose
grep "local BA" $W/rpy_verbose.log | awk '{for(i=1;i<=NF;i++){if($i=="iterations,")it+=$(i-1); if($i=="observations") ob+=$(i-1)} if(index($0,"CUDA:"))g++; else c++} END{print "[rpy lba] calls", NR, "mean obs", ob/NR, "mean it", it/NR, "cuda", g, "cpu", c}' | tee -a "$S"
for i in 1 2; do for m in 1500 5000 1000000000; do
  run rpy_x${m}_$i $new $R --all-frames --device cuda --ba-cuda-min-observations $m; done; done
for m in 1500 5000; do run xyz4_x$m $new $X --device cuda --ba-cuda-min-observations $m; done
run rpy_profile $new $R --all-frames --device cuda --profile-kernels
for p in synthetic:14x600 synthetic:14x1500 synthetic:30x3000; do
  $bb --backends cpu,cuda --ceres none --reps 5 --max-iterations 20 --cuda-graphs both $p > $W/bb_${p#synthetic:}.json 2> $W/bb_${p#synthetic:}.err
  echo "[ba_bench $p] rc=$?" | tee -a "$S"; done
tar czf "$OUT/b.tgz" -C $W .
