"""Ball paths over a shot as arrays, and the small fits that events are timed with.

A shot's paths are one time vector ``t`` (M frames) and one array ``xy`` (B balls x M frames x 2, table mm, NaN where
a ball was not seen). Contacts happen between frames; the fits below carry a ball's motion across the gap so a
contact time is found to a fraction of a frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class Paths:
    balls: tuple[str, ...]
    t: np.ndarray  # (M,)
    xy: np.ndarray  # (B, M, 2), NaN where unseen

    def __post_init__(self) -> None:
        t = np.asarray(self.t, dtype=np.float64).reshape(-1)
        xy = np.asarray(self.xy, dtype=np.float64)
        if xy.shape != (len(self.balls), len(t), 2):
            raise ValueError(f"paths: xy must be ({len(self.balls)}, {len(t)}, 2), got {xy.shape}")
        if len(t) > 1 and np.any(np.diff(t) <= 0):
            raise ValueError("paths: frame times must increase")
        object.__setattr__(self, "t", t)
        object.__setattr__(self, "xy", xy)

    def index(self, ball: str) -> int:
        return self.balls.index(ball)

    @property
    def seen(self) -> np.ndarray:
        """(B, M) True where the ball was observed."""
        return ~np.isnan(self.xy[..., 0])

    @property
    def frame_dt(self) -> float:
        return float(np.median(np.diff(self.t))) if len(self.t) > 1 else 1 / 60


@dataclass(frozen=True, eq=False)
class PinStates:
    """Chapó pins over a shot's frames: each pin's spot and, per frame, whether the detector saw it down."""

    pins: tuple[str, ...]
    spots: np.ndarray  # (P, 2) cloth mm
    down: np.ndarray  # (P, M) bool

    def __post_init__(self) -> None:
        spots = np.asarray(self.spots, dtype=np.float64).reshape(-1, 2)
        down = np.asarray(self.down, dtype=bool)
        if spots.shape[0] != len(self.pins) or down.ndim != 2 or down.shape[0] != len(self.pins):
            raise ValueError(f"pin states: {len(self.pins)} pins but spots {spots.shape}, down {down.shape}")
        object.__setattr__(self, "spots", spots)
        object.__setattr__(self, "down", down)


@dataclass(frozen=True)
class LineFit:
    """p(t) = p0 + v (t - t0) + a (t - t0)^2 / 2 fitted to a few samples (a = 0 for a straight fit)."""

    t0: float
    p0: np.ndarray
    v: np.ndarray
    a: np.ndarray

    def at(self, t: np.ndarray | float) -> np.ndarray:
        dt = np.asarray(t, dtype=np.float64)[..., None] - self.t0
        return self.p0 + self.v * dt + 0.5 * self.a * dt * dt

    def velocity(self, t: float) -> np.ndarray:
        return self.v + self.a * (t - self.t0)


def fit(t: np.ndarray, p: np.ndarray, quadratic: bool = False) -> LineFit | None:
    """Least-squares motion through the observed samples (rows of ``p`` with NaN are skipped)."""
    ok = ~np.isnan(p[:, 0])
    t, p = t[ok], p[ok]
    need = 3 if quadratic else 2
    if len(t) < need:
        if len(t) == 1:
            return LineFit(float(t[0]), p[0].copy(), np.zeros(2), np.zeros(2))
        return None
    t0 = float(t[-1])
    dt = t - t0
    cols = [np.ones_like(dt), dt] + ([0.5 * dt * dt] if quadratic else [])
    a_mat = np.stack(cols, axis=1)
    coef, *_ = np.linalg.lstsq(a_mat, p, rcond=None)
    acc = coef[2] if quadratic else np.zeros(2)
    return LineFit(t0, coef[0], coef[1], acc)


def fit_with_error(t: np.ndarray, p: np.ndarray) -> tuple[LineFit, float] | None:
    """``fit`` (straight) and the standard error of its velocity along any one direction, from its residuals (x
    and y pooled); None with under three observed samples. The fit's ``p0`` is its value at the last sample."""
    ok = ~np.isnan(p[:, 0])
    t, p = t[ok], p[ok]
    if len(t) < 3:
        return None
    f = fit(t, p)
    spread = float(np.sum((t - t.mean()) ** 2))
    if spread <= 0.0:
        return f, np.inf
    noise = float(np.sum((p - f.at(t)) ** 2)) / (2 * (len(t) - 2))  # per coordinate
    return f, float(np.sqrt(noise / spread))


def window(lo: int, hi: int, m: int) -> slice:
    return slice(max(lo, 0), min(hi, m))
