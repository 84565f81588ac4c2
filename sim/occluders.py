"""Things between the camera and the balls: the cue around a strike, and an arm reaching over the table.

Each is drawn from its table-frame geometry projected through the camera, into the frame and into an occlusion
mask (for the truth's ``occluded`` flags).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import CameraModel

from .trajectory import StrikeRecord

CUE_LENGTH = 1450.0
CUE_ELEVATION = math.radians(6.0)
# Sections from the tip: (length mm, radius at its far end mm, BGR)
_CUE_SECTIONS = ((10.0, 6.5, (170, 120, 60)), (25.0, 6.6, (235, 240, 240)), (760.0, 10.5, (150, 192, 220)),
                 (655.0, 15.0, (35, 48, 92)))


@dataclass(frozen=True)
class Arm:
    """An arm over the table from ``t0`` to ``t1``: it enters over the rail at ``entry`` and reaches ``hand``."""

    t0: float
    t1: float
    entry: tuple[float, float]
    hand: tuple[float, float]
    slide_s: float = 0.35


def _smooth(x: float) -> float:
    x = min(1.0, max(0.0, x))
    return x * x * (3 - 2 * x)


def cue_tip_offset(strike: StrikeRecord, t: float) -> float | None:
    """How far behind the contact point the tip is at ``t`` (mm; negative past it), None when out of view.
    The stroke: slide in, two feathering strokes, back-swing, the stroke, follow through, withdraw."""
    tau = t - strike.t
    if strike.push_s > 0 and 0.0 <= tau <= strike.push_s:
        return -strike.speed * tau
    if tau < -1.4 or tau > 1.2:
        return None
    if tau < -1.0:
        return 30.0 + 1500.0 * (1 - _smooth((tau + 1.4) / 0.4))
    if tau < -0.3:
        return 30.0 + 40.0 * (1 - math.cos(2 * math.pi * (tau + 1.0) / 0.35)) / 2
    if tau < -0.12:
        return 30.0 + 150.0 * _smooth((tau + 0.3) / 0.18)
    if tau < 0.0:
        return 180.0 * (-tau / 0.12) ** 1.5
    end = -strike.speed * strike.push_s
    if tau < 0.1:
        return end - 90.0 * _smooth(tau / 0.1)
    if tau < 0.6:
        return end - 90.0
    return end - 90.0 + 1700.0 * _smooth((tau - 0.6) / 0.6)


def draw_cue(frame: np.ndarray, mask: np.ndarray, camera: CameraModel, strike: StrikeRecord,
             ball_xy: tuple[float, float], radius: float, t: float) -> bool:
    s = cue_tip_offset(strike, t)
    if s is None:
        return False
    d = np.array(strike.direction)
    perp = np.array([-d[1], d[0]])
    tip = np.array(ball_xy) - d * (radius + s)
    along = 0.0
    r0 = _CUE_SECTIONS[0][1]
    drew = False
    for length, r1, colour in _CUE_SECTIONS:
        a, b = along, along + length
        pa = tip - d * a * math.cos(CUE_ELEVATION)
        pb = tip - d * b * math.cos(CUE_ELEVATION)
        za = radius + a * math.sin(CUE_ELEVATION)
        zb = radius + b * math.sin(CUE_ELEVATION)
        quad = np.array([[*(pa + perp * r0), za], [*(pb + perp * r1), zb], [*(pb - perp * r1), zb],
                         [*(pa - perp * r0), za]])
        px = camera.project(quad)
        if np.isfinite(px).all():
            poly = np.round(px * 16).astype(np.int32)
            cv2.fillConvexPoly(frame, poly, colour, cv2.LINE_AA, shift=4)
            cv2.fillConvexPoly(mask, poly, 255, cv2.LINE_8, shift=4)
            drew = True
        along, r0 = b, r1
    return drew


def draw_arm(frame: np.ndarray, mask: np.ndarray, camera: CameraModel, arm: Arm, t: float) -> bool:
    if not arm.t0 <= t <= arm.t1:
        return False
    reach = min(_smooth((t - arm.t0) / arm.slide_s), _smooth((arm.t1 - t) / arm.slide_s))
    entry = np.array(arm.entry, dtype=float)
    hand_full = np.array(arm.hand, dtype=float)
    out = entry - hand_full
    out /= max(1e-9, float(np.linalg.norm(out)))
    # Sliding in: the whole arm comes from beyond the rail along its own line.
    shift = (1 - reach) * (np.linalg.norm(hand_full - entry) + 500.0)
    hand = hand_full + out * shift
    elbow = entry + out * shift
    shoulder = elbow + out * 450.0
    pts3 = np.array([[*shoulder, 650.0], [*elbow, 330.0], [*hand, 110.0]])
    px = camera.project(pts3)
    centre = camera.camera_centre
    widths = [camera.focal * w / float(np.linalg.norm(p - centre)) for p, w in zip(pts3, (130.0, 105.0, 85.0))]
    sleeve, skin = (70, 58, 52), (120, 150, 205)
    for (a, b, w, colour) in ((px[0], px[1], widths[0], sleeve), (px[1], px[2], widths[1], skin)):
        pa = (int(round(a[0] * 16)), int(round(a[1] * 16)))
        pb = (int(round(b[0] * 16)), int(round(b[1] * 16)))
        cv2.line(frame, pa, pb, colour, max(1, int(round(w))), cv2.LINE_AA, shift=4)
        cv2.line(mask, pa, pb, 255, max(1, int(round(w))), cv2.LINE_8, shift=4)
    hp = (int(round(px[2][0] * 16)), int(round(px[2][1] * 16)))
    axes = (int(round(widths[2] * 0.75 * 16)), int(round(widths[2] * 0.55 * 16)))
    ang = math.degrees(math.atan2(px[2][1] - px[1][1], px[2][0] - px[1][0]))
    cv2.ellipse(frame, hp, axes, ang, 0, 360, skin, -1, cv2.LINE_AA, shift=4)
    cv2.ellipse(mask, hp, axes, ang, 0, 360, 255, -1, cv2.LINE_8, shift=4)
    return True
