"""The exact Shot records (DESIGN.md section 4) of a simulated trajectory: what a perfect vision stack would emit.

A shot opens at a strike, or at a touch while the table was at rest, and closes when the table is at rest again or
at the next strike, whichever comes first (a strike while balls still roll opens the next shot with those balls in
``moving_at_strike``). Tracks are thinned to what keeps each path within 1 mm (Douglas-Peucker on x, y).
"""

from __future__ import annotations

import numpy as np

from rules.events import Event, EventType
from rules.shot import Shot
from rules.tables import TableSpec

from .trajectory import ON_TABLE, Trajectory

TRACK_TOLERANCE_MM = 1.0


def thin_track(samples: np.ndarray, tol: float = TRACK_TOLERANCE_MM) -> np.ndarray:
    """Keep the fewest [t, x, y] rows such that every dropped point is within ``tol`` of the kept polyline."""
    n = len(samples)
    if n <= 2:
        return samples
    keep = np.zeros(n, dtype=bool)
    keep[0] = keep[-1] = True
    stack = [(0, n - 1)]
    xy = samples[:, 1:3]
    while stack:
        i, j = stack.pop()
        if j <= i + 1:
            continue
        a, b = xy[i], xy[j]
        seg = b - a
        L2 = float(seg @ seg)
        pts = xy[i + 1:j]
        if L2 == 0:
            d = np.linalg.norm(pts - a, axis=1)
        else:
            u = np.clip(((pts - a) @ seg) / L2, 0.0, 1.0)
            d = np.linalg.norm(pts - (a + u[:, None] * seg), axis=1)
        k = int(np.argmax(d))
        if d[k] > tol:
            m = i + 1 + k
            keep[m] = True
            stack += [(i, m), (m, j)]
    return samples[keep]


def shot_windows(traj: Trajectory) -> list[tuple[float, float, str | None]]:
    """(t_start, t_end, struck ball or None) for each shot."""
    starts = sorted(traj.shot_starts)
    out = []
    for k, (t0, ball) in enumerate(starts):
        nxt = starts[k + 1][0] if k + 1 < len(starts) else np.inf
        rests = [t for t in traj.rest_times if t > t0]
        t1 = min(nxt, rests[0] if rests else traj.t_end)
        out.append((t0, float(t1), ball))
    return out


def build_shots(traj: Trajectory, table: TableSpec, discipline: str, *, cue_balls: dict[float, str] | None = None,
                shooters: dict[float, str] | None = None) -> list[Shot]:
    """One Shot per window. ``cue_balls`` / ``shooters`` map a shot's start time to the ball the shooter had to
    play and to the side; by default the struck ball and the strike's shooter."""
    shots = []
    strikes = {s.t: s for s in traj.strikes}
    windows = shot_windows(traj)
    for k, (t0, t1, ball) in enumerate(windows):
        strike = strikes.get(t0)
        next_start = windows[k + 1][0] if k + 1 < len(windows) else None
        # The strike or touch that opens the next shot belongs to it, even when it closes this one.
        evs = [e for e in traj.events if t0 <= e.t <= t1
               and not (e.t == next_start and e.type in (EventType.STRIKE, EventType.TOUCHED))]
        shooter = (shooters or {}).get(t0) or (strike.shooter if strike else None)
        cue = (cue_balls or {}).get(t0) or ball
        notes: tuple[str, ...] = ()
        if strike is None:
            # Set moving by a hand or a sleeve, not the cue: the record still names a cue ball, the last one played.
            prev = shots[-1] if shots else None
            cue = cue or (prev.cue_ball if prev else None) or _first_touched(evs) or traj.ball_ids[0]
            shooter = shooter or (prev.shooter if prev else None)
            notes = ("no strike: a ball was set moving by something other than the cue",)
        elif strike.push_s > 0:
            notes = ("push",)
        start = _on_table(traj, t0, before=True)
        end = _on_table(traj, t1, before=False)
        shots.append(Shot(
            cue_ball=cue, t_start=t0, t_end=t1, start=start, events=tuple(evs), end=end,
            discipline=discipline, shooter=shooter, tracks=_tracks(traj, table, t0, t1),
            moving_at_strike=strike.moving if strike else (), confidence=1.0, notes=notes,
        ))
    return shots


def _first_touched(evs: list[Event]) -> str | None:
    return next((e.ball for e in evs if e.ball is not None), None)


def _on_table(traj: Trajectory, t: float, before: bool) -> dict[str, tuple[float, float]]:
    """Positions of the balls on the cloth at ``t``: at a shot's start, the state just before anything moved."""
    i = int(np.searchsorted(traj.times, t, side="left" if before else "right"))
    i = min(max(i - (0 if before else 1), 0), len(traj.times) - 1)
    pos, status = traj.positions[i], traj.status[i]
    return {b: (float(pos[k, 0]), float(pos[k, 1])) for k, b in enumerate(traj.ball_ids) if status[k] == ON_TABLE}


def _tracks(traj: Trajectory, table: TableSpec, t0: float, t1: float) -> dict:
    sel = (traj.times >= t0) & (traj.times <= t1)
    times = traj.times[sel]
    out = {}
    for k, b in enumerate(traj.ball_ids):
        on = traj.status[sel, k] == ON_TABLE
        p = traj.positions[sel, k][on]
        if len(p) < 2 or np.linalg.norm(p - p[0], axis=1).max() < 1e-6:
            continue
        # A ball in a pocket's mouth may have its centre a little past the cushion line: clamp to the cloth,
        # which the Shot record's tracks must stay on.
        p = np.column_stack([np.clip(p[:, 0], 0.0, table.width), np.clip(p[:, 1], 0.0, table.length)])
        rows = thin_track(np.column_stack([times[on], p]))
        out[b] = tuple((float(t), float(x), float(y)) for t, x, y in rows)
    return out
