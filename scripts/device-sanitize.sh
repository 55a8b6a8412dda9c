#!/usr/bin/env bash
# Runs on the GPU machine (device tool, carry [".device"]): builds every CUDA test binary
# (-fmad=false variant) and runs each whole under compute-sanitizer memcheck and racecheck,
# all at once (the sanitizers are host-bound; the H200 host has 16 cores). Logs go to $OUT,
# one line per binary and tool to $OUT/summary.txt.
# Usage: bash scripts/device-sanitize.sh [seconds per run, default 420]
# Binaries too slow to instrument whole in one call are split into processes that together
# cover the binary: FAMILIES="vidmap2ba vidmap8features" instruments one kernel family per
# process (a substring of the mangled kernel name; a last process takes every other kernel;
# "-vidmap8features": a family checked in an earlier call, left out of the last process),
# and SPLIT_TESTS=1 runs each GoogleTest test in its own process (CASES="F1 F2": one process
# per GoogleTest filter given). TESTS and TOOLS narrow the
# binaries and tools (default: every CUDA test binary, memcheck and racecheck).
# LAUNCH_SPLIT="M K [S]" splits each (test, family) further by launches: K processes check M
# launches each in turn from the S-th (default 0; --launch-skip, --launch-count count only the
# family's launches) and one more checks every launch after the S+K*M-th. BIN_DIR: binaries
# built elsewhere (no build). VIDMAP_UNDER_SANITIZER=1 is set for the tests: a bound on timing,
# which the sanitizer's serialised launches break, is then left out (the test says so).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
OUT=${OUT:-/tmp/vidmap_out}
limit=${1:-420}
mkdir -p "$OUT"
[ -f .device/setup.sh ] && source .device/setup.sh >> "$OUT/summary.txt" 2>&1
export OMP_WAIT_POLICY=passive OMP_NUM_THREADS=2 VIDMAP_UNDER_SANITIZER=1
tests=${TESTS:-"ba_cuda_test features_cuda_test geometry_cuda_test gpu_smoke_test io_gpu_test
  klt_cuda_test mvs_cuda_test pipeline_gpu_test"}
tools=${TOOLS:-"memcheck racecheck"}
# One compute-sanitizer filter per process: each family, then the kernels of none of them.
filters=()
if [ -n "${FAMILIES:-}" ]; then
  rest=()
  for f in $FAMILIES; do
    # A family written "-name" was checked before: it is only left out of the last process.
    [ "${f#-}" = "$f" ] && filters+=("--kernel-name kns=$f")
    rest+=(--kernel-name-exclude "kns=${f#-}")
  done
  filters+=("${rest[*]}")
else
  filters+=("")
fi
# Launch ranges: each process checks one range of the filtered launches; together, all.
ranges=("")
if [ -n "${LAUNCH_SPLIT:-}" ]; then
  read -r per pieces first <<< "$LAUNCH_SPLIT"
  first=${first:-0}
  ranges=()
  for ((i = 0; i < pieces; ++i)); do
    ranges+=("--launch-skip $((first + i * per)) --launch-count $per")
  done
  ranges+=("--launch-skip $((first + pieces * per))")
fi
# Processes go round-robin over the machine's GPUs (CUDA_VISIBLE_DEVICES), so a machine of
# several GPUs checks more ranges at once.
gpus=$(nvidia-smi -L 2> /dev/null | wc -l)
[ "$gpus" -ge 1 ] || gpus=1
bins=${BIN_DIR:-build-san/src}
if [ -z "${BIN_DIR:-}" ]; then
  cmake -S . -B build-san -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DVIDMAP_CUDA_NO_FMA=ON > "$OUT/build.log" 2>&1 &&
    cmake --build build-san -j 16 -t $tests >> "$OUT/build.log" 2>&1
  echo "[build] rc=$? commit $(git rev-parse --short HEAD 2>/dev/null)" >> "$OUT/summary.txt"
fi
for t in $tests; do
  bin=$(find "$bins" -name "$t" -type f -perm -u+x | head -1)
  [ -n "$bin" ] || { echo "[$t] not built" >> "$OUT/summary.txt"; continue; }
  cases=("*")
  if [ -n "${CASES:-}" ]; then
    read -r -a cases <<< "$CASES"
  elif [ "${SPLIT_TESTS:-0}" = 1 ]; then
    mapfile -t cases < <("$bin" --gtest_list_tests | awk '/^[^ ]/{s=$1} /^  /{print s $1}')
  fi
  for tool in $tools; do
    n=0
    for c in "${cases[@]}"; do
      for f0 in "${filters[@]}"; do
        for r in "${ranges[@]}"; do
          f="$f0${r:+ $r}"
          n=$((n + 1))
          log="$OUT/${t}_${tool}_$n.log"
          (
            start=$(date +%s)
            # --error-exitcode: a finding fails the run; $f is word-split on purpose (flags).
            # shellcheck disable=SC2086
            CUDA_VISIBLE_DEVICES=$((n % gpus)) timeout "$limit" compute-sanitizer --tool $tool \
              --error-exitcode 9 $f "$bin" --gtest_filter="$c" > "$log" 2>&1
            rc=$?
            end=$(date +%s)
            echo "[$t $tool $n: $c ${f:-all kernels}] gpu $((n % gpus)) rc=$rc $((end - start)) s; $(grep -E \
              'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1); internal errors: $(grep -c \
              'Internal Sanitizer Error' "$log"); $(grep -E \
              '^\[  (PASSED|FAILED|SKIPPED) ' "$log" | tr '\n' ' ')" >> "$OUT/summary.txt"
          ) &
        done
      done
    done
  done
done
wait
# At most 8 files come back from the device: the logs travel as one archive.
(cd "$OUT" && tar czf logs.tgz -- *.log && rm -f -- *.log)
cat "$OUT/summary.txt"
