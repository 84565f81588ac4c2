"""A slow ball meeting a cushion: in at 20-40 mm/s, it neither comes 2 mm nearer over four frames nor changes
its normal speed by half the kink, but its centre comes to R from the nose line, which only a touch can do."""

from __future__ import annotations

import numpy as np
import pytest

from rules.events import EventType
from rules.tables import preset
from vision.events import find_events
from vision.paths import Paths

POOL = preset("pool_9ft")
R = POOL.ball_radius
FPS = 60.0
DECEL = 100.0  # mm/s^2: a rolling ball's slowing (about 0.01 g)


def _rolling(t: np.ndarray, p0, v0, t0: float) -> np.ndarray:
    """(len(t), 2) a ball resting at ``p0`` until ``t0``, then rolling from there at ``v0`` (mm/s), slowing by
    ``DECEL`` to a stop."""
    p0, v0 = np.asarray(p0, dtype=float), np.asarray(v0, dtype=float)
    speed = float(np.linalg.norm(v0))
    u = v0 / speed
    tau = np.clip(t - t0, 0.0, speed / DECEL)
    return p0 + u * (speed * tau - 0.5 * DECEL * tau ** 2)[:, None]


def _into_bottom_cushion(t: np.ndarray, p0, v0, t0: float, restitution: float) -> tuple[np.ndarray, float]:
    """A ball set off at ``t0`` rolling into the bottom cushion (its nose at y = 0): its normal speed reversed
    and scaled by ``restitution`` where its centre reaches R, its way along the cushion kept. The path and the
    contact's time."""
    fine = np.arange(t0, t[-1] + 1e-9, 1e-4)
    before = _rolling(fine, p0, v0, t0)
    k = int(np.nonzero(before[:, 1] <= R)[0][0])
    tc = float(fine[k])
    speed = max(float(np.linalg.norm(v0)) - DECEL * (tc - t0), 0.0)
    u = np.asarray(v0, dtype=float) / float(np.linalg.norm(v0))
    v_at = u * speed
    v_out = np.array([v_at[0], -restitution * v_at[1]])
    at = np.array([before[k, 0], R])
    path = np.where((t < tc)[:, None], _rolling(t, p0, v0, t0), _rolling(t, at, v_out, tc))
    return path, tc


def _paths(ball: np.ndarray, t: np.ndarray, seed: int, noise_mm: float = 0.4) -> Paths:
    rng = np.random.default_rng(seed)
    other = np.tile([900.0, 1800.0], (len(t), 1))  # a ball at rest far off
    xy = np.stack([ball, other]) + rng.normal(0.0, noise_mm, (2, len(t), 2))
    return Paths(("cue", "1"), t, xy)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
@pytest.mark.parametrize("v0, v_in, restitution", [((-12.0, -60.0), 28.0, 0.2), ((30.0, -55.0), 35.0, 0.0),
                                                   ((-40.0, -52.0), 45.0, 0.3)])
def test_a_slow_ball_meeting_a_cushion_is_a_contact_timed_at_the_nose(seed, v0, v_in, restitution):
    """Set off a few cm off the bottom cushion's nose at 60-70 mm/s, the ball reaches it at ``v_in`` (27-36
    mm/s of it towards it), slowed by rolling, and comes off at a third of that or stops there: one contact, timed
    within a frame (the fit's bend, its slowing allowed for)."""
    t = np.arange(0.0, 2.0, 1 / FPS)
    v0 = np.asarray(v0)
    speed = float(np.linalg.norm(v0))
    off = (speed ** 2 - v_in ** 2) / (2 * DECEL) * abs(v0[1]) / speed  # how far off the nose to reach it at v_in
    ball, tc = _into_bottom_cushion(t, (400.0, R + off), v0, 0.2, restitution)
    ev = find_events(_paths(ball, t, seed), POOL).events
    met = [e for e in ev if e.type is EventType.CUSHION]
    assert [(e.ball, e.cushion) for e in met] == [("cue", "bottom")], ev
    assert abs(met[0].t - tc) < 1 / FPS, (met[0].t, tc)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
@pytest.mark.parametrize("short_mm", [2.0, 2.5, 3.0])
def test_a_slow_ball_rolling_to_a_stop_short_of_the_cushion_is_no_contact(seed, short_mm):
    """The same ball set off slower, rolling to a stop 2-3 mm short of the nose: its centre never comes to R
    from the nose line, and it comes in slowing to nothing, not stopped by anything."""
    t = np.arange(0.0, 2.0, 1 / FPS)
    v = np.sqrt(2 * DECEL * 14.0)  # 14 mm to its stop
    stop = R + short_mm
    ball = _rolling(t, (400.0, stop + 14.0), (0.0, -v), 0.2)
    assert abs(float(ball[-1, 1]) - stop) < 1e-6
    ev = find_events(_paths(ball, t, seed), POOL).events
    assert not [e for e in ev if e.type is EventType.CUSHION], ev
