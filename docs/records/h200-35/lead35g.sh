#!/usr/bin/env bash
# Stop 35, lead, call g: the final tree against main's head (115f374) on one machine: the
# project's gpu tests through ctest, then interleaved runs (old = 115f374's tree, new = this).
set -u
export OUT=$(realpath "$OUT")
source .device/setup.sh > "$OUT/setup.log" 2>&1
S="$OUT/summary.txt"
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j 16 >> "$OUT/build.log" 2>&1
echo "[build new] rc=$? $(( $(date +%s) - t0 )) s" >> "$S"
ctest --test-dir build-gpu -L gpu -j 4 > "$OUT/ctest_gpu.log" 2>&1
echo "[ctest -L gpu] rc=$? $(grep -E 'tests passed|tests failed' $OUT/ctest_gpu.log)" >> "$S"
rm -rf /tmp/oldsrc && mkdir /tmp/oldsrc && tar xzf .xfer/lead35/head.tgz -C /tmp/oldsrc
(cd /tmp/oldsrc && cmake -S . -B build-old -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build_old.log" 2>&1 &&
  cmake --build build-old -j 16 -t vidmap >> "$OUT/build_old.log" 2>&1)
echo "[build old] rc=$? $(( $(date +%s) - t0 )) s" >> "$S"
export OMP_WAIT_POLICY=passive
new=$(find build-gpu/src -name vidmap -type f -perm -u+x | head -1)
old=$(find /tmp/oldsrc/build-old/src -name vidmap -type f -perm -u+x | head -1)
D=.device/data
run() { local name=$1 v=$2 list=$3; shift 3; local o=/tmp/r/$name; rm -rf $o
  timeout 120 $v reconstruct $list -o $o -q --device cuda "$@" > "$OUT/$name.log" 2>&1
  python3 -c "
import json; r=json.load(open('$o/run.json')); s=r['stages']
g=lambda k: round(s[k]['wall_ms']) if k in s else '-'
print('[$name] run', round(r['wall_ms']), 'mapper', g('mapper'), 'lba', g('mapper.local_ba'), 'gba', g('mapper.global_ba'), 'mwait', g('pipeline.mapper_wait'), 'fwait', g('pipeline.frontend_wait'), 'guided', g('guided_match'), 'guides', g('guided_match.guides'), 'match', g('match'), 'dev_bytes', r.get('peak_memory',{}).get('device_bytes'))" >> "$S" 2>&1
  echo "  md5 $(md5sum $o/sparse/0/images.bin | cut -c1-12)" >> "$S"
}
run warm $new $D/tum/rgb_subset150.txt --all-frames --klt gate
for i in 1 2 3; do
  run rpyg_old_$i $old $D/tum/rgb_subset150.txt --all-frames --klt gate
  run rpyg_new_$i $new $D/tum/rgb_subset150.txt --all-frames --klt gate
done
run rpyoff_old $old $D/tum/rgb_subset150.txt --all-frames --klt off
run rpyoff_new $new $D/tum/rgb_subset150.txt --all-frames --klt off
run rpy4_old $old $D/tum/rgb_subset150.txt
run rpy4_new $new $D/tum/rgb_subset150.txt
run xyz4_old $old $D/xyz/rgb.txt
run xyz4_new $new $D/xyz/rgb.txt
run desk4_old $old $D/desk/rgb.txt
run desk4_new $new $D/desk/rgb.txt
cat "$S"
