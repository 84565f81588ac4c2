"""One frame in, every ball with its identity probabilities out: the detector the pipeline runs.

It joins the stages built separately: the empty-table model (learnt from the first still frames, with the balls
on them painted out, then followed slowly for light changes away from the balls), the ball detector, and the
identity of the discipline's balls (colour, and the ball-patch classifier where colour alone fails). Made once at start-up; ``detect`` is the per-frame work.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from calibration.camera import CameraModel
from rules.tables import TableSpec

from .detection import BallDetector
from .detections import Detections
from .identity import BallIdentifier


class FrameDetector:
    def __init__(self, camera: CameraModel, table: TableSpec, discipline: str, still_frames: Sequence[np.ndarray],
                 options: Mapping[str, str] | None = None, background_rate: float = 0.02,
                 update_every: int = 30) -> None:
        if not still_frames:
            raise ValueError("the detector needs at least one still frame to learn the table")
        options = dict(options or {})
        self.balls = BallDetector(camera, table)
        median = np.median(np.stack(still_frames[:15]), axis=0).astype(np.uint8) if len(still_frames) > 1 \
            else still_frames[0]
        self.background = self.balls.background_without_empty_table(median, rounds=3, around_candidates=False)
        self.identity = BallIdentifier.for_discipline(discipline, reds=int(options.get("reds", 15)))
        self.rate = background_rate
        self.update_every = update_every
        self.frames = 0

    def detect(self, image: np.ndarray, t: float) -> Detections:
        det = self.balls.detect(image, t, self.background)
        det = self.identity.identify(image, det)
        self.frames += 1
        if self.update_every and self.frames % self.update_every == 0 and len(det):
            # Follow slow light changes on the cloth, never learning a ball into the empty table.
            self.background.update(image, keep_out=self.balls.disc_mask(det), rate=self.rate)
        return det
