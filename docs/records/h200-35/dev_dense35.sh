#!/bin/bash
# dense.sh: fr1-xyz (10 Hz) and fr1-desk (15 Hz) at all frames, --klt off and gate, one at a time, dev CPU
O=/work/tmp/lead35/dense; mkdir -p $O
BIN=/work/main/build/src/vidmap/cli/vidmap; EV=/work/main/build/bench/reconstruct_eval
for s in xyz desk; do D=/work/shared/data/tum-fr1-$s
  for k in gate off; do n=${s}_$k
    /usr/bin/time -f "%U %S %e" $BIN reconstruct $D/rgb.txt --all-frames --klt $k -o $O/$n --device cpu --overwrite -q > $O/$n.log 2>&1
    echo "$n $(tail -1 $O/$n.log) $($EV --model $O/$n/sparse --list $D/rgb.txt --groundtruth $D/groundtruth.txt | tr -d '\n' | sed 's/  */ /g' | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["num_models"], j["registered_images"], [ (m["images"], round(m["ate_rmse"]*1000,2), round(m["rot_rmse_deg"],3)) for m in j["models"]])') md5 $(md5sum $O/$n/sparse/0/images.bin | cut -c1-12) $(python3 -c "import json; r=json.load(open('$O/$n/run.json')); c=r['counts']; print('kf', c.get('keyframes'), 'sift', c.get('sift_calls'), 'loc', c.get('localized_frames'))")"
  done
done
