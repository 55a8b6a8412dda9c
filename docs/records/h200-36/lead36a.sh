#!/usr/bin/env bash
# Stop 36, lead, call a: where the time goes on the H200 (HEAD tree): full run records of fr1-rpy
# all frames (default = gate) x3, xyz 4 fps x2, desk 4 fps x1, and ctest -L gpu.
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
mkdir -p /tmp/rec
run() { local name=$1 list=$2; shift 2; local o=/tmp/r/$name; rm -rf $o
  local a=$(date +%s%N)
  timeout 100 $v reconstruct $list -o $o -q --device cuda "$@" > /tmp/rec/$name.log 2>&1
  local b=$(date +%s%N)
  cp $o/run.json /tmp/rec/$name.json
  python3 -c "
import json; r=json.load(open('$o/run.json')); s=r['stages']
g=lambda k: round(s[k]['wall_ms']) if k in s else '-'
print('[$name] proc', ($b-$a)//1000000, 'run', round(r['wall_ms']), 'mapper', g('mapper'), 'lba', g('mapper.local_ba'), 'gba', g('mapper.global_ba'), 'mwait', g('pipeline.mapper_wait'), 'fwait', g('pipeline.frontend_wait'), 'md5', '$(md5sum $o/sparse/0/images.bin 2>/dev/null | cut -c1-12)')
top=sorted(((v.get('wall_ms',0),k,v.get('calls',0)) for k,v in s.items()), reverse=True)[:40]
print('   ', '; '.join(f'{k} {w:.0f}/{c}' for w,k,c in top))" >> "$S" 2>&1
}
run warm $D/tum/rgb_subset150.txt --all-frames
for i in 1 2 3; do run rpy_$i $D/tum/rgb_subset150.txt --all-frames; done
run rpy_v $D/tum/rgb_subset150.txt --all-frames --verbose
for i in 1 2; do run xyz4_$i $D/xyz/rgb.txt; done
run desk4_1 $D/desk/rgb.txt
tar czf $OUT/rec.tgz -C /tmp rec
cat "$S"
