#!/usr/bin/env bash
# `vidmap batch` without a cluster: a manifest of three small synthetic videos (one broken)
# run with --all on two CPU workers, then again (the complete items are skipped, the broken
# one retried), one item by --index, batch-summary, and manifests rejected up front with the
# line and field of the mistake.
#
#   scripts/batch_cli_test.sh [path/to/vidmap]      (default: build/src/vidmap/cli/vidmap)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
vidmap=$(realpath "${1:-$root/build/src/vidmap/cli/vidmap}")
fail() {
  echo "batch_cli_test: FAILED: $*" >&2
  exit 1
}
T=$(mktemp -d /tmp/vidmap_batch_cli.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T"
export OMP_WAIT_POLICY=passive
for i in 1 2; do
  "$vidmap" synth "frames$i" --frames 12 --width 200 --height 150 --seed "$i" --path orbit >/dev/null
done
head -c 20000 /dev/urandom >broken.mkv
cat >m.csv <<'EOF'
input,output,all_frames,options
frames1/rgb,out/one,true,
broken.mkv,out/broken,true,
frames2/rgb,out/two,true,"--max-features 3000"
EOF

# All items, two CPU workers: exit 1 (one failed), two complete models, one failure record.
set +e
"$vidmap" batch m.csv --all --jobs 2 --no-gpu >all1.txt 2>all1.err
rc=$?
set -e
[ $rc = 1 ] || fail "--all with a broken item exited $rc, expected 1"
grep -q "2 done, 0 skipped (complete), 1 failed" all1.txt || fail "$(cat all1.txt)"
for o in one two; do [ -f "out/$o/run.json" ] && [ -f "out/$o/sparse/0/cameras.bin" ] || fail "out/$o incomplete"; done
grep -q '"exit_code": 1' out/broken/failed.json || fail "no failure record"
[ "$(ls -A out/broken)" = failed.json ] || fail "the failed item left more than failed.json: $(ls -A out/broken)"
mtime=$(stat -c %Y.%s out/one/run.json)

# Again: complete items skipped, the broken one retried (attempt 2).
"$vidmap" batch m.csv --all --jobs 2 --no-gpu >all2.txt 2>/dev/null && fail "the second run hid the failure"
grep -q "0 done, 2 skipped (complete), 1 failed" all2.txt || fail "$(cat all2.txt)"
[ "$(stat -c %Y.%s out/one/run.json)" = "$mtime" ] || fail "a complete item was redone"
grep -q '"attempts": 2' out/broken/failed.json || fail "the retry was not counted"

# One item by index; an index out of range.
"$vidmap" batch m.csv --index 0 2>idx.err || fail "--index 0 failed"
grep -q "item 0 skipped" idx.err || fail "$(cat idx.err)"
"$vidmap" batch m.csv --index 3 2>bad.err && fail "--index 3 accepted"
grep -q "the manifest has 3 items (0..2)" bad.err || fail "$(cat bad.err)"

# The summary.
"$vidmap" batch-summary m.csv --format csv >s.csv
[ "$(grep -c ',done,' s.csv)" = 2 ] && [ "$(grep -c ',failed,' s.csv)" = 1 ] || fail "$(cat s.csv)"
"$vidmap" batch-summary m.csv --format json >s.json
grep -q '"failed": 1' s.json || fail "json summary: $(cat s.json)"

# Manifests rejected before anything runs, naming the line and the field.
expect_error() {  # MANIFEST_TEXT EXPECTED_PART
  printf '%s' "$1" >bad.csv
  if "$vidmap" batch bad.csv --all 2>err.txt >/dev/null; then fail "accepted: $1"; fi
  grep -qF "$2" err.txt || fail "expected '$2', got: $(cat err.txt)"
}
expect_error $'input,output,fps\nframes1/rgb,x1,2\nframes2/rgb,x2,abc\n' "bad.csv line 3: options: Could not convert: --fps = abc"
expect_error $'input,output\nframes1/rgb,x1\nnope,x2\n' "line 3: field 'input'"
expect_error $'input,output,camera\nframes1/rgb,x1,PINHOLE 1\n' "line 2: --camera: model PINHOLE takes 4 parameters"
expect_error $'input,output,fpz\nframes1/rgb,x1,2\n' "line 2: options: The following arguments were not expected: 2 --fpz"
expect_error $'input,output,fps\nframes1/rgb,x1,-3\n' "line 2: options: option fps = -3 is out of range"
[ ! -e x1 ] && [ ! -e x2 ] || fail "a rejected manifest started an item"

# Cluster scripts from the same manifest.
"$vidmap" batch m.csv --slurm --max-parallel 2 >job.sbatch
grep -q '^#SBATCH --array=0-2%2$' job.sbatch || fail "$(cat job.sbatch)"
bash -n job.sbatch || fail "the sbatch script is not valid bash"
"$vidmap" batch m.csv --kubernetes --image vidmap:test >job.yaml
grep -q 'completionMode: Indexed' job.yaml || fail "$(cat job.yaml)"
echo "batch_cli_test: PASSED"
