"""The pipeline's own filters between detection and tracking: what cannot be a ball on the table."""

from __future__ import annotations

import numpy as np

from rules.tables import chapo_pin_spots, preset
from vision.detections import Detections, PinObservation
from vision.pipeline import VisionPipeline

CHAPO = preset("chapo")
BALLS = ("1", "2", "mingo")


class FixedDetector:
    """Always the same blobs, each looking like the Mingo (a dark hole, a pale lying pin)."""

    def __init__(self, points):
        self.points = np.asarray(points, dtype=float)

    def detect(self, image, t):
        n = len(self.points)
        probs = np.tile([0.0, 0.0, 1.0], (n, 1))
        return Detections(t, self.points, self.points, np.full(n, 8.0), np.ones(n), BALLS, probs)


class KingDown:
    def __init__(self, at):
        self.at = at

    def observe(self, image, t, balls):
        spots = chapo_pin_spots(CHAPO)
        return PinObservation(t, {p: spots[p] for p in spots if p != "king"}, {"king": self.at})


def _run(pipeline, frames=20):
    image = np.zeros((4, 4, 3), np.uint8)
    return [pipeline.process(image, k / 30) for k in range(frames)]


def test_a_blob_over_a_chapo_hole_is_never_a_ball():
    hole = CHAPO.pocket("bottom_right").drop
    pipe = VisionPipeline(FixedDetector([[hole[0] - 20.0, hole[1] + 20.0], [600.0, 2100.0]]), BALLS, CHAPO,
                          cue_ball=lambda: "1")
    _run(pipe)
    assert np.allclose(pipe.last_positions[2], [600.0, 2100.0])  # the real Mingo, not the hole


def test_a_blob_on_a_lying_pin_is_never_a_ball():
    lying = (635.0, 1292.0)
    pipe = VisionPipeline(FixedDetector([[lying[0] + 10.0, lying[1]]]), BALLS, CHAPO, cue_ball=lambda: "1",
                          pins=KingDown(lying))
    _run(pipe)
    assert np.isnan(pipe.last_positions).all()
