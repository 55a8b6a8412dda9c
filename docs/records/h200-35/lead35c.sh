#!/usr/bin/env bash
# Stop 35, lead, call c: the mapper's verbose lines of fr1-rpy all frames under the gate on the
# H200 (each local and global BA's preprocessor and minimizer), and the CPU-only local BA beside.
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
$v reconstruct $D/tum/rgb_subset150.txt -o /tmp/w -q --device cuda --all-frames --klt gate > /dev/null 2>&1
for i in 1 2; do
$v reconstruct $D/tum/rgb_subset150.txt -o /tmp/r$i --verbose --device cuda --all-frames --klt gate > "$OUT/verbose$i.log" 2>&1
python3 -c "import json; r=json.load(open('/tmp/r$i/run.json')); print('[v$i] run', round(r['wall_ms']), 'lba', round(r['stages']['mapper.local_ba']['wall_ms']))" >> "$S"
done
$v reconstruct $D/tum/rgb_subset150.txt -o /tmp/rc --verbose --device cuda --all-frames --klt gate --ba-cuda-min-observations 1000000 > "$OUT/verbose_cpu.log" 2>&1
python3 -c "import json; r=json.load(open('/tmp/rc/run.json')); print('[cpu-lba] run', round(r['wall_ms']), 'lba', round(r['stages']['mapper.local_ba']['wall_ms']), 'gba', round(r['stages']['mapper.global_ba']['wall_ms']))" >> "$S"
md5sum /tmp/r1/sparse/0/images.bin /tmp/r2/sparse/0/images.bin /tmp/rc/sparse/0/images.bin >> "$S"
cat "$S"
