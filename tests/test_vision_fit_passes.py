"""The per-frame shortcuts of the change-gated detector: what each skips, and that what it gives is what the full
work gives (or, where it gives less work on purpose, what the fewer passes give).

- the ray fit's passes after the first only for the balls not moving (``fit_balls``' ``moving_from``);
- a ball settling where nothing changed fitted where it lies, without a search round it
  (``BallDetector.detect_with_known``, ``FrameDetector``);
- the change map grown over the box of what changed only (``ChangeGate._grown``), and the background's colour
  directions made for the fit's windows alone (``unit_and_norm``): both the same values as the whole-image work.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from rules.tables import preset
from tests.vision_scenes import WHITE, BallSpec, Scene, render
from vision.background import ColourReference, unit_and_norm
from vision.detection import BallDetector
from vision.frame_detector import FrameDetector
from vision.incremental import ChangeConfig, ChangeGate
from vision.ray_fit import fit_balls

CAROM = preset("carom_match")
CAM = CameraModel.overhead(CAROM, (728, 544), height_mm=2000, dist=(-0.12, 0.03, 0.0005, -0.0003, 0.0))
RED = (40, 40, 200)


def _frame(balls, seed=0) -> np.ndarray:
    return render(Scene(CAM, CAROM, balls=tuple(balls)), np.random.default_rng(seed))


@pytest.fixture(scope="module")
def scene():
    det = BallDetector(CAM, CAROM)
    background = det.background_from_frames([_frame([], seed=s) for s in range(3)])
    balls = [BallSpec((400.0, 700.0), WHITE), BallSpec((900.0, 2000.0), RED), BallSpec((1200.0, 1300.0), WHITE)]
    frame = _frame(balls, seed=5)
    whole = det.detect(frame, 0.0, background)
    assert len(whole) == 3
    return det, background, frame, whole


def _fit(det, background, frame, centres, **kw):
    return fit_balls(frame, background.full, det.config.difference, centres, det.geometry.radius_at(centres), **kw)


def test_a_ball_moved_from_where_every_ball_was_is_refined_once_the_others_twice(scene):
    det, background, frame, whole = scene
    start = whole.px + [[0.8, -0.6], [-0.7, 0.5], [0.6, 0.9]]  # as a candidate is: a pixel or so off
    ratio = (0.97, 0.97)
    two = _fit(det, background, frame, start, radius_ratio=ratio)
    one = _fit(det, background, frame, start, radius_ratio=ratio[:1], iterations=1)
    assert np.abs(two.centre - one.centre).max() > 1e-3  # the second pass does move the centres
    # Ball 0 was 5 px away a frame ago (moving), the others where they are now.
    before = np.concatenate([whole.px[:1] + [5.0, 0.0], whole.px[1:]])
    mixed = _fit(det, background, frame, start, radius_ratio=ratio, moving_from=before)
    np.testing.assert_allclose(mixed.centre[0], one.centre[0], atol=1e-9)
    np.testing.assert_allclose(mixed.centre[1:], two.centre[1:], atol=1e-9)
    assert mixed.radius_ratio == ratio
    with pytest.raises(ValueError):
        _fit(det, background, frame, start, moving_from=before)  # a part of a batch needs a given ratio


def test_known_balls_are_fitted_where_they_lie_without_a_search(scene):
    det, background, frame, whole = scene
    # No rectangle to search: only the known balls are fitted, and flagged as such.
    found, known = det.detect_with_known(frame, 0.0, background, rects=(), known=whole.px[:2] + 0.4)
    assert len(found) == 2 and known.all()
    assert np.abs(found.xy - whole.xy[:2]).max() < 0.5
    # A known ball that a rectangle's search also finds is found once, as the known one.
    x, y = det.to_low(whole.px[2:3])[0]
    m = int(np.ceil(3 * det.radius_low))
    rect = (int(y) - m, int(y) + m, int(x) - m, int(x) + m)
    found, known = det.detect_with_known(frame, 0.0, background, rects=[rect], known=whole.px[2:3])
    assert len(found) == 1 and known.tolist() == [True]


def test_a_settling_ball_is_measured_every_frame_with_nothing_to_search():
    """For ``recheck_moving_frames`` frames after it moved a ball is measured again in every frame (its resting
    place is the mean of those measurements), and where nothing changed round it that takes no search: no
    rectangle, the fit from where it was."""
    fd = FrameDetector(CAM, CAROM, "three_cushion", [_frame([], seed=s) for s in range(3)], incremental=True,
                       change=ChangeConfig(refresh_every=10_000))
    ball = [BallSpec((600.0, 1100.0), WHITE)]
    fd.detect(_frame(ball, seed=40), 0.0)  # a whole-frame detection: the ball has not been still yet
    searched = []
    orig = fd.balls.detect_with_known

    def spy(*a, **k):
        searched.append(len(k.get("rects") or ()))
        return orig(*a, **k)

    fd.balls.detect_with_known = spy
    xs = []
    for k in range(1, 6):
        det = fd.detect(_frame(ball, seed=40 + k), k / 60)
        assert len(det) == 1
        xs.append(det.xy[0, 0])
    assert searched == [0] * 5  # fitted every frame, never searched for
    assert len(set(xs)) == 5  # each frame its own measurement (its own noise), not the one of the frame before
    assert np.ptp(xs) < 0.5 and fd._hist_n[0] == 6


def test_the_change_map_grown_over_its_box_is_the_whole_maps_dilation():
    gate = ChangeGate(BallDetector(CAM, CAROM))
    rng = np.random.default_rng(3)
    h, w = gate._search.shape
    for _ in range(200):
        seen = np.zeros((h, w), np.uint8)
        for _ in range(rng.integers(0, 4)):
            x, y = rng.integers(0, w), rng.integers(0, h)
            seen[y:y + rng.integers(1, 6), x:x + rng.integers(1, 6)] = 1
        np.testing.assert_array_equal(gate._grown(seen), cv2.dilate(seen, gate._grow))


def test_colour_directions_of_a_window_are_the_whole_images_bit_for_bit():
    image = _frame([BallSpec((400.0, 700.0), WHITE)], seed=2)
    ref = ColourReference(image)
    for y, x, s in [(0, 0, 57), (100, 223, 31), (480, 660, 60)]:
        unit, norm = unit_and_norm(image[y:y + s, x:x + s])
        np.testing.assert_array_equal(unit, ref.unit[y:y + s, x:x + s])
        np.testing.assert_array_equal(norm, ref.norm[y:y + s, x:x + s])
