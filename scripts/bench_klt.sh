#!/usr/bin/env bash
# --klt off against --klt on, same input, same build, one run each: landmarks,
# observations per landmark, reprojection error, registered keyframes, SIFT calls, stage times
# and reconstruct_eval's accuracy after a Sim(3) alignment. One JSON line per run.
#
#   scripts/bench_klt.sh OUT INPUT GROUNDTRUTH [reconstruct options...]
#   e.g. scripts/bench_klt.sh /tmp/b /work/shared/data/tum-fr1-rpy/rgb_subset150.txt \
#          /work/shared/data/tum-fr1-rpy/groundtruth.txt --fps 4
# (VIDMAP_DEVICE=cuda for the GPU; max-dt of the association: VIDMAP_MAX_DT, default 0.02;
# KLT_VALUES="on" runs only --klt on, e.g. for variants of its options; "off gate on" adds
# --klt gate, the tracks for the keyframe gate only.)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${VIDMAP_BUILD:-$root/build}
vidmap=$build/src/vidmap/cli/vidmap
evaluate=$build/bench/reconstruct_eval
out=$1 input=$2 gt=$3
shift 3
device=${VIDMAP_DEVICE:-auto}
export OMP_WAIT_POLICY=passive
mkdir -p "$out"
for klt in ${KLT_VALUES:-off on}; do
  o=$out/klt_$klt
  rm -rf "$o"
  t0=$(date +%s.%N)
  /usr/bin/time -f '%U %S' -o "$out/time_$klt" \
    "$vidmap" reconstruct "$input" -o "$o" -q --device "$device" --klt "$klt" "$@"
  t1=$(date +%s.%N)
  "$evaluate" --model "$o/sparse" --list "$input" --groundtruth "$gt" \
    --max-dt "${VIDMAP_MAX_DT:-0.02}" > "$out/eval_$klt.json" || true
  python3 - "$o/run.json" "$klt" "$t0" "$t1" "$out/time_$klt" "$out/eval_$klt.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c, m = r["counts"], r["metrics"]
st = r.get("stages", {})
def sec(n):
    s = st.get(n)
    return round(s.get("wall_ms", 0) / 1e3, 2) if s else 0
u, s_ = open(sys.argv[5]).read().split()[-2:]
try:
    ev = json.load(open(sys.argv[6]))
except Exception:
    ev = {}
row = {"klt": sys.argv[2], "total_s": round(float(sys.argv[4]) - float(sys.argv[3]), 2),
       "cpu_s": round(float(u) + float(s_), 1),
       "frames": c["frames"], "keyframes": c["keyframes"], "sift_calls": c.get("sift_calls"),
       "registered": c["registered_keyframes"], "models": c["models"],
       "landmarks": c["landmarks"], "obs_per_landmark": round(m["mean_track_length"], 3),
       "reprojection_px": round(m["mean_reprojection_error_px"], 3),
       "klt_matches": c.get("source_matches", 0), "klt_only": c.get("source_only_matches", 0),
       "klt_track_keyframes": round(m.get("klt_mean_track_keyframes", 0), 2),
       "sift_s": sec("sift"), "match_s": round(sec("match") + sec("guided_match"), 2),
       "mapper_s": sec("mapper"),
       "klt_s": round(sum(sec(n) for n in ("klt_upload", "klt_pyramid", "klt_track", "klt_check",
                                           "klt_select", "klt_join")), 2),
       "klt_ends": {k[9:]: v for k, v in c.items() if k.startswith("klt_ends_") and
                    not k.startswith("klt_ends_unjoined_")},
       "klt_ends_unjoined": {k[18:]: v for k, v in c.items()
                             if k.startswith("klt_ends_unjoined_")},
       "klt_joins": c.get("klt_joins"), "klt_join_candidates": c.get("klt_join_candidates"),
       "klt_seeds": c.get("klt_seeds"),
       "klt_hist": [v for k, v in sorted(((k, v) for k, v in c.items()
                                           if k.startswith("klt_track_keyframes_")),
                                          key=lambda kv: int(kv[0].split("_")[3]))],
       "track_gate": {k[11:]: v for k, v in c.items() if k.startswith("track_gate_")},
       "eval": ev}
print(json.dumps(row))
PY
done
