"""The calibration file: a written file reads back the same camera; every bad field is one clear line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from calibration.camera import CameraModel
from calibration.file import Calibration, CalibrationFileError, read_calibration, write_calibration
from rules.tables import preset

CAROM = preset("carom_match")


def _calib() -> Calibration:
    cam = CameraModel.overhead(CAROM, (640, 480), tilt_deg=5, dist=(-0.1, 0.02, 0, 0, 0))
    corners = cam.table_to_image([[0, 0], [CAROM.width, 0], [CAROM.width, CAROM.length], [0, CAROM.length]])
    return Calibration(cam, CAROM, corners, {"reprojection_px": 0.1, "markings_mm": 0.4})


def _write(tmp_path, data) -> str:
    p = tmp_path / "t.calib.json"
    p.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return str(p)


def test_written_file_reads_back_the_same_camera_table_and_corners(tmp_path):
    c = _calib()
    write_calibration(tmp_path / "a.calib.json", c)
    back = read_calibration(tmp_path / "a.calib.json")
    assert back.table == CAROM
    np.testing.assert_allclose(back.camera.camera_matrix, c.camera.camera_matrix)
    np.testing.assert_allclose(back.camera.tvec, c.camera.tvec)
    np.testing.assert_allclose(back.corners_px, c.corners_px)
    assert back.quality["markings_mm"] == 0.4
    assert json.loads((tmp_path / "a.calib.json").read_text())["table"] == "carom_match"


def test_a_full_table_spec_reads_as_a_scaled_preset(tmp_path):
    d = _calib().to_dict()
    d["table"] = {"preset": "chapo", "width": 1250, "length": 2500, "ball_diameter": 79}
    t = read_calibration(_write(tmp_path, d)).table
    assert (t.width, t.length) == (1250, 2500)
    assert t.spots["king"] == (625.0, 1250.0)


def _broken(field, value):
    d = _calib().to_dict()
    if value is KeyError:
        del d[field]
    else:
        d[field] = value
    return d


@pytest.mark.parametrize("field, value, says", [
    ("version", 7, "version: unknown version 7"),
    ("version", KeyError, "version: missing"),
    ("camera_matrix", [[1, 0, 0], [0, 1, 0]], "camera_matrix: must be 3x3 numbers, got 2x3"),
    ("camera_matrix", [[1, 0, 0], [0, 1, 0], [0, 0, "x"]], "camera_matrix: must be 3x3 numbers, found a non-number"),
    ("dist_coeffs", [0.1, 0.0, 0.0, 0.0], "dist_coeffs: must be 5 numbers, got 4"),
    ("dist_coeffs", [float("nan"), 0, 0, 0, 0], "dist_coeffs: must be finite"),
    ("image_size", [640], "image_size: must be 2 numbers"),
    ("image_size", [640.5, 480], "image_size: must be [width, height] whole pixels"),
    ("corners_px", [[0, 0], [1, 1], [2, 2]], "corners_px: must be 4x2 numbers, got 3x2"),
    ("tvec", KeyError, "tvec: missing"),
    ("table", "pool_12ft", "table: unknown preset 'pool_12ft'"),
    ("table", {"width": 1270, "length": 2540}, "table.ball_diameter: missing"),
    ("table", {"width": 1270, "length": 2540, "ball_diameter": 57, "colour": "red"}, "table: unknown field 'colour'"),
    ("table", {"width": -5, "length": 2540, "ball_diameter": 57}, "table.width: must be a number of mm"),
    ("quality", [1, 2], "quality: must be an object"),
])
def test_a_bad_field_is_named_in_one_line(tmp_path, field, value, says):
    with pytest.raises(CalibrationFileError) as err:
        read_calibration(_write(tmp_path, _broken(field, value)))
    msg = str(err.value)
    assert msg.startswith("t.calib.json: ") and says in msg and "\n" not in msg


@pytest.mark.parametrize("content, says", [
    ("\x89PNG\r\n\x1a\n\x00\x00", "not a calibration file"),
    ("[1, 2, 3]", "not a calibration file"),
    ('{"shots": []}', "version: missing"),
])
def test_a_file_of_the_wrong_kind_is_one_line(tmp_path, content, says):
    with pytest.raises(CalibrationFileError, match=says):
        read_calibration(_write(tmp_path, content))


def test_a_missing_file_is_one_line(tmp_path):
    with pytest.raises(CalibrationFileError, match="no such calibration file"):
        read_calibration(tmp_path / "nope.calib.json")


def _fisheye_calib() -> Calibration:
    table = preset("snooker_full")
    cam = CameraModel.overhead(table, (1280, 960), height_mm=1400, tilt_deg=3, focal_px=560,
                               dist=(-0.04, -0.01, 0.005, 0.0), lens_model="fisheye")
    corners = cam.table_to_image([[0, 0], [table.width, 0], [table.width, table.length], [0, table.length]])
    return Calibration(cam, table, corners, {"reprojection_px": 0.2})


def test_a_fisheye_calibration_reads_back_as_a_fisheye(tmp_path):
    c = _fisheye_calib()
    write_calibration(tmp_path / "f.calib.json", c)
    raw = json.loads((tmp_path / "f.calib.json").read_text())
    assert raw["lens_model"] == "fisheye" and len(raw["dist_coeffs"]) == 4
    back = read_calibration(tmp_path / "f.calib.json")
    assert back.camera.lens_model == "fisheye"
    xy = np.array([[10.0, 20.0], [1700.0, 3500.0], [900.0, 1800.0]])
    np.testing.assert_allclose(back.camera.table_to_image(xy, 26.2), c.camera.table_to_image(xy, 26.2), atol=1e-9)


@pytest.mark.parametrize("change, says", [
    ({"lens_model": "orthographic"}, "lens_model: must be one of 'pinhole', 'fisheye', got 'orthographic'"),
    ({"lens_model": 3}, "lens_model: must be one of"),
    ({"dist_coeffs": [0.1, 0.0, 0.0, 0.0, 0.0]}, "dist_coeffs: must be 4 numbers, got 5"),
    ({"dist_coeffs": [40.0, 0.0, 0.0, 0.0]}, "dist_coeffs: the fisheye model's k1..k4 must be small"),
    ({"lens_model": "pinhole"}, "dist_coeffs: must be 5 numbers, got 4"),
])
def test_a_bad_lens_model_is_named_in_one_line(tmp_path, change, says):
    d = {**_fisheye_calib().to_dict(), **change}
    with pytest.raises(CalibrationFileError) as err:
        read_calibration(_write(tmp_path, d))
    msg = str(err.value)
    assert msg.startswith("t.calib.json: ") and says in msg and "\n" not in msg
