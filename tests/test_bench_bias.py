"""bench_bias splits a reading's error into its lean towards the nearest ball, the nearest cushion and its motion."""

from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path

import numpy as np

from bench.bench_bias import _clip_rows
from calibration.file import read_calibration

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "clips"


def _cached_clip(folder: Path, truth_xy: dict, read_xy: dict) -> None:
    """A bench_vision cache folder of one frame: the truth's places and the ones the segmenter was fed."""
    name = "arm_over_the_table"
    shutil.copy(FIXTURES / f"{name}.calib.json", folder / f"{name}.calib.json")
    (folder / f"{name}.mp4").write_bytes(b"")  # only looked for by name
    frames = [{"t": 0.0, "t_frame": 0.0, "frame": 0, "camera": 0,
               "balls": {b: [x, y, 0.0, 0.0, 0] for b, (x, y) in truth_xy.items()}}]
    (folder / f"{name}.truth.json").write_text(json.dumps({"fps": 60.0, "frames": frames}))
    balls = tuple(read_xy)
    feed = {"balls": balls, "t": [0.0], "xy": [np.array([read_xy[b] for b in balls], dtype=float)]}
    with open(folder / "feed.pkl", "wb") as f:
        pickle.dump(feed, f)


def test_a_reading_off_towards_the_cushion_and_a_neighbour_leans_that_way(tmp_path):
    table = read_calibration(FIXTURES / "arm_over_the_table.calib.json").table
    r = table.ball_radius
    by_cushion = (r + 4.0, 800.0)  # 4 mm off the left cushion's nose
    a, b = (600.0, 1200.0), (600.0 + 2 * r + 3.0, 1200.0)  # 3 mm apart, far from every cushion
    truth = {"red": by_cushion, "white": a, "yellow": b}
    read = {"red": (by_cushion[0] - 0.5, 800.3),  # 0.5 mm towards the left cushion
            "white": (a[0] + 0.8, a[1]),  # 0.8 mm towards the yellow
            "yellow": (b[0] + 0.2, b[1] - 0.4)}  # 0.2 mm away from the white
    _cached_clip(tmp_path, truth, read)
    rows = {row[0]: row for row in _clip_rows(str(tmp_path))}
    assert set(rows) == {"red", "white", "yellow"}
    red, white, yellow = rows["red"], rows["white"], rows["yellow"]
    assert np.isclose(red[3], 4.0) and np.isclose(red[4], 0.5)  # gap to the nose, lean towards it
    assert np.isclose(white[1], 3.0) and np.isclose(white[2], 0.8)  # gap to the yellow, lean towards it
    assert np.isclose(yellow[2], -0.2)
    assert np.isclose(red[6], np.hypot(0.5, 0.3))


def test_a_reading_too_far_from_its_ball_is_left_out(tmp_path):
    _cached_clip(tmp_path, {"red": (500.0, 500.0)}, {"red": (520.0, 500.0)})
    assert _clip_rows(str(tmp_path)) == []
