#!/usr/bin/env bash
# The H200 figures of docs/benchmarks.md, section "Pair verification on video (issue 13, helper
# vbatch13)", in one device call, for binaries built on dev (xz-compressed to fit the transfer):
# TUM fr1-rpy, all 150 frames of the benchmarks' list, and tum-fr1-desk, all frames, --device
# cuda, BEFORE (main) and AFTER (H as the plane/rotation test only), alternated: wall time,
# mapper and mapper.verify, pairs, ATE and rotation (reconstruct_eval), the models' md5.
#   bench/verify_video_h200.sh BEFORE.xz AFTER.xz EVAL RPY_LIST RPY_GT DESK_LIST DESK_GT OUT
set -u
BEFORE=$1 AFTER=$2 EVAL=$3 RL=$4 RG=$5 DL=$6 DG=$7 OUT=$8
S=$OUT/summary.txt
export OMP_WAIT_POLICY=passive
T0=$(date +%s)
xz -dc "$BEFORE" >/tmp/vidmap_before && xz -dc "$AFTER" >/tmp/vidmap_after
chmod +x /tmp/vidmap_before /tmp/vidmap_after
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$S"
one() {  # NAME VIDMAP LIST GT ARGS...
  local name=$1 bin=$2 list=$3 gt=$4 o=/tmp/$1
  shift 4
  rm -rf "$o"
  timeout 40 "$bin" reconstruct "$list" -o "$o" -q --device cuda "$@" >"/tmp/$name.log" 2>&1
  local rc=$?
  "$EVAL" --model "$o/sparse" --list "$list" --groundtruth "$gt" --max-dt 0.02 >"/tmp/$name.eval.json" 2>&1
  python3 - "$o/run.json" "/tmp/$name.eval.json" "$name rc $rc" >>"$S" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); c = r.get("counts", {}); st = r.get("stages", {})
try: m = json.load(open(sys.argv[2]))["models"][0]
except Exception: m = {}
g = lambda n: round(st.get(n, {}).get("wall_ms", 0))
print(sys.argv[3], "wall_ms", round(r["wall_ms"]), "mapper", g("mapper"), "verify", g("mapper.verify"),
      "local_ba", g("mapper.local_ba"), "pairs_verified", c.get("pairs_verified"),
      "pairs_rejected", c.get("pairs_rejected"), "keyframes", c.get("keyframes"), "images", m.get("images"),
      "ate_rot_aligned_mm", round(1000 * m.get("ate_rot_aligned_rmse", -1), 2),
      "rot_aligned_deg", m.get("rot_aligned_rmse_deg"))
PY
  echo "$name md5 $(md5sum "$o"/sparse/0/*.bin | cut -c1-12 | tr '\n' ' ')" >>"$S"
}
one rpy_before_1 /tmp/vidmap_before "$RL" "$RG" --all-frames
one rpy_after_1 /tmp/vidmap_after "$RL" "$RG" --all-frames
one rpy_before_2 /tmp/vidmap_before "$RL" "$RG" --all-frames
one rpy_after_2 /tmp/vidmap_after "$RL" "$RG" --all-frames
one desk_before_1 /tmp/vidmap_before "$DL" "$DG" --all-frames
one desk_after_1 /tmp/vidmap_after "$DL" "$DG" --all-frames
echo "done $(($(date +%s) - T0)) s" >>"$S"
