"""nerfstudio's transforms.json: the exported poses and intrinsics, read back with
nerfstudio's conventions (OpenGL camera, camera to world, applied_transform on the world,
OpenCV distortion) and computed here independently, reproject the model's points onto their
keypoints."""

import filecmp
import json
import subprocess

import numpy as np

import vidmap
from conftest import cli


def project_nerfstudio(tj, frame, X):
    c2w = np.array(frame["transform_matrix"])
    assert c2w.shape == (4, 4)
    np.testing.assert_allclose(c2w[3], [0, 0, 0, 1])
    np.testing.assert_allclose(c2w[:3, :3] @ c2w[:3, :3].T, np.eye(3), atol=1e-9)
    A = np.array(tj["applied_transform"])
    Xw = X @ A[:, :3].T + A[:, 3]
    w2c = np.linalg.inv(c2w)
    Xc = Xw @ w2c[:3, :3].T + w2c[:3, 3]
    x, y, z = Xc[:, 0], -Xc[:, 1], -Xc[:, 2]  # OpenGL (y up, looking down -z) to OpenCV
    assert (z > 0).all()
    u, v = x / z, y / z
    k1, k2, p1, p2 = (tj.get(k, 0.0) for k in ("k1", "k2", "p1", "p2"))
    r2 = u * u + v * v
    radial = 1 + k1 * r2 + k2 * r2 * r2
    ud = u * radial + 2 * p1 * u * v + p2 * (r2 + 2 * u * u)
    vd = v * radial + p1 * (r2 + 2 * v * v) + 2 * p2 * u * v
    return np.stack([tj["fl_x"] * ud + tj["cx"], tj["fl_y"] * vd + tj["cy"]], axis=1)


def test_exported_poses_reproject_the_points(orbit_maps, tmp_path):
    rec = orbit_maps[0]
    vidmap.export_nerfstudio(rec, tmp_path / "transforms.json")
    tj = json.loads((tmp_path / "transforms.json").read_text())
    cam = next(iter(rec.cameras.values()))
    assert (tj["w"], tj["h"]) == (cam.width, cam.height)
    assert tj["camera_model"] == "OPENCV" and tj["ply_file_path"] == "sparse_pc.ply"
    assert len(tj["frames"]) == rec.num_reg_images()
    errors = []
    for frame in tj["frames"]:
        image = rec.images[frame["colmap_im_id"]]
        assert frame["file_path"] == "images/" + image.name
        ids = image.point3D_ids
        has = ids != vidmap.INVALID_POINT3D_ID
        X = np.array([rec.points3D[int(i)].xyz for i in ids[has]])
        errors.append(np.linalg.norm(project_nerfstudio(tj, frame, X) - image.keypoints[has],
                                     axis=1))
    errors = np.concatenate(errors)
    assert len(errors) > 1000
    assert np.median(errors) < 1.0 and np.percentile(errors, 90) < 3.0
    # The PLY holds the points in the turned world.
    ply = (tmp_path / "sparse_pc.ply").read_bytes()
    assert f"element vertex {rec.num_points3D()}".encode() in ply


def test_cli_export_writes_the_same_file(orbit_maps, tmp_path):
    model = orbit_maps.output_path / "sparse" / "0"
    vidmap.export_nerfstudio(str(model), tmp_path / "py.json", ply=False)
    subprocess.run([cli(), "export", "--format", "nerfstudio", str(model), "-o",
                    str(tmp_path / "cli.json"), "--no-ply"], check=True, capture_output=True)
    assert filecmp.cmp(tmp_path / "py.json", tmp_path / "cli.json", shallow=False)
    bad = subprocess.run([cli(), "export", "--format", "instant-ngp", str(model), "-o",
                          str(tmp_path / "x.json")], capture_output=True, text=True)
    assert bad.returncode == 1 and "unknown --format" in bad.stderr
