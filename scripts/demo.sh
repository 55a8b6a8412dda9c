#!/usr/bin/env bash
# Sets up a fresh machine, builds vidmap, and runs the most complete main job on a built-in
# example: a synthetic video with known cameras. Prints where the outputs are.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
vidmap="$root/build/src/vidmap/cli/vidmap"
out="${1:-$root/out/demo}"
rm -rf "$out"
mkdir -p "$out"
"$vidmap" info
if "$vidmap" --help | grep -q " synth"; then
  "$vidmap" synth "$out/sequence" --scene room --path orbit --frames 48 --fps 8
fi
if "$vidmap" --help | grep -q " reconstruct"; then
  "$vidmap" reconstruct "$out/sequence/rgb.txt" -o "$out/model"
  echo "demo: model in $out/model"
elif "$vidmap" --help | grep -q " track"; then
  "$vidmap" track "$out/sequence/rgb.txt" --out "$out/tracks.csv" --record "$out/run.json"
  echo "demo: tracks in $out/tracks.csv, run record in $out/run.json"
fi
echo "demo: outputs under $out"
