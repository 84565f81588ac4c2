"""One frame in, every ball with its identity probabilities out: the detector the pipeline runs.

It joins the stages built separately: the empty-table model (learnt from the first still frames, with the balls
on them painted out, then followed slowly for light changes away from the balls), the ball detector, and the
identity of the discipline's balls (colour, and the ball-patch classifier where colour alone fails). Made once at
start-up; ``detect`` is the per-frame work. ``incremental=True`` looks only where the frame changed
(``vision.incremental``: half the time per frame); it is not the default yet because the tracker's rules for a
ball put back (a blob keeping still) were tuned on whole-frame detections, and on the snooker fixture clip a
marginal blob under the cue then becomes a ball (see the vision issue's note).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from calibration.camera import CameraModel
from rules.balls import CAROM_DISCIPLINES
from rules.tables import TableSpec

from .detection import BallDetector
from .detections import Detections
from .identity import BallIdentifier, ColourModel, ball_features, match_one_of_each
from .incremental import ChangeConfig, ChangeGate


class FrameDetector:
    def __init__(self, camera: CameraModel, table: TableSpec, discipline: str, still_frames: Sequence[np.ndarray],
                 options: Mapping[str, str] | None = None, background_rate: float = 0.02,
                 update_every: int = 30, incremental: bool = False, change: ChangeConfig | None = None) -> None:
        if not still_frames:
            raise ValueError("the detector needs at least one still frame to learn the table")
        options = dict(options or {})
        self.balls = BallDetector(camera, table)
        median = np.median(np.stack(still_frames[:15]), axis=0).astype(np.uint8) if len(still_frames) > 1 \
            else still_frames[0]
        self.background = self.balls.background_without_empty_table(median, rounds=3, around_candidates=False)
        self.identity = self._identity_for_this_camera(discipline, median, options)
        self.rate = background_rate
        self.update_every = update_every
        self.frames = 0
        self.gate = ChangeGate(self.balls, change) if incremental else None
        self._last: Detections | None = None
        # Detections scoring below this are looked at again every frame: a resting ball scores 0.9 or more, a ball
        # half under a cue or a marginal blob (a cue's ferrule) less, and those come and go from frame to frame.
        self.sure_score = 0.75

    def _identity_for_this_camera(self, discipline: str, still: np.ndarray,
                                  options: Mapping[str, str]) -> BallIdentifier:
        """The identifier, fitted to what this camera makes of the balls where that can be done safely: in the
        games with one ball of each kind (carom, Chapó), when the still view shows exactly those balls, the best
        one-to-one match on colour says which is which and, for carom, whether the spot ball is the dotted white
        or a yellow (option ``spot`` = ``dots`` | ``yellow`` says it outright). If the default colours already
        name the balls that way nothing changes; otherwise (a broadcast's cream white and orange yellow) each
        kind's colour is moved to the one seen, except kinds the match cannot tell apart (the two carom whites)."""
        reds = int(options.get("reds", 15))
        carom = discipline in CAROM_DISCIPLINES
        spot = options.get("spot")
        if spot is not None and spot not in ("dots", "yellow"):
            raise ValueError(f"option spot must be 'dots' or 'yellow', got {spot!r}")
        default = BallIdentifier.for_discipline(discipline, reds=reds, spot=spot or "dots")
        if not carom and discipline != "chapo":
            return default
        det = self.balls.detect(still, 0.0, self.background)
        if len(det) != len(default.colour.kinds):
            return default
        feats = ball_features(still, det.px, det.radius_px)
        styles = [spot] if spot or not carom else ["dots", "yellow"]
        kinds, _, margin, style = max((match_one_of_each(ColourModel(discipline, reds, s or "dots"), feats) + (s,)
                                       for s in styles), key=lambda r: r[1])
        identity = BallIdentifier.for_discipline(discipline, reds=reds, spot=style or "dots")
        said = tuple(identity.colour.kind_names[j] for j in identity.kind_probs(still, det).argmax(axis=1))
        alike = {"white", "spot"} if carom and style == "dots" else set()
        if all(a == b or {a, b} <= alike for a, b in zip(said, kinds)):
            return identity
        sure = [(f, k) for f, k in zip(feats, kinds) if k not in alike or margin > 1.0]
        return identity.recentred(np.array([f for f, _ in sure]), [k for _, k in sure]) if sure else identity

    def detect(self, image: np.ndarray, t: float) -> Detections:
        det = self._detect_changed(image, t) if self.gate is not None else \
            self.identity.identify(image, self.balls.detect(image, t, self.background))
        self._last = det
        self.frames += 1
        if self.update_every and self.frames % self.update_every == 0 and len(det):
            # Follow slow light changes on the cloth, never learning a ball into the empty table.
            self.background.update(image, keep_out=self.balls.disc_mask(det), rate=self.rate)
        return det

    def _detect_changed(self, image: np.ndarray, t: float) -> Detections:
        """Detections found afresh where the frame changed, kept from the frame before elsewhere."""
        if image.shape[:2] != (self.balls.camera.image_size[1], self.balls.camera.image_size[0]):
            self.balls.detect(image, t, self.background)  # raises the detector's own one-line error
        small = self.balls.low_res(image)
        last = self._last
        doubtful = last.px[last.score < self.sure_score] if last is not None else None
        plan = self.gate.plan(small, None if doubtful is None else self.balls.to_low(doubtful))  # type: ignore
        if plan.full or self._last is None:
            return self.identity.identify(image, self.balls.detect(image, t, self.background, small=small))
        kept = self._last.subset(~plan.is_changed(self.balls.to_low(self._last.px)))
        new = self.balls.detect(image, t, self.background, rects=plan.rects, small=small) if plan.rects \
            else Detections.empty(t)
        new = new.subset(plan.is_changed(self.balls.to_low(new.px)))
        new = self.identity.identify(image, new)
        if len(kept) and len(new):  # a ball on the edge of a changed region, found again: the new one stands
            gap = np.linalg.norm(kept.px[:, None, :] - new.px[None, :, :], axis=2)
            kept = kept.subset(gap.min(axis=1) > kept.radius_px)
        return Detections.concat(t, [kept, new], self.identity.classes)
