"""``arbitro calibrate``: a view of the virtual table gives a calibration file and an overlay; bad inputs are one line, exit 2."""

from __future__ import annotations

import argparse
import json

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from calibration.file import read_calibration
from calibration.pose import nose_height_mm, table_corners
from device.calibrate_command import add_calibrate_parser, main
from rules.tables import preset
from sim.layouts import opening_layout
from sim.render import Effects, Lighting, rest_view

CAROM = preset("carom_match")
HN = nose_height_mm(CAROM)


@pytest.fixture(scope="module")
def view(tmp_path_factory):
    f = (800 / 2) / np.tan(np.radians(66) / 2)
    cam = CameraModel.overhead(CAROM, (800, 600), height_mm=3340 * f / 800, tilt_deg=6, focal_px=f,
                               dist=(-0.02, 0, 0, 0, 0)).moved((0, 0, 0.01))
    path = tmp_path_factory.mktemp("view") / "table.png"
    uneven = Effects(motion_blur=False, draw_cue=False, lighting=Lighting(lamps=((0.3, 0.3),), strength=0.25))
    cv2.imwrite(str(path), rest_view(CAROM, "three_cushion", cam, opening_layout("three_cushion"), uneven))
    return cam, path


def _run(argv, capsys):
    code = main(["calibrate", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_picture_gives_a_calibration_file_and_an_overlay(view, tmp_path, capsys):
    cam, path = view
    out_file, pic = tmp_path / "t.calib.json", tmp_path / "over.jpg"
    code, out, err = _run([str(path), "--out", str(out_file), "--overlay", str(pic), "--lens", "cm3"], capsys)
    assert code == 0, err
    assert "carom_match" in err  # the preset was told from the view, and said
    calib = read_calibration(out_file)
    true = cam.project(table_corners(CAROM, HN))
    assert np.abs(calib.corners_px - true).max() < 0.3
    assert json.loads(out)["quality"]["reprojection_px"] < 0.5
    assert cv2.imread(str(pic)).shape[1] == 800


def test_corners_by_hand(view, tmp_path, capsys):
    cam, path = view
    true = cam.project(table_corners(CAROM, HN))
    text = ",".join(f"{v:.2f}" for v in true.ravel())
    code, out, err = _run([str(path), "--out", str(tmp_path / "m.calib.json"), "--corners", text, "--lens", "cm3",
                           "--table", "carom_match"], capsys)
    assert code == 0, err
    assert read_calibration(tmp_path / "m.calib.json").quality["manual_corners"] == 1


def test_a_video_gives_the_median_of_its_first_frames(view, tmp_path, capsys):
    cam, path = view
    img = cv2.imread(str(path))
    clip = tmp_path / "clip.avi"
    vw = cv2.VideoWriter(str(clip), cv2.VideoWriter_fourcc(*"MJPG"), 10, (800, 600))
    for i in range(12):
        frame = img.copy()
        cv2.circle(frame, (100 + 50 * i, 300), 60, (40, 40, 60), -1)  # someone walking past
        vw.write(frame)
    vw.release()
    code, out, err = _run([str(clip), "--out", str(tmp_path / "v.calib.json"), "--table", "carom_match",
                           "--lens", "cm3"], capsys)
    assert code == 0, err
    true = cam.project(table_corners(CAROM, HN))
    assert np.abs(read_calibration(tmp_path / "v.calib.json").corners_px - true).max() < 0.5


@pytest.mark.parametrize("make, says", [
    (lambda p: cv2.imwrite(str(p / "blank.png"), np.full((480, 640, 3), 90, np.uint8)) and p / "blank.png",
     "blank"),
    (lambda p: (p / "notes.txt").write_text("hello") and p / "notes.txt", "not a picture or a video"),
    (lambda p: p / "missing.jpg", "no such file"),
])
def test_bad_sources_are_one_line_and_exit_2(tmp_path, capsys, make, says):
    src = make(tmp_path)
    code, out, err = _run([str(src), "--out", str(tmp_path / "x.calib.json")], capsys)
    assert code == 2 and says in err and err.count("\n") == 1 and out == ""


def test_bad_corners_are_one_line(view, tmp_path, capsys):
    _, path = view
    code, out, err = _run([str(path), "--out", str(tmp_path / "x.json"), "--corners", "1,2,3"], capsys)
    assert code == 2 and "eight numbers" in err


def test_the_parser_plugs_into_any_subparsers():
    parser = argparse.ArgumentParser(prog="arbitro")
    add_calibrate_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["calibrate", "x.jpg", "--out", "t.calib.json", "--table", "chapo"])
    assert args.table == "chapo" and callable(args.run)


def test_arbitro_calibrate_runs_as_a_command(view, tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    _, path = view
    out = tmp_path / "c.calib.json"
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-m", "device", "calibrate", str(path), "--out", str(out),
                           "--table", "carom_match", "--lens", "cm3"], capture_output=True, text=True, cwd=root,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["table"] == "carom_match" and read_calibration(out).table.name == "carom_match"
    bad = subprocess.run([sys.executable, "-m", "device", "calibrate", str(tmp_path / "none.png"), "--out",
                          str(out)], capture_output=True, text=True, cwd=root, timeout=120)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "no such file" in bad.stderr


def _fisheye_view_and_intrinsics(tmp_path):
    """A rendered wide view of a snooker table through an equidistant lens, and that lens's intrinsics file as
    ``cv2.fisheye.calibrate`` gives it from synthetic chessboard views (the board's corners projected by the same
    lens, with 0.1 px of noise)."""
    from bench.calibration_views import Scene, render

    table = preset("snooker_full")
    cam = CameraModel.overhead(table, (960, 720), height_mm=1400, tilt_deg=3, focal_px=420,
                               dist=(-0.04, -0.01, 0.005, 0.0), lens_model="fisheye").moved((0, 0, 0.01))
    path = tmp_path / "fisheye.png"
    cv2.imwrite(str(path), render(cam, Scene(table), seed=4))
    board = np.zeros((9 * 6, 3))
    board[:, :2] = np.mgrid[0:9, 0:6].T.reshape(-1, 2) * 60.0
    rng = np.random.default_rng(3)
    obj, img = [], []
    for _ in range(20):  # the board held at random places and angles under the camera
        rvec = rng.uniform(-0.5, 0.5, 3)
        tvec = np.array([rng.uniform(-500, 200), rng.uniform(-400, 100), rng.uniform(500, 900)])
        view = CameraModel(cam.image_size, cam.camera_matrix, cam.dist_coeffs, rvec, tvec, "fisheye")
        px = view.project(board) + rng.normal(0, 0.1, (len(board), 2))
        if (px < 0).any() or (px >= (960, 720)).any():
            continue
        obj.append(board.reshape(1, -1, 3))  # cv2.fisheye wants 1 x N x 3 (N x 1 x 3 fails its size check)
        img.append(px.reshape(1, -1, 2))
    ns = cv2.fisheye if hasattr(cv2.fisheye, "CALIB_FIX_SKEW") else cv2  # OpenCV 4 names them there, 5 here
    flags = ns.CALIB_RECOMPUTE_EXTRINSIC | ns.CALIB_FIX_SKEW
    rms, k, d, _, _ = cv2.fisheye.calibrate(obj, img, (960, 720), None, None, flags=flags)
    assert len(obj) >= 5 and rms < 0.3
    intr = tmp_path / "lens.json"
    intr.write_text(json.dumps({"camera_matrix": k.tolist(), "dist_coeffs": d.ravel().tolist(),
                                "lens_model": "fisheye"}))
    return cam, path, intr, d.ravel()


def test_fisheye_intrinsics_from_a_chessboard_fix_the_lens(tmp_path, capsys):
    cam, path, intr, d = _fisheye_view_and_intrinsics(tmp_path)
    out_file = tmp_path / "f.calib.json"
    code, out, err = _run([str(path), "--out", str(out_file), "--intrinsics", str(intr), "--table", "snooker_full"],
                          capsys)
    assert code == 0, err
    calib = read_calibration(out_file)
    assert calib.camera.lens_model == "fisheye" and np.allclose(calib.camera.dist_coeffs, d)
    table = preset("snooker_full")
    true = cam.project(table_corners(table, nose_height_mm(table)))
    assert np.linalg.norm(calib.corners_px - true, axis=1).max() < 0.6
    # The corners by hand through the same lens: the pose from the ideal corners.
    text = ",".join(f"{v:.2f}" for v in true.ravel())
    code, out, err = _run([str(path), "--out", str(tmp_path / "m.calib.json"), "--corners", text, "--intrinsics",
                           str(intr), "--table", "snooker_full"], capsys)
    assert code == 0, err
    manual = read_calibration(tmp_path / "m.calib.json")
    assert manual.camera.lens_model == "fisheye" and manual.quality["reprojection_px"] < 0.3


@pytest.mark.parametrize("content, says", [
    ({"camera_matrix": [[400, 0, 480], [0, 400, 360], [0, 0, 1]], "dist_coeffs": [-0.04, -0.01, 0.005, 0.0]},
     'say "lens_model": "fisheye"'),
    ({"camera_matrix": [[400, 0, 480], [0, 400, 360], [0, 0, 1]], "dist_coeffs": [0, 0, 0, 0, 0],
      "lens_model": "fisheye"}, "the fisheye model's dist_coeffs are 4 numbers, got 5"),
    ({"camera_matrix": [[400, 0, 480], [0, 400, 360], [0, 0, 1]], "dist_coeffs": [0, 0, 0, 0],
      "lens_model": "kannala"}, "lens_model must be"),
    ({"camera_matrix": [[400, 0, 480], [0, 400, 360]], "dist_coeffs": [0, 0, 0, 0], "lens_model": "fisheye"},
     "camera_matrix (3x3)"),
    ([1, 2, 3], "camera_matrix (3x3)"),
])
def test_a_wrong_intrinsics_file_is_one_line(view, tmp_path, capsys, content, says):
    _, path = view
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(content))
    code, out, err = _run([str(path), "--out", str(tmp_path / "x.calib.json"), "--intrinsics", str(bad)], capsys)
    assert code == 2 and says in err and err.count("\n") == 1 and out == "", err
