"""The exact outcome of a simulation: sampled ball states, pin states, and every event with its exact time.

Samples are taken at every integration step while anything moves and at every contact instant, so linear
interpolation between samples is exact to a few micrometres (a step is 0.5 ms).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rules.events import Event

ON_TABLE, POTTED, OFF_TABLE = 0, 1, 2


@dataclass(frozen=True)
class StrikeRecord:
    t: float
    ball: str
    direction: tuple[float, float]  # unit, table frame
    speed: float
    moving: tuple[str, ...]  # other balls still moving when the cue struck
    shooter: str | None = None
    push_s: float = 0.0


@dataclass(frozen=True)
class PinRecord:
    name: str
    spot: tuple[float, float]
    down_t: float | None  # None: still standing
    direction: tuple[float, float]  # unit, the way it fell
    by: str | None = None


@dataclass
class Trajectory:
    ball_ids: tuple[str, ...]
    radius: float
    times: np.ndarray  # (T,)
    positions: np.ndarray  # (T, N, 2) cloth point under each centre (off-table balls keep flying outside)
    status: np.ndarray  # (T, N) ON_TABLE / POTTED / OFF_TABLE
    orientations: np.ndarray  # (T, N, 4) unit quaternions (w, x, y, z), body -> table frame
    moving: np.ndarray  # (T, N) bool: the centre is moving (or about to: sliding, driven) at that sample
    energy: np.ndarray  # (T,) kinetic energy per unit ball mass (mm^2/s^2)
    events: list[Event]
    strikes: list[StrikeRecord]
    pins: list[PinRecord] = field(default_factory=list)
    rest_times: list[float] = field(default_factory=list)  # every time the whole table came to rest
    shot_starts: list[tuple[float, str | None]] = field(default_factory=list)  # (t, struck ball or None: a touch)

    def index(self, ball: str) -> int:
        return self.ball_ids.index(ball)

    @property
    def t_end(self) -> float:
        return float(self.times[-1])

    def _bracket(self, t: float) -> tuple[int, int, float]:
        times = self.times
        if t <= times[0]:
            return 0, 0, 0.0
        if t >= times[-1]:
            return len(times) - 1, len(times) - 1, 0.0
        j = int(np.searchsorted(times, t, side="right"))
        i = j - 1
        span = times[j] - times[i]
        return i, j, 0.0 if span <= 0 else (t - times[i]) / span

    def state_at(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Positions (N, 2), status (N,), orientations (N, 4) at time ``t`` (linear between samples)."""
        i, j, f = self._bracket(t)
        pos = self.positions[i] + f * (self.positions[j] - self.positions[i])
        status = self.status[i] if f < 1.0 else self.status[j]
        # A ball that changed status within the bracket keeps the earlier status: it is drawn until it drops.
        q = self.orientations[i] if f < 0.5 else self.orientations[j]
        return pos, status, q

    def positions_at(self, t: float) -> dict[str, tuple[float, float]]:
        pos, status, _ = self.state_at(t)
        return {b: (float(pos[k, 0]), float(pos[k, 1])) for k, b in enumerate(self.ball_ids) if status[k] == ON_TABLE}

    def moving_between(self, t0: float, t1: float) -> set[str]:
        """Balls whose centre moved in [t0, t1]."""
        sel = (self.times >= t0) & (self.times <= t1)
        if not sel.any():
            return set()
        p = self.positions[sel]
        moved = np.linalg.norm(p - p[0], axis=-1).max(axis=0) > 1e-6
        return {b for k, b in enumerate(self.ball_ids) if moved[k]}

    def pin_states_at(self, t: float) -> dict[str, dict]:
        out = {}
        for p in self.pins:
            down = p.down_t is not None and p.down_t <= t
            out[p.name] = {"standing": not down, "spot": list(p.spot), "direction": list(p.direction)}
        return out
