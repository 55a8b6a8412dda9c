"""vidmap.Reconstruction: COLMAP models read, written, converted by COLMAP itself, and seen
from Python without copies."""

import shutil
import subprocess

import numpy as np
import pytest

import vidmap


def same_model(a: vidmap.Reconstruction, b: vidmap.Reconstruction, tol=1e-9):
    assert sorted(a.cameras.keys()) == sorted(b.cameras.keys())
    assert sorted(a.images.keys()) == sorted(b.images.keys())
    assert sorted(a.points3D.keys()) == sorted(b.points3D.keys())
    for cid, c in a.cameras.items():
        d = b.cameras[cid]
        assert (c.model, c.width, c.height) == (d.model, d.width, d.height)
        np.testing.assert_allclose(c.params, d.params, rtol=tol, atol=tol)
    for iid, im in a.images.items():
        jm = b.images[iid]
        assert (im.name, im.camera_id) == (jm.name, jm.camera_id)
        np.testing.assert_allclose(im.cam_from_world.matrix(), jm.cam_from_world.matrix(),
                                   atol=tol)
        np.testing.assert_allclose(im.keypoints, jm.keypoints, atol=tol)
        np.testing.assert_array_equal(im.point3D_ids, jm.point3D_ids)
    for pid, p in a.points3D.items():
        q = b.points3D[pid]
        np.testing.assert_allclose(p.xyz, q.xyz, atol=tol)
        np.testing.assert_array_equal(p.color, q.color)
        assert sorted(map(tuple, p.track)) == sorted(map(tuple, q.track))


def test_round_trip_through_colmap_model_converter(orbit_maps, tmp_path):
    colmap = shutil.which("colmap")
    if not colmap:
        pytest.skip("colmap is not installed (Debian package colmap)")
    rec = orbit_maps[0]
    rec.write(tmp_path / "bin")
    (tmp_path / "txt").mkdir()
    subprocess.run([colmap, "model_converter", "--input_path", str(tmp_path / "bin"),
                    "--output_path", str(tmp_path / "txt"), "--output_type", "TXT"],
                   check=True, capture_output=True)
    # COLMAP writes text with limited digits; binary is exact up to its quaternion normalisation.
    same_model(rec, vidmap.Reconstruction(tmp_path / "txt"), tol=1e-5)
    (tmp_path / "bin2").mkdir()
    subprocess.run([colmap, "model_converter", "--input_path", str(tmp_path / "bin"),
                    "--output_path", str(tmp_path / "bin2"), "--output_type", "BIN"],
                   check=True, capture_output=True)
    same_model(rec, vidmap.Reconstruction(tmp_path / "bin2"), tol=1e-12)
    # vidmap's own text, read back by COLMAP and written as binary again.
    rec.write_text(tmp_path / "ours_txt")
    (tmp_path / "ours_bin").mkdir()
    subprocess.run([colmap, "model_converter", "--input_path", str(tmp_path / "ours_txt"),
                    "--output_path", str(tmp_path / "ours_bin"), "--output_type", "BIN"],
                   check=True, capture_output=True)
    same_model(rec, vidmap.Reconstruction(tmp_path / "ours_bin"), tol=1e-9)


def test_arrays_are_views_of_the_model(orbit_maps, tmp_path):
    rec = vidmap.Reconstruction(orbit_maps.output_path / "sparse" / "0")
    image = next(iter(rec.images.values()))
    kp = image.keypoints
    assert kp.shape == (image.num_points2D(), 2) and kp.dtype == np.float64
    assert not kp.flags.owndata  # a view, not a copy
    kp[0] = (12.5, 34.25)
    assert tuple(image.keypoints[0]) == (12.5, 34.25)
    pid = next(iter(rec.points3D.keys()))
    rec.points3D[pid].xyz[:] = (1, 2, 3)
    assert rec.points3D[pid].xyz.tolist() == [1, 2, 3]
    pose = image.cam_from_world
    pose.translation = np.array([0.5, -1.0, 2.0])
    image.cam_from_world = pose
    np.testing.assert_allclose(image.cam_from_world.translation, [0.5, -1.0, 2.0])
    # The edits are in the C++ model: written and read back.
    rec.write(tmp_path / "edited")
    back = vidmap.Reconstruction(tmp_path / "edited")
    assert tuple(back.images[image.image_id].keypoints[0]) == (12.5, 34.25)
    assert back.points3D[pid].xyz.tolist() == [1, 2, 3]
    # A view keeps its model alive.
    view = vidmap.Reconstruction(tmp_path / "edited").points3D[pid].xyz
    assert view.tolist() == [1, 2, 3]


def test_points_project_to_their_keypoints(orbit_maps):
    """Camera.img_from_cam and cam_from_world reproduce the observations within the model's
    own reprojection errors."""
    rec = orbit_maps[0]
    errors = []
    for image in rec.images.values():
        cam = rec.cameras[image.camera_id]
        ids = image.point3D_ids
        has = ids != vidmap.INVALID_POINT3D_ID
        xyz = np.array([rec.points3D[int(i)].xyz for i in ids[has]])
        px = cam.img_from_cam(image.cam_from_world * xyz)
        errors.append(np.linalg.norm(px - image.keypoints[has], axis=1))
        # And back: cam_from_img inverts img_from_cam.
        n = cam.cam_from_img(px)
        np.testing.assert_allclose(cam.img_from_cam(n), px, atol=1e-6)
    errors = np.concatenate(errors)
    assert len(errors) > 1000
    assert np.median(errors) < 1.0
    assert abs(errors.mean() - rec.compute_mean_reprojection_error()) < 0.5


def test_rigid3d_is_consistent():
    R = vidmap.Rotation3d.from_matrix(np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1.0]]))
    np.testing.assert_allclose(R.quat, [0, 0, np.sqrt(0.5), np.sqrt(0.5)])
    T = vidmap.Rigid3d(R, [1, 2, 3])
    x = np.array([[1.0, 0, 0], [0, 2, 0]])
    np.testing.assert_allclose(T.inverse() * (T * x), x, atol=1e-12)
    np.testing.assert_allclose((T * T.inverse()).matrix(), np.eye(4)[:3], atol=1e-12)


def test_bad_cameras_raise():
    with pytest.raises(vidmap.Error):
        vidmap.Camera("PINHOLE", 640, 480, [500, 500, 320])
    with pytest.raises(vidmap.Error):
        vidmap.Camera("NOT_A_MODEL", 640, 480, [1, 2, 3])
    cam = vidmap.Camera("PINHOLE", 640, 480, [500, 500, 320, 240])
    with pytest.raises(vidmap.Error):
        cam.img_from_cam(np.zeros((4, 5)))
    np.testing.assert_allclose(cam.img_from_cam(np.array([[0.0, 0.0, 2.0]])), [[320, 240]])
