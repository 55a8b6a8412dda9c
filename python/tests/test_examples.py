"""The README's Python examples are python/examples/*.py verbatim, and they run."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import vidmap
from conftest import source_dir

EXAMPLES = source_dir() / "python" / "examples"


def example(name: str) -> Path:
    return EXAMPLES / name


@pytest.mark.parametrize("name", ["reconstruct_video.py", "export_nerfstudio.py"])
def test_readme_shows_the_example(name):
    readme = (source_dir() / "README.md").read_text()
    body = example(name).read_text()
    indented = "".join("    " + line if line.strip() else line for line in body.splitlines(True))
    assert body in readme or indented in readme, f"README.md does not show {name} as it is"


def run(*args, cwd):
    env = dict(os.environ)
    return subprocess.run([sys.executable, *map(str, args)], cwd=cwd, env=env, check=True,
                          capture_output=True, text=True).stdout


def test_examples_run_on_a_synthetic_video(tmp_path):
    try:
        seq = vidmap.synth(tmp_path / "seq", frames=20, fps=4, width=320, height=240,
                           video=str(tmp_path / "orbit.mkv"))
    except vidmap.Error as e:
        pytest.skip(f"no video writing in this build: {e}")
    out = run(example("reconstruct_video.py"), seq["video"], tmp_path / "out", cwd=tmp_path)
    assert "poses" in out and "SIMPLE_RADIAL" in out
    out = run(example("export_nerfstudio.py"), tmp_path / "out" / "sparse" / "0",
              tmp_path / "ns", cwd=tmp_path)
    assert (tmp_path / "ns" / "transforms.json").exists()
    assert (tmp_path / "ns" / "sparse_pc.ply").exists()
