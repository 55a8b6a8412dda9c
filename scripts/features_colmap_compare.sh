#!/usr/bin/env bash
# COLMAP's SIFT extractor (CPU, VLFeat) on the images vidmap's features benchmarks use: the
# features per image and the extraction time, printed as JSON. COLMAP is a peer only; the
# script exits 0 with {"colmap": null} when it is not installed (apt-get install colmap).
#
#   scripts/features_colmap_compare.sh [threads]
# Compare with the "vidmap" rows of build/bench/features_eval (same images; COLMAP's defaults
# are first octave -1 and 8192 features, so the script also runs first octave 0 / 4096).
set -euo pipefail
threads=${1:-$(nproc)}
root=$(cd "$(dirname "$0")/.." && pwd)
data=${VIDMAP_DATA:-$root/../shared/data}
if ! command -v colmap >/dev/null; then
  echo '{"colmap": null, "reason": "colmap is not installed"}'
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/images"
n=0
for f in /usr/share/doc/opencv-doc/examples/data/graf1.png /usr/share/doc/opencv-doc/examples/data/graf3.png \
  "$data/middlebury-mview/templeSparseRing/templeSR0001.png" "$data/middlebury-mview/templeSparseRing/templeSR0002.png"; do
  [ -f "$f" ] && cp "$f" "$work/images/" && n=$((n + 1))
done
# Fountain images at the half size the benchmarks decode (1536 x 1024).
for id in 0004 0005; do
  f="$data/strecha/fountain-P11/images/$id.jpg"
  [ -f "$f" ] && ffmpeg -loglevel error -y -i "$f" -vf scale=1536:1024 "$work/images/fountain$id.png" && n=$((n + 1))
done
echo "{\"colmap\": \"$(colmap help 2>&1 | head -1 | tr -d '"')\", \"threads\": $threads, \"images\": $n, \"runs\": ["
first=1
for cfg in "-1 8192" "0 4096"; do
  set -- $cfg
  db="$work/db_$1_$2.db"
  t0=$(date +%s.%N)
  colmap feature_extractor --database_path "$db" --image_path "$work/images" \
    --SiftExtraction.use_gpu 0 --SiftExtraction.num_threads "$threads" \
    --SiftExtraction.first_octave "$1" --SiftExtraction.max_num_features "$2" >/dev/null 2>&1
  t1=$(date +%s.%N)
  counts=$(sqlite3 "$db" "select i.name || ':' || k.rows from images i join keypoints k on i.image_id = k.image_id order by i.name;" | tr '\n' ' ')
  [ $first = 1 ] || echo ","
  first=0
  printf '  {"first_octave": %s, "max_num_features": %s, "seconds_all_images": %.2f, "features": "%s"}' \
    "$1" "$2" "$(echo "$t1 - $t0" | bc)" "${counts% }"
done
echo
echo "]}"
