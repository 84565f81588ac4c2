"""Mapping: pixels <-> table mm at any height, exact round trips, and lookup tables that agree with the solve."""

from __future__ import annotations

import numpy as np
import pytest

from calibration.camera import CameraModel
from calibration.mapping import PlaneLookup, to_image, to_table, top_down_maps
from rules.tables import preset

CAROM = preset("carom_match")
R = CAROM.ball_radius
WIDE = (-0.32, 0.11, 0.0, 0.0, -0.015)  # about the wide Camera Module 3


@pytest.mark.parametrize("dist", [(0, 0, 0, 0, 0), WIDE])
@pytest.mark.parametrize("z", [0.0, R, 45.0])
def test_image_table_image_round_trip_within_a_hundredth_of_a_pixel(dist, z):
    cam = CameraModel.overhead(CAROM, (800, 600), tilt_deg=8, dist=dist)
    px = np.stack(np.meshgrid(np.linspace(5, 795, 40), np.linspace(5, 595, 30)), axis=-1)
    back = to_image(cam, to_table(cam, px, z), z)
    assert back.shape == px.shape
    assert np.abs(back - px).max() < 0.01


def test_three_d_points_carry_their_own_height():
    cam = CameraModel.overhead(CAROM, (800, 600))
    pts = np.array([[100.0, 200.0, R], [700.0, 2000.0, 0.0]])
    np.testing.assert_allclose(to_image(cam, pts), [cam.table_to_image(p[:2], p[2]) for p in pts])


def test_ball_plane_lookup_agrees_with_the_exact_solve():
    cam = CameraModel.overhead(CAROM, (400, 300), tilt_deg=6, dist=WIDE)
    lut = PlaneLookup.build(cam, R)
    rng = np.random.default_rng(1)
    px = rng.uniform([0, 0], [399, 299], size=(2000, 2))
    exact = to_table(cam, px, R)
    on_table = (exact[:, 0] > -100) & (exact[:, 0] < CAROM.width + 100) & (exact[:, 1] > -100) \
        & (exact[:, 1] < CAROM.length + 100)
    assert on_table.sum() > 500
    assert np.abs(lut(px[on_table]) - exact[on_table]).max() < 0.03  # mm, at 10 mm per pixel: 1/300 px


def test_top_down_map_puts_the_table_corners_at_the_picture_corners():
    cam = CameraModel.overhead(CAROM, (400, 300))
    mx, my = top_down_maps(cam, CAROM.width, CAROM.length, mm_per_px=10.0)
    assert mx.shape == (284, 142)
    # Output (row 0, col 0) is table (5, L - 5): near the top-left corner.
    np.testing.assert_allclose([mx[0, 0], my[0, 0]], cam.table_to_image([5.0, CAROM.length - 5.0]), atol=1e-3)
