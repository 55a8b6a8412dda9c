#!/usr/bin/env bash
# Stop 35, lead, call e: the non-bottleneck side of the pipeline on a quarter of the threads.
# "old" = this tree with the HEAD frontend_worker.cc (the other side on one thread);
# "new" = this tree (pool of call d in both).
set -u
export OUT=$(realpath "$OUT")
source .device/setup.sh > "$OUT/setup.log" 2>&1
S="$OUT/summary.txt"
t0=$(date +%s)
rm -rf /tmp/oldsrc && mkdir /tmp/oldsrc && cp -r $(ls -A | grep -v -e '^build' -e '^.device' -e '^.git$') /tmp/oldsrc/
cp .xfer/lead35/old/frontend_worker.cc /tmp/oldsrc/src/vidmap/pipeline/
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j 16 -t vidmap pipeline_gpu_test >> "$OUT/build.log" 2>&1
echo "[build new] rc=$? $(( $(date +%s) - t0 )) s" >> "$S"
(cd /tmp/oldsrc && cmake -S . -B build-old -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build_old.log" 2>&1 &&
  cmake --build build-old -j 16 -t vidmap >> "$OUT/build_old.log" 2>&1)
echo "[build old] rc=$? $(( $(date +%s) - t0 )) s" >> "$S"
for t in pipeline_gpu_test; do
  b=$(find build-gpu/src -name $t -type f -perm -u+x | head -1)
  $b --gtest_brief=1 > "$OUT/$t.log" 2>&1; echo "[$t] rc=$? $(grep -E 'PASSED|FAILED' $OUT/$t.log | tr '\n' ' ')" >> "$S"
done
export OMP_WAIT_POLICY=passive
new=$(find build-gpu/src -name vidmap -type f -perm -u+x | head -1)
old=$(find /tmp/oldsrc/build-old/src -name vidmap -type f -perm -u+x | head -1)
D=.device/data
run() { local name=$1 v=$2 list=$3; shift 3; local o=/tmp/r/$name; rm -rf $o
  timeout 120 $v reconstruct $list -o $o -q --device cuda "$@" > "$OUT/$name.log" 2>&1
  python3 -c "
import json; r=json.load(open('$o/run.json')); s=r['stages']
g=lambda k: round(s[k]['wall_ms']) if k in s else '-'
print('[$name] run', round(r['wall_ms']), 'mapper', g('mapper'), 'lba', g('mapper.local_ba'), 'gba', g('mapper.global_ba'), 'mwait', g('pipeline.mapper_wait'), 'fwait', g('pipeline.frontend_wait'), 'guided', g('guided_match'), 'match', g('match'), 'peak', r.get('peak_memory'))" >> "$S" 2>&1
  echo "  md5 $(md5sum $o/sparse/0/images.bin | cut -c1-12)" >> "$S"
}
run warm $new $D/tum/rgb_subset150.txt --all-frames --klt gate
for i in 1 2 3; do
  run rpyg_old_$i $old $D/tum/rgb_subset150.txt --all-frames --klt gate
  run rpyg_new_$i $new $D/tum/rgb_subset150.txt --all-frames --klt gate
done
run rpyoff_old $old $D/tum/rgb_subset150.txt --all-frames --klt off
run rpyoff_new $new $D/tum/rgb_subset150.txt --all-frames --klt off
run xyz4_old $old $D/xyz/rgb.txt
run xyz4_new $new $D/xyz/rgb.txt
run xyz4g_old $old $D/xyz/rgb.txt --klt gate
run xyz4g_new $new $D/xyz/rgb.txt --klt gate
run rpy4_old $old $D/tum/rgb_subset150.txt
run rpy4_new $new $D/tum/rgb_subset150.txt
cat "$S"
