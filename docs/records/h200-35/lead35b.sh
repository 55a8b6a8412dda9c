#!/usr/bin/env bash
# Stop 35, lead, call b: CUDA API time of fr1-rpy all frames under the gate (nsys), to see the
# local BA's host work per call.
set -u
export OUT=$(realpath "$OUT")
source .device/setup.sh > "$OUT/setup.log" 2>&1
S="$OUT/summary.txt"
which nsys ncu >> "$S" 2>&1; ls /usr/local/cuda/bin | tr '\n' ' ' >> "$S"; echo >> "$S"
NSYS=$(which nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
echo "nsys=$NSYS" >> "$S"
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j 16 -t vidmap >> "$OUT/build.log" 2>&1
echo "[build] rc=$? $(( $(date +%s) - t0 )) s" >> "$S"
export OMP_WAIT_POLICY=passive
v=$(find build-gpu/src -name vidmap -type f -perm -u+x | head -1)
D=.device/data
$v reconstruct $D/tum/rgb_subset150.txt -o /tmp/w -q --device cuda --all-frames --klt gate > /dev/null 2>&1
cd /tmp && $NSYS profile -t cuda,osrt -o /tmp/p --force-overwrite true $OLDPWD/$v reconstruct $OLDPWD/$D/tum/rgb_subset150.txt -o /tmp/r -q --device cuda --all-frames --klt gate > "$OUT/nsys.log" 2>&1
echo "[nsys] rc=$?" >> "$S"
$NSYS stats -r cuda_api_sum,cuda_gpu_kern_sum,osrt_sum -f csv -o /tmp/st /tmp/p.nsys-rep >> "$OUT/nsys.log" 2>&1
ls /tmp/st* >> "$S"
for f in /tmp/st*.csv; do cp $f "$OUT/"; done
$NSYS stats -r cuda_api_sum /tmp/p.nsys-rep 2>&1 | head -40 >> "$S"
cat "$S"
