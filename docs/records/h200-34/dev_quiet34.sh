#!/bin/bash
# xyz.sh: fr1-xyz at 4 fps and fr1-rpy at all frames (gate), old (a382957) and merged binaries interleaved, one at a time
cd /work/tmp/lead34; mkdir -p xyz
for i in 1 2; do for b in old merged; do
  for c in xyz4 rpyg; do
    if [ $c = xyz4 ]; then a="/work/shared/data/tum-fr1-xyz/rgb.txt"; else a="/work/shared/data/tum-fr1-rpy/rgb_subset150.txt --all-frames --klt gate"; fi
    /usr/bin/time -f "%U %S %e" ./vidmap_$b reconstruct $a -o xyz/${c}_$b -q --device cpu --overwrite 2> xyz/${c}_$b.time
    echo "$c $b $i $(tail -1 xyz/${c}_$b.time) $(md5sum xyz/${c}_$b/sparse/0/images.bin | cut -c1-12) lba $(python3 -c "import json; s=json.load(open('xyz/${c}_$b/run.json'))['stages']; print(round(s['mapper.local_ba']['wall_ms']), 'gba', round(s['mapper.global_ba']['wall_ms']))")"
  done
done; done
