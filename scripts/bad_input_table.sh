#!/usr/bin/env bash
# Runs every bad-input and interruption case of `vidmap reconstruct` and `vidmap track` that
# docs/reliability.md lists, in a scratch folder, and prints a Markdown table: per case the
# command, the exit code, the message (the last line on stderr) and what is left on disk
# (entries added or removed in the case's folder, beyond the expected output).
#
#   scripts/bad_input_table.sh [path/to/vidmap] > table.md
#
# Needs a built tool (default build/src/vidmap/cli/vidmap). Takes about a minute on 2 cores
# (three reconstructions of a 24-frame synthetic orbit are started and interrupted).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
vidmap=$(realpath "${1:-$root/build/src/vidmap/cli/vidmap}")
[[ -x $vidmap ]] || { echo "bad_input_table: no tool at $vidmap (build it first)" >&2; exit 1; }
export OMP_WAIT_POLICY=passive
work=$(mktemp -d "${TMPDIR:-/tmp}/vidmap_bad_input.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
: >.stdout
: >.stderr

# The inputs: a 320 x 240 orbit of the synthetic room (frames, TUM list, and a video when the
# build reads video).
"$vidmap" synth seq --scene room --path orbit --frames 24 --fps 8 --width 320 --height 240 \
  $("$vidmap" info | grep -q "FFmpeg): yes" && echo --video "$work/seq.mp4") >/dev/null
video=seq/rgb.txt
[[ -f seq.mp4 ]] && video=seq.mp4

listing() { (cd "$1" && find . -mindepth 1 | LC_ALL=C sort); }
# What changed in folder $1 against the listing in $2, expected entries ($3, a regex) left out.
changes() {
  local now
  now=$(listing "$1")
  local added removed
  added=$(comm -13 "$2" <(echo "$now") | grep -vE "${3:-^$}" | sed 's|^\./||' | awk -F/ '!seen[$1]++ {print $1}' | head -4 | paste -sd, -)
  removed=$(comm -23 "$2" <(echo "$now") | sed 's|^\./||' | awk -F/ '!seen[$1]++ {print $1}' | head -4 | paste -sd, -)
  local out=""
  [[ -n $added ]] && out="added: $added"
  [[ -n $removed ]] && out="${out:+$out; }removed: $removed"
  echo "${out:-nothing changed}"
}

echo "| case | command | exit | message (last line of stderr) | left on disk |"
echo "| --- | --- | --- | --- | --- |"
row() {  # case, command shown, exit code, message, disk
  echo "| $1 | \`$2\` | $3 | $(echo "$4" | sed 's/|/\\|/g' | sed "s|$work/||g") | $5 |"
}
# The line that tells the user what happened: on failure the last line on stderr; on success
# a note of the summary, a warning, or the summary's first line.
message() {  # exit code
  if [[ $1 -gt 128 && ! -s .stderr ]]; then echo "(none: the process was killed)"; return; fi
  if [[ $1 -ne 0 ]]; then grep -v '^\s*$' .stderr | tail -1; return; fi
  { grep -h "note:\|warning" .stdout .stderr; head -1 .stdout; } | head -1 | sed 's/^ *//'
}

# case NAME DISPLAY EXPECTED-REGEX -- ARGS...: runs vidmap ARGS in the scratch folder; entries
# matching EXPECTED-REGEX (the output of a successful run) are not listed as left on disk.
case_run() {
  local name=$1 shown=$2 expect=$3
  shift 4
  local before rc
  before=$(mktemp)
  listing "$work" >"$before"
  "$vidmap" "$@" >.stdout 2>.stderr
  rc=$?
  row "$name" "$shown" "$rc" "$(message $rc)" "$(changes "$work" "$before" "$expect")"
  rm -f "$before"
}

# Bad input.
case_run "missing input" "vidmap reconstruct nope.mp4 -o out" "" -- reconstruct nope.mp4 -o out -q
: >empty.mp4
case_run "empty file" "vidmap reconstruct empty.mp4 -o out" "" -- reconstruct empty.mp4 -o out -q
head -c 100000 /dev/urandom >random.mp4
case_run "random bytes" "vidmap reconstruct random.mp4 -o out" "" -- reconstruct random.mp4 -o out -q
if [[ -f seq.mp4 ]]; then
  head -c 2000 seq.mp4 >truncated.mp4
  case_run "truncated video (2 kB)" "vidmap reconstruct truncated.mp4 -o out" "" -- \
    reconstruct truncated.mp4 -o out -q
fi
case_run "bad option" "vidmap reconstruct $video -o out --fps 0" "" -- reconstruct "$video" -o out --fps 0
case_run "unknown device" "vidmap reconstruct $video -o out --device gpu" "" -- \
  reconstruct "$video" -o out --device gpu
echo data >afile
case_run "output is a file" "vidmap reconstruct $video -o afile" "" -- reconstruct "$video" -o afile -q

# --overwrite never deletes what vidmap did not write.
mkdir -p project && cp "$video" project/holiday.${video##*.} && echo mine >project/notes.txt
[[ $video == seq/rgb.txt ]] && cp -r seq/rgb project/
case_run "input inside the output" "vidmap reconstruct project/holiday.${video##*.} -o project --overwrite" "" -- \
  reconstruct "project/holiday.${video##*.}" -o project --overwrite -q
mkdir -p frames && cp seq/rgb/*.png frames/
case_run "output is the input folder" "vidmap reconstruct frames -o frames --overwrite" "" -- \
  reconstruct frames -o frames --overwrite -q
mkdir -p out_user/thesis && echo mine >out_user/my_notes.txt && echo tex >out_user/thesis/ch1.tex
case_run "user files in the output" "vidmap reconstruct $video -o out_user --overwrite" "" -- \
  reconstruct "$video" -o out_user --overwrite -q
ln -s out_user link_out
case_run "symlink to a folder of user files" "vidmap reconstruct $video -o link_out --overwrite" "" -- \
  reconstruct "$video" -o link_out --overwrite -q
case_run "non-empty output, no --overwrite" "vidmap reconstruct $video -o out_user" "" -- \
  reconstruct "$video" -o out_user -q

# Interruptions: the signal is sent once the run's temporary folder exists.
interrupt() {  # case, signal
  local name=$1 sig=$2 before rc
  before=$(mktemp)
  listing "$work" >"$before"
  "$vidmap" reconstruct "$video" -o out_sig -q --all-frames --device cpu >.stdout 2>.stderr &
  local pid=$!
  for _ in $(seq 600); do compgen -G ".out_sig.tmp-*" >/dev/null && break; sleep 0.05; done
  kill "-$sig" "$pid"
  wait "$pid" 2>/dev/null
  rc=$?
  row "$name" "vidmap reconstruct $video -o out_sig, then kill -$sig" "$rc" "$(message $rc)" \
    "$(changes "$work" "$before")"
  rm -f "$before"
}
interrupt "Ctrl-C during the run" INT
interrupt "SIGTERM during the run" TERM
interrupt "SIGKILL during the run" KILL
case_run "the next run after SIGKILL" "vidmap reconstruct $video -o out_sig" "^\./out_sig" -- \
  reconstruct "$video" -o out_sig

# Killed between the two renames of --overwrite: the old output is .NAME.tmp-PID-N.old and
# nothing is at NAME (999999: a process id that does not exist).
mv out_sig .out_sig.tmp-999999-0.old
case_run "killed between the renames of --overwrite; the next run" \
  "vidmap reconstruct $video -o out_sig --overwrite" "^\./out_sig" -- \
  reconstruct "$video" -o out_sig --overwrite

# track.
case_run "track: sampling drops frames" "vidmap track seq/rgb.txt --fps 4 --out t.csv" "^\./t\." -- \
  track seq/rgb.txt --fps 4 --out t.csv --quiet
case_run "track: deprecated --backend" "vidmap track seq/rgb.txt --backend cpu --out t2.csv" "^\./t2\." -- \
  track seq/rgb.txt --backend cpu --out t2.csv --quiet
