# Shell functions shared by the scripts that run on the H200 (device tool): source it after
# setting L (the log folder) and S (the summary file).

# device_build SRC DIR NOFMA TARGETS...: configures SRC in DIR (Release, sm_90, FMA on unless
# NOFMA is ON) and builds TARGETS with 6 jobs (several builds run side by side on the host's 16
# cores); the log goes to L/build_DIR.log and the status to S.
device_build() {
  local src=$1 dir=$2 f=$3
  shift 3
  cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DVIDMAP_CUDA_NO_FMA="$f" >"$L/build_$(basename "$dir").log" 2>&1 &&
    cmake --build "$dir" -j 6 -t "$@" >>"$L/build_$(basename "$dir").log" 2>&1
  echo "[build $dir] rc=$?" >>"$S"
}
