#!/usr/bin/env bash
# Sets up a fresh machine, builds the vidmap tool, and runs the main job on a built-in example: a
# synthetic video of a textured room with known cameras is rendered, reconstructed
# (`vidmap reconstruct`: COLMAP model, PLY, run record), and the estimated trajectory is
# scored against the truth. Prints the summary and where the outputs are.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# DIR (default out/demo) is replaced only when it is empty, missing, or a previous demo output
# (it holds the marker .vidmap-demo and nothing the demo does not write): never the user's files.
out="${1:-$root/out/demo}"
demo_names=(.vidmap-demo sequence room.mp4 model tracks.csv run.json)
if [[ -e "$out" && ! -d "$out" ]]; then
  echo "demo: $out exists and is not a folder; give another DIR" >&2
  exit 1
fi
if [[ -d "$out" && -n "$(ls -A "$out")" ]]; then
  if [[ ! -f "$out/.vidmap-demo" ]]; then
    echo "demo: $out is not empty and is not a previous demo output; give an empty or new DIR" >&2
    exit 1
  fi
  for entry in "$out"/* "$out"/.[!.]*; do
    [[ -e "$entry" ]] || continue
    name=$(basename "$entry")
    if [[ ! " ${demo_names[*]} " == *" $name "* ]]; then
      echo "demo: $out holds $name, which the demo did not write; give another DIR" >&2
      exit 1
    fi
  done
fi
"$root/scripts/setup.sh"
# Only what the demo runs: the tool and the trajectory scorer, not the tests and benchmarks
# (scripts/test.sh builds those). Without a visible NVIDIA GPU the CUDA kernels, half of the
# build, could not run: they are left out, in a folder of their own (build-demo) so that the
# tests' build/ keeps them.
build="$root/build"
cuda=()
if ! nvidia-smi -L >/dev/null 2>&1; then
  build="$root/build-demo"
  cuda=(-DVIDMAP_CUDA=OFF -DVIDMAP_PYTHON=OFF)
  echo "demo: no GPU visible, building the CPU backend only (in $build)"
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${cuda[@]}" >/dev/null
targets=(vidmap)
# (grep reads the whole list: with -q, ninja could die of SIGPIPE and pipefail hide the target)
ninja -C "$build" -t targets all | grep '^reconstruct_eval:' >/dev/null && targets+=(reconstruct_eval)
cmake --build "$build" -j "$(nproc)" -t "${targets[@]}"
vidmap="$build/src/vidmap/cli/vidmap"
evaluate="$build/bench/reconstruct_eval"
for name in "${demo_names[@]}"; do rm -rf "${out:?}/$name"; done
mkdir -p "$out"
touch "$out/.vidmap-demo"
# OpenMP threads sleep instead of spinning while they wait (shared or busy machines).
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
"$vidmap" info
if "$vidmap" --help | grep -q " synth"; then
  video=()
  if "$vidmap" info | grep -q "FFmpeg): yes"; then video=(--video "$out/room.mp4"); fi
  "$vidmap" synth "$out/sequence" --scene room --path orbit --frames 48 --fps 8 "${video[@]}"
fi
if "$vidmap" --help | grep -q " reconstruct"; then
  input="$out/sequence/rgb.txt"
  [[ -f "$out/room.mp4" ]] && input="$out/room.mp4"
  # 4 frames per second of the 6 s video, unknown camera (self-calibrated, refined in BA).
  "$vidmap" reconstruct "$input" -o "$out/model"
  if [[ -x "$evaluate" && -f "$out/sequence/groundtruth.txt" ]]; then
    # The model's units are arbitrary (a video fixes a scene only up to scale): the trajectory
    # is aligned to the truth by a similarity (rotation, translation, scale) first.
    json=$("$evaluate" --trajectory "$out/model/sparse/0/trajectory.txt" \
      --groundtruth "$out/sequence/groundtruth.txt")
    field() { sed -n "s/.*\"$1\": \([-0-9.e+]*\).*/\1/p" <<<"$json"; }
    echo "accuracy against the rendered truth (the room is 10 x 8 x 3 m):"
    echo "  camera positions: ATE $(field ate_rmse) m RMS over $(field evaluated) frames, after" \
      "aligning the model to the truth (scale $(field scale) metres per model unit)"
    echo "  camera orientations: $(field rot_rmse_deg) degrees RMS"
  fi
  echo "demo: the camera line above lists the calibrated intrinsics by name (f: focal length," \
    "cx, cy: principal point, k: radial distortion; COLMAP's SIMPLE_RADIAL, native pixels)"
  echo "demo: model in $out/model (sparse/0: COLMAP binary and text, points3D.ply; run.json)"
  echo "demo: to look at it: colmap gui, then File > Import model and choose $out/model/sparse/0;"
  echo "      or open $out/model/sparse/0/points3D.ply in MeshLab or CloudCompare"
elif "$vidmap" --help | grep -q " track"; then
  "$vidmap" track "$out/sequence/rgb.txt" --out "$out/tracks.csv" --record "$out/run.json"
  echo "demo: tracks in $out/tracks.csv, run record in $out/run.json"
fi
echo "demo: outputs under $out"
