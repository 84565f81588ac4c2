"""The vision pipeline as the live loop's frame processor (``arbitro run`` looks up ``make_processor``).

The loop hands over frames as they come; the first few still frames teach the detector the empty table (with the
balls on it painted out), and from then on every frame goes through detection, tracking and segmentation. The
match is only asked whose turn it is, so each shot names the ball the side to play must strike.

Building the detector takes a second or more (more on a Pi), and the loop drops the frames that arrive meanwhile:
they reach the pipeline as a gap from the last warm-up frame to the next frame processed. The warm-up frames are
then the pipeline's first (as in the replay): the tracker places the balls (it takes a few still frames to) and
the segmenter knows where they rested before the gap, so a shot played (or a ball moved) during it comes out
marked, for the referee to confirm, instead of unseen.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from rules.shot import Shot

from .frame_detector import FrameDetector
from .pipeline import VisionPipeline

WARMUP_FRAMES = 10


class _Frame(Protocol):
    image: np.ndarray
    t: float


class _Gap(Protocol):
    t_start: float
    t_end: float


def balls_for(discipline: str, options: dict[str, str]) -> tuple[str, ...]:
    from rules.balls import CAROM_DISCIPLINES, SNOOKER_COLOURS, ball_ids, snooker_reds
    if discipline in CAROM_DISCIPLINES:
        return ("white", "spot", "red")
    if discipline == "sinuca":
        return ("cue",) + snooker_reds(int(options.get("reds", "15"))) + SNOOKER_COLOURS
    return tuple(sorted(ball_ids(discipline), key=lambda b: (not b.isdigit(), int(b) if b.isdigit() else 0, b)))


def groups_for(discipline: str, balls: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """Balls of one kind that only continuity tells apart: the snooker reds."""
    reds = tuple(b for b in balls if b.startswith("red") and b[3:].isdigit())
    return (reds,) if discipline == "sinuca" and len(reds) > 1 else ()


def strikers_for(discipline: str) -> tuple[str, ...]:
    """The balls a side may strike: each carom side's own white, Chapó's 1 and 2, the cue ball elsewhere."""
    from rules.balls import CAROM_DISCIPLINES
    if discipline in CAROM_DISCIPLINES:
        return ("white", "spot")
    if discipline == "chapo":
        return ("1", "2")
    return ("cue",)


def pins_for(discipline: str, camera: Any, table: Any, detector: Any) -> Any:
    """Chapó: the pins observer over the detector's empty-table model (None for the other disciplines, or a
    detector without one)."""
    if discipline != "chapo" or not hasattr(detector, "background"):
        return None
    from .pins import FramePins, PinDetector
    return FramePins(PinDetector(camera, table), lambda: detector.background)


def lookalikes_for(discipline: str) -> tuple[str, str] | None:
    """Balls the camera may not tell apart: the carom whites (the spot's dots are a few pixels at best)."""
    from rules.balls import CAROM_DISCIPLINES
    return ("white", "spot") if discipline in CAROM_DISCIPLINES else None


class LiveVision:
    """``process(frame) -> [Shot]``, ``on_gap(gap)``, ``finish()``: the FrameProcessor protocol of device.live."""

    def __init__(self, calibration: Any, match: Any, frame_size: tuple[int, int],
                 warmup_frames: int = WARMUP_FRAMES) -> None:
        if tuple(frame_size) != tuple(calibration.camera.image_size):
            raise ValueError(f"the camera gives {frame_size[0]}x{frame_size[1]} frames but the calibration was "
                             f"made at {calibration.camera.image_size[0]}x{calibration.camera.image_size[1]}")
        self.calibration = calibration
        self.match = match  # a device.store.LiveMatch or a rules.match.Match: anything with .match or .cue_ball
        self.warmup_frames = warmup_frames
        self._warm: list[_Frame] = []
        self.pipeline: VisionPipeline | None = None

    def _cue_ball(self) -> str:
        m = getattr(self.match, "match", self.match)
        return m.cue_ball()

    def process(self, frame: _Frame) -> list[Shot]:
        if self.pipeline is None:
            self._warm.append(frame)
            if len(self._warm) < self.warmup_frames:
                return []
            self._start()
            # The warm-up frames go through the pipeline too, each let go once done with (5 MB at 1456x1088):
            # where the balls rest before the frames dropped while the detector was built (a gap from the last
            # one's time), so a move in that gap is seen as one.
            warm, self._warm = self._warm, []
            out: list[Shot] = []
            while warm:
                f = warm.pop(0)
                out += self._process(f)
            return out
        return self._process(frame)

    def _process(self, frame: _Frame) -> list[Shot]:
        shot = self.pipeline.process(frame.image, frame.t)  # type: ignore[union-attr]
        return [] if shot is None else [shot]

    def _start(self) -> None:
        m = getattr(self.match, "match", self.match)
        referee = m.referee
        options = dict(getattr(referee, "options", {}) or {})
        detector = FrameDetector(self.calibration.camera, self.calibration.table, referee.discipline,
                                 [f.image for f in self._warm], options)
        balls = balls_for(referee.discipline, options)
        self.pipeline = VisionPipeline(detector, balls, self.calibration.table, cue_ball=self._cue_ball,
                                       lookalikes=lookalikes_for(referee.discipline),
                                       strikers=strikers_for(referee.discipline),
                                       groups=groups_for(referee.discipline, balls),
                                       pins=pins_for(referee.discipline, self.calibration.camera,
                                                     self.calibration.table, detector))

    def on_gap(self, gap: _Gap) -> list[Shot]:
        if self.pipeline is not None:
            self.pipeline.gap(gap.t_start, gap.t_end)
        return []

    def finish(self) -> list[Shot]:
        if self.pipeline is None:
            return []
        shot = self.pipeline.flush()
        return [] if shot is None else [shot]


def make_processor(calibration: Any, match: Any, frame_size: tuple[int, int]) -> LiveVision:
    return LiveVision(calibration, match, frame_size)
