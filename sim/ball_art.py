"""Balls as ray-traced spheres in small image patches (true perspective outline, shading, specular highlight,
markings that turn with the ball), their soft shadows on the cloth, and Chapó pins.

Everything is vectorised over a patch's pixels; the per-pixel view rays come precomputed for the whole image.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import CameraModel

LIGHT = np.array([0.18, -0.12, 1.0]) / np.linalg.norm([0.18, -0.12, 1.0])  # towards the lamps
DOT_COLOUR = np.array([40.0, 40.0, 190.0])
WHITE = np.array([236.0, 240.0, 242.0])
_DOT_AXES = np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]], dtype=np.float64)


@dataclass(frozen=True)
class BallLook:
    colour: tuple[int, int, int]  # BGR
    pattern: str  # plain | dots | stripe | numbered


@dataclass
class BallDraw:
    """One ball at one instant: centre in the table frame (z = R), orientation, look."""

    centre: np.ndarray  # (3,)
    quat: np.ndarray  # (4,) w, x, y, z
    look: BallLook


def quat_matrix(q: np.ndarray) -> np.ndarray:
    w, x, y, z = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


class SphereShader:
    def __init__(self, camera: CameraModel, rays: np.ndarray, radius: float, shading: bool = True) -> None:
        self.shading = shading  # False: flat albedo and no shadow, so a test can read coverage off the colour
        self.camera = camera
        self.rays = rays  # (H, W, 3) float32 unit view directions in the table frame
        self.origin = camera.camera_centre
        self.R = radius
        self.size = camera.image_size

    def extent(self, centre: np.ndarray) -> tuple[np.ndarray, float]:
        """Pixel centre and a generous pixel radius of the ball with its shadow."""
        c = self.camera.project(centre)
        depth = float(np.linalg.norm(centre - self.origin))
        r_px = self.camera.focal * self.R / depth * 1.15
        shadow = centre[:2] - centre[2] * LIGHT[:2] / LIGHT[2]
        s = self.camera.table_to_image(shadow, 0.0)
        return c, r_px + float(np.linalg.norm(s - c)) + 0.6 * r_px

    @staticmethod
    def _window(canvas: np.ndarray, x0: int, y0: int, c: np.ndarray, r: float) -> tuple[np.ndarray, int, int] | None:
        """The part of ``canvas`` (top-left at image pixel x0, y0) within r of pixel c, and its top-left pixel."""
        h, w = canvas.shape[:2]
        a0 = max(0, int(math.floor(c[0] - r)) - x0)
        b0 = max(0, int(math.floor(c[1] - r)) - y0)
        a1 = min(w, int(math.ceil(c[0] + r)) + 1 - x0)
        b1 = min(h, int(math.ceil(c[1] + r)) + 1 - y0)
        if a1 <= a0 or b1 <= b0:
            return None
        return canvas[b0:b1, a0:a1], x0 + a0, y0 + b0

    def shadow(self, canvas: np.ndarray, x0: int, y0: int, ball: BallDraw) -> None:
        """Darken the cloth under and beside the ball (multiplicative, soft-edged)."""
        if not self.shading or ball.centre[2] < self.R - 1e-6:  # no shadow once it sinks into a pocket
            return
        c = ball.centre
        s_xy = c[:2] - c[2] * LIGHT[:2] / LIGHT[2]
        s_px = self.camera.table_to_image(s_xy, 0.0)
        foot_px = self.camera.table_to_image(c[:2], 0.0)
        r_px = self.camera.focal * self.R / float(np.linalg.norm(np.array([*s_xy, 0.0]) - self.origin))
        win = self._window(canvas, x0, y0, 0.5 * (s_px + foot_px), 1.3 * r_px + 0.5 * float(np.linalg.norm(s_px - foot_px)))
        if win is None:
            return
        canvas, x0, y0 = win
        h, w = canvas.shape[:2]
        yy, xx = np.mgrid[y0:y0 + h, x0:x0 + w].astype(np.float32)
        d = np.hypot(xx - s_px[0], yy - s_px[1])
        k = np.clip((1.15 * r_px - d) / (0.55 * r_px), 0.0, 1.0)
        d_foot = np.hypot(xx - foot_px[0], yy - foot_px[1])
        contact = np.clip((0.55 * r_px - d_foot) / (0.4 * r_px), 0.0, 1.0)
        canvas *= (1.0 - 0.42 * k * k * (3 - 2 * k) - 0.25 * contact)[..., None]

    def ball(self, canvas: np.ndarray, x0: int, y0: int, ball: BallDraw, gain: float = 1.0,
             fade: float = 1.0) -> None:
        """Composite the ball over ``canvas`` (float32 patch whose top-left pixel is (x0, y0))."""
        oc = ball.centre - self.origin
        r_px = self.camera.focal * self.R / math.sqrt(float(oc @ oc))
        win = self._window(canvas, x0, y0, self.camera.project(ball.centre), 1.25 * r_px + 2.0)
        if win is None:
            return
        canvas, x0, y0 = win
        h, w = canvas.shape[:2]
        d = self.rays[y0:y0 + h, x0:x0 + w].astype(np.float64)
        tca = d @ oc
        d2 = float(oc @ oc) - tca * tca
        R2 = self.R * self.R
        ppm = self.camera.focal / math.sqrt(float(oc @ oc))  # pixels per mm at the ball
        dist = np.sqrt(np.maximum(d2, 0.0))
        alpha = np.clip((self.R - dist) * ppm + 0.5, 0.0, 1.0)
        if not alpha.any():
            return
        thc = np.sqrt(np.maximum(R2 - d2, 0.0))
        p = self.origin + (tca - thc)[..., None] * d
        n = (p - ball.centre) / self.R
        n /= np.linalg.norm(n, axis=-1, keepdims=True)
        albedo = self._albedo(n, ball)
        if not self.shading:
            a = alpha[..., None].astype(np.float32)
            canvas *= 1.0 - a
            canvas += a * albedo.astype(np.float32)
            return
        diffuse = np.clip(n @ LIGHT, 0.0, 1.0)
        half = LIGHT[None, None] - d
        half /= np.linalg.norm(half, axis=-1, keepdims=True)
        spec = np.clip((n * half).sum(-1), 0.0, 1.0) ** 80
        # The cloth lights the lower half a little (its colour is ignored: a faint grey fill).
        fill = 0.12 * np.clip(-n[..., 2] * 0.5 + 0.5, 0.0, 1.0)
        colour = (albedo * (0.22 + fill + 0.78 * diffuse)[..., None] * gain + (235.0 * spec)[..., None]) * fade
        a = alpha[..., None].astype(np.float32)
        canvas *= 1.0 - a
        canvas += a * colour.astype(np.float32)

    def _albedo(self, n: np.ndarray, ball: BallDraw) -> np.ndarray:
        base = np.array(ball.look.colour, dtype=np.float64)
        out = np.broadcast_to(base, n.shape).copy()
        pattern = ball.look.pattern
        if pattern == "plain":
            return out
        nb = n @ quat_matrix(ball.quat)  # the normal in the ball's own frame (R^T n, as row vectors)
        if pattern == "dots":
            near = (nb @ _DOT_AXES.T).max(axis=-1)
            out[near > math.cos(0.17)] = DOT_COLOUR
        elif pattern == "stripe":  # a band round the equator, white caps
            out[np.abs(nb[..., 2]) > 0.5] = WHITE
        elif pattern == "numbered":  # a solid with the white number circles at its poles
            out[np.abs(nb[..., 2]) > 0.86] = WHITE
        return out


def draw_pin(img: np.ndarray, camera: CameraModel, spot: tuple[float, float], base_d: float, height: float,
             fall: float, direction: tuple[float, float]) -> None:
    """A Chapó pin on a uint8 image: ``fall`` 0 standing (seen as its top disc over a short body), 1 lying
    along ``direction`` (a short bar)."""
    angle = fall * math.pi / 2
    r = base_d / 2
    base = np.array([spot[0], spot[1], r * math.sin(angle)])
    top = base + height * np.array([direction[0] * math.sin(angle), direction[1] * math.sin(angle), math.cos(angle)])
    b_px, t_px = camera.project(np.stack([base, top]))
    depth = float(np.linalg.norm(top - camera.camera_centre))
    width = max(1.0, camera.focal * base_d / depth)
    body = (206, 226, 236)
    if fall < 0.5:  # a standing pin's short shadow, away from the lamps
        shadow_end = camera.table_to_image(np.array(spot) - height * LIGHT[:2] / LIGHT[2], 0.0)
        cv2.line(img, _p(b_px), _p(shadow_end), (10, 30, 10), max(1, int(round(width))), cv2.LINE_AA, shift=4)
    cv2.line(img, _p(b_px), _p(t_px), body, max(1, int(round(width))), cv2.LINE_AA, shift=4)
    if fall < 0.99:
        cv2.circle(img, _p(t_px), int(round(width * 8)), (150, 175, 190), -1, cv2.LINE_AA, shift=4)
        cv2.circle(img, _p(t_px), int(round(width * 5)), (40, 40, 170), -1, cv2.LINE_AA, shift=4)


def _p(px: np.ndarray) -> tuple[int, int]:
    return (int(round(px[0] * 16)), int(round(px[1] * 16)))
