#!/usr/bin/env bash
# Photo sets with ground-truth cameras: vidmap at its default working width and at 1280 px
# against COLMAP 3.8 (CPU, exhaustive matching, its default extraction at up to 3200 px) on the
# same images in the same run, scored by bench/reconstruct_eval against the datasets' cameras.
#
#   scripts/bench_photos.sh BUILD_DIR OUT_DIR [--widths "auto 1280"] [--cases "..."] [--no-colmap]
#
# BUILD_DIR: a build folder (configured here when it has no build.ninja, then the `vidmap` and
# `reconstruct_eval` targets are built). OUT_DIR: work folders and results (created; an earlier
# one is replaced). The data is read in place from $VIDMAP_DATA or ../shared/data (Strecha's
# fountain-P11, Middlebury's temple and dino sparse rings; docs/benchmarks.md, "Photo sets").
# Cases: fountain11 (all 11 images, 3072x2048), fountain6 (every second one), temple16 and
# dino16 (the sparse rings, 640x480). --widths lists vidmap's working widths ("auto": the
# default; 0: native). Prints one JSON object (also OUT_DIR/results.json): per case and runner,
# the models, images registered (largest model), camera-centre error relative to the extent of
# the true centres (ATE RMSE after a similarity / largest distance between two true centres), the
# worst relative rotation error over all pairs of images, wall and CPU time (user+sys of the
# process tree: the fair measure on a loaded machine).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
[[ $# -ge 2 ]] || { sed -n 2,20p "$0" >&2; exit 2; }
build=$(realpath -m "$1")
out=$(realpath -m "$2")
shift 2
widths="auto 1280"
cases="fountain11 fountain6 temple16 dino16"
colmap=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --widths) widths=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    --no-colmap) colmap=0; shift ;;
    *) echo "bench_photos.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
data=${VIDMAP_DATA:-$here/../shared/data}
[[ -d $data/strecha/fountain-P11 && -d $data/middlebury-mview ]] ||
  { echo "bench_photos.sh: no data in $data (set VIDMAP_DATA)" >&2; exit 1; }
if [[ ! -f $build/build.ninja ]]; then
  cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" -j"$(nproc)" -t vidmap reconstruct_eval >/dev/null
if [[ $colmap == 1 ]] && ! command -v colmap >/dev/null; then
  echo "bench_photos.sh: colmap not found; run with --no-colmap" >&2
  exit 1
fi
rm -rf "$out"
mkdir -p "$out"
export OMP_WAIT_POLICY=passive QT_QPA_PLATFORM=offscreen
python3 - "$here" "$build" "$out" "$data" "$widths" "$cases" "$colmap" <<'PY'
import json, os, platform, re, subprocess, sys, time
here, build, out, data, widths, cases, use_colmap = sys.argv[1:]
vidmap = os.path.join(build, "src/vidmap/cli/vidmap")
evaluate = os.path.join(build, "bench/reconstruct_eval")
fountain = os.path.join(data, "strecha/fountain-P11")
mv = os.path.join(data, "middlebury-mview")
# pipeline::kPhotoWidth, read from the source so the script follows a change of the default.
PHOTO_WIDTH = int(re.search(r"kPhotoWidth = (\d+);", open(
    os.path.join(here, "src/vidmap/pipeline/reconstruct.h")).read()).group(1))

def images(folder, ext):
    return sorted(f for f in os.listdir(folder) if f.endswith(ext))

# Each case: a folder of links to the images alone (the data folders hold camera files too).
spec = {
    "fountain11": (os.path.join(fountain, "images"), images(os.path.join(fountain, "images"), ".jpg"),
                   ["--strecha", os.path.join(fountain, "gt_dense_cameras")]),
    "fountain6": (os.path.join(fountain, "images"),
                  images(os.path.join(fountain, "images"), ".jpg")[::2],
                  ["--strecha", os.path.join(fountain, "gt_dense_cameras")]),
    "temple16": (os.path.join(mv, "templeSparseRing"),
                 images(os.path.join(mv, "templeSparseRing"), ".png"),
                 ["--middlebury", os.path.join(mv, "templeSparseRing/templeSR_par.txt")]),
    "dino16": (os.path.join(mv, "dinoSparseRing"), images(os.path.join(mv, "dinoSparseRing"), ".png"),
               ["--middlebury", os.path.join(mv, "dinoSparseRing/dinoSR_par.txt")]),
}

def image_width(path):
    """The width of a PNG or JPEG from its header."""
    with open(path, "rb") as f:
        b = f.read(1 << 16)
    if b[:8] == b"\x89PNG\r\n\x1a\n":
        return int.from_bytes(b[16:20], "big")
    i = 2
    while i + 9 < len(b):
        marker, size = b[i + 1], int.from_bytes(b[i + 2:i + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            return int.from_bytes(b[i + 7:i + 9], "big")
        i += 2 + size
    raise ValueError(f"no image size in {path}")

def effective(w, native):
    """vidmap's working width for --width w (pipeline::workingWidth; 'auto' as photos)."""
    w = PHOTO_WIDTH if w == "auto" else int(w)
    return native if w == 0 or native <= w else w

def timed(cmd, log):
    """Runs cmd; returns (exit status, wall s, CPU s of the process tree: user + sys)."""
    t0 = time.monotonic()
    with open(log, "ab") as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT)
        _, status, ru = os.wait4(p.pid, 0)
    return os.waitstatus_to_exitcode(status), time.monotonic() - t0, ru.ru_utime + ru.ru_stime

def score(sparse, truth, common=None):
    r = {"models": 0, "registered": 0}
    if not os.path.isdir(sparse) or not os.listdir(sparse):
        return r
    extra = ["--common-with", common] if common else []
    ev = json.loads(subprocess.run([evaluate, "--model", sparse] + truth + extra, check=True,
                                   capture_output=True, text=True).stdout)
    ms = [m for m in ev["models"] if m["images"] > 0]
    r["models"] = len(ms)
    if ms:
        best = max(ms, key=lambda m: m["images"])
        r["registered"] = best["images"]
        r["evaluated"] = best["evaluated"]
        r["path"] = best["path"]
        for k in ("centre_error_rel_extent", "rel_rot_max_deg", "rel_rot_mean_deg", "rot_rmse_deg"):
            if k in best:
                r[k] = best[k]
    return r

# The commit the run starts from (the build folder is built from the working tree).
commit = subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"], capture_output=True,
                        text=True).stdout.strip()
results = []
for case in cases.split():
    src, names, truth = spec[case]
    folder = os.path.join(out, "images", case)
    os.makedirs(folder)
    for n in names:
        os.symlink(os.path.join(src, n), os.path.join(folder, n))
    native = image_width(os.path.join(src, names[0]))
    done = {}  # working width -> the result of the run that had it
    for w in widths.split():
        if effective(w, native) in done:  # the same run (small images): not repeated
            r = dict(done[effective(w, native)], width_option=w, repeated_of=done[effective(w, native)]["width_option"])
            results.append(r)
            continue
        work = os.path.join(out, f"{case}_vidmap_{w}")
        cmd = [vidmap, "reconstruct", folder, "-o", work, "--device", "cpu", "-q"]
        if w != "auto":
            cmd += ["--width", w]
        rc, wall, cpu = timed(cmd, work + ".log")
        r = {"case": case, "images": len(names), "runner": "vidmap", "width_option": w,
             "exit": rc, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2)}
        if rc == 0:
            rec = json.load(open(os.path.join(work, "run.json")))
            r["working_width"] = rec["options"]["working_width"]
            # Models flagged as possibly wrong (pipeline/focal_check.h) and the self-calibration.
            r["focal_suspect"] = rec["counts"].get("focal_suspect", 0)
            r["focal_undetermined"] = rec["counts"].get("focal_undetermined", 0)
            r["refined_focal_px"] = rec["metrics"].get("refined_focal_px")
            r.update(score(os.path.join(work, "sparse"), truth))
            r["work"] = work
            if "path" in r:  # whether the scored (largest) model is flagged
                n = os.path.basename(os.path.normpath(r["path"]))
                r["largest_focal_suspect"] = rec["counts"].get(f"model_{n}_focal_suspect", 0)
        results.append(r)
        done[effective(w, native)] = r
        print(json.dumps(r), file=sys.stderr, flush=True)
    if use_colmap == "1":
        work = os.path.join(out, f"{case}_colmap")
        os.makedirs(os.path.join(work, "sparse"))
        db = os.path.join(work, "database.db")
        log = os.path.join(work, "colmap.log")
        steps = [
            ["colmap", "feature_extractor", "--database_path", db, "--image_path", folder,
             "--ImageReader.camera_model", "SIMPLE_RADIAL", "--ImageReader.single_camera", "1",
             "--SiftExtraction.use_gpu", "0"],
            ["colmap", "exhaustive_matcher", "--database_path", db, "--SiftMatching.use_gpu", "0"],
            ["colmap", "mapper", "--database_path", db, "--image_path", folder, "--output_path",
             os.path.join(work, "sparse")],
        ]
        wall = cpu = 0
        rc = 0
        for s in steps:
            rc, w_, c_ = timed(s, log)
            wall, cpu = wall + w_, cpu + c_
            if rc:
                break
        r = {"case": case, "images": len(names), "runner": "colmap 3.8", "width_option": "3200 max",
             "exit": rc, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2)}
        r.update(score(os.path.join(work, "sparse"), truth))
        results.append(r)
        print(json.dumps(r), file=sys.stderr, flush=True)
        # vidmap's largest model scored again on the images COLMAP's largest model holds (the
        # same images for both, where COLMAP registered fewer).
        if r["registered"]:
            for v in results:
                if v["case"] == case and v["runner"] == "vidmap" and v.get("work") and \
                        "repeated_of" not in v:
                    v["on_colmap_images"] = score(os.path.join(v["work"], "sparse"), truth,
                                                  os.path.join(work, "sparse"))
                    print(json.dumps({"case": case, "width_option": v["width_option"],
                                      "on_colmap_images": v["on_colmap_images"]}),
                          file=sys.stderr, flush=True)

doc = {"bench": "photos", "commit": commit, "host": platform.node(), "cores": os.cpu_count(),
       "results": results}
with open(os.path.join(out, "results.json"), "w") as f:
    json.dump(doc, f, indent=1)
print(json.dumps(doc, indent=1))
PY
