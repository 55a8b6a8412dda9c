#!/usr/bin/env bash
# Stop 33, lead, call f: is the merged tree slower on the H200? The tree before cpu33's merge
# (9ec7fa1, carried as source in .xfer/lead33/old) against the merged tree (HEAD), built side by
# side, runs alternating: TUM fr1-rpy all frames --klt off and gate, fr1-xyz 4 fps off.
set -u
export OUT=$(realpath "$OUT")
source .device/setup.sh > "$OUT/setup.log" 2>&1
t0=$(date +%s)
S="$OUT/summary.txt"
echo "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); host cores $(nproc)" > "$S"
ROOT=$PWD
( cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build_new.log" 2>&1 &&
  cmake --build build-gpu -j 8 -t vidmap reconstruct_eval >> "$OUT/build_new.log" 2>&1; echo "[build new] rc=$? $(( $(date +%s) - t0 )) s" >> "$S" ) &
( cd .xfer/lead33/old && cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build_old.log" 2>&1 &&
  cmake --build build-gpu -j 8 -t vidmap >> "$OUT/build_old.log" 2>&1; echo "[build old] rc=$? $(( $(date +%s) - t0 )) s" >> "$S" ) &
wait
export VIDMAP_SOURCE_DIR=$PWD OMP_WAIT_POLICY=passive
mkdir -p "$OUT/runs"
vn=$(find build-gpu/src -name vidmap -type f -perm -u+x | head -1)
vo=$(find .xfer/lead33/old/build-gpu/src -name vidmap -type f -perm -u+x | head -1)
e=$(find build-gpu/bench -name reconstruct_eval -type f -perm -u+x | head -1)
D=.device/data
run() {  # name bin list gt args...
  local name=$1 v=$2 list=$3 gt=$4; shift 4
  local o=/tmp/r/$name
  rm -rf $o
  local a=$(date +%s.%N)
  timeout 90 $v reconstruct $list -o $o -q --device cuda "$@" > "$OUT/runs/$name.log" 2>&1
  local rc=$? b=$(date +%s.%N)
  cp $o/run.json "$OUT/runs/$name.run.json" 2>/dev/null
  $e --model $o/sparse --list $list --groundtruth $gt --max-dt 0.02 > "$OUT/runs/$name.eval.json" 2>&1
  local m=$(python3 -c "import json,sys;r=json.load(open('$o/run.json'));e=json.load(open('$OUT/runs/$name.eval.json'))['models'][0];s=r['stages'];g=lambda k:round(s[k]['wall_ms']) if k in s else '-';print('run',round(r['wall_ms']),'mapper',g('mapper'),'lba',g('mapper.local_ba'),'gba',g('mapper.global_ba'),'mwait',g('pipeline.mapper_wait'),'fwait',g('pipeline.frontend_wait'),'reg',e['images'],'ate',round(e['ate_rot_aligned_rmse']*1000,2),'rot',e['rot_aligned_rmse_deg'])" 2>&1 | tail -1)
  echo "[$name] rc=$rc wall $(awk "BEGIN{printf \"%.2f\", $b - $a}") s md5 $(md5sum $o/sparse/0/images.bin 2>/dev/null | cut -c1-12) $m" >> "$S"
}
R="$D/tum/rgb_subset150.txt $D/tum/groundtruth.txt"
run warm $vn $R --all-frames --klt gate
for i in 1 2 3; do
  run rpyall_off_old_$i $vo $R --all-frames --klt off
  run rpyall_off_new_$i $vn $R --all-frames --klt off
  run rpyall_gate_old_$i $vo $R --all-frames --klt gate
  run rpyall_gate_new_$i $vn $R --all-frames --klt gate
done
for i in 1 2; do
  run xyz4_old_$i $vo $D/xyz/rgb.txt $D/xyz/groundtruth.txt --fps 4
  run xyz4_new_$i $vn $D/xyz/rgb.txt $D/xyz/groundtruth.txt --fps 4
done
echo "total $(( $(date +%s) - t0 )) s" >> "$S"
cat "$S"
cd "$OUT" && tar czf runs.tgz runs && rm -rf runs
