#!/usr/bin/env bash
# Stop 35, lead, call a: the full stage tables of fr1-rpy all frames under the gate (3 runs),
# --klt off, xyz 4 fps on the H200 (run.json kept).
set -u
export OUT=$(realpath "$OUT")
source .device/setup.sh > "$OUT/setup.log" 2>&1
S="$OUT/summary.txt"
nproc >> "$S"; lscpu | grep -i "model name" >> "$S"
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j 16 -t vidmap >> "$OUT/build.log" 2>&1
echo "[build] rc=$? $(( $(date +%s) - t0 )) s" >> "$S"
export OMP_WAIT_POLICY=passive
v=$(find build-gpu/src -name vidmap -type f -perm -u+x | head -1)
D=.device/data
run() { local name=$1 list=$2; shift 2; local o=/tmp/r/$name; rm -rf $o
  timeout 90 $v reconstruct $list -o $o -q --device cuda "$@" > "$OUT/$name.log" 2>&1
  echo "[$name] rc=$? md5 $(md5sum $o/sparse/0/images.bin | cut -c1-12)" >> "$S"
  cp $o/run.json "$OUT/$name.json"
}
for i in 1 2 3; do run rpyg_$i $D/tum/rgb_subset150.txt --all-frames --klt gate; done
run rpyoff $D/tum/rgb_subset150.txt --all-frames --klt off
run xyz4 $D/xyz/rgb.txt
cat "$S"
