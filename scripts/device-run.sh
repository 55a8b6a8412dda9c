#!/usr/bin/env bash
# Runs on the GPU machine over the binaries that scripts/device-build.sh put in .device/bin.
# Usage (device tool, carry [".device"]):  bash scripts/device-run.sh [tests] [sanitize] [bench]
# Writes logs and JSON under $OUT (summary.txt first).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
OUT=${OUT:-/tmp/vidmap_out}
mkdir -p "$OUT"
modes=" ${*:-tests sanitize bench} "
has() { [[ "$modes" == *" $1 "* ]]; }
source .device/setup.sh > "$OUT/summary.txt" 2>&1
export OMP_WAIT_POLICY=passive
echo "host cores: $(nproc)" >> "$OUT/summary.txt"
bin=.device/bin
if has tests; then
  for v in nofma fma; do
    for t in "$bin/$v"/*_test; do
      [ -x "$t" ] || continue
      name=$(basename "$t")
      timeout 240 "$t" > "$OUT/test_${v}_$name.log" 2>&1
      rc=$?
      echo "[$v] $name rc=$rc $(grep -E '^\[  (PASSED|FAILED)  \]|tests? ran|SKIPPED \]' "$OUT/test_${v}_$name.log" | tr '\n' ' ' | cut -c1-200)" >> "$OUT/summary.txt"
    done
  done
  (cd "$OUT" && tar czf tests_logs.tgz test_*.log && rm -f test_*.log)
fi
if has sanitize; then
  for t in "$bin"/nofma/*_test; do
    name=$(basename "$t")
    for tool in memcheck racecheck; do
      timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 "$t" \
        --gtest_filter="${SANITIZE_FILTER:-*}" > "$OUT/san_${tool}_$name.log" 2>&1
      echo "[sanitize $tool] $name rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san_${tool}_$name.log" | tail -1)" >> "$OUT/summary.txt"
    done
  done
  (cd "$OUT" && tar czf sanitizer_logs.tgz san_*.log && rm -f san_*.log)
fi
if has bench; then
  "$bin/fma/vidmap" info >> "$OUT/summary.txt" 2>&1
  for b in "$bin"/fma/*bench* "$bin"/fma/geometry_scorer; do
    [ -x "$b" ] || continue
    name=$(basename "$b")
    timeout 200 "$b" ${BENCH_ARGS:-} > "$OUT/bench_$name.json" 2> "$OUT/bench_$name.err"
    echo "[bench] $name rc=$?" >> "$OUT/summary.txt"
  done
  (cd "$OUT" && tar czf bench.tgz bench_* && rm -f bench_*)
fi
cat "$OUT/summary.txt"
