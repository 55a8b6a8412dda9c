#!/usr/bin/env bash
# Runs on the GPU machine (device tool, carry [".device"]): builds vidmap there twice
# (default FMA, and -fmad=false for bit-exact equality), runs the gpu-labelled tests of both,
# compute-sanitizer on the KLT kernels, and the benchmarks. Logs and JSON go to $OUT.
# Usage: bash scripts/device-run.sh [build] [tests] [sanitize] [bench] [babench] [reconstruct]
#        [realdata] [klt]   (realdata and klt read .device/data, made by scripts/device-data.sh)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
OUT=${OUT:-/tmp/vidmap_out}
mkdir -p "$OUT"
modes=" ${*:-build tests sanitize bench} "
has() { [[ "$modes" == *" $1 "* ]]; }
source .device/setup.sh >> "$OUT/summary.txt" 2>&1
export OMP_WAIT_POLICY=passive
echo "host cores: $(nproc); commit $(git rev-parse --short HEAD 2>/dev/null)" >> "$OUT/summary.txt"
if has build; then
  for v in ${VARIANTS:-fma nofma}; do
    flag=OFF
    [ $v = nofma ] && flag=ON
    cmake -S . -B build-$v -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DVIDMAP_CUDA_NO_FMA=$flag > "$OUT/build_$v.log" 2>&1 &&
      cmake --build build-$v -j 16 >> "$OUT/build_$v.log" 2>&1
    echo "[build $v] rc=$?" >> "$OUT/summary.txt"
  done
fi
if has tests; then
  for v in ${VARIANTS:-nofma fma}; do
    ctest --test-dir build-$v -L gpu --output-on-failure --timeout 300 > "$OUT/ctest_$v.log" 2>&1
    echo "[ctest $v] $(grep -E 'tests passed|tests failed' "$OUT/ctest_$v.log")" >> "$OUT/summary.txt"
    grep -E '^ *[0-9]+/[0-9]+ Test' "$OUT/ctest_$v.log" | sed "s/^/[$v] /" >> "$OUT/summary.txt"
  done
fi
if has sanitize; then
  t=build-nofma/src/vidmap/klt/klt_cuda_test
  filter='CudaCases.FailureCases:CudaSelect.CheckerboardAndFlat:CudaBatch.*'
  for tool in memcheck racecheck; do
    timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $t --gtest_filter="$filter" \
      > "$OUT/sanitize_$tool.log" 2>&1
    echo "[sanitize $tool] rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize_$tool.log" | tail -1)" >> "$OUT/summary.txt"
  done
fi
if has bench; then
  b=build-fma/bench
  build-fma/src/vidmap/cli/vidmap info >> "$OUT/summary.txt" 2>&1
  timeout 60 $b/gpu_layer_bench > "$OUT/bench_gpu_layer.json" 2>&1
  timeout 150 $b/features_bench --repeat 21 > "$OUT/bench_features.json" 2>&1
  timeout 90 $b/geometry_scorer 512 4096 50 > "$OUT/bench_geometry_scorer.json" 2>&1
  rm -rf /tmp/klt_cases
  timeout 200 $b/klt_cuda_bench --dump /tmp/klt_cases > "$OUT/bench_klt_cuda.json" 2>&1
  PYTHONUNBUFFERED=1 timeout 150 python3 bench/klt_opencv_pyrlk.py /tmp/klt_cases --threads 16 \
    > "$OUT/bench_klt_opencv.json" 2>&1
  echo "[bench] done" >> "$OUT/summary.txt"
  (cd "$OUT" && tar czf bench.tgz bench_*.json && rm -f bench_*.json)
fi
if has babench; then
  # vidmap CUDA and CPU against Ceres (carried peer binary) on 16 threads, same problems.
  .device/peer/unpack-bal.sh /tmp/d > /dev/null
  B=/tmp/d/bal
  P="$B/problem-49-7776-pre.txt $B/problem-21-11315-pre.txt $B/problem-39-18060-pre.txt $B/problem-16-22106-pre.txt $B/problem-93-61203-pre.txt corridor:300x30000"
  timeout 240 build-fma/bench/ba_bench --threads 16 --backends cuda,cpu --ceres none $P \
    > "$OUT/ba_vidmap_h200.jsonl" 2> "$OUT/ba_vidmap_h200.err"
  echo "[ba vidmap] rc=$?" >> "$OUT/summary.txt"
  LD_LIBRARY_PATH=.device/peer/lib timeout 240 .device/peer/bin/ba_ceres_peer --threads 16 \
    --ceres dense,sparse,iterative $P > "$OUT/ba_ceres_h200.jsonl" 2>&1
  echo "[ba ceres] rc=$?" >> "$OUT/summary.txt"
fi
if has reconstruct; then
  v=build-fma/src/vidmap/cli/vidmap
  $v synth /tmp/seq --scene room --path orbit --frames 48 --fps 8 > "$OUT/reconstruct.log" 2>&1
  for dev in cuda cpu; do
    /usr/bin/time -v $v reconstruct /tmp/seq/rgb.txt -o /tmp/model_$dev --device $dev \
      >> "$OUT/reconstruct.log" 2>&1
    echo "[reconstruct $dev] rc=$?" >> "$OUT/summary.txt"
    cp /tmp/model_$dev/run.json "$OUT/reconstruct_$dev.json" 2>/dev/null
  done
fi
if has realdata; then
  # TUM fr1-rpy (its 150 frames, carried as JPEG quality 95 in .device/data/tum: the PNGs do not
  # fit the carry limit) and Strecha fountain-P11 (.device/data/fountain), on CUDA and on the
  # host's 16 cores, scored by reconstruct_eval; then the synthetic paths on CUDA.
  v=build-fma/src/vidmap/cli/vidmap
  e=build-fma/bench/reconstruct_eval
  tum=.device/data/tum
  cam="FULL_OPENCV 517.3,516.5,318.6,255.3,0.2624,-0.9531,-0.0054,0.0026,1.1633,0,0,0"
  ev=(--list $tum/rgb_subset150.txt --groundtruth $tum/groundtruth.txt)
  for dev in cuda cpu; do
    for run in "all_unknown --all-frames" "all_known --all-frames --camera" "4fps_unknown --fps 4" \
      "4fps_known --fps 4 --camera"; do
      read -r name args <<< "$run"
      a=($args)
      [[ ${a[-1]} == --camera ]] && a+=("$cam")
      o=/tmp/rd/tum_${name}_$dev
      rm -rf $o
      timeout 120 $v reconstruct $tum/rgb_subset150.txt -o $o -q --device $dev "${a[@]}" \
        >> "$OUT/realdata.log" 2>&1
      echo "[tum $name $dev] rc=$?" >> "$OUT/summary.txt"
      cp $o/run.json "$OUT/tum_${name}_$dev.json" 2>/dev/null
      $e --model $o/sparse "${ev[@]}" > "$OUT/tum_${name}_${dev}_eval.json" 2>&1
    done
    o=/tmp/rd/fountain_$dev
    rm -rf $o
    timeout 120 $v reconstruct .device/data/fountain/images -o $o -q --device $dev \
      >> "$OUT/realdata.log" 2>&1
    echo "[fountain $dev] rc=$?" >> "$OUT/summary.txt"
    cp $o/run.json "$OUT/fountain_$dev.json" 2>/dev/null
    $e --model $o/sparse --strecha .device/data/fountain/gt_dense_cameras \
      > "$OUT/fountain_${dev}_eval.json" 2>&1
  done
  VIDMAP_BUILD=build-fma VIDMAP_DEVICE=cuda timeout 200 bash scripts/bench_synthetic.sh /tmp/syn \
    > "$OUT/synthetic_cuda.jsonl" 2>> "$OUT/realdata.log"
  echo "[synthetic cuda] rc=$?" >> "$OUT/summary.txt"
fi
if has klt; then
  # --klt off against --klt on (scripts/bench_klt.sh) on CUDA: TUM fr1-rpy at 4, 8 and 15 fps
  # and all frames (30 fps), then the synthetic sideways path with every frame.
  tum=.device/data/tum
  for a in "--fps 4" "--fps 8" "--fps 15" "--all-frames"; do
    n=$(echo $a | tr -d ' -')
    VIDMAP_BUILD=build-fma VIDMAP_DEVICE=cuda timeout 150 scripts/bench_klt.sh /tmp/klt_$n \
      $tum/rgb_subset150.txt $tum/groundtruth.txt $a > "$OUT/klt_tum_$n.jsonl" 2>> "$OUT/klt.log"
    echo "[klt tum $n] rc=$?" >> "$OUT/summary.txt"
  done
  v=build-fma/src/vidmap/cli/vidmap
  $v synth /tmp/side --scene room --path sideways --frames 48 --fps 8 >> "$OUT/klt.log" 2>&1
  VIDMAP_BUILD=build-fma VIDMAP_DEVICE=cuda timeout 100 scripts/bench_klt.sh /tmp/klt_side \
    /tmp/side/rgb.txt /tmp/side/groundtruth.txt --all-frames > "$OUT/klt_sideways.jsonl" \
    2>> "$OUT/klt.log"
  echo "[klt sideways] rc=$?" >> "$OUT/summary.txt"
fi
(cd "$OUT" && ls *.log >/dev/null 2>&1 && tar czf logs.tgz *.log && rm -f *.log)
cat "$OUT/summary.txt"
