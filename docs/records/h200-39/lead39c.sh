#!/usr/bin/env bash
# Stop 39, lead, call c: the kernels of one LM iteration of a local-BA-sized problem on the H200
# (ba_bench synthetic:14x600, CUDA graphs): ncu per graph node (gpu__time_duration), CSV.
set -u
export OUT=$(realpath "$OUT")
source .device/setup.sh > /tmp/setup.log 2>&1
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/build.log 2>&1 &&
  cmake --build build-gpu -j 16 -t ba_bench >> /tmp/build.log 2>&1
echo "[build] rc=$? $(( $(date +%s) - t0 )) s"
bb=$(find build-gpu/bench -name ba_bench -type f -perm -u+x | head -1)
timeout 300 ncu --clock-control none --graph-profiling node --metrics gpu__time_duration.sum --csv \
  $bb --backends cuda --ceres none --reps 1 --max-iterations 4 --cuda-graphs on synthetic:14x600 \
  > "$OUT/ncu.csv" 2> "$OUT/ncu.err"
echo "[ncu] rc=$?"
python3 - "$OUT/ncu.csv" <<'PY' | tee "$OUT/kernels.txt"
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
h = rows[0]; rows = rows[1:]
ki = h.index('Kernel Name'); vi = h.index('Metric Value'); ui = h.index('Metric Unit')
agg = collections.OrderedDict()
for r in rows:
    v = float(r[vi].replace(',', '')); v = v / 1000 if r[ui] == 'nsecond' else v
    a = agg.setdefault(r[ki][:90], [0, 0.0]); a[0] += 1; a[1] += v
print('kernels profiled', len(rows), 'total us', round(sum(a[1] for a in agg.values()), 1))
for k, (n, us) in sorted(agg.items(), key=lambda kv: -kv[1][1]): print(f'{n:5d} {us:10.1f} us  {k}')
PY
