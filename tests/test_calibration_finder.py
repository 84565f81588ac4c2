"""The table finder's cloth region on views that used to defeat it: a grey cloth seen through the wide lens (the
region crept over the cushions' dark face band into the rails) and chalk lines from cushion to cushion (balklines,
Chapo's cabana lines cut the region down to one field)."""

from __future__ import annotations

import numpy as np
import pytest

from calibration.auto import calibrate_view
from calibration.camera import CameraModel
from calibration.pose import nose_height_mm, table_corners
from rules.tables import preset
from bench.bench_calibration import random_view, render_view
from sim.render import rest_view

CAROM = preset("carom_match")


def _corner_errors(cam: CameraModel, image: np.ndarray, table, lens: str | None) -> np.ndarray:
    vc = calibrate_view(image, table, lens=lens)
    true = cam.project(table_corners(table, nose_height_mm(table)))
    return np.linalg.norm(vc.calibration.corners_px - true, axis=1)


def test_a_grey_cloth_through_the_wide_lens_stops_at_the_cushions_dark_face():
    """Regression for bench_calibration view 9 (wide lens, grey cloth, a person; 143 px off): with no colour to
    stop on, the flood crossed the lens-bent dark band under the nose in small steps and ran along it into the
    wooden rail."""
    rng = np.random.default_rng(1)  # the benchmark's default seed: its tenth view
    for _ in range(10):
        cam, look, desc = random_view(rng, CAROM, (1280, 960))
    assert desc.startswith("cm3_wide") and "grey person" in desc
    img = render_view(cam, look, CAROM, "three_cushion", seed=9)
    assert _corner_errors(cam, img, CAROM, "cm3_wide").max() < 0.3  # the target


@pytest.mark.parametrize("name, discipline", [("carom_match", "balkline_47_2"), ("chapo", "chapo")])
def test_chalk_lines_from_cushion_to_cushion_do_not_split_the_cloth(name, discipline):
    """Balklines and cabana lines cross the whole cloth: the region must still be the whole table, not one field
    (Chapo's was 63 px off; the balkline fixture clip was refused, see test_self_calibration)."""
    table = preset(name)
    size = (800, 600)
    f = (size[0] / 2) / np.tan(np.radians(66) / 2)
    cam = CameraModel.overhead(table, size, height_mm=(table.length + 500) * f / size[0], tilt_deg=3,
                               focal_px=f, dist=(-0.02, 0, 0, 0, 0)).moved((0, 0, 0.01))
    img = rest_view(table, discipline, cam, seed=2)
    assert _corner_errors(cam, img, table, "cm3").max() < 0.3
