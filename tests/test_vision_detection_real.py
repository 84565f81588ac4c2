"""Ball detection on real overhead frames (LukasSeglias/billiard-ai): recall, precision and centre error measured
against every ball's annotated pixel centre. The empty-table model is the per-pixel median of the frames, as the
device builds it from frames in which the balls sit in different places."""

from __future__ import annotations

import cv2
import pytest

from tests import real_snooker_frames as real
from vision.detection import BallDetector

pytestmark = pytest.mark.skipif(not real.available(), reason=f"real frames not found at {real.FOLDER}")


@pytest.fixture(scope="module")
def measured() -> real.Score:
    cases = real.cases()
    camera, table = real.camera_and_table(cases)
    frames = [cv2.imread(str(c.image)) for c in cases]
    detector = BallDetector(camera, table)
    background = detector.background_from_frames(frames)
    per_frame = []
    for case, frame in zip(cases, frames):
        det = detector.detect(frame, 0.0, background)
        per_frame.append((det.px, case.px))
    # Matched within half a ball radius (about 7 px here).
    return real.score(per_frame, tol=7.0)


def test_nearly_every_real_ball_is_found(measured):
    # Measured 0.989 (443 of 448): the misses are the black ball, dark on the dark side of a teal cloth.
    assert measured.recall >= 0.95


def test_nothing_but_balls_is_found_on_the_real_table(measured):
    # Measured 1.0, although a projector draws a halo ring round every ball.
    assert measured.precision >= 0.98


def test_real_ball_centres_are_within_a_pixel_or_two(measured):
    # Measured median 1.26 px, p90 2.27 px (a ball is about 15 px in radius; the annotation is to the pixel).
    assert measured.median_px <= 1.6
    assert measured.p90_px <= 3.0


def test_real_balls_are_found_without_ever_seeing_the_table_empty():
    """The empty-table model painted from each frame itself (the device started with the balls already set)."""
    cases = real.cases()[::4]
    camera, table = real.camera_and_table(real.cases())
    detector = BallDetector(camera, table)
    per_frame = []
    for case in cases:
        frame = cv2.imread(str(case.image))
        det = detector.detect(frame, 0.0, detector.background_without_empty_table(frame))
        per_frame.append((det.px, case.px))
    s = real.score(per_frame, tol=7.0)
    # Measured over all 32 frames: recall 0.962, precision 1.0, median 0.93 px.
    assert s.recall >= 0.92 and s.precision >= 0.98
    assert s.median_px <= 1.6
