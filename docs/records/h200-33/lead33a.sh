#!/usr/bin/env bash
# Stop 33, lead, call a: main 474abde on the H200. Builds vidmap and reconstruct_eval, then
# TUM fr1-rpy 150 frames at all frames on CUDA (--klt gate x3, --klt off x1), run records back,
# to see where the 2.5 s go (front end against the mapper thread).
set -u
export OUT=$(realpath "$OUT")
source .device/setup.sh > "$OUT/setup.log" 2>&1
t0=$(date +%s)
S="$OUT/summary.txt"
echo "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); host cores $(nproc)" > "$S"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j 16 -t vidmap reconstruct_eval >> "$OUT/build.log" 2>&1
echo "[build] rc=$? $(( $(date +%s) - t0 )) s" >> "$S"
export VIDMAP_SOURCE_DIR=$PWD OMP_WAIT_POLICY=passive
mkdir -p "$OUT/runs"
v=$(find build-gpu/src -name vidmap -type f -perm -u+x | head -1)
e=$(find build-gpu/bench -name reconstruct_eval -type f -perm -u+x | head -1)
D=.device/data
run() {  # name list gt args...
  local name=$1 list=$2 gt=$3; shift 3
  local o=/tmp/r/$name
  rm -rf $o
  local a=$(date +%s.%N)
  timeout 90 $v reconstruct $list -o $o -q --device ${DEV:-cuda} "$@" > "$OUT/runs/$name.log" 2>&1
  local rc=$? b=$(date +%s.%N)
  cp $o/run.json "$OUT/runs/$name.run.json" 2>/dev/null
  $e --model $o/sparse --list $list --groundtruth $gt --max-dt 0.02 > "$OUT/runs/$name.eval.json" 2>&1
  echo "[$name] rc=$rc wall $(awk "BEGIN{printf \"%.2f\", $b - $a}") s md5 $(md5sum $o/sparse/0/images.bin 2>/dev/null | cut -c1-12) $(tail -1 "$OUT/runs/$name.log")" >> "$S"
}
R="$D/tum/rgb_subset150.txt $D/tum/groundtruth.txt"
for i in 1 2 3; do run rpyall_gate_$i $R --all-frames --klt gate; done
run rpyall_off_1 $R --all-frames --klt off
DEV=cpu run rpyall_gate_cpu $R --all-frames --klt gate
echo "total $(( $(date +%s) - t0 )) s" >> "$S"
cat "$S"
cd "$OUT" && tar czf runs.tgz runs && rm -rf runs
