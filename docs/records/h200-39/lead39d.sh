#!/usr/bin/env bash
# Stop 39, lead, call d: issue 12's gate on the H200 with stop 38's tree: the default (KLT gate at
# all frames) against --klt off, interleaved, fr1-rpy, fr1-xyz and fr1-desk at all frames.
set -u
export OUT=$(realpath "$OUT")
W=/tmp/w; mkdir -p $W/runs /tmp/r
source .device/setup.sh > "$W/setup.log" 2>&1
S="$OUT/summary.txt"
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$W/build.log" 2>&1 &&
  cmake --build build-gpu -j 16 -t vidmap reconstruct_eval >> "$W/build.log" 2>&1
echo "[build] rc=$? $(( $(date +%s) - t0 )) s" | tee -a "$S"
export OMP_WAIT_POLICY=passive
new=$(find build-gpu/src -name vidmap -type f -perm -u+x | head -1)
ev=$(find build-gpu/bench -name reconstruct_eval -type f -perm -u+x | head -1)
D=.device/data
run() { local name=$1 v=$2 list=$3 gt=$4; shift 4; local o=/tmp/r/$name; rm -rf $o
  { TIMEFORMAT="%U %S %R"; time timeout 120 $v reconstruct $list -o $o -q "$@" > "$W/$name.log" 2>&1; } 2> /tmp/r/$name.time
  $ev --model $o/sparse --list $list --groundtruth $gt --max-dt 0.02 > /tmp/r/$name.eval 2>&1
  cp $o/run.json $W/runs/$name.json 2>/dev/null
  python3 -c "
import json; r=json.load(open('$o/run.json')); s=r['stages']; c=r['counts']; m=r['metrics']
try: E=json.load(open('/tmp/r/$name.eval')); e=E['models'][0]; reg=E['registered_images']
except Exception: e={}; reg='?'
g=lambda k: round(s[k]['wall_ms']) if k in s else '-'
u,sy,el=open('/tmp/r/$name.time').read().split()[-3:]
print('[$name] run', round(r['wall_ms']), 'cpu_s', round(float(u)+float(sy),1), 'mapper', g('mapper'), 'sift', g('sift'), 'sift_calls', c.get('sift_calls'), 'keyframes', c.get('keyframes'), 'match', g('match'), 'lba', g('mapper.local_ba'), 'gba', g('mapper.global_ba'), 'landmarks', c.get('landmarks'), 'obs', c.get('observations'), 'track_len', round(m.get('mean_track_length',0),2), 'reproj', round(m.get('mean_reprojection_error_px',0),3), 'img', reg, 'ate_mm', round(e.get('ate_rmse',0)*1000,2), 'rot', e.get('rot_aligned_rmse_deg'), 'md5', '$(md5sum $o/sparse/0/images.bin 2>/dev/null | cut -c1-12)')" | tee -a "$S" 2>&1
}
R="$D/tum/rgb_subset150.txt $D/tum/groundtruth.txt"
X="$D/xyz/rgb.txt $D/xyz/groundtruth.txt"
K="$D/desk/rgb.txt $D/desk/groundtruth.txt"
run warm $new $R --all-frames --device cuda
for i in 1 2; do
  run rpy_gate_$i $new $R --all-frames --device cuda; run rpy_off_$i $new $R --all-frames --device cuda --klt off
  run xyz_gate_$i $new $X --all-frames --device cuda; run xyz_off_$i $new $X --all-frames --device cuda --klt off
  run desk_gate_$i $new $K --all-frames --device cuda; run desk_off_$i $new $K --all-frames --device cuda --klt off
done
tar czf "$OUT/d.tgz" -C $W .
