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

from rules.events import EventType
from rules.shot import Shot
from rules.tables import TableSpec

from .detections import Detections, PinObservation
from .events import EventConfig
from .identity import best_assignment, dot_pixels
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
    pins: deque = field(default_factory=_recent)  # Chapó's pins (0 elsewhere)
    track: deque = field(default_factory=_recent)
    segment: deque = field(default_factory=_recent)

    STAGES = ("detect", "pins", "track", "segment")

    def medians_ms(self) -> dict[str, float]:
        return {name: float(np.median(getattr(self, name))) * 1000 if getattr(self, name) else 0.0
                for name in self.STAGES}


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
        # What the still frames before the first strike say about those labels (``LookalikeEvidence``): at a
        # resolution where the spot's dots show it names them; where it says little, the side to play does.
        self.evidence = LookalikeEvidence(balls, lookalikes, dotted=_spot_is_dotted(detector)) \
            if lookalikes is not None else None
        # Balls of distinct kinds (pool's numbers, snooker's colours, Chapó's three): the tracks were placed one
        # frame's reading at a time; the still frames before the first strike, taken together and one of each,
        # name them once (``RestingIdentity``).
        self.resting = RestingIdentity(balls, groups) if lookalikes is None else None
        self.tracker = BallTracker(balls, initial=initial, config=tracker, ball_diameter=table.ball_diameter,
                                   groups=groups, lookalikes=lookalikes or ())
        self.segmenter = ShotSegmenter(balls, table, cue_ball, segmenter, events, strikers)
        # Chapó's corner holes: nothing seen over a hole is a ball on the table (a potted ball lying in it, the
        # hole's own dark rim taken for a ball); left in, a vanished ball's widening gate would take it.
        holes = [pk for pk in table.pockets if pk.is_hole]
        self._holes = (np.array([pk.drop for pk in holes], dtype=np.float64).reshape(-1, 2),
                       np.array([pk.mouth / 2 for pk in holes]))
        self.times = StageTimes()
        # What the stages are timed by: wall time by default; the speed benchmark sets the process's CPU clock.
        self.clock: Callable[[], float] = time.perf_counter
        self.last_positions = np.full((len(balls), 2), np.nan)
        self.frames = 0

    def process(self, image: np.ndarray, t: float) -> Shot | None:
        clock = self.clock
        t0 = clock()
        det = self.detector.detect(image, t)
        if len(self._holes[1]) and len(det):
            over = np.linalg.norm(det.xy[:, None, :] - self._holes[0][None], axis=2) < self._holes[1][None]
            if over.any():
                det = det.subset(~over.any(axis=1))
        tp = clock()
        pins = self.pins.observe(image, t, det) if self.pins is not None else None
        placed = [xy for p, xy in pins.down.items() if p not in pins.unplaced] if pins is not None else []
        if placed and len(det):
            # A lying pin looks enough like a small ball to be detected as one; no ball's centre can be within
            # a radius of a lying pin's middle (the pin would be under it). Only where the pin was seen lying:
            # one not seen is put on its spot, and a ball resting there, the pin under it, was dropped frame
            # after frame (Chapó seed 120: the mingo, its place at rest 12 mm off, the last one seen).
            lying = np.array(placed, dtype=np.float64).reshape(-1, 2)
            near = np.linalg.norm(det.xy[:, None, :] - lying[None], axis=2) < self.radius
            if near.any():
                det = det.subset(~near.any(axis=1))
        t1 = clock()
        xy = self.tracker.update(det)
        if self.evidence is not None and not self.settled and self.segmenter.open is None:
            self.evidence.observe(image, det, xy, self.last_positions)
        t2 = clock()
        resting = self.segmenter.open is None
        if self.resting is not None and not self.resting.decided and resting:
            self.resting.observe(det, xy, self.last_positions)
        shot = self.segmenter.feed(t, xy, pins)
        if shot is None and not self.settled and self.evidence is not None and self.segmenter.open is not None:
            self._name_lookalikes_at_the_opening(t)
        if shot is not None and not self.settled:
            shot = self._settle_lookalikes(shot)
        if self.resting is not None and not self.resting.decided and resting and self.segmenter.open is None:
            perm = self.resting.relabelling()
            if perm is not None:
                self._permute(perm)
                xy = xy[perm]
        t3 = clock()
        self.times.detect.append(tp - t0)
        self.times.pins.append(t1 - tp)
        self.times.track.append(t2 - t1)
        self.times.segment.append(t3 - t2)
        self.last_positions = xy
        self.frames += 1
        return shot

    def _settle_lookalikes(self, shot: Shot) -> Shot:
        """The first shot names the look-alikes once. By what the still frames before its strike showed, when they
        showed it clearly (the spot's dots resolved); otherwise the look-alike struck is the one the side to play
        owns (a player strikes his own ball; a wrong-ball call on the first shot seen would rest on a coin toss,
        but so would naming the balls mid-game by whose turn the match thinks it is). From here on the tracker's
        continuity keeps the two apart."""
        self.settled = True
        a, b = self.lookalikes  # type: ignore[misc]
        strike = next((e.t for e in shot.events if e.type is EventType.STRIKE), shot.t_start)
        swapped = self.evidence.verdict(before=strike) if self.evidence is not None else None
        if swapped is None:
            expected = self.cue_ball()
            swapped = shot.struck_ball in (a, b) and expected in (a, b) and shot.struck_ball != expected
        if not swapped:
            return shot
        self._swap(a, b)
        return swap_ids(shot, a, b)

    def _name_lookalikes_at_the_opening(self, t: float) -> None:
        """The first shot has just opened: where the still frames before it showed the spot's dots clearly, the
        two whites are named now, before they move. Named only once the shot closed, the tracker would spend the
        shot under the old names while the detector's own reading of the dots pulls them across at a close pass
        (a kiss), and the names would flip mid-shot (bench_vision carom, 60 shots at 1456x1088: 14 of the 16
        contacts missed were that)."""
        swapped = self.evidence.verdict(before=t)  # type: ignore[union-attr]
        if swapped is None:
            return  # the dots said too little: the side to play names them when the shot closes
        self.settled = True
        if swapped:
            self._swap(*self.lookalikes)  # type: ignore[misc]

    def _swap(self, a: str, b: str) -> None:
        """Two balls' labels exchanged everywhere the pipeline keeps them: the tracks, and the segmenter's resting
        points and preroll frames (``ShotSegmenter.swap``)."""
        self.tracker.swap(a, b)
        self.segmenter.swap(a, b)

    def _permute(self, perm: np.ndarray) -> None:
        """Relabel every ball: the ball now called ``balls[i]`` is the one called ``balls[perm[i]]`` so far (done
        as a sequence of swaps, so the tracker's and segmenter's own swap keep their state consistent)."""
        at = list(range(len(self.balls)))  # at[i]: the old label whose ball row i now holds
        for i, want in enumerate(int(p) for p in perm):
            j = at.index(want)
            if j != i:
                self._swap(self.balls[i], self.balls[j])
                at[i], at[j] = at[j], at[i]

    def gap(self, t0: float, t1: float) -> None:
        self.segmenter.gap(t0, t1)

    def flush(self) -> Shot | None:
        """The shot still open when the frames end (the clip's last, a camera gone), named as a closed one is."""
        shot = self.segmenter.flush()
        if shot is not None and not self.settled:
            shot = self._settle_lookalikes(shot)
        return shot


@dataclass(frozen=True)
class EvidenceConfig:
    still_mm: float = 1.0  # both look-alikes moved less than this since the frame before: at rest
    margin_s: float = 0.2  # frames this close before the strike are left out (the cue is at the ball)
    min_frames: int = 10
    dot_cap: float = 3.0  # one frame's dot pixels count up to this many (a dot is a few pixels; more says no more)
    min_mean_dots: float = 0.5  # the average frame must show this many more dot pixels on one ball than the other
    max_against: float = 0.1  # ... and at most this share of the frames showing dots may show them on the other
    clip_nats: float = 3.0  # a yellow spot: one frame's colour odds are bounded (a cue tip over a ball)
    min_mean_nats: float = 1.0  # ... and the average frame must favour one naming by e : 1 or more
    max_frames: int = 120  # the first still frames are kept, a bounded memory however long the wait


class LookalikeEvidence:
    """Frame by frame, while the balls rest before the first strike: which of the two look-alikes' tracks is the
    spot ball. A dotted spot is told by its red dots (``vision.identity.dot_pixels``): a plain white shows none, so
    the ball that shows them, frame after frame, is the spot; the colour model's and the classifier's odds are not
    used for it (on the virtual table a white in a dim corner reads as the spot at 0.99). A yellow spot is told by
    the detector's own odds (the one's minus the other's, so a bias common to both cancels). Gathered over the
    still frames, read once at the first shot: frames in motion (blurred dots) would swap the tracks on a fluke."""

    def __init__(self, balls: tuple[str, ...], lookalikes: tuple[str, str], dotted: bool = True,
                 config: EvidenceConfig = EvidenceConfig()) -> None:
        self.pair = lookalikes
        self.rows = (balls.index(lookalikes[0]), balls.index(lookalikes[1]))
        self.dotted = dotted
        self.c = config
        self.frames: list[tuple[float, float]] = []  # (t, this frame's say for "swapped": dot pixels or nats)

    def observe(self, image: np.ndarray, det: Detections, xy: np.ndarray, before: np.ndarray) -> None:
        """One frame, its detections and the tracker's positions for it (NaN: unseen) and for the frame before."""
        if len(self.frames) >= self.c.max_frames or not len(det):
            return
        rows = list(self.rows)
        p, q = xy[rows], before[rows]
        if np.isnan(p).any() or np.isnan(q).any() or (np.linalg.norm(p - q, axis=1) > self.c.still_mm).any():
            return
        # The tracker reports a ball at exactly its detection's point.
        d = np.argmin(np.linalg.norm(det.xy[None, :, :] - p[:, None, :], axis=2), axis=1)
        if d[0] == d[1]:
            return
        if self.dotted:
            dots = np.minimum(dot_pixels(image, det.px[d], det.radius_px[d]), self.c.dot_cap)
            self.frames.append((det.t, float(dots[0] - dots[1])))  # dots on the first of the pair: swapped
            return
        if not det.classes or any(name not in det.classes for name in self.pair):
            return
        cols = [det.classes.index(name) for name in self.pair]
        logp = np.log(np.clip(det.class_probs[np.ix_(d, cols)], 1e-6, 1.0))  # rows: the pair's tracks
        odds = logp[:, 1] - logp[:, 0]  # how much more each looks like the second of the pair
        self.frames.append((det.t, float(np.clip(odds[0] - odds[1], -self.c.clip_nats, self.c.clip_nats) / 2)))

    def verdict(self, before: float) -> bool | None:
        """True: the labels are the wrong way round; False: right; None: the still frames did not say."""
        said = np.array([n for t, n in self.frames if t <= before - self.c.margin_s])
        if len(said) < self.c.min_frames:
            return None
        mean = float(np.mean(said))
        if self.dotted:
            showing = np.count_nonzero(said)
            against = np.count_nonzero(np.sign(said) == -np.sign(mean))
            if abs(mean) < self.c.min_mean_dots or against > self.c.max_against * showing:
                return None
        elif abs(mean) < self.c.min_mean_nats:
            return None
        return mean > 0


@dataclass(frozen=True)
class RestingConfig:
    still_mm: float = 1.0  # a ball moved less than this since the frame before is at rest
    min_frames: int = 15  # still frames read before the balls are named
    min_gain_nats: float = 1.0  # a ball renamed must look this much likelier (mean log-odds) as its new kind


class RestingIdentity:
    """Naming the balls once from the still frames before the first strike, one of each kind. The tracker places
    each ball by one frame's reading (the likeliest pairs first); at 728x544 a pool ball is 7 px across and one
    frame's reading of it is a poor one (a stripe lying cap-up reads as the cue, a solid number-up as its stripe),
    and continuity then keeps the wrong name all game. Summed over the still frames, each track's log-probabilities
    of every kind, and the best one-to-one match of tracks to ids (a kind of several ids, the snooker reds, taking
    as many tracks as it has ids) rename the tracks that it says are another kind, if that kind is likelier by
    ``min_gain_nats`` on average."""

    def __init__(self, balls: tuple[str, ...], groups: tuple[tuple[str, ...], ...] = (),
                 config: RestingConfig = RestingConfig()) -> None:
        self.balls = balls
        kind_of = {b: b for b in balls}
        for g in groups:
            for b in g:
                kind_of[b] = g[0]
        self.kinds = tuple(dict.fromkeys(kind_of[b] for b in balls))
        self.kind_of_row = np.array([self.kinds.index(kind_of[b]) for b in balls])
        self._kind_of = kind_of
        self._members_for: tuple[str, ...] | None = None  # the classes _member_table was made for
        self._member_table = np.zeros((0, len(self.kinds)))
        self.c = config
        self.score = np.zeros((len(balls), len(self.kinds)))  # summed log-probabilities, track x kind
        self.count = np.zeros(len(balls))
        self.frames = 0
        self.decided = False

    def observe(self, det: Detections, xy: np.ndarray, before: np.ndarray) -> None:
        """One frame: the detections and the tracker's positions for it (NaN: unseen) and for the frame before."""
        if self.decided or not len(det) or not det.classes:
            return
        still = ~np.isnan(xy[:, 0]) & ~np.isnan(before[:, 0])
        still[still] = np.linalg.norm(xy[still] - before[still], axis=1) <= self.c.still_mm
        rows = np.flatnonzero(still)
        if not len(rows):
            return
        # The tracker reports a ball at exactly its detection's point.
        d = np.argmin(np.linalg.norm(det.xy[None, :, :] - xy[rows][:, None, :], axis=2), axis=1)
        kind_p = det.class_probs[d] @ self._members(det.classes)
        self.score[rows] += np.log(np.clip(kind_p, 1e-4, 1.0))
        self.count[rows] += 1
        self.frames += 1

    def _members(self, classes: tuple[str, ...]) -> np.ndarray:
        """(classes, kinds) 0/1: which kind each of the detector's classes is; made once for its classes."""
        if self._members_for != classes:
            m = np.zeros((len(classes), len(self.kinds)))
            for c, name in enumerate(classes):
                if name in self._kind_of:
                    m[c, self.kinds.index(self._kind_of[name])] = 1.0
            self._members_for, self._member_table = classes, m
        return self._member_table

    def relabelling(self) -> np.ndarray | None:
        """Once enough still frames are in: for each ball row the row whose track it should take (a permutation),
        or None to keep the names; either way the naming is then decided."""
        if self.frames < self.c.min_frames:
            return None
        self.decided = True
        rows = np.flatnonzero(self.count >= self.c.min_frames / 2)
        if len(rows) < 2:
            return None
        mean = self.score[rows] / self.count[rows, None]  # (T, kinds)
        n = len(self.balls)
        keep = (rows[:, None] == np.arange(n)[None, :]) * 1e-3  # among a kind's ids, a track keeps its own
        new = best_assignment(mean[:, self.kind_of_row] + keep)
        t = np.arange(len(rows))
        changed = self.kind_of_row[new] != self.kind_of_row[rows]
        if not changed.any():
            return None
        gain = mean[t, self.kind_of_row[new]] - mean[t, self.kind_of_row[rows]]
        if gain[changed].mean() < self.c.min_gain_nats:
            return None
        perm = np.full(n, -1)
        perm[new] = rows
        free_new = [i for i in range(n) if perm[i] < 0]
        free_old = [i for i in range(n) if i not in set(rows.tolist())]
        for i in [i for i in free_new if i in free_old]:  # the balls not seen keep their names where they can
            perm[i] = i
        rest_new = [i for i in free_new if perm[i] < 0]
        rest_old = [i for i in free_old if i not in set(perm.tolist())]
        perm[rest_new] = rest_old
        return perm


def _spot_is_dotted(detector: Detector) -> bool:
    """Whether the detector tells the carom spot ball by dots (a white) rather than by colour (a yellow): its
    identifier's kind ``spot`` says so; a detector without one (a test's fake) is taken as dotted."""
    colour = getattr(getattr(detector, "identity", None), "colour", None)
    kind = next((k for k in getattr(colour, "kinds", ()) if k.name == "spot"), None)
    return kind is None or kind.pattern == "dots"


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
