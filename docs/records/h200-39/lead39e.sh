#!/usr/bin/env bash
# Stop 39, lead, call e: the reduced system in one kernel (ba::Options::
# cudaOneBlockCholeskyMaxColumns) against cuSOLVER: ba_cuda_test, ba_bench on local-BA-sized
# problems (0 and 64 in one run), ncu's duration of the kernel against potrf + potrs; then the
# mapper with --ba-cuda-one-block-cholesky 64 against 0, interleaved, scored by reconstruct_eval.
set -u
export OUT=$(realpath "$OUT")
source .device/setup.sh > /tmp/setup.log 2>&1
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/build.log 2>&1 &&
  cmake --build build-gpu -j 16 -t ba_bench ba_cuda_test vidmap reconstruct_eval >> /tmp/build.log 2>&1
echo "[build] rc=$? $(( $(date +%s) - t0 )) s"; tail -5 /tmp/build.log
t=$(find build-gpu -name ba_cuda_test -type f -perm -u+x | head -1)
$t > "$OUT/ba_cuda_test.log" 2>&1; echo "[ba_cuda_test] rc=$?"; grep -E "OneBlock|PASSED|FAILED" "$OUT/ba_cuda_test.log" | head
bb=$(find build-gpu/bench -name ba_bench -type f -perm -u+x | head -1)
for p in synthetic:4x600 synthetic:6x600 synthetic:9x600 synthetic:9x1500 synthetic:14x600; do
  $bb --backends cuda --ceres none --vidmap-solvers dense --reps 7 --max-iterations 20 --cuda-one-block-cholesky 0,64 $p 2>/dev/null | grep '^{' | python3 -c "
import json,sys
for l in sys.stdin:
  d=json.loads(l); print('$p', 'oneblock', d.get('one_block_cholesky_max_columns'), 'it', d['iterations'], 'final', d['final_cost'], 'iter_ms', round(d['iteration_ms_median'],4), 'graph_gpu_ms', round(d.get('graph_gpu_ms_per_iteration',0),4))"
done | tee "$OUT/bench.txt"
timeout 200 ncu --clock-control none --metrics gpu__time_duration.sum --csv -k regex:'oneBlock|getrf|potrf|trsv' \
  $bb --backends cuda --ceres none --vidmap-solvers dense --reps 1 --max-iterations 3 --cuda-graphs off --cuda-one-block-cholesky 0,64 synthetic:9x600 > /tmp/ncu.csv 2>&1
echo "[ncu] rc=$?"
python3 - /tmp/ncu.csv <<'PY' | tee "$OUT/ncu.txt"
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
i0 = next(i for i, r in enumerate(rows) if 'Kernel Name' in r)
h = rows[i0]; rows = rows[i0 + 1:]
ki, vi, ui = h.index('Kernel Name'), h.index('Metric Value'), h.index('Metric Unit')
agg = collections.OrderedDict()
for r in rows:
    a = agg.setdefault(r[ki][:70] + ' [' + r[ui] + ']', []); a.append(float(r[vi].replace(',', '')))
for k, v in agg.items(): print(len(v), 'launches, median', sorted(v)[len(v) // 2], k)
PY
export OMP_WAIT_POLICY=passive
new=$(find build-gpu/src -name vidmap -type f -perm -u+x | head -1)
ev=$(find build-gpu/bench -name reconstruct_eval -type f -perm -u+x | head -1)
D=.device/data; mkdir -p /tmp/r
run() { local name=$1 list=$2 gt=$3; shift 3; local o=/tmp/r/$name; rm -rf $o
  timeout 120 $new reconstruct $list -o $o -q --device cuda "$@" > /dev/null 2>&1
  $ev --model $o/sparse --list $list --groundtruth $gt --max-dt 0.02 > /tmp/r/$name.eval 2>&1
  python3 -c "
import json; r=json.load(open('$o/run.json')); s=r['stages']; k=r['kernels']
try: E=json.load(open('/tmp/r/$name.eval')); e=E['models'][0]; reg=E['registered_images']
except Exception: e={}; reg='?'
g=lambda x: round(s[x]['wall_ms']) if x in s else '-'
gk=lambda x: (k[x]['launches'], round(k[x]['gpu_ms'],1)) if x in k else '-'
print('[$name] run', round(r['wall_ms']), 'mapper', g('mapper'), 'lba', g('mapper.local_ba'), 'gba', g('mapper.global_ba'), 'step_graph', gk('ba_step_graph'), 'img', reg, 'ate_mm', round(e.get('ate_rmse',0)*1000,2), 'rot', e.get('rot_aligned_rmse_deg'), 'md5', '$(md5sum $o/sparse/0/images.bin 2>/dev/null | cut -c1-12)')" | tee -a "$OUT/runs.txt" 2>&1
}
R="$D/tum/rgb_subset150.txt $D/tum/groundtruth.txt"
X="$D/xyz/rgb.txt $D/xyz/groundtruth.txt"
K="$D/desk/rgb.txt $D/desk/groundtruth.txt"
run warm $R --all-frames
for i in 1 2 3; do run rpy_cusolver_$i $R --all-frames; run rpy_oneblock_$i $R --all-frames --ba-cuda-one-block-cholesky 64; done
run xyz4_cusolver $X; run xyz4_oneblock $X --ba-cuda-one-block-cholesky 64
run desk4_cusolver $K; run desk4_oneblock $K --ba-cuda-one-block-cholesky 64
