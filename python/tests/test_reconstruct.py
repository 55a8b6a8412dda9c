"""vidmap.reconstruct from Python on a synthetic video with known cameras."""

import numpy as np
import pytest

import vidmap
from conftest import FAST, umeyama


def test_poses_match_the_truth_after_a_similarity(orbit, orbit_maps):
    assert isinstance(orbit_maps, dict) and list(orbit_maps) == [0]
    rec = orbit_maps[0]
    truth = vidmap.Reconstruction(orbit)  # the renderer's cameras, as a COLMAP text model
    by_name = {im.name: im for im in truth.images.values()}
    est, gt, rot = [], [], []
    for image in rec.images.values():
        t = by_name[image.name]
        est.append(image.projection_center())
        gt.append(t.projection_center())
        rot.append((image.cam_from_world.rotation.matrix(), t.cam_from_world.rotation.matrix()))
    est, gt = np.array(est), np.array(gt)
    assert len(est) >= 15
    s, R, t = umeyama(est, gt)
    ate = np.sqrt(((est @ (s * R).T + t - gt) ** 2).sum(1).mean())
    spread = np.sqrt(((gt - gt.mean(0)) ** 2).sum(1).mean())
    assert ate / spread < 0.01, f"ATE {ate} vs spread {spread}"
    # Orientations: R_gt = R_est R^T for world-to-camera rotations after the world turns by R.
    for Re, Rg in rot:
        d = Rg.T @ Re @ R.T
        angle = np.degrees(np.arccos(np.clip((np.trace(d) - 1) / 2, -1, 1)))
        assert angle < 0.5


def test_result_carries_the_record_summary_and_report(orbit_maps):
    rec = orbit_maps[0]
    assert orbit_maps.record["schema"] == "vidmap.run_record"
    assert orbit_maps.record["counts"]["registered_keyframes"] >= 15
    assert "reconstructed" in orbit_maps.summary
    assert (orbit_maps.output_path / "report.html").exists()
    assert str(orbit_maps.output_path / "report.html") in orbit_maps.summary
    assert "colmap gui --import_path" in orbit_maps.summary
    assert rec.num_reg_images() == orbit_maps.record["counts"]["model_0_images"] + \
        orbit_maps.record["counts"]["localized_frames"]
    assert "num_points3D" in rec.summary()


def test_progress_callback_sees_every_frame(orbit_maps):
    calls = orbit_maps.progress_calls
    assert [c[0] for c in calls] == list(range(1, 21))
    assert all(c[1] == 20 for c in calls)
    assert "keyframes" in calls[-1][2]


def test_exception_in_the_callback_ends_the_run_and_writes_nothing(orbit, tmp_path):
    class Stop(Exception):
        pass

    def stop(frames, total, status):
        if frames == 3:
            raise Stop("enough")

    with pytest.raises(Stop):
        vidmap.reconstruct(orbit / "rgb.txt", tmp_path / "out", progress=stop, **FAST)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_bad_arguments_raise_python_exceptions(orbit, tmp_path):
    out = tmp_path / "out"
    with pytest.raises(vidmap.Error, match="fps"):
        vidmap.reconstruct(orbit / "rgb.txt", out, fps=-1)
    with pytest.raises(vidmap.Error, match="unknown option 'fsp'"):
        vidmap.reconstruct(orbit / "rgb.txt", out, fsp=4)
    with pytest.raises(vidmap.Error, match="expects an integer"):
        vidmap.reconstruct(orbit / "rgb.txt", out, width="wide")
    with pytest.raises(vidmap.Error, match="does not fit"):
        vidmap.reconstruct(orbit / "rgb.txt", out, width=10**30)
    with pytest.raises(vidmap.Error, match="minTriAngleDeg"):
        vidmap.reconstruct(orbit / "rgb.txt", out, mapper={"min_tri_angle": 120.0})
    with pytest.raises(vidmap.Error, match="camera model"):
        vidmap.reconstruct(orbit / "rgb.txt", out, camera="FISHEYE 1,2,3")
    with pytest.raises(vidmap.Error, match="device"):
        vidmap.reconstruct(orbit / "rgb.txt", out, device="tpu")
    with pytest.raises(vidmap.Error):
        vidmap.reconstruct(tmp_path / "missing.mp4", out, **FAST)
    with pytest.raises(vidmap.Error):
        vidmap.Reconstruction(tmp_path / "no_model")
    with pytest.raises(vidmap.Error, match="options must be a dict"):
        vidmap.reconstruct(orbit / "rgb.txt", out, options=[1, 2])
    with pytest.raises(TypeError):
        vidmap.reconstruct()
    assert not out.exists()


def test_options_nested_dotted_and_flat_reach_the_same_field():
    a = vidmap._vidmap._resolve_options({"mapper": {"min_tri_angle": 0.5}})
    b = vidmap._vidmap._resolve_options({"mapper.min_tri_angle": 0.5})
    c = vidmap._vidmap._resolve_options({"min_tri_angle": 0.5})
    assert a == b == c and a["mapper"]["min_tri_angle"] == 0.5
    assert vidmap.default_options()["mapper"]["min_tri_angle"] != 0.5


def test_every_field_range_is_the_one_check_enforces():
    """The field list's ranges (shown as help) agree with the options' own check()."""
    for f in vidmap.option_fields():
        if f["type"] not in ("int", "float") or not np.isfinite(f["lo"]):
            continue
        path, lo, hi = f["path"], f["lo"], f["hi"]
        step = 1 if f["type"] == "int" else max(abs(lo), abs(hi), 1) * 1e-6
        cast = int if f["type"] == "int" else float
        for v in (lo, hi):
            vidmap._vidmap._resolve_options({path: cast(v)})
        for v in (lo - step, hi + step):
            with pytest.raises(vidmap.Error):
                vidmap._vidmap._resolve_options({path: cast(v)})
