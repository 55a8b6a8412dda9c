#!/usr/bin/env bash
# Stop 34, lead, call e: the final code (6531f11) on the H200. Builds vidmap, reconstruct_eval and
# the eight CUDA test binaries (FMA, the default), runs the test binaries whole, all at once; then
# the pipeline on CUDA, one run at a time: TUM fr1-rpy 150 frames at all frames (--klt off and
# --klt gate, 3 runs each) and at 4 fps, fr1-xyz and fr1-desk at 4 fps (off and gate), scored,
# with each run's stage line.
set -u
export OUT=$(realpath "$OUT")
source .device/setup.sh > "$OUT/setup.log" 2>&1
t0=$(date +%s)
S="$OUT/summary.txt"
echo "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); host cores $(nproc)" > "$S"
T="ba_cuda_test features_cuda_test geometry_cuda_test gpu_smoke_test io_gpu_test klt_cuda_test mvs_cuda_test pipeline_gpu_test"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j 16 -t $T vidmap reconstruct_eval >> "$OUT/build.log" 2>&1
echo "[build] rc=$? $(( $(date +%s) - t0 )) s" >> "$S"
export VIDMAP_SOURCE_DIR=$PWD OMP_WAIT_POLICY=passive
mkdir -p "$OUT/logs" "$OUT/runs"
for t in $T; do
  (
    a=$(date +%s)
    b=$(find build-gpu/src -name $t -type f -perm -u+x | head -1)
    (cd "$(dirname "$b")" && timeout 300 "./$t") > "$OUT/logs/$t.log" 2>&1
    echo "[$t] rc=$? $(( $(date +%s) - a )) s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$OUT/logs/$t.log" | tr '\n' ' ')" >> "$S"
  ) &
done
wait
v=$(find build-gpu/src -name vidmap -type f -perm -u+x | head -1)
e=$(find build-gpu/bench -name reconstruct_eval -type f -perm -u+x | head -1)
D=.device/data
run() {  # name list gt args...
  local name=$1 list=$2 gt=$3; shift 3
  local o=/tmp/r/$name
  rm -rf $o
  local a=$(date +%s.%N)
  timeout 90 $v reconstruct $list -o $o -q --device cuda "$@" > "$OUT/runs/$name.log" 2>&1
  local rc=$? b=$(date +%s.%N)
  cp $o/run.json "$OUT/runs/$name.run.json" 2>/dev/null
  $e --model $o/sparse --list $list --groundtruth $gt --max-dt 0.02 > "$OUT/runs/$name.eval.json" 2>&1
  local m=$(python3 -c "import json,sys;r=json.load(open('$o/run.json'));e=json.load(open('$OUT/runs/$name.eval.json'))['models'][0];s=r['stages'];g=lambda k:round(s[k]['wall_ms']) if k in s else '-';print('run',round(r['wall_ms']),'mapper',g('mapper'),'lba',g('mapper.local_ba'),'gba',g('mapper.global_ba'),'decode',g('decode'),'mwait',g('pipeline.mapper_wait'),'fwait',g('pipeline.frontend_wait'),'startup',g('pipeline.startup'),'first',g('pipeline.first_frame_wait'),'reg',e['images'],'ate',round(e['ate_rot_aligned_rmse']*1000,2),'rot',e['rot_aligned_rmse_deg'])" 2>&1 | tail -1)
  echo "[$name] rc=$rc wall $(awk "BEGIN{printf \"%.2f\", $b - $a}") s md5 $(md5sum $o/sparse/0/images.bin 2>/dev/null | cut -c1-12) $m" >> "$S"
}
R="$D/tum/rgb_subset150.txt $D/tum/groundtruth.txt"
for i in 1; do run rpyall_off_$i $R --all-frames --klt off; done
for i in 1 2; do run rpyall_gate_$i $R --all-frames --klt gate; done
run rpy4_off $R --fps 4 --klt off
run xyz4_off $D/xyz/rgb.txt $D/xyz/groundtruth.txt --fps 4 --klt off
run xyz4_gate $D/xyz/rgb.txt $D/xyz/groundtruth.txt --fps 4 --klt gate
run desk4_off $D/desk/rgb.txt $D/desk/groundtruth.txt --fps 4 --klt off
run desk4_gate $D/desk/rgb.txt $D/desk/groundtruth.txt --fps 4 --klt gate
# fr1-desk at 4 fps from its 2nd and 4th frame (the stop's reliability cases)
for k in 1 3; do
  (grep '^#' $D/desk/rgb.txt; grep -v '^#' $D/desk/rgb.txt | tail -n +$((k+1)) | awk -v d=$PWD/$D/desk '{print $1" "d"/"$2}') > /tmp/desk_o$k.txt
  run desk4_o${k}_off /tmp/desk_o$k.txt $D/desk/groundtruth.txt --fps 4 --klt off
done
echo "total $(( $(date +%s) - t0 )) s" >> "$S"
cat "$S"
cd "$OUT" && tar czf logs.tgz logs build.log setup.log && rm -rf logs && tar czf runs.tgz runs && rm -rf runs
