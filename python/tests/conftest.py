"""Shared fixtures: a small synthetic video with known truth (vidmap.synth, the synth module's
renderer, never the code under test) and its reconstruction, made once per session."""

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import vidmap

# Light settings keep the tests fast on 2 cores (as pipeline/reconstruct_test.cc): SIFT at
# the frame's resolution, at most 1000 features, on the CPU.
FAST = dict(width=0, device="cpu", frontend={"sift_first_octave": 0, "max_features": 1000})


@pytest.fixture(scope="session")
def tmp_root(tmp_path_factory):
    return tmp_path_factory.mktemp("vidmap")


@pytest.fixture(scope="session")
def orbit(tmp_root):
    """20 frames of the room at 320 x 240 along an orbit, 4 fps; the truth is a COLMAP text
    model beside the frames (cameras/images/points3D.txt) and groundtruth.txt."""
    return Path(vidmap.synth(tmp_root / "orbit", scene="room", path="orbit", frames=20, fps=4,
                             width=320, height=240)["path"])


@pytest.fixture(scope="session")
def orbit_maps(tmp_root, orbit):
    """The orbit reconstructed once, with the progress callback's calls kept."""
    calls = []
    maps = vidmap.reconstruct(orbit / "rgb.txt", tmp_root / "orbit_out",
                              progress=lambda f, n, s: calls.append((f, n, s)), **FAST)
    maps.progress_calls = calls
    return maps


def source_dir() -> Path:
    return Path(os.environ.get("VIDMAP_SOURCE_DIR", Path(__file__).resolve().parents[2]))


def cli() -> str:
    """The vidmap command line tool: $VIDMAP_CLI (ctest sets it), else build/ or PATH."""
    for c in (os.environ.get("VIDMAP_CLI"), source_dir() / "build/src/vidmap/cli/vidmap",
              shutil.which("vidmap")):
        if c and Path(c).exists():
            return str(c)
    pytest.skip("the vidmap command line tool is not built")


def umeyama(src: np.ndarray, dst: np.ndarray):
    """The similarity (s, R, t) minimising |dst - (s R src + t)|^2 (Umeyama 1991)."""
    ms, md = src.mean(0), dst.mean(0)
    a, b = src - ms, dst - md
    U, S, Vt = np.linalg.svd(b.T @ a / len(src))
    D = np.eye(3)
    D[2, 2] = np.sign(np.linalg.det(U @ Vt))
    R = U @ D @ Vt
    s = np.trace(np.diag(S) @ D) / (a ** 2).sum(1).mean()
    return s, R, md - s * R @ ms
