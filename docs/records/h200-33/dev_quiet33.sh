#!/usr/bin/env bash
# Dev, quiet: fr1-rpy all frames (gate, off) and xyz 4 fps, main 474abde against the merged tree.
B=/tmp/vidmap_474; A=/work/main/build-lead/src/vidmap/cli/vidmap
E=/work/main/build/bench/reconstruct_eval
T=/work/shared/data
export OMP_WAIT_POLICY=passive
one() { # tag bin name list gt args...
  local tag=$1 bin=$2 name=$3 list=$4 gt=$5; shift 5
  local o=/work/tmp/lead33/q/${tag}_$name; rm -rf $o; mkdir -p /work/tmp/lead33/q
  local t=$( { /usr/bin/time -f "%U %S %e" $bin reconstruct $list -o $o -q --device cpu "$@" > /dev/null 2> $o.err; } 2>&1; tail -1 $o.err )
  local ev=$($E --model $o/sparse --list $list --groundtruth $gt --max-dt 0.02 | python3 -c "import json,sys;e=json.load(sys.stdin)['models'][0];print(e['images'],round(e['ate_rot_aligned_rmse']*1000,2),e['rot_aligned_rmse_deg'])")
  echo "$tag $name time(u s w)=$(tail -1 $o.err) md5=$(md5sum $o/sparse/0/images.bin | cut -c1-12) eval=$ev load=$(cut -d' ' -f1 /proc/loadavg)"
}
R="$T/tum-fr1-rpy/rgb_subset150.txt $T/tum-fr1-rpy/groundtruth.txt"
for i in 1 2 3; do
  for tag in before after; do
    [[ $tag == before ]] && bin=$B || bin=$A
    one $tag $bin rpyall_gate $R --all-frames --klt gate
    one $tag $bin rpyall_off $R --all-frames --klt off
  done
done
for tag in before after; do
  [[ $tag == before ]] && bin=$B || bin=$A
  one $tag $bin xyz4 $T/tum-fr1-xyz/rgb.txt $T/tum-fr1-xyz/groundtruth.txt --fps 4
done
