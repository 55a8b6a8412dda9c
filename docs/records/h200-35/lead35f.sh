#!/usr/bin/env bash
# Stop 35, lead, call f: the kept graphs updated (cudaGraphExecUpdate) instead of instantiated.
# "old" = this tree with the kept graphs never taken (each solve instantiates);
# "new" = this tree (block pool, the side threads, the graphs updated). Interleaved runs.
set -u
export OUT=$(realpath "$OUT")
source .device/setup.sh > "$OUT/setup.log" 2>&1
S="$OUT/summary.txt"
t0=$(date +%s)
rm -rf /tmp/oldsrc && mkdir /tmp/oldsrc && cp -r $(ls -A | grep -v -e '^build' -e '^.device' -e '^.git$') /tmp/oldsrc/
cp .xfer/lead35/old/cuda_backend_nograph.cuh /tmp/oldsrc/src/vidmap/ba/cuda_backend_impl.cuh
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j 16 -t vidmap ba_cuda_test gpu_smoke_test gpu_test pipeline_gpu_test >> "$OUT/build.log" 2>&1
echo "[build new] rc=$? $(( $(date +%s) - t0 )) s" >> "$S"
(cd /tmp/oldsrc && cmake -S . -B build-old -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build_old.log" 2>&1 &&
  cmake --build build-old -j 16 -t vidmap >> "$OUT/build_old.log" 2>&1)
echo "[build old] rc=$? $(( $(date +%s) - t0 )) s" >> "$S"
for t in ba_cuda_test gpu_smoke_test gpu_test pipeline_gpu_test; do
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
run rpy4_old $old $D/tum/rgb_subset150.txt
run rpy4_new $new $D/tum/rgb_subset150.txt
run xyz4_old $old $D/xyz/rgb.txt
run xyz4_new $new $D/xyz/rgb.txt
$new reconstruct $D/tum/rgb_subset150.txt -o /tmp/vn --verbose --device cuda --all-frames --klt gate > "$OUT/verbose_new.log" 2>&1
grep "local BA" "$OUT/verbose_new.log" | grep CUDA | python3 -c "
import sys,re
R=[]
for l in sys.stdin:
  m=re.search(r'(\d+) iterations.*?, ([\d.]+) ms \(cpu.*?preprocessor ([\d.]+) ms, minimizer ([\d.]+) ms; backend ([\d.]+), capture ([\d.]+), teardown ([\d.]+)', l)
  R.append([float(x) for x in m.groups()])
n=len(R); print('[lba cuda new] calls',n,'sums: it %.0f wall %.1f pre %.1f min %.1f backend %.1f capture %.1f teardown %.1f'%tuple(sum(r[i] for r in R) for i in range(7)))" >> "$S" 2>&1
$old reconstruct $D/tum/rgb_subset150.txt -o /tmp/vo --verbose --device cuda --all-frames --klt gate > "$OUT/verbose_old.log" 2>&1
grep "local BA" "$OUT/verbose_old.log" | grep CUDA | python3 -c "
import sys,re
R=[]
for l in sys.stdin:
  m=re.search(r'(\d+) iterations.*?, ([\d.]+) ms \(cpu.*?preprocessor ([\d.]+) ms, minimizer ([\d.]+) ms; backend ([\d.]+), capture ([\d.]+), teardown ([\d.]+)', l)
  R.append([float(x) for x in m.groups()])
n=len(R); print('[lba cuda old] calls',n,'sums: it %.0f wall %.1f pre %.1f min %.1f backend %.1f capture %.1f teardown %.1f'%tuple(sum(r[i] for r in R) for i in range(7)))" >> "$S" 2>&1
cat "$S"
