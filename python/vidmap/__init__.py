"""vidmap: a video to cameras and a 3D map, in pycolmap's shape.

    import vidmap
    maps = vidmap.reconstruct("video.mp4", "out")          # {0: Reconstruction, ...}
    rec = maps[0]
    print(rec.summary())
    for image_id, image in rec.images.items():
        R = image.cam_from_world.rotation.matrix()          # world to camera
        t = image.cam_from_world.translation

Models are COLMAP models (cameras, images, points3D) in COLMAP's conventions: poses are
world to camera, pixels have the centre of the top-left pixel at (0.5, 0.5). Errors raise
vidmap.Error with vidmap's message.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from ._vidmap import (  # noqa: F401  (re-exported)
    Camera,
    CameraMap,
    Error,
    Image,
    ImageMap,
    Point3D,
    Point3DMap,
    Reconstruction,
    export_nerfstudio,
    option_fields,
    synth,
    write_report,
)
from . import _vidmap

__all__ = [
    "Camera", "Error", "Image", "Point3D", "Reconstruction", "Rigid3d", "Rotation3d",
    "ReconstructionResult", "reconstruct", "track", "export_nerfstudio", "synth",
    "write_report", "read_run_record", "option_fields", "default_options",
]

INVALID_POINT3D_ID = np.iinfo(np.uint64).max


class Rotation3d:
    """A rotation as a unit quaternion; `quat` is [x, y, z, w] as in pycolmap (Eigen's order)."""

    def __init__(self, quat=None):
        self.quat = np.array([0.0, 0.0, 0.0, 1.0] if quat is None else quat, dtype=float)

    @classmethod
    def from_matrix(cls, R) -> "Rotation3d":
        R = np.asarray(R, dtype=float)
        # Shepperd's method: the largest of w, x, y, z first, for accuracy.
        t = np.trace(R)
        if t > 0:
            s = 2.0 * np.sqrt(t + 1.0)
            q = [(R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s, s / 4]
        else:
            i = int(np.argmax(np.diag(R)))
            j, k = (i + 1) % 3, (i + 2) % 3
            s = 2.0 * np.sqrt(1.0 + R[i, i] - R[j, j] - R[k, k])
            q = [0.0, 0.0, 0.0, (R[k, j] - R[j, k]) / s]
            q[i] = s / 4
            q[j] = (R[j, i] + R[i, j]) / s
            q[k] = (R[k, i] + R[i, k]) / s
        return cls(np.array(q) / np.linalg.norm(q))

    def matrix(self) -> np.ndarray:
        x, y, z, w = self.quat / np.linalg.norm(self.quat)
        return np.array([
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ])

    def inverse(self) -> "Rotation3d":
        x, y, z, w = self.quat
        return Rotation3d([-x, -y, -z, w])

    def __repr__(self) -> str:
        return f"Rotation3d(quat_xyzw={self.quat.tolist()})"


class Rigid3d:
    """A rigid transform x' = R x + t (pycolmap.Rigid3d)."""

    def __init__(self, rotation: Optional[Rotation3d] = None, translation=None):
        self.rotation = rotation if rotation is not None else Rotation3d()
        self.translation = np.zeros(3) if translation is None else np.asarray(translation, float)

    def matrix(self) -> np.ndarray:
        """The 3 x 4 matrix [R | t]."""
        return np.hstack([self.rotation.matrix(), self.translation.reshape(3, 1)])

    def inverse(self) -> "Rigid3d":
        R = self.rotation.matrix()
        return Rigid3d(self.rotation.inverse(), -R.T @ self.translation)

    def __mul__(self, other):
        if isinstance(other, Rigid3d):
            R = self.rotation.matrix() @ other.rotation.matrix()
            return Rigid3d(Rotation3d.from_matrix(R),
                           self.rotation.matrix() @ other.translation + self.translation)
        pts = np.asarray(other, dtype=float)
        return pts @ self.rotation.matrix().T + self.translation

    def __repr__(self) -> str:
        return f"Rigid3d(rotation={self.rotation!r}, translation={self.translation.tolist()})"


def _get_cam_from_world(image: Image) -> Rigid3d:
    qw, qx, qy, qz = image._qvec
    return Rigid3d(Rotation3d([qx, qy, qz, qw]), np.array(image._tvec))


def _set_cam_from_world(image: Image, pose: Rigid3d) -> None:
    x, y, z, w = pose.rotation.quat / np.linalg.norm(pose.rotation.quat)
    image._qvec[:] = [w, x, y, z]
    image._tvec[:] = pose.translation


Image.cam_from_world = property(
    _get_cam_from_world, _set_cam_from_world,
    doc="World to camera (Rigid3d); rotation.quat is [x, y, z, w]")
Image.projection_center = lambda self: self.cam_from_world.inverse().translation
Image.viewing_direction = lambda self: self.cam_from_world.rotation.matrix()[2, :]


class ReconstructionResult(dict):
    """The models of a run by index ({0: Reconstruction, ...}), with the run's `summary`
    (the terminal lines), `output_path` and `record` (run.json as a dict)."""

    summary: str = ""
    output_path: Path = Path()
    record: dict = {}


def default_options() -> dict:
    """The reconstruction options and their defaults, nested by group (frontend, mapper, mvs)."""
    return _vidmap._default_options()


def reconstruct(input, output_path, options: Optional[dict] = None,
                progress: Optional[Callable[[int, int, str], None]] = None,
                **kwargs) -> ReconstructionResult:
    """Reconstructs a video file, an image folder or a TUM list (rgb.txt) into output_path
    (as `vidmap reconstruct`: sparse/N COLMAP models, PLY, run.json, report.html).

    Options are keyword arguments or a dict, flat (`fps=4`, `min_tri_angle=0.5`), dotted
    (`"mapper.min_tri_angle"`) or nested (`mapper={"min_tri_angle": 0.5}`); the names are those
    of `vidmap.option_fields()` (the CLI's long options with underscores; the CLI spells the
    dense stage's group `--mvs-NAME`: `dense=True, mvs={"max_image_size": 800}`). `progress(frames,
    total, status)` is called after each sampled frame (total is -1 when unknown); an
    exception it raises ends the run and leaves output_path as it was.
    """
    if options is not None and not isinstance(options, dict):
        raise Error(f"options must be a dict, got {type(options).__name__}")
    merged: dict = {}
    for source in (options or {}), kwargs:
        for k, v in source.items():
            if isinstance(v, dict) and isinstance(merged.get(k), dict):
                merged[k] = {**merged[k], **v}
            else:
                merged[k] = v
    summary, out_dir, n = _vidmap._reconstruct(os.fspath(input), os.fspath(output_path), merged,
                                               progress)
    result = ReconstructionResult()
    for i in range(n):
        result[i] = Reconstruction(Path(out_dir) / "sparse" / str(i))
    result.summary = summary
    result.output_path = Path(out_dir)
    result.record = read_run_record(Path(out_dir) / "run.json")
    return result


def track(input, fps: float = 4, width: int = 0, max_frames: int = 0, keyframe_every: int = 4,
          refill_below: float = 0.5, progress: Optional[Callable[[int, int, str], None]] = None,
          **klt) -> dict:
    """KLT tracks of a video or image sequence (as `vidmap track`, CPU): a dict of arrays, one
    row per track per frame: `id`, `frame`, `xy` (N x 2 working pixels), `status` (0 alive,
    else the end reason `status_names[status]` at the frame where the track ended), with
    `frames`, `width`, `height`. KLT options (levels, half_window, ...) as keywords."""
    return _vidmap._track(os.fspath(input), float(fps), int(width), int(max_frames),
                          int(keyframe_every), float(refill_below), klt, progress)


def read_run_record(path) -> dict:
    """run.json (or a folder holding it) as a dict."""
    p = Path(path)
    if p.is_dir():
        p = p / "run.json"
    with open(p) as f:
        return json.load(f)
