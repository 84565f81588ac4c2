"""Preset detection from views of the virtual table (pockets, none or four or six; a baulk line), and OpenCV's
chessboard calibration."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from calibration.auto import calibrate_view
from calibration.camera import CameraModel
from calibration.distortion import calibrate_chessboard
from calibration.preset_detect import detect_preset
from rules.tables import preset
from sim.render import rest_view


@pytest.mark.parametrize("name, discipline, expect", [
    ("carom_match", "three_cushion", "carom_match"),
    ("chapo", "chapo", "chapo"),
    ("pool_9ft", "bilhar", "pool_9ft"), ("snooker_full", "sinuca", "snooker_full")])
def test_the_preset_is_told_by_its_pockets(name, discipline, expect):
    table = preset(name)
    f = (800 / 2) / np.tan(np.radians(66) / 2)
    cam = CameraModel.overhead(table, (800, 600), height_mm=(table.length + 500) * f / 800, tilt_deg=4,
                               focal_px=f, dist=(-0.02, 0, 0, 0, 0)).moved((0, 0, 0.01))
    img = rest_view(table, discipline, cam, seed=5)
    vc = calibrate_view(img, preset("carom_match"), lens="cm3")  # calibrated as some 2:1 table first
    guess = detect_preset(img, vc.calibration.camera, preset("carom_match"), vc.outline)
    assert guess.name == expect, guess


def _chessboard_view(k, dist, rvec, tvec, pattern=(9, 6), square=30.0, size=(640, 480)) -> np.ndarray:
    """A chessboard rendered through the lens: each pixel's ray onto the board plane, checked black or white."""
    cam = CameraModel(size, k, np.asarray(dist, float), np.asarray(rvec, float), np.asarray(tvec, float))
    u, v = np.meshgrid(np.arange(size[0] * 2) / 2 - 0.25, np.arange(size[1] * 2) / 2 - 0.25)
    xy = cam.image_to_table(np.stack([u, v], -1), 0.0)
    i = np.floor(xy[..., 0] / square + 1)
    j = np.floor(xy[..., 1] / square + 1)
    inside = (i >= 0) & (i <= pattern[0]) & (j >= 0) & (j <= pattern[1])
    board = np.where(inside, np.where((i + j) % 2 == 0, 230, 25), 150).astype(np.float32)
    return cv2.resize(board, size, interpolation=cv2.INTER_AREA).astype(np.uint8)


def test_a_chessboard_gives_the_intrinsics():
    k = np.array([[520.0, 0, 319.5], [0, 520.0, 239.5], [0, 0, 1]])
    dist = (-0.25, 0.07, 0, 0, 0)
    views = []
    poses = ((0.1, 0.0, 0, 0), (-0.25, 0.15, 90, 60), (0.25, -0.2, -90, -60), (0.0, 0.3, 90, -60),
             (-0.3, -0.1, -90, 60), (0.15, 0.2, 0, 70))
    for rx, ry, dx, dy in poses:
        r, _ = cv2.Rodrigues(np.array([np.pi + rx, ry, 0.02]))
        tvec = -r @ np.array([160.0, 100.0, 0.0]) + np.array([dx, dy, 430.0])
        views.append(_chessboard_view(k, dist, cv2.Rodrigues(r)[0].ravel(), tvec, square=40.0))
    cal = calibrate_chessboard(views, (9, 6), 40.0)
    assert cal.views_used >= 4 and cal.rms_px < 0.3
    assert abs(cal.camera_matrix[0, 0] / 520.0 - 1) < 0.02
    assert abs(cal.dist_coeffs[0] - (-0.25)) < 0.05


def test_no_chessboard_is_one_line():
    with pytest.raises(ValueError, match="chessboard 9x6 found in 0 of 2 views"):
        calibrate_chessboard([np.full((240, 320), 128, np.uint8)] * 2, (9, 6))
