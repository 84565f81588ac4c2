"""The per-frame vision pipeline: detect, track, segment; frames in, Shot records out.

The detector is injected (anything with ``detect(image, t) -> Detections``), so the same pipeline runs on the
camera, on a recorded clip and in tests. Each stage's time is measured per frame for the benchmarks.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Mapping, Protocol

import numpy as np

from rules.shot import Shot
from rules.tables import TableSpec

from .detections import Detections, PinObservation
from .events import EventConfig, is_hole
from .shots import SegmenterConfig, ShotSegmenter
from .tracking import BallTracker, TrackerConfig


STAGE_HISTORY = 3600


class Detector(Protocol):
    def detect(self, image: np.ndarray, t: float) -> Detections:
        """Every ball in one frame (and its identity probabilities)."""


class PinObserver(Protocol):
    def observe(self, image: np.ndarray, t: float, balls: Detections) -> PinObservation:
        """Chapó: which pins stand in one frame (the balls found in it hide what they cover)."""


def _recent() -> deque:
    return deque(maxlen=STAGE_HISTORY)


@dataclass
class StageTimes:
    """Seconds spent per stage, one entry per frame, the latest ``STAGE_HISTORY`` frames only (a live loop runs
    for hours: its memory must not grow with the frames)."""

    detect: deque = field(default_factory=_recent)
    track: deque = field(default_factory=_recent)
    segment: deque = field(default_factory=_recent)

    def medians_ms(self) -> dict[str, float]:
        return {name: float(np.median(values)) * 1000 if values else 0.0
                for name, values in (("detect", self.detect), ("track", self.track), ("segment", self.segment))}


class VisionPipeline:
    def __init__(self, detector: Detector, balls: tuple[str, ...], table: TableSpec, cue_ball: Callable[[], str],
                 initial: Mapping[str, tuple[float, float]] | None = None,
                 lookalikes: tuple[str, str] | None = None,
                 tracker: TrackerConfig = TrackerConfig(), segmenter: SegmenterConfig = SegmenterConfig(),
                 events: EventConfig = EventConfig(), strikers: tuple[str, ...] = (),
                 pins: PinObserver | None = None, groups: tuple[tuple[str, ...], ...] = ()) -> None:
        self.detector = detector
        self.pins = pins
        self.radius = table.ball_radius
        self.balls = balls
        self.cue_ball = cue_ball
        # Two balls the camera may not tell apart (the carom whites when the spot's dots are too small to see):
        # until a shot has been seen, their labels are a guess, so the first shot settles them.
        self.lookalikes = lookalikes
        self.settled = lookalikes is None
        self.tracker = BallTracker(balls, initial=initial, config=tracker, ball_diameter=table.ball_diameter,
                                   groups=groups, lookalikes=lookalikes or ())
        self.segmenter = ShotSegmenter(balls, table, cue_ball, segmenter, events, strikers)
        # Chapó's corner holes: nothing seen over a hole is a ball on the table (a potted ball lying in it, the
        # hole's own dark rim taken for a ball); left in, a vanished ball's widening gate would take it.
        holes = [pk for pk in table.pockets if is_hole(pk)]
        self._holes = (np.array([pk.drop for pk in holes], dtype=np.float64).reshape(-1, 2),
                       np.array([pk.mouth / 2 for pk in holes]))
        self.times = StageTimes()
        self.last_positions = np.full((len(balls), 2), np.nan)
        self.frames = 0

    def process(self, image: np.ndarray, t: float) -> Shot | None:
        t0 = time.perf_counter()
        det = self.detector.detect(image, t)
        if len(self._holes[1]) and len(det):
            over = np.linalg.norm(det.xy[:, None, :] - self._holes[0][None], axis=2) < self._holes[1][None]
            if over.any():
                det = det.subset(~over.any(axis=1))
        pins = self.pins.observe(image, t, det) if self.pins is not None else None
        if pins is not None and pins.down and len(det):
            # A lying pin looks enough like a small ball to be detected as one; no ball's centre can be within
            # a radius of a lying pin's middle (the pin would be under it).
            lying = np.array(list(pins.down.values()), dtype=np.float64).reshape(-1, 2)
            near = np.linalg.norm(det.xy[:, None, :] - lying[None], axis=2) < self.radius
            if near.any():
                det = det.subset(~near.any(axis=1))
        t1 = time.perf_counter()
        xy = self.tracker.update(det)
        t2 = time.perf_counter()
        shot = self.segmenter.feed(t, xy, pins)
        if shot is not None and not self.settled:
            shot = self._settle_lookalikes(shot)
        t3 = time.perf_counter()
        self.times.detect.append(t1 - t0)
        self.times.track.append(t2 - t1)
        self.times.segment.append(t3 - t2)
        self.last_positions = xy
        self.frames += 1
        return shot

    def _settle_lookalikes(self, shot: Shot) -> Shot:
        """The first shot: the look-alike struck is the one the side to play owns (a player strikes his own ball;
        a wrong-ball call on the first shot seen would rest on a coin toss). From here on the tracker's continuity
        keeps the two apart."""
        self.settled = True
        a, b = self.lookalikes  # type: ignore[misc]
        expected = self.cue_ball()
        if shot.struck_ball not in (a, b) or expected not in (a, b) or shot.struck_ball == expected:
            return shot
        self.tracker.swap(a, b)
        self.segmenter.swap(a, b)
        return swap_ids(shot, a, b)

    def gap(self, t0: float, t1: float) -> None:
        self.segmenter.gap(t0, t1)

    def flush(self) -> Shot | None:
        return self.segmenter.flush()


def swap_ids(shot: Shot, a: str, b: str) -> Shot:
    """The same shot with balls ``a`` and ``b`` exchanging names everywhere."""
    from dataclasses import replace as _replace

    def n(ball: str | None) -> str | None:
        return b if ball == a else a if ball == b else ball

    def rename(d: Mapping) -> dict:
        return {n(k): v for k, v in d.items()}

    events = tuple(_replace(e, ball=n(e.ball), balls=None if e.balls is None else (n(e.balls[0]), n(e.balls[1])))
                   for e in shot.events)
    return _replace(shot, start=rename(shot.start), end=rename(shot.end), tracks=rename(shot.tracks),
                    uncertainty=rename(shot.uncertainty), events=events,
                    moving_at_strike=tuple(n(x) for x in shot.moving_at_strike))
