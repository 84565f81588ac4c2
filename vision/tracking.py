"""Tracking a known, fixed set of balls from frame to frame.

Each ball has a constant-velocity prediction; detections are assigned to balls by a cost that adds the distance
from the prediction to how unlike the ball the detection looks (its identity probabilities). The gate widens with
speed and with every frame a ball goes unseen, so a ball hidden under an arm, or lifted and put back on its spot,
is found again, and identity alone re-acquires a ball whose position is unknown. The set of balls is known, so a
detection that fits no ball is ignored rather than starting a new track.

N is at most 22 (snooker), so a greedy assignment in order of cost is exact enough and far cheaper than a full
linear assignment in pure numpy.

Balls of one kind (the snooker reds) are told apart by continuity only: for them the identity cost is that of the
kind (the sum of the group's probabilities), not of one id, whose share of it is an even split. A ball whose
position is not known yet (before its first sighting, or a red id no ball on the table answers to) takes no
detection frame by frame: it is placed like a ball put back, by a blob that keeps still where no ball is
expected and looks like it. A flicker of the detector (a cue's tip, a hand, a shadow taken for a ball for a frame
or two) never places a ball, so it cannot set one moving.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from .arrays import clamp
from .detections import Detections


@dataclass(frozen=True)
class TrackerConfig:
    gate_mm: float = 20.0  # the gate around a prediction, before the allowances below
    launch_mm_s: float = 8000.0  # a resting ball may be struck to this speed: its gate covers one frame of it
    gate_speed_factor: float = 1.3  # a moving ball's gate covers this many frames' travel at its speed
    hidden_growth_mm_s: float = 300.0  # a hidden ball's gate grows this fast (a hand moving it under an arm)
    placed_frames: int = 8  # a blob resting this many frames where no ball is expected is a ball put down
    placed_mm: float = 4.0  # ... if it stays within this of where it first rested
    placed_gap_frames: int = 5  # ... missing from at most this many frames running (a weak ball, the sinuca
    # green on its cloth, is found in two frames of three: needing every frame, it was never placed)
    placed_identity: float = 0.5  # ... and it looks this much like a ball that has gone unseen
    identity_mm: float = 100.0  # how many mm of distance one nat of identity surprise is worth
    min_score: float = 0.2  # detections below this confidence are not used
    velocity_smoothing: float = 0.6  # weight of the newest velocity estimate
    resting_mm_s: float = 50.0  # a ball slower than this, seen within the last ...
    resting_unseen_frames: int = 30  # ... this many frames, is at rest ...
    unlike_p: float = 0.05  # ... and does not jump a radius or more to a blob this unlike its kind ...
    other_kind_p: float = 0.8  # ... that is at least this sure of another kind
    open_floor: float = 1e-3  # a blob plainly of a kind followed elsewhere is one still to place if it gives
    # those kinds this much (``_open_likeness``: less is the classifier's rounding, no resemblance at all) ...
    open_score: float = 0.75  # ... and the detector is this sure of it (a whole ball scores 0.9 or more; a cue's
    # ferrule or tip resting by the cue ball, read as the cue, less)
    covered_score: float = 0.62  # a resting ball read this unsurely (a third of its edge unseen: under a cue) ...
    covered_mm: float = 1.5  # ... this far from where it rests, but within half a radius of it, is not seen there
    covered_hidden_frames: int = 15  # a ball hidden at rest this long is not found a radius off by so unsure a blob
    kiss_gap_mm: float = 6.0  # ... unless another ball is within this of touching it, and it reads off straight
    kiss_cos: float = 0.8  # ... away from that one (this cosine of the line of centres at least): kissed, not covered


@dataclass(frozen=True)
class _RestingBlob:
    """An unassigned blob keeping still: where it first rested, in how many frames it was seen there, how many
    frames since it first was, and how many running it has now been missing from."""

    anchor: np.ndarray
    seen: int
    span: int
    missing: int


class BallTracker:
    def __init__(self, balls: tuple[str, ...], initial: Mapping[str, tuple[float, float]] | None = None,
                 config: TrackerConfig = TrackerConfig(), ball_diameter: float = 61.5,
                 groups: tuple[tuple[str, ...], ...] = (), lookalikes: tuple[str, ...] = ()) -> None:
        self.balls = balls
        self.groups = groups  # ids of one kind, told apart by continuity only
        # Balls the camera may not tell apart (the carom whites): placed as one kind, but the detector's opinion
        # on which is which still counts frame to frame (at full resolution the spot's dots do show).
        self.place_groups = groups + ((lookalikes,) if lookalikes else ())
        self.c = config
        self.diameter = ball_diameter
        n = len(balls)
        self.pos = np.full((n, 2), np.nan)
        self.vel = np.zeros((n, 2))
        self.last_t = np.full(n, np.nan)
        self.unseen = np.zeros(n, dtype=int)
        self.last_frame_t: float | None = None
        self._resting_blobs: list[_RestingBlob] = []  # unassigned blobs that keep still
        self._members_for: tuple[str, ...] | None = None  # the classes _members was made for
        self._identity_for: tuple[str, ...] | None = None  # ... and _identity
        self._members = np.zeros((0, n))
        for ball, p in (initial or {}).items():
            self.pos[balls.index(ball)] = p

    def swap(self, a: str, b: str) -> None:
        """Exchange two balls' tracks (their labels were found the wrong way round)."""
        i, j = self.balls.index(a), self.balls.index(b)
        for arr in (self.pos, self.vel, self.last_t, self.unseen):
            arr[[i, j]] = arr[[j, i]]

    def update(self, det: Detections) -> np.ndarray:
        """Assign this frame's detections; returns (B, 2) positions seen in this frame, NaN for balls unseen."""
        det = det.subset(det.score >= self.c.min_score) if len(det) else det
        out = np.full((len(self.balls), 2), np.nan)
        if len(det):
            pairs = self._assign(det)
            pairs += self._put_back(det, pairs)
            covered = self._covered(det, pairs)
            taken = [(b, d) for b, d in pairs if b not in covered]
            if taken:
                b, d = (np.array(v, dtype=int) for v in zip(*taken))
                p = det.xy[d]
                # The velocity from the last sighting, smoothed when the ball was seen in the frame before.
                timed = ~np.isnan(self.last_t[b]) & (det.t > self.last_t[b])
                dt = np.where(timed, det.t - np.nan_to_num(self.last_t[b]), 1.0)
                v_new = (p - self.pos[b]) / dt[:, None]
                a = self.c.velocity_smoothing
                smoothed = np.where((self.unseen[b] == 0)[:, None], a * v_new + (1 - a) * self.vel[b], v_new)
                self.vel[b] = np.where(timed[:, None], smoothed, self.vel[b])
                self.pos[b] = p
                self.last_t[b] = det.t
                out[b] = p
        self.last_frame_t = det.t
        seen = ~np.isnan(out[:, 0])
        self.unseen[seen] = 0
        self.unseen[~seen] += 1
        # A ball unseen for a second has stopped, or been lifted: forget its speed.
        long_gone = (self.unseen > 0) & (det.t - np.where(np.isnan(self.last_t), det.t, self.last_t) > 1.0)
        self.vel[long_gone] = 0.0
        return out

    def _covered(self, det: Detections, pairs: list[tuple[int, int]]) -> set[int]:
        """The balls at rest whose blob this frame is a covered ball's: few of its edge rays found and its fit
        dragged a few mm towards what lies over it. (Sinuca seed 283: the cue stick lay against the resting brown
        for two seconds, the brown read 5-8 mm off at score 0.42-0.60 against 0.71-0.83 when clear; back in its
        place as the cue went, it read as touched.) Such a reading says where the ball is no better than none:
        the ball is hidden for that frame, not moved. A reading more than half a radius off is a ball that moved
        (the fit's shift is bounded by half a radius), and one that agrees with the resting place is kept. So is
        one off straight away from another ball touching it (``_kissed_away``): that ball kissed it."""
        out: set[int] = set()
        for b, d in pairs:
            if det.score[d] >= self.c.covered_score or np.isnan(self.pos[b, 0]) or \
                    math.hypot(*self.vel[b]) >= self.c.resting_mm_s:
                continue
            off = math.hypot(*(det.xy[d] - self.pos[b]))
            if self.c.covered_mm < off < 0.25 * self.diameter and not self._kissed_away(b, det.xy[d], det, pairs):
                out.add(b)
        return out

    def _kissed_away(self, b: int, seen: np.ndarray, det: Detections, pairs: list[tuple[int, int]]) -> bool:
        """Whether resting ball ``b``, read at ``seen``, is off its resting place straight away from another ball
        (within ``kiss_cos`` of the line of centres) that is, in this frame, within ``kiss_gap_mm`` of touching
        that place. A weak ball kissed into a slow roll scores like a covered one (bilhar seed 162: the green 6,
        0.41-0.59 at rest and after, kissed to 59 mm/s by the 5), and was held hidden until a quarter of a
        diameter off: a quarter of a second unseen, the kiss lost with it."""
        now = {o: det.xy[d] for o, d in pairs}
        away = seen - self.pos[b]
        away = away / max(float(np.hypot(*away)), 1e-9)
        for o in range(len(self.balls)):
            at = now.get(o, self.pos[o])
            if o == b or np.isnan(at[0]):
                continue
            apart = self.pos[b] - at
            gap = float(np.hypot(*apart))
            if gap <= self.diameter + self.c.kiss_gap_mm and float(apart @ away) / max(gap, 1e-9) >= self.c.kiss_cos:
                return True
        return False

    def _put_back(self, det: Detections, pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """A ball lifted off the table (re-spotted by the referee, a potted ball returned) reappears wherever it is
        put. A blob no track took that keeps still for a few frames, and looks like a ball not seen since, is
        that ball. (A stray blob, a cue tip or a hand, does not keep still.)"""
        taken = {d for _, d in pairs}
        free = [d for d in range(len(det)) if d not in taken]
        assigned = {b for b, _ in pairs}
        previous = self._resting_blobs
        self._resting_blobs = []
        ready: list[tuple[int, int]] = []  # (detection, frames since it first rested there)
        matched: set[int] = set()
        for d in free:
            p = det.xy[d]
            near = [k for k, q in enumerate(previous) if k not in matched and
                    math.hypot(q.anchor[0] - p[0], q.anchor[1] - p[1]) <= self.c.placed_mm]
            if near:
                k = min(near, key=lambda k: -previous[k].seen)
                matched.add(k)
                blob = _RestingBlob(previous[k].anchor, previous[k].seen + 1, previous[k].span + 1, 0)
            else:
                blob = _RestingBlob(p, 1, 1, 0)
            self._resting_blobs.append(blob)
            if blob.seen >= self.c.placed_frames and det.classes:
                ready.append((d, blob.span))
        # A blob missing from a few frames is kept, in case it is a weak ball found one frame in two or three.
        self._resting_blobs += [_RestingBlob(q.anchor, q.seen, q.span + 1, q.missing + 1)
                                for k, q in enumerate(previous)
                                if k not in matched and q.missing < self.c.placed_gap_frames]
        # All the blobs ready this frame are placed together, the likeliest (ball, blob) pairs first by the
        # detector's opinion of that very id: the carom whites go where the colour model reads them, so that the
        # frame-to-frame identity costs then agree with continuity instead of pulling the two labels across. A
        # pair needs the blob to look like the ball's kind (a red like any red) by ``placed_identity``.
        options = []
        if ready:
            likeness, share = self._open_likeness(det, assigned)
        for d, frames in ready:
            for b in range(len(self.balls)):
                if b in assigned or self.unseen[b] < frames - 1 or self.balls[b] not in det.classes:
                    continue
                kind = float(likeness[d, b])
                if kind >= self.c.placed_identity:
                    options.append((-float(share[d, det.classes.index(self.balls[b])]), -kind, b, d))
        out: list[tuple[int, int]] = []
        used: set[int] = set()
        for _, _, b, d in sorted(options):
            if b in assigned or d in used:
                continue
            out.append((b, d))
            assigned.add(b)
            used.add(d)
        return out

    def _open_likeness(self, det: Detections, assigned: set[int]) -> tuple[np.ndarray, np.ndarray]:
        """(N, B) each blob's likeness to each ball's kind and (N, K) its class probabilities, for a blob placed
        where no ball is expected. The set of balls is known: a blob that plainly is a ball (``other_kind_p`` of
        one kind, and a whole ball's score) of a kind whose every ball is followed elsewhere in this frame is one
        of the kinds still to place, so for it both are taken over those kinds only. At 1456x1088 the classifier
        read a pool 11 lying still as the 15 at 0.99 frame after frame, the 15 itself tracked across the table:
        the 11 was never placed, and the 7, lost into a pocket, later took its blob (the pocket not called)."""
        members = self._kind_members(det.classes)  # (K, B)
        likeness = det.class_probs @ members
        free = np.array([b not in assigned for b in range(len(self.balls))])
        open_cols = (members[:, free] > 0).any(axis=1).astype(float)  # classes of a kind with a ball to place
        open_mass = det.class_probs @ open_cols  # (N,)
        plain = (likeness.max(axis=1) >= self.c.other_kind_p) & (det.score >= self.c.open_score)
        taken = plain & (open_mass < self.c.placed_identity) & (open_mass >= self.c.open_floor)
        if not taken.any():
            return likeness, det.class_probs
        scale = np.where(taken, 1.0 / np.where(taken, open_mass, 1.0), 1.0)[:, None]
        share = np.where(taken[:, None], det.class_probs * open_cols[None], det.class_probs) * scale
        return share @ members, share

    def _assign(self, det: Detections) -> list[tuple[int, int]]:
        n_b, n_d = len(self.balls), len(det)
        dt = np.where(np.isnan(self.last_t), 0.0, det.t - self.last_t)
        predicted = self.pos + self.vel * dt[:, None]
        diff = predicted[:, None, :] - det.xy[None, :, :]
        dist = np.hypot(diff[..., 0], diff[..., 1])  # (B, N), NaN: position unknown
        speed = np.hypot(self.vel[:, 0], self.vel[:, 1])
        # A ball may set off (or be hit) at up to the launch speed in the last frame; a moving ball covers its own
        # travel since it was seen; a hidden one may have been lifted and put back anywhere near, the longer the
        # farther. (Not the launch speed over all the hidden time: a vanished ball would grab any stray blob.)
        frame = det.t - self.last_frame_t if self.last_frame_t is not None else 0.0
        reach = self.c.gate_mm + self.c.launch_mm_s * frame + self.c.gate_speed_factor * speed * dt
        # A ball close to a moving one may be struck and run off at the striker's speed: share the wider gate.
        sep = self.pos[:, None, :] - self.pos[None, :, :]
        gap = np.hypot(sep[..., 0], sep[..., 1])
        close = np.where(np.isnan(gap), np.inf, gap) < self.diameter + 100.0
        reach = np.maximum(np.max(np.where(close, reach[None, :], 0.0), axis=1), reach)
        gate = reach + self.c.hidden_growth_mm_s * np.maximum(dt - frame, 0.0)
        unknown = np.isnan(dist)
        cost = np.where(unknown, 0.0, dist)
        allowed = ~unknown & (dist <= gate[:, None])
        if det.classes and n_d:
            like = (det.class_probs @ self._kind_members(det.classes)).T  # (B, N): each blob's likeness to each ball
            allowed &= ~self._unlike_at_rest(det, like, dist, speed)
            # Beyond where it could have rolled, a hidden ball is found again only as a ball put back is: by a blob
            # that looks like it. A pool 7 lost into a pocket took, once its gate had grown to a metre, the 11
            # resting there (read as the 15): its pocket was never called.
            beyond = np.nan_to_num(dist, nan=0.0) > reach[:, None]
            allowed &= ~beyond | (like >= self.c.placed_identity)
        allowed &= ~self._weak_jump(det, dist, speed)
        cost = cost + self._identity_cost(det)
        cost = np.where(allowed, cost, np.inf)
        pairs: list[tuple[int, int]] = []
        used_b = np.zeros(n_b, dtype=bool)
        used_d = np.zeros(n_d, dtype=bool)
        order = np.argsort(cost, axis=None)
        order = order[np.isfinite(cost.ravel()[order])]  # the allowed pairs, cheapest first
        rows, cols = np.divmod(order, max(n_d, 1))
        for b, d in zip(rows.tolist(), cols.tolist()):
            if used_b[b] or used_d[d]:
                continue
            used_b[b] = used_d[d] = True
            pairs.append((b, d))
        return self._keep_sides(pairs, det, cost)

    def _keep_sides(self, pairs: list[tuple[int, int]], det: Detections, cost: np.ndarray
                    ) -> list[tuple[int, int]]:
        """Two balls in contact cannot pass through each other: after a head-on hit of look-alike balls the
        nearest-prediction assignment swaps them (the striker stops where the struck ball was expected, the struck
        ball runs on where the striker was expected). Keep each pair of close balls on their own sides."""
        assigned = dict(pairs)
        balls = np.array(sorted(assigned), dtype=int)
        if len(balls) < 2:
            return pairs
        # Only the pairs that were close (a handful of the 231 of a snooker table; NaN, a position unknown, is
        # never close), in the order of the balls: a swap made changes what the later pairs see.
        sep = self.pos[balls][:, None, :] - self.pos[balls][None, :, :]
        close = np.triu(np.hypot(sep[..., 0], sep[..., 1]) <= self.diameter + 100.0, 1)
        for x, y in zip(*np.nonzero(close)):
            i, j = int(balls[x]), int(balls[y])
            di, dj = assigned[i], assigned[j]
            now = det.xy[di] - det.xy[dj]
            if float(np.dot(now, sep[x, y])) >= 0:
                continue
            swapped_cost = cost[i, dj] + cost[j, di]
            if np.isfinite(swapped_cost) and swapped_cost <= cost[i, di] + cost[j, dj] + 4 * self.diameter:
                assigned[i], assigned[j] = dj, di
        return list(assigned.items())

    def _weak_jump(self, det: Detections, dist: np.ndarray, speed: np.ndarray) -> np.ndarray:
        """(B, N): a ball hidden at rest for ``covered_hidden_frames`` or more is not found again more than a radius
        from where it rested by a blob the detector is unsure of (a covered ball's score): that is something else, the
        end of a cue's butt on the cushion. (Sinuca seed 179: a red hidden under the butt took its end 140 mm away,
        score 0.43, for one frame; seen there and then back in its place, it read as touched.) Not one hidden only a few
        frames: a ball kissed as the kissing ball's blob merges with it is unseen for those, and a weak one (snooker's
        green) then scores little as it runs (sinuca seed 138: hidden 3 frames, refused for 9)."""
        hidden_resting = (speed < self.c.resting_mm_s) & (self.unseen >= self.c.covered_hidden_frames)
        far = np.nan_to_num(dist, nan=0.0) > 0.5 * self.diameter
        weak = det.score < self.c.covered_score
        return hidden_resting[:, None] & far & weak[None, :]

    def _unlike_at_rest(self, det: Detections, own: np.ndarray, dist: np.ndarray, speed: np.ndarray) -> np.ndarray:
        """(B, N): a ball at rest does not jump to a blob over a radius away that plainly is another kind (nearly
        nothing of its own kind, nearly all of one other). The sinuca reds took the unplaced brown's blob 74 mm off
        for the two frames a cue's shadow hid their own, and each such jump opened a shot struck on a red. A ball
        set moving is still followed: its first smeared frames read as no kind in particular. ``own``: (B, N) each
        blob's likeness to each ball's kind."""
        sure_other = det.class_probs.max(axis=1) >= self.c.other_kind_p  # (N,)
        resting = (speed < self.c.resting_mm_s) & (self.unseen < self.c.resting_unseen_frames)
        far = np.nan_to_num(dist, nan=0.0) > 0.5 * self.diameter
        return resting[:, None] & far & (own < self.c.unlike_p) & sure_other[None, :]

    def _kind_members(self, classes: tuple[str, ...]) -> np.ndarray:
        """(K, B) 0/1: class k is of ball b's kind (its group's ids for a red or a carom white, else its own id),
        so that class probabilities times it are each blob's likeness to each ball; a ball the detector has no
        class for is like every blob (a column of ones over a probability row sums to 1)."""
        if self._members_for != classes:
            m, known = _members(self.balls, classes, self.place_groups)
            m[:, ~known] = 1.0
            self._members_for, self._members = classes, m
        return self._members

    def _identity_cost(self, det: Detections) -> np.ndarray:
        """(B, N): identity surprise in mm; zero where the detector gives no opinion on a ball."""
        if not det.classes:
            return np.zeros((len(self.balls), len(det)))
        members, known = self._identity_members(det.classes)
        p = det.class_probs @ members  # (N, B): each blob's probability of being each ball's kind
        return np.where(known[:, None], -np.log(clamp(p.T, 1e-4, 1.0)) * self.c.identity_mm, 0.0)

    def _identity_members(self, classes: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
        """``_members`` over the groups told apart by continuity only (the reds; not the carom whites, whose
        classes the identity cost must keep apart), made once for a set of classes: built ball by ball every
        frame, it was a fifth of a snooker frame's tracking."""
        if self._identity_for != classes:
            self._identity_for, self._identity = classes, _members(self.balls, classes, self.groups)
        return self._identity


def _members(balls: tuple[str, ...], classes: tuple[str, ...], groups: tuple[tuple[str, ...], ...]
             ) -> tuple[np.ndarray, np.ndarray]:
    """(K, B) 0/1, class k counts for ball b (the classes of its group among ``groups``, else its own), and (B,)
    whether the detector has a class for the ball at all (its column is zero where not)."""
    m = np.zeros((len(classes), len(balls)))
    known = np.array([ball in classes for ball in balls], dtype=bool)
    for b, ball in enumerate(balls):
        if known[b]:
            group = next((g for g in groups if ball in g), (ball,))
            m[[classes.index(x) for x in group if x in classes], b] = 1.0
    return m, known
