"""Self-calibration on the virtual table: the markings (spots, balkline crossings, the snooker D) are found where
they are and close the focal/height valley of an untold lens seen straight down; a fixture clip, calibrated from its
first frames as ``arbitro replay`` does without ``--calib``, puts the corners within half a pixel of its own
calibration file."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest

from calibration.auto import calibrate_view
from calibration.camera import CameraModel
from calibration.file import read_calibration
from calibration.markings import find_line_junctions, find_markings
from calibration.pose import nose_height_mm, table_corners
from calibration.table_finder import find_outline
from device.calibrate_command import run_calibrate
from rules.tables import preset
from sim.layouts import opening_layout
from sim.render import Effects, rest_view
from sim.sensors import SENSORS, camera_for

CAROM = preset("carom_match")
CLIPS = Path(__file__).resolve().parent.parent / "fixtures" / "clips"
QUIET = Effects(motion_blur=False, draw_cue=False, noise_sigma=1.0, jpeg_quality=92)


def _tilted(table, size=(1280, 960), tilt=4.0) -> CameraModel:
    f = (size[0] / 2) / np.tan(np.radians(66) / 2)
    return CameraModel.overhead(table, size, height_mm=(table.length + 500) * f / size[0] * 1.05, tilt_deg=tilt,
                                focal_px=f, dist=(-0.02, 0.0, 0.0, 0.0, 0.0))


def _ball_errors(true: CameraModel, est: CameraModel, table) -> np.ndarray:
    r = table.ball_radius
    g = np.stack(np.meshgrid(np.linspace(r, table.width - r, 15), np.linspace(r, table.length - r, 29)),
                 -1).reshape(-1, 2)
    return np.linalg.norm(est.image_to_table(true.table_to_image(g, r), r) - g, axis=1)


def test_balkline_crossings_are_measured_through_a_rough_calibration():
    """The crossings are found from a camera a few pixels off (the arms' offsets say by how much)."""
    cam = _tilted(CAROM)
    img = rest_view(CAROM, "balkline_47_2", cam, {}, QUIET)
    rough = cam.moved((0.002, -0.001, 0.001), (4.0, -3.0, 0.0))
    assert np.abs(rough.table_to_image((473.0, 473.0)) - cam.table_to_image((473.0, 473.0))).max() > 2.0
    found = {m.name: m for m in find_line_junctions(img, rough, CAROM)}
    assert set(found) == {"balkline473_473_473", "balkline473_947_473", "balkline473_473_2367",
                          "balkline473_947_2367"}  # the 71 cm lines are not on this table
    for m in found.values():
        assert np.linalg.norm(m.px - cam.table_to_image(m.table_xy, 0.0)) < 0.3


def test_a_table_without_chalk_lines_gives_no_junctions():
    cam = _tilted(CAROM)
    assert find_line_junctions(rest_view(CAROM, "three_cushion", cam, {}, QUIET), cam, CAROM) == []


def test_the_d_ends_on_the_baulk_line_are_found_beside_the_balls_on_them():
    table = preset("snooker_full")
    cam = _tilted(table, (800, 600))
    img = rest_view(table, "sinuca", cam, opening_layout("sinuca", table), QUIET)
    found = {m.name: m for m in find_line_junctions(img, cam, table)}
    assert set(found) == {"d_left", "d_right"}  # the green and yellow balls stand on them
    for m in found.values():
        assert np.linalg.norm(m.px - cam.table_to_image(m.table_xy, 0.0)) < 0.4


def test_a_ball_on_a_spot_is_not_taken_for_the_spot():
    """The three-cushion opening covers the bottom, top and right starting spots; their balls' dots must not pass
    for chalk spots (a spotted ball's dot once did, 16 mm off)."""
    cam = _tilted(CAROM)
    img = rest_view(CAROM, "three_cushion", cam, opening_layout("three_cushion"), QUIET)
    outline = find_outline(img)
    found = {m.name: m for m in find_markings(img, cam, CAROM, outline.cloth)}
    assert set(found) == {"spot_centre", "spot_start_left"}
    for m in found.values():
        assert np.linalg.norm(m.px - cam.table_to_image(m.table_xy, 0.0)) < 0.3


def test_an_untold_lens_straight_down_gets_its_height_from_the_markings():
    """Straight down, the noses alone trade the focal length for the height; the spots on the cloth, 37 mm below
    the noses, tell them apart. The picture is a 1456x1088 sensor mode scaled to 640x480: pixels 0.4 % taller than
    wide, which the fit must follow to keep the corners."""
    cam = camera_for(CAROM, SENSORS["pi_gs"], image_size=(640, 480))
    img = rest_view(CAROM, "three_cushion", cam, opening_layout("three_cushion"), QUIET)
    vc = calibrate_view(img, CAROM, lens=None)
    est = vc.calibration.camera
    assert est.camera_centre[2] == pytest.approx(cam.camera_centre[2], rel=0.04)
    true_corners = cam.project(table_corners(CAROM, nose_height_mm(CAROM)))
    assert np.linalg.norm(vc.calibration.corners_px - true_corners, axis=1).max() < 0.3
    e = _ball_errors(cam, est, CAROM)
    assert e.max() < 1.5 and np.median(e) < 0.5
    q = vc.calibration.quality
    assert q["markings_found"] >= 2 and q["markings_mm"] < 1.0  # the markings' residual, in the file's quality


@pytest.mark.parametrize("name", ["three_cushion_point_and_miss", "chapo_king_two_laterals_and_mingo",
                                  "arm_over_the_table", "balkline_run_leaving_a_field"])
def test_a_fixture_clip_self_calibrates_to_its_calibration_file(name, tmp_path):
    """As ``arbitro replay CLIP`` without ``--calib`` does: the median of the first frames, the lens untold."""
    discipline = json.loads((CLIPS / f"{name}.scenario.json").read_text())["discipline"]
    out = tmp_path / "auto.calib.json"
    args = argparse.Namespace(source=str(CLIPS / f"{name}.mp4"), out=str(out), table=None, discipline=discipline,
                              lens=None, intrinsics=None, corners=None, overlay=None, frames=9)
    run_calibrate(args)
    est, truth = read_calibration(out), read_calibration(CLIPS / f"{name}.calib.json")
    assert est.table.name == truth.table.name
    # Both files hold the nose corners as seen.
    assert np.linalg.norm(est.corners_px - truth.corners_px, axis=1).max() < 0.5
    e = _ball_errors(truth.camera, est.camera, truth.table)
    assert e.max() < 3.0
