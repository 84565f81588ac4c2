"""A tiny billiard kinematics for event tests: straight rolling with a gentle deceleration, elastic equal-mass
collisions and mirror cushions, stepped finely, with the exact time of every contact. (The virtual table in sim/
is the full physics; this keeps the event tests independent of it.)"""

from __future__ import annotations

import numpy as np

from rules.tables import TableSpec
from vision.paths import Paths


def simulate(table: TableSpec, start: dict, velocity: dict, duration: float, *, fps: float = 60.0,
             noise_mm: float = 0.0, t_strike: float = 0.1, decel: float = 0.25, step: float = 2e-5,
             seed: int = 0, restitution: float = 0.9):
    """Returns (Paths sampled at ``fps``, truth: list of (t, kind, who)). ``velocity`` (mm/s) is given to the
    struck balls at ``t_strike``."""
    balls = tuple(start)
    r = table.ball_radius
    p = np.array([start[b] for b in balls], dtype=float)
    v = np.zeros_like(p)
    truth = []
    frames_t = np.arange(0.0, duration, 1.0 / fps) + 0.5 / fps
    samples = np.zeros((len(balls), len(frames_t), 2))
    next_frame = 0
    t = 0.0
    struck = False
    while next_frame < len(frames_t):
        if not struck and t >= t_strike:
            struck = True
            for b, vel in velocity.items():
                v[balls.index(b)] = vel
                truth.append((t, "strike", b))
        t_next = min(t + step, frames_t[next_frame]) if next_frame < len(frames_t) else t + step
        h = t_next - t
        p_new = p + v * h
        speed = np.linalg.norm(v, axis=1, keepdims=True)
        v = np.where(speed > 1e-9, v * np.maximum(0.0, 1 - decel * h * 1000 / np.maximum(speed, 1e-9)), 0.0) \
            if decel else v
        # cushions (mirror about the line at distance r)
        for axis, lo, hi, names in ((0, r, table.width - r, ("left", "right")),
                                    (1, r, table.length - r, ("bottom", "top"))):
            for bi in range(len(balls)):
                for bound, name, sign in ((lo, names[0], -1), (hi, names[1], 1)):
                    if sign * (p_new[bi, axis] - bound) > 0 and sign * v[bi, axis] > 0:
                        frac = (bound - p[bi, axis]) / (p_new[bi, axis] - p[bi, axis])
                        truth.append((t + frac * h, "cushion", (balls[bi], name)))
                        v[bi, axis] *= -restitution
                        p_new[bi, axis] = 2 * bound - p_new[bi, axis]
        # ball-ball
        for i in range(len(balls)):
            for j in range(i + 1, len(balls)):
                d_new = np.linalg.norm(p_new[i] - p_new[j])
                if d_new < 2 * r:
                    rel = p_new[i] - p_new[j]
                    n = rel / np.linalg.norm(rel)
                    approach = np.dot(v[i] - v[j], n)
                    if approach < 0:
                        d_old = np.linalg.norm(p[i] - p[j])
                        frac = (d_old - 2 * r) / max(d_old - d_new, 1e-12)
                        truth.append((t + frac * h, "ball_ball", (balls[i], balls[j])))
                        v[i] -= approach * n
                        v[j] += approach * n
        p = p_new
        t = t_next
        if next_frame < len(frames_t) and abs(t - frames_t[next_frame]) < 1e-12:
            samples[:, next_frame] = p
            next_frame += 1
    rng = np.random.default_rng(seed)
    samples = samples + rng.normal(0.0, noise_mm, samples.shape) if noise_mm else samples
    return Paths(balls, frames_t, samples), truth
