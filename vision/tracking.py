"""Tracking a known, fixed set of balls from frame to frame.

Each ball has a constant-velocity prediction; detections are assigned to balls by a cost that adds the distance
from the prediction to how unlike the ball the detection looks (its identity probabilities). The gate widens with
speed and with every frame a ball goes unseen, so a ball hidden under an arm, or lifted and put back on its spot,
is found again, and identity alone re-acquires a ball whose position is unknown. The set of balls is known, so a
detection that fits no ball is ignored rather than starting a new track.

N is at most 22 (snooker), so a greedy assignment in order of cost is exact enough and far cheaper than a full
linear assignment in pure numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from .detections import Detections


@dataclass(frozen=True)
class TrackerConfig:
    gate_mm: float = 20.0  # the gate around a prediction, before the allowances below
    launch_mm_s: float = 8000.0  # a resting ball may be struck to this speed: its gate covers one frame of it
    gate_speed_factor: float = 1.3  # a moving ball's gate covers this many frames' travel at its speed
    identity_mm: float = 100.0  # how many mm of distance one nat of identity surprise is worth
    min_score: float = 0.2  # detections below this confidence are not used
    velocity_smoothing: float = 0.6  # weight of the newest velocity estimate


class BallTracker:
    def __init__(self, balls: tuple[str, ...], initial: Mapping[str, tuple[float, float]] | None = None,
                 config: TrackerConfig = TrackerConfig(), ball_diameter: float = 61.5) -> None:
        self.balls = balls
        self.c = config
        self.diameter = ball_diameter
        n = len(balls)
        self.pos = np.full((n, 2), np.nan)
        self.vel = np.zeros((n, 2))
        self.last_t = np.full(n, np.nan)
        self.unseen = np.zeros(n, dtype=int)
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
            for b, d in self._assign(det):
                p = det.xy[d]
                if not np.isnan(self.last_t[b]) and det.t > self.last_t[b]:
                    v_new = (p - self.pos[b]) / (det.t - self.last_t[b])
                    a = self.c.velocity_smoothing
                    self.vel[b] = a * v_new + (1 - a) * self.vel[b] if self.unseen[b] == 0 else v_new
                self.pos[b] = p
                self.last_t[b] = det.t
                out[b] = p
        seen = ~np.isnan(out[:, 0])
        self.unseen[seen] = 0
        self.unseen[~seen] += 1
        # A ball unseen for a while has stopped, or been lifted: forget its speed.
        self.vel[self.unseen > 3] = 0.0
        return out

    def _assign(self, det: Detections) -> list[tuple[int, int]]:
        n_b, n_d = len(self.balls), len(det)
        dt = np.where(np.isnan(self.last_t), 0.0, det.t - np.nan_to_num(self.last_t))
        predicted = self.pos + self.vel * dt[:, None]
        dist = np.linalg.norm(predicted[:, None, :] - det.xy[None, :, :], axis=2)  # (B, N), NaN: position unknown
        speed = np.linalg.norm(self.vel, axis=1)
        # A ball may set off (or be hit) at up to the launch speed in any frame, seen or not: the gate covers the
        # frames since it was last seen at that speed, or at its own speed if it is faster.
        gate = self.c.gate_mm + np.maximum(self.c.launch_mm_s, self.c.gate_speed_factor * speed) * dt
        # A ball close to a moving one may be struck and run off at the striker's speed: share the wider gate.
        gap = np.linalg.norm(self.pos[:, None, :] - self.pos[None, :, :], axis=2)
        close = np.nan_to_num(gap, nan=np.inf) < self.diameter + 100.0
        gate = np.max(np.where(close, gate[None, :], 0.0), axis=1).clip(min=gate)
        unknown = np.isnan(dist)
        cost = np.where(unknown, 0.0, dist)
        allowed = unknown | (dist <= gate[:, None])
        cost = cost + self._identity_cost(det)
        cost = np.where(allowed, cost, np.inf)
        pairs: list[tuple[int, int]] = []
        used_b = np.zeros(n_b, dtype=bool)
        used_d = np.zeros(n_d, dtype=bool)
        order = np.argsort(cost, axis=None)
        for flat in order:
            b, d = divmod(int(flat), n_d)
            if not np.isfinite(cost[b, d]):
                break
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
        balls = sorted(assigned)
        near = self.diameter + 100.0
        for x in range(len(balls)):
            for y in range(x + 1, len(balls)):
                i, j = balls[x], balls[y]
                if np.isnan(self.pos[i, 0]) or np.isnan(self.pos[j, 0]):
                    continue
                before = self.pos[i] - self.pos[j]
                if np.linalg.norm(before) > near:
                    continue
                di, dj = assigned[i], assigned[j]
                now = det.xy[di] - det.xy[dj]
                if np.dot(now, before) >= 0:
                    continue
                swapped_cost = cost[i, dj] + cost[j, di]
                if np.isfinite(swapped_cost) and swapped_cost <= cost[i, di] + cost[j, dj] + 4 * self.diameter:
                    assigned[i], assigned[j] = dj, di
        return list(assigned.items())

    def _identity_cost(self, det: Detections) -> np.ndarray:
        """(B, N): identity surprise in mm; zero where the detector gives no opinion on a ball."""
        cost = np.zeros((len(self.balls), len(det)))
        if not det.classes:
            return cost
        for b, ball in enumerate(self.balls):
            if ball in det.classes:
                p = det.class_probs[:, det.classes.index(ball)]
                cost[b] = -np.log(np.clip(p, 1e-4, 1.0)) * self.c.identity_mm
        return cost
