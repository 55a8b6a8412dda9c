#!/usr/bin/env bash
# Stop 32, lead: the run record's guided kernels (main after the lead32 merges) on the H200:
# io_gpu_test and pipeline_gpu_test whole, then fr1-desk at 4 fps on CUDA, its run record's
# match / guided_match rows.
set -u
export OUT=$(realpath "$OUT")
source .device/setup.sh > "$OUT/setup.log" 2>&1
t0=$(date +%s)
S="$OUT/summary.txt"
T="io_gpu_test pipeline_gpu_test geometry_cuda_test"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j 16 -t $T vidmap >> "$OUT/build.log" 2>&1
echo "[build] rc=$? $(( $(date +%s) - t0 )) s" >> "$S"
export VIDMAP_SOURCE_DIR=$PWD OMP_WAIT_POLICY=passive
for t in $T; do
  b=$(find build-gpu/src -name $t -type f -perm -u+x | head -1)
  for i in 1 2 3; do
    (cd "$(dirname "$b")" && timeout 120 "./$t") > "$OUT/$t.$i.log" 2>&1
    echo "[$t $i] rc=$? $(grep -E '^\[  (PASSED|FAILED) ' "$OUT/$t.$i.log" | tr '\n' ' ')" >> "$S"
  done
done
v=$(find build-gpu/src -name vidmap -type f -perm -u+x | head -1)
D=.device/data
for n in desk xyz; do
  $v reconstruct $D/$n/rgb.txt -o /tmp/r_$n -q --device cuda --fps 4 > /dev/null 2>&1
  python3 -c "
import json; s=json.load(open('/tmp/r_$n/run.json'))['stages']
for k in ('sift','match','guided_match'): print('$n', k, 'wall', round(s[k]['wall_ms'],1), 'gpu', s[k].get('gpu_ms') and round(s[k]['gpu_ms'],1), sorted(s[k].get('kernels',{}))[:4])" >> "$S"
done
echo "total $(( $(date +%s) - t0 )) s" >> "$S"
cat "$S"
