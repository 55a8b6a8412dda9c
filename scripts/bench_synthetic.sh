#!/usr/bin/env bash
# The reconstruction on synthetic videos with known cameras (vidmap synth: the textured room
# along every path: orbit, sideways, forward motion, and pan, a rotation-heavy +-35 degree yaw
# over a 0.3 m baseline), with the camera unknown (self-calibrated, refined in BA) and known.
# Prints one JSON line per run: time, keyframes, registered, models, reprojection error, and
# reconstruct_eval's accuracy after a Sim(3) alignment (ATE RMSE, truth spread, rotation).
#
#   scripts/bench_synthetic.sh [OUT]         (VIDMAP_DEVICE=cuda for the GPU)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${VIDMAP_BUILD:-$root/build}
vidmap=$build/src/vidmap/cli/vidmap
evaluate=$build/bench/reconstruct_eval
out=${1:-/tmp/vidmap_bench_synthetic}
device=${VIDMAP_DEVICE:-auto}
export OMP_WAIT_POLICY=passive
mkdir -p "$out"
echo "{\"commit\": \"$(git -C "$root" rev-parse --short HEAD)\", \"cores\": $(nproc), \"device\": \"$device\"}"
for path in orbit sideways forward pan; do
  seq=$out/seq_$path
  [[ -f $seq/rgb.txt ]] || "$vidmap" synth "$seq" --scene room --path "$path" --frames 48 \
    --fps 8 --width 640 --height 480 > /dev/null
  cam=$(awk '!/^#/ {printf "PINHOLE %s,%s,%s,%s", $5, $6, $7, $8; exit}' \
    "$seq/cameras.txt")
  for mode in unknown known; do
    args=()
    [[ $mode == known ]] && args=(--camera "$cam")
    o=$out/${path}_$mode
    rm -rf "$o"
    t0=$(date +%s.%N)
    "$vidmap" reconstruct "$seq/rgb.txt" -o "$o" -q --device "$device" "${args[@]}"
    t1=$(date +%s.%N)
    python3 - "$o/run.json" "$path" "$mode" "$t0" "$t1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c, m = r["counts"], r["metrics"]
print(json.dumps({"path": sys.argv[2], "camera": sys.argv[3],
                  "total_s": round(float(sys.argv[5]) - float(sys.argv[4]), 2),
                  "keyframes": c["keyframes"], "registered": c["registered_keyframes"],
                  "models": c["models"], "points": c["landmarks"],
                  "reprojection_px": round(m["mean_reprojection_error_px"], 3)}))
PY
    "$evaluate" --model "$o/sparse" --list "$seq/rgb.txt" --groundtruth "$seq/groundtruth.txt" \
      --max-dt 0.001 | tr -d '\n' | sed 's/  */ /g'
    echo
  done
done
