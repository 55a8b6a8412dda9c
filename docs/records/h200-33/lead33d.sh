#!/usr/bin/env bash
# Stop 33, lead, call d: the KLT outliers' lag (klt_outlier_lag 1 against 0) on the H200. Builds vidmap and reconstruct_eval, then
# TUM fr1-rpy 150 frames at all frames on CUDA (--klt gate), lag 1 (default) and 0 alternating;
# rpy at 4 fps and fr1-xyz at 4 fps under the gate, both lags.
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
  local m=$(python3 -c "import json,sys;r=json.load(open('$o/run.json'));e=json.load(open('$OUT/runs/$name.eval.json'))['models'][0];s=r['stages'];g=lambda k:round(s[k]['wall_ms']) if k in s else '-';print('run',round(r['wall_ms']),'mapper',g('mapper'),'lba',g('mapper.local_ba'),'gba',g('mapper.global_ba'),'decode',g('decode'),'mwait',g('pipeline.mapper_wait'),'fwait',g('pipeline.frontend_wait'),'startup',g('pipeline.startup'),'first',g('pipeline.first_frame_wait'),'reg',e['images'],'ate',round(e['ate_rot_aligned_rmse']*1000,2),'rot',e['rot_aligned_rmse_deg'])" 2>&1 | tail -1)
  echo "[$name] rc=$rc wall $(awk "BEGIN{printf \"%.2f\", $b - $a}") s md5 $(md5sum $o/sparse/0/images.bin 2>/dev/null | cut -c1-12) $m" >> "$S"
}
R="$D/tum/rgb_subset150.txt $D/tum/groundtruth.txt"
run warm $R --all-frames --klt gate
for i in 1 2 3; do
  run rpyall_gate_lag1_$i $R --all-frames --klt gate
  run rpyall_gate_lag0_$i $R --all-frames --klt gate --klt-outlier-lag 0
done
run rpy4_gate_lag1 $R --fps 4 --klt gate
run rpy4_gate_lag0 $R --fps 4 --klt gate --klt-outlier-lag 0
run xyz4_gate_lag1 $D/xyz/rgb.txt $D/xyz/groundtruth.txt --fps 4 --klt gate
run xyz4_gate_lag0 $D/xyz/rgb.txt $D/xyz/groundtruth.txt --fps 4 --klt gate --klt-outlier-lag 0
run desk4_gate_lag1 $D/desk/rgb.txt $D/desk/groundtruth.txt --fps 4 --klt gate
echo "total $(( $(date +%s) - t0 )) s" >> "$S"
cat "$S"
cd "$OUT" && tar czf runs.tgz runs && rm -rf runs
