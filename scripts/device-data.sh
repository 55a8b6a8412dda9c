#!/usr/bin/env bash
# Fills .device/data (git-ignored) with the real data the device run needs: the 150 TUM
# fr1-rpy frames of rgb_subset150.txt as JPEG quality 95 (the PNGs, 67 MB, do not fit the
# device tool's 64 MiB carry) with the list and groundtruth.txt, and Strecha fountain-P11.
# Needs python3 with OpenCV (Debian: python3-opencv).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
data=${VIDMAP_DATA:-$root/../shared/data}
out=$root/.device/data
rm -rf "$out" && mkdir -p "$out/tum/rgb" "$out/fountain"
/usr/bin/python3 - "$data/tum-fr1-rpy" "$out/tum" <<'PY'
import sys
import cv2
src, dst = sys.argv[1], sys.argv[2]
with open(dst + "/rgb_subset150.txt", "w") as out:
    for line in open(src + "/rgb_subset150.txt"):
        if line.startswith("#"):
            out.write(line)
            continue
        t, f = line.split()[:2]
        g = f.rsplit(".", 1)[0] + ".jpg"
        cv2.imwrite(dst + "/" + g, cv2.imread(src + "/" + f), [cv2.IMWRITE_JPEG_QUALITY, 95])
        out.write(f"{t} {g}\n")
PY
cp "$data/tum-fr1-rpy/groundtruth.txt" "$out/tum/"
cp -r "$data/strecha/fountain-P11/images" "$data/strecha/fountain-P11/gt_dense_cameras" \
  "$out/fountain/"
du -sh "$out"
