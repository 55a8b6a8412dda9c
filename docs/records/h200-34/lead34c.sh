#!/usr/bin/env bash
# Stop 34, lead, call c: where guided matching's host time goes on the H200 (guided_match.guides:
# the guides' RANSACs), rpy all frames under the gate, xyz and desk at 4 fps; vidmap only.
set -u
export OUT=$(realpath "$OUT")
source .device/setup.sh > "$OUT/setup.log" 2>&1
S="$OUT/summary.txt"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j 16 -t vidmap >> "$OUT/build.log" 2>&1
echo "[build] rc=$?" >> "$S"
export OMP_WAIT_POLICY=passive
v=$(find build-gpu/src -name vidmap -type f -perm -u+x | head -1)
D=.device/data
run() { local name=$1 list=$2; shift 2; local o=/tmp/r/$name; rm -rf $o
  timeout 90 $v reconstruct $list -o $o -q --device cuda "$@" > /dev/null 2>&1
  python3 -c "
import json; r=json.load(open('$o/run.json')); s=r['stages']
g=lambda k: (round(s[k]['wall_ms']), s[k].get('calls'), round(s[k]['gpu_ms'] or 0,1) if s[k].get('gpu_ms') else 0) if k in s else '-'
print('[$name] run', round(r['wall_ms']), 'guided', g('guided_match'), 'guides', g('guided_match.guides'), 'match', g('match'), 'sift', g('sift'), 'mwait', g('pipeline.mapper_wait'), 'mapper', g('mapper'))" >> "$S" 2>&1
}
for i in 1 2; do run rpyg_$i $D/tum/rgb_subset150.txt --all-frames --klt gate; done
run rpyoff $D/tum/rgb_subset150.txt --all-frames --klt off
run xyz4 $D/xyz/rgb.txt
run desk4 $D/desk/rgb.txt
cat "$S"
