#!/bin/bash
# turn.sh: --klt off, --klt gate, --klt gate --klt-max-turn-px 32 on the evidence inputs (dev, CPU, merged tree)
O=/work/tmp/lead34/turn; mkdir -p $O; C=/work/tmp/calib33; T=/work/shared/data; R=$T/tum-fr1-rpy/rgb_subset150.txt
V=/work/main/build/src/vidmap/cli/vidmap; EV=/work/main/build/bench/reconstruct_eval
one() { n=$1; v=$2; gt=$3; dt=$4; list=$5; shift 5
  case $v in off) k="--klt off";; gate) k="--klt gate";; t32) k="--klt gate --klt-max-turn-px 32";; esac
  /usr/bin/time -f "%U %S %e" $V reconstruct $list "$@" $k -o $O/${n}_$v --device cpu -q --overwrite 2> $O/${n}_$v.time
  echo "$n $v cpu $(tail -1 $O/${n}_$v.time | awk '{print $1+$2}') kf $(python3 -c "import json; c=json.load(open('$O/${n}_$v/run.json'))['counts']; print(c.get('keyframes'), c.get('localized_frames',0))") $($EV --model $O/${n}_$v/sparse --list $list --groundtruth $gt --max-dt $dt | tr -d '\n' | sed 's/  */ /g' | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["num_models"], j["registered_images"], [ (m["images"], m["ate_rot_aligned_rmse"], m["rot_aligned_rmse_deg"]) for m in j["models"]])') md5 $(md5sum $O/${n}_$v/sparse/0/images.bin | cut -c1-12)"
}
three() { one "$1" off "${@:2}" & one "$1" gate "${@:2}"; wait; one "$1" t32 "${@:2}"; }
three rpy_all $T/tum-fr1-rpy/groundtruth.txt 0.02 $R --all-frames
three rpy4 $T/tum-fr1-rpy/groundtruth.txt 0.02 $R
three xyz4 $T/tum-fr1-xyz/groundtruth.txt 0.02 $T/tum-fr1-xyz/rgb.txt
three desk4 $T/tum-fr1-desk/groundtruth.txt 0.02 $T/tum-fr1-desk/rgb.txt
for s in orbit sideways forward pan ho_orbit ho_pan; do three syn_$s $C/syn_$s/groundtruth.txt 0.001 $C/syn_$s/rgb.txt; done
cam() { tail -1 $C/syn_$1/cameras.txt | awk '{printf "PINHOLE %s,%s,%s,%s", $5, $6, $7, $8}'; }
for s in pan sideways forward; do three syn_${s}_known $C/syn_$s/groundtruth.txt 0.001 $C/syn_$s/rgb.txt --camera "$(cam $s)"; done
