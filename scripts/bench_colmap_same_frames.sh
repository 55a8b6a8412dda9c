#!/usr/bin/env bash
# vidmap (CPU) and COLMAP 3.8 on the same frames, per stage, timed by /usr/bin/time: the four
# synthetic paths (48 frames at 320x240, --all-frames) and tum-fr1-desk at 4 fps. COLMAP
# (scripts/colmap_run.sh) runs on the frames vidmap's model names; both are scored by
# bench/reconstruct_eval. Per input: OUT/NAME.{v,c}.{time,eval,log} and the models.
#   scripts/bench_colmap_same_frames.sh [OUT]
set -uo pipefail
M=$(cd "$(dirname "$0")/.." && pwd); B=${VIDMAP_BUILD:-$M/build}
V=$B/src/vidmap/cli/vidmap; E=$B/bench/reconstruct_eval
O=${1:-/tmp/vidmap_colmap_same_frames}; mkdir -p $O
export OMP_WAIT_POLICY=passive
one() { # NAME INPUT GT MAXDT [vidmap args]
  local n=$1 in=$2 gt=$3 dt=$4; shift 4
  rm -rf $O/$n.v
  /usr/bin/time -f '%e %U %S' -o $O/$n.v.time $V reconstruct "$in" -o $O/$n.v -q --device cpu "$@" > $O/$n.v.log 2>&1
  $E --model $O/$n.v/sparse --list "$in" --groundtruth $gt --max-dt $dt > $O/$n.v.eval 2>&1
  # COLMAP on the frames vidmap took
  rm -rf $O/$n.frames; mkdir -p $O/$n.frames
  python3 - $O/$n.v/sparse/0/images.txt "$in" $O/$n.frames <<'PY'
import sys, os
imgs, src, dst = sys.argv[1:4]
base = os.path.dirname(os.path.abspath(src)) if os.path.isfile(src) else src
names = []
for i, l in enumerate(open(imgs)):
    if l.startswith('#') or not l.strip(): continue
    parts = l.split()
    if len(parts) >= 10 and parts[0].isdigit() and len(names) < 100000:
        names.append(parts[9])
names = sorted(set(n for n in names))
for n in names:
    p = os.path.join(base, n)
    if not os.path.exists(p):
        p = os.path.join(base, 'rgb', os.path.basename(n))
    os.symlink(p, os.path.join(dst, os.path.basename(n)))
print(len(names))
PY
  /usr/bin/time -f '%e %U %S' -o $O/$n.c.time bash $M/scripts/colmap_run.sh $O/$n.frames $O/$n.c > $O/$n.c.log 2>&1
  $E --model $O/$n.c/sparse --list "$in" --groundtruth $gt --max-dt $dt > $O/$n.c.eval 2>&1
  echo "== $n done $(date)"
}
D=${VIDMAP_DATA:-$M/../shared/data}
for p in orbit forward sideways pan; do
  rm -rf $O/syn_$p; $V synth $O/syn_$p --scene room --path $p --frames 48 --fps 8 --width 320 --height 240 > /dev/null 2>&1
done
for p in orbit forward sideways pan; do
  one syn_$p $O/syn_$p/rgb.txt $O/syn_$p/groundtruth.txt 0.001 --all-frames
done
one desk4 $D/tum-fr1-desk/rgb.txt $D/tum-fr1-desk/groundtruth.txt 0.02 --fps 4
