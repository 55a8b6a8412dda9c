#!/usr/bin/env bash
# Stop 35, lead, call h: the pipeline's teams, one binary (this tree): "s1" = --pipeline-side-threads 1
# (main's rule: the other side on one thread, the bottleneck on all 16), "auto" = the default
# (the other side on 4, the bottleneck on 13). Interleaved.
set -u
export OUT=$(realpath "$OUT")
source .device/setup.sh > "$OUT/setup.log" 2>&1
S="$OUT/summary.txt"
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j 16 -t vidmap >> "$OUT/build.log" 2>&1
echo "[build] rc=$? $(( $(date +%s) - t0 )) s" >> "$S"
export OMP_WAIT_POLICY=passive
v=$(find build-gpu/src -name vidmap -type f -perm -u+x | head -1)
D=.device/data
run() { local name=$1 list=$2; shift 2; local o=/tmp/r/$name; rm -rf $o
  timeout 100 $v reconstruct $list -o $o -q --device cuda "$@" > /dev/null 2>&1
  python3 -c "
import json; r=json.load(open('$o/run.json')); s=r['stages']
g=lambda k: round(s[k]['wall_ms']) if k in s else '-'
print('[$name] run', round(r['wall_ms']), 'mapper', g('mapper'), 'lba', g('mapper.local_ba'), 'mwait', g('pipeline.mapper_wait'), 'fwait', g('pipeline.frontend_wait'), 'guides', g('guided_match.guides'), 'md5', '$(md5sum $o/sparse/0/images.bin 2>/dev/null | cut -c1-12)')" >> "$S" 2>&1
}
run warm $D/tum/rgb_subset150.txt --all-frames --klt gate
for i in 1 2 3; do
  run rpyg_s1_$i $D/tum/rgb_subset150.txt --all-frames --klt gate --pipeline-side-threads 1
  run rpyg_auto_$i $D/tum/rgb_subset150.txt --all-frames --klt gate
done
for i in 1 2; do
  run xyz4_s1_$i $D/xyz/rgb.txt --pipeline-side-threads 1
  run xyz4_auto_$i $D/xyz/rgb.txt
  run desk4_s1_$i $D/desk/rgb.txt --pipeline-side-threads 1
  run desk4_auto_$i $D/desk/rgb.txt
done
cat "$S"
