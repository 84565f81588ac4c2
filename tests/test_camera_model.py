"""CameraModel: projection, the inverse through any plane, and the ball-centre parallax of DESIGN.md section 1."""

from __future__ import annotations

import numpy as np
import pytest

from calibration.camera import CameraModel
from rules.tables import preset

CAROM = preset("carom_match")
R = CAROM.ball_radius


def _grid(table, n: int = 9) -> np.ndarray:
    xs, ys = np.meshgrid(np.linspace(0, table.width, n), np.linspace(0, table.length, n))
    return np.stack([xs.ravel(), ys.ravel()], axis=-1)


@pytest.mark.parametrize("dist", [(0, 0, 0, 0, 0), (-0.12, 0.03, 0.001, -0.0005, -0.002)])
@pytest.mark.parametrize("tilt", [0.0, 12.0])
@pytest.mark.parametrize("z", [0.0, R])
def test_round_trip_table_image_table_is_exact(dist, tilt, z):
    cam = CameraModel.overhead(CAROM, (1456, 1088), height_mm=2000, tilt_deg=tilt, dist=dist)
    xy = _grid(CAROM)
    px = cam.table_to_image(xy, z)
    back = cam.image_to_table(px, z)
    assert np.abs(back - xy).max() < 0.01


def test_round_trip_image_table_image_is_exact():
    cam = CameraModel.overhead(CAROM, (640, 480), dist=(-0.2, 0.05, 0, 0, 0))
    px = np.stack(np.meshgrid(np.linspace(40, 600, 7), np.linspace(40, 440, 5)), axis=-1).reshape(-1, 2)
    again = cam.table_to_image(cam.image_to_table(px, 10.0), 10.0)
    assert np.abs(again - px).max() < 1e-6


def test_overhead_camera_looks_down_on_the_table_centre():
    cam = CameraModel.overhead(CAROM, (1456, 1088), height_mm=2000)
    np.testing.assert_allclose(cam.camera_centre, [CAROM.width / 2, CAROM.length / 2, 2000], atol=1e-9)
    centre_px = cam.table_to_image([CAROM.width / 2, CAROM.length / 2])
    np.testing.assert_allclose(centre_px, [(1456 - 1) / 2, (1088 - 1) / 2], atol=1e-9)
    # Orientation: the bottom cushion is on the image's left, the left cushion at its top.
    bottom, top = cam.table_to_image([[CAROM.width / 2, 0.0], [CAROM.width / 2, CAROM.length]])
    left, right = cam.table_to_image([[0.0, CAROM.length / 2], [CAROM.width, CAROM.length / 2]])
    assert bottom[0] < top[0] and left[1] < right[1]
    # The whole table is in view.
    corners = cam.table_to_image([[0, 0], [CAROM.width, 0], [0, CAROM.length], [CAROM.width, CAROM.length]])
    assert (corners >= 0).all() and (corners[:, 0] < 1456).all() and (corners[:, 1] < 1088).all()


def test_project_matches_table_to_image_at_height():
    cam = CameraModel.overhead(CAROM, (800, 600), tilt_deg=5, dist=(-0.05, 0, 0, 0, 0))
    xy = _grid(CAROM, 4)
    xyz = np.concatenate([xy, np.full((len(xy), 1), R)], axis=1)
    np.testing.assert_allclose(cam.project(xyz), cam.table_to_image(xy, R))


def test_ball_centre_parallax_near_the_far_cushion_from_2_m_is_about_20_mm():
    """DESIGN.md section 1: a cloth homography puts a ball near the far cushion ~20 mm off; the z=R plane is exact."""
    h = 2000.0
    cam = CameraModel.overhead(CAROM, (1456, 1088), height_mm=h)
    ball = np.array([CAROM.width / 2, CAROM.length - R])
    px = cam.table_to_image(ball, R)
    via_cloth = cam.image_to_table(px, 0.0)
    via_centre_plane = cam.image_to_table(px, R)
    d = ball[1] - CAROM.length / 2
    expected = d * R / (h - R)  # similar triangles through the camera centre
    error = np.linalg.norm(via_cloth - ball)
    assert 19.0 < error < 23.0
    assert error == pytest.approx(expected, rel=1e-6)
    assert via_cloth[1] > ball[1]  # pushed away from the point under the camera
    assert np.linalg.norm(via_centre_plane - ball) < 0.01


def test_image_to_table_broadcasts_a_height_per_point():
    cam = CameraModel.overhead(CAROM, (640, 480))
    xy = np.array([[100.0, 200.0], [900.0, 2500.0]])
    z = np.array([0.0, R])
    np.testing.assert_allclose(cam.image_to_table(cam.table_to_image(xy, z), z), xy, atol=1e-6)


def test_calibration_dict_round_trip_and_rejects_unknown_version():
    cam = CameraModel.overhead(CAROM, (640, 480), tilt_deg=3, dist=(-0.1, 0.01, 0, 0, 0))
    again = CameraModel.from_dict(cam.to_dict())
    np.testing.assert_allclose(again.project([[10, 20, 30]]), cam.project([[10, 20, 30]]))
    with pytest.raises(ValueError, match="version"):
        CameraModel.from_dict({**cam.to_dict(), "version": 99})
    with pytest.raises(ValueError, match="3x3"):
        CameraModel((640, 480), np.eye(2), np.zeros(5), np.zeros(3), np.zeros(3))


def test_nudged_camera_moves_the_image_slightly():
    cam = CameraModel.overhead(CAROM, (640, 480))
    nudged = cam.moved(d_rvec=(0.002, 0.0, 0.0))
    shift = nudged.table_to_image([710, 1420]) - cam.table_to_image([710, 1420])
    assert 0.2 < np.linalg.norm(shift) < 5.0


def test_a_spheres_image_centre_is_stretched_away_from_the_axis_by_the_predicted_amount():
    cam = CameraModel.overhead(CAROM, (1456, 1088), height_mm=2000)
    centre = np.array([CAROM.width / 2, CAROM.length / 2, R])
    np.testing.assert_allclose(cam.sphere_image_centre(centre, R), cam.project(centre), atol=1e-6)
    corner = np.array([R, R, R])
    offset = cam.sphere_image_centre(corner, R) - cam.project(corner)
    c = cam.camera_centre
    off_axis = np.hypot(*(corner[:2] - c[:2]))
    tan_t = off_axis / (c[2] - R)
    a2 = (R / np.linalg.norm(corner - c)) ** 2
    expected = cam.focal * a2 * tan_t * (1 + tan_t ** 2)  # f a^2 tan(t) / cos^2(t)
    assert np.linalg.norm(offset) == pytest.approx(expected, rel=0.05)
    assert 0.05 < np.linalg.norm(offset) < 0.5


def _fisheye(size=(1280, 960), dist=(-0.04, -0.01, 0.005, 0.0)) -> CameraModel:
    """A wide equidistant lens over a snooker table, as PoolJK's Pi camera is."""
    table = preset("snooker_full")
    return CameraModel.overhead(table, size, height_mm=1400, tilt_deg=3, focal_px=560, dist=dist,
                                lens_model="fisheye").moved((0, 0, 0.01))


@pytest.mark.parametrize("z", [0.0, 26.2, 33.3])
def test_fisheye_round_trip_is_exact_and_matches_opencvs_fisheye_projection(z):
    import cv2

    cam = _fisheye()
    table = preset("snooker_full")
    xy = np.stack(np.meshgrid(np.linspace(-150, table.width + 150, 15), np.linspace(-150, table.length + 150, 25)),
                  -1).reshape(-1, 2)
    px = cam.table_to_image(xy, z)
    assert np.abs(cam.image_to_table(px, z) - xy).max() < 1e-6
    assert np.abs(cam.table_to_image(cam.image_to_table(px, z), z) - px).max() < 1e-6
    p3 = np.concatenate([xy, np.full((len(xy), 1), z)], axis=1).reshape(-1, 1, 3)
    ref, _ = cv2.fisheye.projectPoints(p3, cam.rvec, cam.tvec, cam.camera_matrix, cam.dist_coeffs)
    assert np.abs(ref.reshape(-1, 2) - px).max() < 1e-6
    # Pixels some 60 degrees off the axis (the picture's own corners see past the horizon): still exact there.
    corners = np.array([[160.0, 120.0], [1120.0, 120.0], [1120.0, 840.0], [160.0, 840.0]])
    assert np.abs(cam.table_to_image(cam.image_to_table(corners, z), z) - corners).max() < 1e-6


def test_the_lens_model_survives_the_dict_scaling_and_nudges_and_a_pinhole_dict_is_unchanged():
    cam = _fisheye()
    d = cam.to_dict()
    assert d["lens_model"] == "fisheye" and len(d["dist_coeffs"]) == 4
    again = CameraModel.from_dict(d)
    np.testing.assert_allclose(again.project([[100.0, 200.0, 30.0]]), cam.project([[100.0, 200.0, 30.0]]))
    assert cam.scaled((640, 480)).lens_model == "fisheye" and cam.moved((0.001, 0, 0)).lens_model == "fisheye"
    # A pinhole camera writes exactly the fields it always did (old files and new ones read alike).
    assert "lens_model" not in CameraModel.overhead(CAROM, (640, 480)).to_dict()
    assert CameraModel.from_dict(CameraModel.overhead(CAROM, (640, 480)).to_dict()).lens_model == "pinhole"
    with pytest.raises(ValueError, match="fisheye model must be"):
        CameraModel((640, 480), np.eye(3), np.zeros(5), np.zeros(3), np.ones(3), "fisheye")
    with pytest.raises(ValueError, match="unknown lens model"):
        CameraModel((640, 480), np.eye(3), np.zeros(5), np.zeros(3), np.ones(3), "orthographic")


def test_a_fisheyes_scale_is_its_own_across_the_ray():
    cam = _fisheye()
    table = preset("snooker_full")
    xy = np.array([[table.width / 2, table.length / 2], [60.0, 80.0], [table.width - 60.0, table.length - 80.0]])
    ppm = cam.pixels_per_mm(xy, R)
    # Measured: the pixels between two points 1 mm apart across the ray (perpendicular to the radial direction).
    c = cam.to_camera(np.concatenate([xy, np.full((3, 1), R)], 1))
    radial = c[:, :2] / np.maximum(np.linalg.norm(c[:, :2], axis=1, keepdims=True), 1e-9)
    across = np.stack([-radial[:, 1], radial[:, 0], np.zeros(3)], 1) @ cam.rotation  # table frame, 1 mm
    pts = np.concatenate([xy, np.full((3, 1), R)], 1)
    seen = np.linalg.norm(cam.project(pts + 0.5 * across) - cam.project(pts - 0.5 * across), axis=1)
    np.testing.assert_allclose(ppm, seen, rtol=2e-3)
    assert ppm[1] < 0.9 * cam.focal / c[1, 2]  # near a corner the equidistant lens shows less than a pinhole
