#!/usr/bin/env bash
# Builds, on the dev machine, the binaries that the GPU machine runs (it lacks OpenCV, Ceres
# and FFmpeg, so they are configured off here too), and copies the gpu tests, the benchmarks
# and the CLI into .device/bin/{fma,nofma}. cudart is linked statically, so the binaries need
# only the system's libstdc++ and libgomp there. Then run scripts/device-run.sh on the device.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
off=(-DCMAKE_DISABLE_FIND_PACKAGE_OpenCV=ON -DCMAKE_DISABLE_FIND_PACKAGE_Ceres=ON
  -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DVIDMAP_CUDA=ON)
for v in fma nofma; do
  flag=OFF
  [ $v = nofma ] && flag=ON
  cmake -S . -B build-dev-$v -G Ninja -DCMAKE_BUILD_TYPE=Release "${off[@]}" \
    -DVIDMAP_CUDA_NO_FMA=$flag >/dev/null
  cmake --build build-dev-$v -j "${JOBS:-2}"
  rm -rf .device/bin/$v
  mkdir -p .device/bin/$v
  # The gpu-labelled tests, by ctest's own list.
  for t in $(ctest --test-dir build-dev-$v -L gpu -N | awk '/Test +#/{print $3}'); do
    f=$(find build-dev-$v -type f -name "$t" -perm -u+x | head -1)
    [ -n "$f" ] && cp "$f" .device/bin/$v/
  done
  if [ $v = fma ]; then
    find build-dev-$v/bench -maxdepth 1 -type f -perm -u+x -exec cp {} .device/bin/$v/ \;
    cp build-dev-$v/src/vidmap/cli/vidmap .device/bin/$v/
  fi
done
strip .device/bin/*/* 2>/dev/null || true
du -sh .device/bin/*
