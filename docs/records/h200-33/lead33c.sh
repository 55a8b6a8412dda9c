#!/usr/bin/env bash
# Stop 33, lead, call c: the start of a run, and the local BA's tolerance, on the H200. Builds vidmap and reconstruct_eval, then
# TUM fr1-rpy 150 frames at all frames on CUDA (--klt gate): pipeline.startup and
# pipeline.first_frame_wait; CUDA_MODULE_LOADING eager against lazy; the local BA's function
# tolerance 1e-6 (default), 1e-5, 1e-4 on rpy (gate, off, 4 fps), xyz and desk at 4 fps.
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
for i in 1 2 3; do run rpyall_gate_$i $R --all-frames --klt gate; done
for i in 1 2; do CUDA_MODULE_LOADING=EAGER run rpyall_gate_eager_$i $R --all-frames --klt gate; done
for f in 1e-5 1e-4; do
  for i in 1 2; do run rpyall_gate_ftol${f}_$i $R --all-frames --klt gate --local-ba-function-tolerance $f; done
  run rpyall_off_ftol$f $R --all-frames --klt off --local-ba-function-tolerance $f
  run rpy4_ftol$f $R --fps 4 --local-ba-function-tolerance $f
  run xyz4_ftol$f $D/xyz/rgb.txt $D/xyz/groundtruth.txt --fps 4 --local-ba-function-tolerance $f
  run desk4_ftol$f $D/desk/rgb.txt $D/desk/groundtruth.txt --fps 4 --local-ba-function-tolerance $f
done
run rpy4_ftol1e-6 $R --fps 4
run xyz4_ftol1e-6 $D/xyz/rgb.txt $D/xyz/groundtruth.txt --fps 4
echo "total $(( $(date +%s) - t0 )) s" >> "$S"
cat "$S"
cd "$OUT" && tar czf runs.tgz runs && rm -rf runs
