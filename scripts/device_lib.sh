# Shell functions shared by the scripts that run on the H200 (device tool): device_build needs
# L (the log folder) and S (the summary file) set, run and collect need OUT.

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

# run NAME SECONDS COMMAND...: runs COMMAND with a time limit, its stdout to OUT/NAME.json, its
# stderr, exit status and wall time to OUT/log.txt (the mvs benchmark scripts' results).
run() {
  local name=$1 limit=$2
  shift 2
  echo "== $name: $*" >>"$OUT/log.txt"
  local t0
  t0=$(date +%s.%N)
  timeout "$limit" "$@" >"$OUT/$name.json" 2>>"$OUT/log.txt"
  echo "rc $? wall $(awk "BEGIN{print $(date +%s.%N) - $t0}") s" >>"$OUT/log.txt"
}

# collect NAME SECONDS COMMAND...: run, then NAME's JSON appended to OUT/results.txt and removed
# (the device tool returns a limited number of files).
collect() {
  run "$@"
  {
    echo "== $1"
    cat "$OUT/$1.json"
  } >>"$OUT/results.txt"
  rm -f "$OUT/$1.json"
}

# device_clock: starts the call's clock (T0) and logs the GPU and its clocks to OUT/log.txt;
# then stamp MESSAGE logs a line with the seconds since T0, and young N is true while fewer
# than N seconds have passed (steps that run only while the call has device time to spare).
device_clock() {
  T0=$(date +%s)
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader \
    >>"$OUT/log.txt" 2>&1
}
stamp() { echo "[$(($(date +%s) - T0)) s] $*" >>"$OUT/log.txt"; }
young() { [ $(($(date +%s) - T0)) -lt "$1" ]; }
