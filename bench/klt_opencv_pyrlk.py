#!/usr/bin/env python3
"""OpenCV peer of bench/klt_cuda_bench: calcOpticalFlowPyrLK forward and backward on the
same frames and points, with every host core, timed with a wall clock (median of runs).

The CUDA benchmark writes, for each case, DIR/<case>_prev.pgm, DIR/<case>_cur.pgm and
DIR/<case>_points.txt (one "x y" a line) plus DIR/cases.json listing the cases with the
window and the levels of vidmap's options. This script reads them and prints one JSON object
with the OpenCV time of a forward+backward pass per case, the points it keeps and the rate in
track-steps per second.

Usage: klt_opencv_pyrlk.py DIR [--threads 16] [--repeats 15]
"""
import argparse
import json
import os
import statistics
import sys
import time

import cv2
import numpy as np


def run_case(case, root, repeats):
    prev = cv2.imread(os.path.join(root, case["name"] + "_prev.pgm"), cv2.IMREAD_GRAYSCALE)
    cur = cv2.imread(os.path.join(root, case["name"] + "_cur.pgm"), cv2.IMREAD_GRAYSCALE)
    if prev is None or cur is None:
        raise SystemExit("cannot read the frames of case " + case["name"])
    pts = np.loadtxt(os.path.join(root, case["name"] + "_points.txt"), dtype=np.float32, ndmin=2)
    pts = pts.reshape(-1, 1, 2)
    win = (case["window"], case["window"])
    max_level = case["levels"] - 1
    crit = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, case["iterations"], case["epsilon"])

    def step():
        # The pyramids are built inside each call, as vidmap's push builds its pyramid.
        fwd, st1, _ = cv2.calcOpticalFlowPyrLK(prev, cur, pts, None, winSize=win,
                                               maxLevel=max_level, criteria=crit)
        bwd, st2, _ = cv2.calcOpticalFlowPyrLK(cur, prev, fwd, None, winSize=win,
                                               maxLevel=max_level, criteria=crit)
        return fwd, bwd, st1, st2

    step()  # warm-up: thread pool, allocations
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fwd, bwd, st1, st2 = step()
        times.append(time.perf_counter() - t0)
    fb = np.linalg.norm((bwd - pts).reshape(-1, 2), axis=1)
    kept = int(np.sum((st1.ravel() == 1) & (st2.ravel() == 1) & (fb <= case["fb_threshold"])))
    med = statistics.median(times)
    n = len(pts)
    return {
        "name": case["name"],
        "width": case["width"],
        "height": case["height"],
        "tracks": n,
        "fwd_bwd_ms_median": med * 1e3,
        "fwd_bwd_ms_min": min(times) * 1e3,
        "track_steps_per_s": n / med,
        "kept": kept,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    cv2.setNumThreads(args.threads)
    with open(os.path.join(args.dir, "cases.json")) as f:
        cases = json.load(f)
    out = {
        "peer": "opencv calcOpticalFlowPyrLK forward+backward",
        "opencv": cv2.__version__,
        "threads": cv2.getNumThreads(),
        "cores": os.cpu_count(),
        "cases": [run_case(c, args.dir, args.repeats) for c in cases],
    }
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
