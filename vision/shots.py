"""Shot segmentation: at rest, moving, at rest again; each closed shot becomes a Shot record.

The segmenter is fed one frame at a time with the tracker's positions. A shot opens when a ball that was resting
has moved off its resting point for two frames in a row, and closes when every ball on the table has been still
for ``settle_s`` (0.3 s, DESIGN.md section 4). A window of frames before the opening is kept so the strike's time
can be fitted. A "shot" with no strike in it (a hand rolling a ball back to its spot, a ball nudged while placing
another) is a placement, not a shot: the resting points are updated and nothing is judged. A ball that vanishes
at rest and reappears elsewhere (lifted and put back) just moves its resting point.

Frames lost while a shot is open (``gap``) mark that shot ``confidence: 0`` with a note: it is not refereed, never
guessed. Frames lost at rest are remembered until every resting ball has been seen again: a ball first seen off its
resting point means a shot was played (or balls moved by hand) in the gap, unseen, and the shot that then opens is
marked the same way, its start not seen (nor taken for a placement); every ball back where it was, the gap is
forgotten and nothing comes of it.

A strike while the balls of the last one still roll (``find_events`` with the discipline's ``strikers``) opens the
next shot there: the window is cut at each later strike, each piece its own record, the later ones emitted one
frame after another so that each asks whose turn it is only once the match has judged the one before.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Callable

import numpy as np

from rules.events import EventType
from rules.shot import Shot
from rules.tables import TableSpec

from .detections import PinObservation
from .events import EventConfig, find_events
from .paths import Paths, PinStates, fit_with_error


@dataclass(frozen=True)
class SegmenterConfig:
    start_mm: float = 2.0  # a resting ball this far off its resting point has moved
    still_mm: float = 1.5  # a ball whose last few positions all lie this close to their mean is still
    still_frames: int = 6
    settle_s: float = 0.3  # every ball still this long closes a shot
    preroll_frames: int = 30  # frames kept before the opening: the strike's fit, a cue hiding the ball
    thin_mm: float = 1.0  # tracks are thinned to what keeps the path within this
    max_shot_s: float = 120.0  # a shot open this long is closed anyway and flagged
    placement_mm_s: float = 250.0  # a lone ball that never goes faster than this, touching nothing, was placed
    noisy_mm: float = 6.0  # a ball read less steadily (a poor blob) is still within this over the settle time...
    noisy_speed_mm_s: float = 25.0  # ... if the line through those positions moves slower than this
    end_drift_mm: float = 0.3  # a ball's last still frames drifting this far, clear of their noise by ...
    end_drift_sigma: float = 3.0  # ... this many standard errors of the slope, end where the drift got to


@dataclass
class _Frame:
    t: float
    xy: np.ndarray  # (B, 2), NaN unseen
    pins: PinObservation | None = None  # Chapó: the pins seen in this frame


class ShotSegmenter:
    def __init__(self, balls: tuple[str, ...], table: TableSpec, cue_ball: Callable[[], str],
                 config: SegmenterConfig = SegmenterConfig(), events: EventConfig = EventConfig(),
                 strikers: tuple[str, ...] = ()) -> None:
        self.balls = balls
        self.strikers = strikers  # the balls a side may strike (a strike while others roll opens a new shot)
        self.table = table
        self.cue_ball = cue_ball  # who must play next is the match's to say, not vision's
        self.c = config
        self.events_config = events
        self.rest = np.full((len(balls), 2), np.nan)  # resting point of each ball on the table
        self.history: deque[_Frame] = deque(maxlen=config.preroll_frames)
        self.open: list[_Frame] | None = None
        self.still_since: float | None = None
        self.moving_frames = np.zeros(len(balls), dtype=int)
        # Frames lost (t0, t1) while the open shot was played; at rest, those lost since the balls were last all
        # seen on their resting points, until they are (``gap``).
        self.lost: list[tuple[float, float]] = []
        self._unchecked = np.zeros(len(balls), dtype=bool)  # after a gap at rest: resting balls not seen since
        self._displaced = np.zeros(len(balls), dtype=bool)  # ... and those first seen off their resting point
        self._pins_before: dict[str, tuple[float, float]] = {}  # Chapó: the pins standing before such a gap
        self.placements = 0
        self._queued: deque[Callable[[], Shot]] = deque()  # later pieces of a window cut at a strike while rolling

    # --- feeding ------------------------------------------------------------------------------------------------

    def feed(self, t: float, xy: np.ndarray, pins: PinObservation | None = None) -> Shot | None:
        """One frame's positions (B, 2) (and, in Chapó, its pins); returns a Shot when this frame closes one."""
        frame = _Frame(t, np.asarray(xy, dtype=np.float64).copy(), pins)
        queued = self._queued.popleft()() if self._queued else None
        shot = self._at_rest(frame) if self.open is None else self._moving(frame)
        if queued is not None:
            if shot is not None:
                self._queued.appendleft(lambda: shot)
            return queued
        return shot

    def swap(self, a: str, b: str) -> None:
        """Exchange two balls' labels (found the wrong way round) everywhere the segmenter keeps them: their
        resting points, their columns in the frames kept before a shot opens (the next strike's fit reads them:
        left as they were, the preroll would show the two balls jumping onto each other) and their counts of
        frames off rest; and, when a shot is open, in its frames so far (the two named as the shot opens)."""
        i, j = self.balls.index(a), self.balls.index(b)
        self.rest[[i, j]] = self.rest[[j, i]]
        # The open window begins with the preroll's frames themselves: each frame swapped once.
        frames = {id(f): f for f in list(self.history) + list(self.open or ())}
        for frame in frames.values():
            frame.xy[[i, j]] = frame.xy[[j, i]]
        self.moving_frames[[i, j]] = self.moving_frames[[j, i]]
        for flags in (self._unchecked, self._displaced):
            flags[[i, j]] = flags[[j, i]]

    def gap(self, t0: float, t1: float) -> None:
        """Frames between t0 and t1 were lost (a camera hiccup, the processor behind). While a shot is open, it is
        marked as played partly unseen. At rest the gap is held until every ball resting on the table has been
        seen again (``_at_rest``): nothing is known to have moved yet."""
        if self.open is not None:
            self.lost.append((t0, t1))
            return
        resting = ~np.isnan(self.rest[:, 0])
        if resting.any():  # (before the first frame there are no resting points to have left)
            self.lost.append((t0, t1))
            self._unchecked = resting

    def flush(self) -> Shot | None:
        """The source ended: close an open shot, as settled if every ball has been still for the settle time
        (DESIGN.md 4), else as cut short (confidence 0.5 at most, a note saying so: a doubtful call)."""
        if self._queued:
            return self._queued.popleft()()
        if self.open is None:
            return None
        if self.still_since is not None and self.open[-1].t - self.still_since >= self.c.settle_s:
            return self._close()
        # A recording that stops while balls still roll (a broadcast cut away, a clip trimmed short) still holds
        # its strike and contacts: the shot is closed where the picture ends, for the referee to confirm.
        return self._close(ended=True)

    # --- states -------------------------------------------------------------------------------------------------

    def _at_rest(self, frame: _Frame) -> Shot | None:
        seen = ~np.isnan(frame.xy[:, 0])
        fresh = seen & np.isnan(self.rest[:, 0])
        self.rest[fresh] = frame.xy[fresh]  # first sight, or put back on the table
        off = np.linalg.norm(frame.xy - self.rest, axis=1)
        moved = seen & (np.nan_to_num(off) > self.c.start_mm)
        self.moving_frames = np.where(moved, self.moving_frames + 1, 0)
        # Slow creep of a resting point (light change, a ball settling) is followed, not mistaken for a shot.
        creep = seen & ~moved
        self.rest[creep] = 0.9 * self.rest[creep] + 0.1 * frame.xy[creep]
        if self.lost:  # frames were lost at rest: is each ball, seen again, where it was?
            self._displaced = (self._displaced | (self._unchecked & moved)) & ~creep
            self._unchecked &= ~seen
            if not self._unchecked.any() and not self._displaced.any():
                self.lost = []  # every ball back where it was: nothing came of the gap
        if np.any(self.moving_frames >= 2):
            unseen_start = bool(self.lost) and bool(self._displaced.any())
            # A shot played in the gap: the frames before it show the balls where they rested (``rest`` keeps that)
            # and joined to the ones after it would make up a motion across the gap; the window starts after it.
            after = self.lost[-1][1] if unseen_start else -np.inf
            kept = list(self.history)
            # (Chapó: the pins standing before the gap start the shot; a window's first frame can only say which
            # stand after it.)
            self._pins_before = _standing([f for f in kept if f.t < after], len(kept)) if unseen_start else {}
            self.open = [f for f in kept if f.t >= after] + [frame]
            self.still_since = None
            if not unseen_start:
                self.lost = []
            self._unchecked[:] = False
            self._displaced[:] = False
            self.history.clear()
            return None
        self.history.append(frame)
        return None

    def _moving(self, frame: _Frame) -> Shot | None:
        assert self.open is not None
        self.open.append(frame)
        recent = np.stack([f.xy for f in self.open[-self.c.still_frames:]], axis=1)  # (B, k, 2)
        still = len(self.open) >= self.c.still_frames and self._still(recent, self._settle_window())
        if not still:
            self.still_since = None
        elif self.still_since is None:
            self.still_since = self.open[-self.c.still_frames].t
        settled = self.still_since is not None and frame.t - self.still_since >= self.c.settle_s
        too_long = frame.t - self.open[0].t > self.c.max_shot_s
        if settled or too_long:
            return self._close(forced=too_long and not settled)
        return None

    def _settle_window(self) -> tuple[np.ndarray, np.ndarray]:
        """The open shot's frames of the last ``settle_s``: times (k,) and positions (B, k, 2)."""
        assert self.open is not None
        t_last = self.open[-1].t
        frames = [f for f in self.open[-4 * self.c.still_frames * 4:] if t_last - f.t <= self.c.settle_s]
        return np.array([f.t for f in frames]), np.stack([f.xy for f in frames], axis=1)

    def _still(self, recent: np.ndarray, settle: tuple[np.ndarray, np.ndarray] | None = None) -> bool:
        """Every ball seen in these frames stayed within ``still_mm`` of its mean position (noise-proof); or, a
        ball read less steadily, stayed within ``noisy_mm`` over the settle time without drifting (the line
        fitted through its positions slower than ``noisy_speed_mm_s``)."""
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows: balls not on the table
            mean = np.nanmean(recent, axis=1, keepdims=True)
        spread = np.nan_to_num(np.linalg.norm(recent - mean, axis=2)).max(axis=1)
        unsteady = np.nonzero(spread > self.c.still_mm)[0]
        if not len(unsteady):
            return True
        if settle is None or len(settle[0]) < 4:
            return False
        t, xy = settle
        for b in unsteady:
            ok = ~np.isnan(xy[b, :, 0])
            if ok.sum() < 4:
                return False
            p, tt = xy[b, ok], t[ok]
            if np.max(np.linalg.norm(p - p.mean(axis=0), axis=1)) > self.c.noisy_mm:
                return False
            slope = np.polyfit(tt - tt.mean(), p, 1)[0]
            if float(np.linalg.norm(slope)) > self.c.noisy_speed_mm_s:
                return False
        return True

    # --- closing ------------------------------------------------------------------------------------------------

    def _close(self, forced: bool = False, ended: bool = False) -> Shot | None:
        frames = self.open or []
        self.open = None
        self.moving_frames[:] = 0
        t = np.array([f.t for f in frames])
        xy = np.stack([f.xy for f in frames], axis=1)  # (B, M, 2)
        paths = Paths(self.balls, t, xy)
        pin_states = _pin_states(frames, self.table)
        found = find_events(paths, self.table, self.events_config, self.strikers, pin_states)
        start_rest = self.rest.copy()
        end = self._end_positions(t, xy, last_seen=ended)
        gone = {e.ball for e in found.events if e.type in (EventType.POCKET, EventType.OFF_TABLE)}
        for b, ball in enumerate(self.balls):
            self.rest[b] = np.nan if ball in gone or np.isnan(end[b, 0]) else end[b]
        # The window's still tail is the next one's preroll: a strike right after a placement closed (a cue's
        # approach jostling a blob) must still have the resting frames before it to be timed, or seen at all.
        self.history.clear()
        self.history.extend(frames[-self.c.preroll_frames:])
        lost, self.lost = self.lost, []
        before = [g for g in lost if g[1] <= t[0]]  # lost at rest: the shot was played in them (``gap``)
        during = [g for g in lost if g[1] > t[0]]
        pins_before, self._pins_before = self._pins_before, {}
        if before and not gone and _same_places(start_rest, end, self.c.start_mm):
            return None  # a ball read off its place for a frame or two after the gap: they all rest where they did
        t_first = min(t[0], before[0][0]) if before else t[0]  # the shot began in the first of those gaps
        if not before and self._is_placement(paths, found.events):
            self.placements += 1
            return None
        notes = list(found.notes)
        confidence = 1.0 if not found.hidden else 0.8
        if before:  # no placement either: what happened unseen is for the referee to confirm
            notes.append("frames lost " + _spans(before) + ": the shot's start was not seen")
            confidence = 0.0
        if during:
            notes.append("frames lost during the shot: " + _spans(during))
            confidence = 0.0
        if forced:
            notes.append(f"closed after {self.c.max_shot_s:.0f} s without the balls coming to rest")
            confidence = min(confidence, 0.5)
        if ended:  # judged, but as a doubtful call for the referee to confirm: what came after is unseen
            notes.append("the recording ended before every ball came to rest: end positions as last seen")
            confidence = min(confidence, 0.5)
        events = [e for e in found.events if e.t >= t[0]]
        strikes = [e.t for e in events if e.type is EventType.STRIKE]
        cuts = strikes[1:]  # a strike while the last one's balls roll: the next shot begins there
        bounds = [-np.inf] + cuts + [np.inf]
        pieces = []
        for n in range(len(bounds) - 1):
            lo, hi = bounds[n], bounds[n + 1]
            first, last = n == 0, n == len(bounds) - 2
            at_lo = start_rest if first else _positions_at(t, xy, lo)
            at_hi = end if last else _positions_at(t, xy, hi)
            piece_events = tuple(e for e in events if lo <= e.t < hi)
            gone_before = {e.ball for e in events if e.t < lo and e.type in (EventType.POCKET, EventType.OFF_TABLE)}
            gone_by_end = gone_before | {e.ball for e in piece_events
                                         if e.type in (EventType.POCKET, EventType.OFF_TABLE)}
            moving = found.moving_at_strike if first else found.moving_at.get(lo, ())
            in_piece = (t >= lo) & (t <= hi) if not first else t <= hi
            pins_start = _standing(frames, 0 if first else int(np.searchsorted(t, lo)) - 1)
            if first and pins_before:
                pins_start = pins_before
            pins_end = _standing(frames, len(frames) - 1 if last else int(np.searchsorted(t, hi)) - 1)
            pieces.append(dict(pins_start=pins_start, pins_end=pins_end,
                               t_start=float(min(t_first, piece_events[0].t if piece_events else t_first)) if first
                               else float(lo), t_end=float(t[-1]) if last else float(hi),
                               start=at_lo, end=at_hi, events=piece_events, gone_before=gone_before,
                               gone=gone_by_end, moving=moving, frames=in_piece))
        if len(pieces) > 1:
            notes.append("struck while balls still rolled: the next shot starts at the strike")
        shots = [self._piece(p, t, xy, confidence, tuple(notes)) for p in pieces]
        for later in shots[1:]:
            self._queued.append(later)
        return shots[0]()

    def _piece(self, piece: dict, t: np.ndarray, xy: np.ndarray, confidence: float, notes: tuple[str, ...]
               ) -> Callable[[], Shot]:
        """The record of one piece of a closed window, made when it is emitted (its cue ball is the match's
        answer at that moment)."""
        def make() -> Shot:
            start_p, end_p, sel = piece["start"], piece["end"], piece["frames"]
            start = {ball: _pt(start_p[b]) for b, ball in enumerate(self.balls)
                     if not np.isnan(start_p[b, 0]) and ball not in piece["gone_before"]}
            end_d = {ball: _pt(end_p[b]) for b, ball in enumerate(self.balls)
                     if ball not in piece["gone"] and not np.isnan(end_p[b, 0])}
            tracks = {ball: _thin(t[sel], xy[b, sel], self.c.thin_mm) for b, ball in enumerate(self.balls)
                      if np.nanmax(np.linalg.norm(xy[b, sel] - start_p[b], axis=1), initial=0.0) > self.c.start_mm}
            shot = Shot(
                cue_ball=self.cue_ball(), t_start=piece["t_start"], t_end=piece["t_end"], start=start,
                events=piece["events"], end=end_d, tracks={k: v for k, v in tracks.items() if v},
                moving_at_strike=piece["moving"], confidence=confidence, notes=notes,
                pins_start=piece["pins_start"], pins_end=piece["pins_end"],
            )
            return _clamped(shot, self.table)
        return make

    def _is_placement(self, paths: Paths, events: tuple) -> bool:
        """Nothing struck: a ball carried into place (slowly, touching nothing) is a placement, not a shot; a ball
        set moving by a hand faster than a placement is a ``touched`` shot the referee judges."""
        if any(e.type is EventType.STRIKE for e in events):
            return self._placed_by_hand(paths, events)
        if not any(e.type is EventType.TOUCHED for e in events):
            return True
        return self._placed_by_hand(paths, events)

    def _placed_by_hand(self, paths: Paths, events) -> bool:
        """A ball rolled slowly into place by hand, touching nothing, is not a shot."""
        if any(e.type in (EventType.BALL_BALL, EventType.CUSHION, EventType.POCKET) for e in events):
            return False
        step = np.linalg.norm(np.diff(paths.xy, axis=1), axis=2) / np.diff(paths.t)[None, :]
        return float(np.nanmax(step, initial=0.0)) < self.c.placement_mm_s

    def _end_positions(self, t: np.ndarray, xy: np.ndarray, last_seen: bool = False) -> np.ndarray:
        """Each ball's place as the shot closes: the mean of its last still frames (its last sighting if it was
        never still, or if ``last_seen``: the picture stopped while balls rolled); where those frames drift, the
        line through them at the last one.

        Why the line: "still" lets a ball through that moves under ``still_mm`` in ``still_frames`` (up to 15
        mm/s), so the shot closes while the last ball to stop still creeps its last millimetre, and the mean of
        its last frames lags half of them behind where it stops (Chapó, 30 rendered shots: the shots' ends 0.57
        mm off the truth at the median, the clips' last frames 0.46; with the line 0.47). A drift counts when it
        adds up to ``end_drift_mm`` and its slope stands ``end_drift_sigma`` standard errors clear of the
        residuals: a ball read unsteadily at rest (a green on green cloth, its fit 1-2 mm apart from frame to
        frame) keeps the mean, which the line's end would double the noise of. (``FrameDetector._at_rest_mean``
        does the same for a ball held once it has settled, over its last 30 measurements in pixels; this is for
        the balls the shot closes on before they have.)"""
        settle = 1 if last_seen else max(int(round(self.c.settle_s * 60 * 0.5)), 2)
        out = np.full((len(self.balls), 2), np.nan)
        for b in range(len(self.balls)):
            seen = np.nonzero(~np.isnan(xy[b, :, 0]))[0][-settle:]
            if not len(seen):
                continue
            out[b] = np.mean(xy[b, seen], axis=0)
            if len(seen) >= 4 and seen[-1] - seen[0] == len(seen) - 1:  # a creep is seen frame after frame
                out[b] = self._drifted_to(t[seen] - t[seen[-1]], xy[b, seen], out[b])
        return out

    def _drifted_to(self, tt: np.ndarray, p: np.ndarray, mean: np.ndarray) -> np.ndarray:
        """Positions ``p`` (k, 2) at times ``tt`` (k,; the last 0): the line's value at the last where they
        drift (``_end_positions``), else ``mean``."""
        line, error = fit_with_error(tt, p)
        speed = float(np.hypot(*line.v))
        if speed * -tt[0] <= self.c.end_drift_mm:
            return mean
        return line.p0 if speed > self.c.end_drift_sigma * error else mean


def _pin_states(frames: list[_Frame], table: TableSpec) -> PinStates | None:
    """The pins' states over a window's frames (None when no frame saw pins: not Chapó)."""
    seen = [f.pins for f in frames if f.pins is not None]
    if not seen:
        return None
    from rules.tables import chapo_pin_spots
    spots = chapo_pin_spots(table)
    ids = tuple(p for p in spots if any(p in o.standing or p in o.down for o in seen))
    down = np.zeros((len(ids), len(frames)), dtype=bool)
    for m, f in enumerate(frames):
        if f.pins is not None:
            down[:, m] = [p in f.pins.down for p in ids]
        elif m:
            down[:, m] = down[:, m - 1]
    return PinStates(ids, np.array([spots[p] for p in ids]).reshape(-1, 2), down)


def _standing(frames: list[_Frame], k: int) -> dict[str, tuple[float, float]]:
    """The pins standing (and where) in frame ``k``, or the nearest frame before it that saw pins."""
    for f in reversed(frames[:max(k, 0) + 1]):
        if f.pins is not None:
            return {p: (round(float(x), 2), round(float(y), 2)) for p, (x, y) in f.pins.standing.items()}
    return {}


def _positions_at(t: np.ndarray, xy: np.ndarray, at: float) -> np.ndarray:
    """(B, 2): each ball's position at time ``at``, linear between the frames either side (its last sighting
    before ``at`` when the next frame does not see it)."""
    k = int(np.clip(np.searchsorted(t, at), 1, len(t) - 1))
    w = float(np.clip((at - t[k - 1]) / (t[k] - t[k - 1]), 0.0, 1.0))
    p = (1 - w) * xy[:, k - 1] + w * xy[:, k]
    out = np.full((xy.shape[0], 2), np.nan)
    for b in range(xy.shape[0]):
        if not np.isnan(p[b, 0]):
            out[b] = p[b]
        else:
            seen = np.nonzero(~np.isnan(xy[b, :k, 0]))[0]
            if len(seen):
                out[b] = xy[b, seen[-1]]
    return out


def _same_places(a: np.ndarray, b: np.ndarray, tol: float) -> bool:
    """Every ball at both (B, 2) within ``tol`` mm, or off the table (NaN) at both."""
    off_a, off_b = np.isnan(a[:, 0]), np.isnan(b[:, 0])
    return bool(np.array_equal(off_a, off_b) and np.all(np.linalg.norm(a[~off_a] - b[~off_b], axis=1) <= tol))


def _spans(gaps: list[tuple[float, float]]) -> str:
    return ", ".join(f"{a:.3f}-{b:.3f} s" for a, b in gaps)


def _pt(p: np.ndarray) -> tuple[float, float]:
    return (round(float(p[0]), 2), round(float(p[1]), 2))


def _thin(t: np.ndarray, xy: np.ndarray, tol: float) -> tuple[tuple[float, float, float], ...]:
    """The fewest samples whose linear interpolation in time stays within ``tol`` mm of every frame's position
    (Ramer-Douglas-Peucker with the error measured at each sample's own time, so timing survives thinning)."""
    ok = ~np.isnan(xy[:, 0])
    t, xy = t[ok], xy[ok]
    if len(t) == 0:
        return ()
    keep = np.zeros(len(t), dtype=bool)
    keep[0] = keep[-1] = True
    stack = [(0, len(t) - 1)]
    while stack:
        a, b = stack.pop()
        if b <= a + 1:
            continue
        w = ((t[a + 1:b] - t[a]) / (t[b] - t[a]))[:, None]
        err = np.linalg.norm(xy[a] + w * (xy[b] - xy[a]) - xy[a + 1:b], axis=1)
        k = int(np.argmax(err))
        if err[k] > tol:
            keep[a + 1 + k] = True
            stack += [(a, a + 1 + k), (a + 1 + k, b)]
    return tuple((round(float(t[i]), 4), round(float(xy[i, 0]), 2), round(float(xy[i, 1]), 2))
                 for i in np.nonzero(keep)[0])


def _clamped(shot: Shot, table: TableSpec) -> Shot:
    """Positions measured a hair outside the cushion noses (noise at the nose) are put on the nose, so the
    record always validates (a ball leaving the table is seen going over the nose, then lost)."""
    from dataclasses import replace

    def clamp(p: tuple[float, float]) -> tuple[float, float]:
        return (min(max(p[0], 0.0), table.width), min(max(p[1], 0.0), table.length))

    tracks = {b: tuple((s[0], *clamp((s[1], s[2]))) for s in v) for b, v in shot.tracks.items()}
    return replace(shot, start={b: clamp(p) for b, p in shot.start.items()},
                   end={b: clamp(p) for b, p in shot.end.items()}, tracks=tracks)
