"""vidmap.track gives the tracks the command line tool writes for the same input."""

import csv
import subprocess

import numpy as np
import pytest

import vidmap
from conftest import cli


def test_track_matches_the_cli(orbit, tmp_path):
    t = vidmap.track(orbit / "rgb.txt", fps=4, max_frames=8)
    assert t["frames"] == 8 and (t["width"], t["height"]) == (320, 240)
    n = len(t["id"])
    assert n > 500 and t["xy"].shape == (n, 2)
    assert set(np.unique(t["frame"])) == set(range(8))
    subprocess.run([cli(), "track", str(orbit / "rgb.txt"), "--out", str(tmp_path / "t.csv"),
                    "--fps", "4", "--max-frames", "8", "--quiet"], check=True, capture_output=True)
    with open(tmp_path / "t.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == n
    cli_obs = sorted((int(r["id"]), int(r["frame"])) for r in rows)
    py_obs = sorted(zip(t["id"].tolist(), t["frame"].tolist()))
    assert cli_obs == py_obs
    key = {(int(r["id"]), int(r["frame"])): (float(r["x"]), float(r["y"])) for r in rows}
    for i in range(0, n, 97):
        x, y = key[(int(t["id"][i]), int(t["frame"][i]))]
        assert abs(x - t["xy"][i, 0]) < 1e-3 and abs(y - t["xy"][i, 1]) < 1e-3


def test_track_bad_arguments_raise(orbit, tmp_path):
    with pytest.raises(vidmap.Error, match="unknown KLT option"):
        vidmap.track(orbit / "rgb.txt", window=3)
    with pytest.raises(vidmap.Error):
        vidmap.track(tmp_path / "missing.mp4")
    with pytest.raises(vidmap.Error):
        vidmap.track(orbit / "rgb.txt", fps=-2)
