"""Pixels <-> table millimetres at any height, and precomputed maps so per-frame mapping is a lookup, not a solve.

``to_table`` / ``to_image`` are the exact model (``CameraModel``), vectorised over any number of points.
``PlaneLookup`` holds, for every pixel of the image, the table point where its view ray meets one plane (the ball
centre plane z = R for ball positions); looking a sub-pixel position up is a bilinear interpolation of that table,
within a few thousandths of a pixel of the exact solve. ``top_down_maps`` gives ``cv2.remap`` maps for an undistorted, rectified
view of the cloth in table millimetres (a bird's-eye image for detectors and overlays).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from calibration.camera import CameraModel

ArrayLike = Any


def to_table(camera: CameraModel, pixels: ArrayLike, z_mm: float | ArrayLike = 0.0) -> np.ndarray:
    """Distorted pixels (..., 2) to table mm (..., 2) on the plane ``z_mm`` above the cloth (a ball: z = R)."""
    return camera.image_to_table(np.asarray(pixels, dtype=np.float64), z_mm)


def to_image(camera: CameraModel, points_mm: ArrayLike, z_mm: float | ArrayLike = 0.0) -> np.ndarray:
    """Table mm (..., 2) at height ``z_mm`` (or (..., 3) points with their own z) to distorted pixels (..., 2)."""
    p = np.asarray(points_mm, dtype=np.float64)
    if p.shape[-1] == 3:
        return camera.project(p)
    return camera.table_to_image(p, z_mm)


@dataclass(frozen=True, eq=False)
class PlaneLookup:
    """Table mm of every pixel's view ray on the plane at height ``z_mm``: ``map[v, u] = (x, y)``."""

    z_mm: float
    map: np.ndarray  # (h, w, 2) float64, indexed [row, col]

    @classmethod
    def build(cls, camera: CameraModel, z_mm: float = 0.0) -> "PlaneLookup":
        w, h = camera.image_size
        u, v = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
        xy = camera.image_to_table(np.stack([u, v], axis=-1), z_mm)
        xy.setflags(write=False)
        return cls(float(z_mm), xy)

    def __call__(self, pixels: ArrayLike) -> np.ndarray:
        """Bilinear lookup of sub-pixel positions (..., 2); positions outside the image are clamped to its edge."""
        px = np.asarray(pixels, dtype=np.float64)
        h, w = self.map.shape[:2]
        u = np.clip(px[..., 0], 0.0, w - 1.000001)
        v = np.clip(px[..., 1], 0.0, h - 1.000001)
        u0 = np.floor(u).astype(np.intp)
        v0 = np.floor(v).astype(np.intp)
        fu = (u - u0)[..., None]
        fv = (v - v0)[..., None]
        m = self.map
        top = m[v0, u0] * (1 - fu) + m[v0, u0 + 1] * fu
        bottom = m[v0 + 1, u0] * (1 - fu) + m[v0 + 1, u0 + 1] * fu
        return top * (1 - fv) + bottom * fv


def top_down_maps(camera: CameraModel, width_mm: float, length_mm: float, mm_per_px: float = 2.0,
                  margin_mm: float = 0.0, z_mm: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """``cv2.remap`` maps (map_x, map_y, float32) for a bird's-eye view of the plane ``z_mm``: output column i is
    table x = -margin + (i + 0.5) * mm_per_px, output row j is table y = length + margin - (j + 0.5) * mm_per_px (the
    top cushion at the top of the picture)."""
    nx = int(round((width_mm + 2 * margin_mm) / mm_per_px))
    ny = int(round((length_mm + 2 * margin_mm) / mm_per_px))
    xs = -margin_mm + (np.arange(nx) + 0.5) * mm_per_px
    ys = length_mm + margin_mm - (np.arange(ny) + 0.5) * mm_per_px
    gx, gy = np.meshgrid(xs, ys)
    px = camera.table_to_image(np.stack([gx, gy], axis=-1), z_mm).astype(np.float32)
    return np.ascontiguousarray(px[..., 0]), np.ascontiguousarray(px[..., 1])


def top_down_view(image: np.ndarray, camera: CameraModel, width_mm: float, length_mm: float,
                  mm_per_px: float = 2.0, margin_mm: float = 0.0) -> np.ndarray:
    mx, my = top_down_maps(camera, width_mm, length_mm, mm_per_px, margin_mm)
    return cv2.remap(image, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
