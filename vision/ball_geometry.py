"""What a ball looks like at each place of the image, computed once from the camera model at start-up.

A sphere's image is not a disc centred on the image of its centre: off the optical axis its silhouette (the cone of
rays tangent to it) is an ellipse whose centre lies a little farther from the principal point than the projected
centre (second order in R / distance: about 0.15 px, 0.35 mm, near a carom table's corners from 2 m up), and the lens
distortion bends it further. The detector measures the silhouette, so this module holds, on a coarse pixel grid:

- the silhouette's equivalent radius in pixels (the detector's expected ball size at that place), and
- the offset from the projected centre to the silhouette's centroid, which is subtracted before the ray through the
  pixel is intersected with the ball-centre plane (z = R) to give the cloth point under the ball.

The grid is interpolated bilinearly: both quantities vary smoothly across the image.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import CameraModel
from rules.tables import TableSpec
from vision.arrays import clamp

_GRID_STEP_PX = 16  # the maps change by far less than 0.01 px over this distance
_TABLE_STEP_PX = 4  # the pixel-to-cloth lookup's node spacing: bilinear between nodes 4 px apart is off by at most
# 0.002 mm on the Pi camera's lens (0.007 mm at 8 px, 0.026 at 16), far below the detector's 0.4 mm; 100k nodes,
# 1.6 MB, 30 ms to build
_CONTOUR_POINTS = 96


def silhouette(camera: CameraModel, centres_xyz: np.ndarray, radius_mm: float) -> tuple[np.ndarray, np.ndarray]:
    """Centroid (N, 2) and equivalent radius (N,) in pixels of the silhouettes of spheres at ``centres_xyz``.

    The tangent points of the view cone form a circle on the sphere, centred at C - R^2/d^2 (C - O) with radius
    R sqrt(1 - R^2/d^2) (O the camera centre, d = |C - O|); its projection through the lens is the outline."""
    c = np.asarray(centres_xyz, dtype=np.float64).reshape(-1, 3)
    o = camera.camera_centre
    v = c - o
    d2 = np.sum(v * v, axis=1, keepdims=True)
    axis = v / np.sqrt(d2)
    ring_centre = c - (radius_mm ** 2 / d2) * v
    ring_radius = radius_mm * np.sqrt(1.0 - radius_mm ** 2 / d2)
    # Two unit vectors perpendicular to the view axis span the ring.
    helper = np.where(np.abs(axis[:, :1]) < 0.9, np.array([[1.0, 0.0, 0.0]]), np.array([[0.0, 1.0, 0.0]]))
    e1 = np.cross(axis, helper)
    e1 /= np.linalg.norm(e1, axis=1, keepdims=True)
    e2 = np.cross(axis, e1)
    ang = np.linspace(0.0, 2 * np.pi, _CONTOUR_POINTS, endpoint=False)
    pts = (ring_centre[:, None, :] + ring_radius[:, None, :] *
           (np.cos(ang)[None, :, None] * e1[:, None, :] + np.sin(ang)[None, :, None] * e2[:, None, :]))
    px = camera.project(pts)  # (N, P, 2)
    # Area centroid of each outline polygon (shoelace formulas).
    x, y = px[..., 0], px[..., 1]
    xn, yn = np.roll(x, -1, axis=1), np.roll(y, -1, axis=1)
    cross = x * yn - xn * y
    area = 0.5 * cross.sum(axis=1)
    cx = ((x + xn) * cross).sum(axis=1) / (6.0 * area)
    cy = ((y + yn) * cross).sum(axis=1) / (6.0 * area)
    return np.stack([cx, cy], axis=1), np.sqrt(np.abs(area) / np.pi)


@dataclass(frozen=True, eq=False)
class BallGeometry:
    """Per-pixel expected ball radius and silhouette offset for one camera and one ball size."""

    camera: CameraModel
    table: TableSpec
    radius_grid: np.ndarray  # (gh, gw) silhouette radius (px) of a ball whose silhouette centre is at the node
    offset_grid: np.ndarray  # (gh, gw, 2) silhouette centroid minus projected centre (px)
    step: int
    # (th, tw, 2) cloth point under a ball whose silhouette is centred at each node, nodes every ``table_step`` px:
    # the exact map inverts the lens by iteration (0.3-0.4 ms a frame for three balls), the lookup is 0.02 ms.
    table_grid: np.ndarray | None = None
    table_step: int = _TABLE_STEP_PX

    @classmethod
    def build(cls, camera: CameraModel, table: TableSpec, step: int = _GRID_STEP_PX) -> "BallGeometry":
        w, h = camera.image_size
        gx = np.arange(0, w + step, step, dtype=np.float64)
        gy = np.arange(0, h + step, step, dtype=np.float64)
        nodes = np.stack(np.meshgrid(gx, gy), axis=-1)  # (gh, gw, 2)
        r = table.ball_radius
        # The node taken as a projected centre; the silhouette offset is so small (< 1 px) and smooth that using
        # it at the silhouette centre instead changes the result by far below 0.001 px.
        xy = camera.image_to_table(nodes.reshape(-1, 2), r)
        centres = np.concatenate([xy, np.full((len(xy), 1), r)], axis=1)
        sil, rad = silhouette(camera, centres, r)
        offset = sil - nodes.reshape(-1, 2)
        geo = cls(camera, table, rad.reshape(nodes.shape[:2]), offset.reshape(nodes.shape), step)
        tx = np.arange(0, w + _TABLE_STEP_PX, _TABLE_STEP_PX, dtype=np.float64)
        ty = np.arange(0, h + _TABLE_STEP_PX, _TABLE_STEP_PX, dtype=np.float64)
        table_nodes = np.stack(np.meshgrid(tx, ty), axis=-1)
        with np.errstate(all="ignore"):  # a wide lens's far corners may not invert: NaN there, exact map used
            grid = geo.to_table_exact(table_nodes.reshape(-1, 2)).reshape(table_nodes.shape)
        object.__setattr__(geo, "table_grid", grid)
        return geo

    def _sample(self, grid: np.ndarray, px: np.ndarray, step: int | None = None) -> np.ndarray:
        px = np.asarray(px, dtype=np.float64).reshape(-1, 2)
        gh, gw = grid.shape[:2]
        step = step or self.step
        fx = clamp(px[:, 0] / step, 0, gw - 1.000001)
        fy = clamp(px[:, 1] / step, 0, gh - 1.000001)
        ix, iy = fx.astype(int), fy.astype(int)
        tx, ty = fx - ix, fy - iy
        if grid.ndim == 3:
            tx, ty = tx[:, None], ty[:, None]
        return ((1 - ty) * ((1 - tx) * grid[iy, ix] + tx * grid[iy, ix + 1])
                + ty * ((1 - tx) * grid[iy + 1, ix] + tx * grid[iy + 1, ix + 1]))

    def radius_at(self, px: np.ndarray) -> np.ndarray:
        """Expected silhouette radius (N,) in pixels of a ball seen at pixels (N, 2)."""
        return self._sample(self.radius_grid, px)

    def radius_map(self, size: tuple[int, int], scale: float = 1.0) -> np.ndarray:
        """The expected radius per pixel of an image of ``size`` (w, h) that is the frame scaled by ``scale``."""
        w, h = size
        gx = (np.arange(w, dtype=np.float64) + 0.5) / scale - 0.5
        gy = (np.arange(h, dtype=np.float64) + 0.5) / scale - 0.5
        # Resize the coarse grid to the target: the grid nodes are at multiples of ``step`` full-res pixels.
        mx = (gx / self.step).astype(np.float32)
        my = (gy / self.step).astype(np.float32)
        map_x, map_y = np.meshgrid(mx, my)
        return cv2.remap(self.radius_grid.astype(np.float32), map_x, map_y, cv2.INTER_LINEAR,
                         borderMode=cv2.BORDER_REPLICATE) * scale

    def to_table(self, silhouette_px: np.ndarray) -> np.ndarray:
        """Cloth points (N, 2) under balls whose silhouettes are centred at ``silhouette_px`` (N, 2): the lookup
        grid inside the image, the exact map outside it or where the grid has no value."""
        px = np.asarray(silhouette_px, dtype=np.float64).reshape(-1, 2)
        if len(px) == 0 or self.table_grid is None:
            return self.to_table_exact(px)
        w, h = self.camera.image_size
        inside = (px[:, 0] >= 0) & (px[:, 1] >= 0) & (px[:, 0] <= w) & (px[:, 1] <= h)
        out = self._sample(self.table_grid, px, self.table_step)
        redo = ~inside | np.isnan(out[:, 0])
        if redo.any():
            out[redo] = self.to_table_exact(px[redo])
        return out

    def to_table_exact(self, silhouette_px: np.ndarray) -> np.ndarray:
        """``to_table`` through the camera model itself (the lens inverted by iteration)."""
        px = np.asarray(silhouette_px, dtype=np.float64).reshape(-1, 2)
        if len(px) == 0:
            return np.zeros((0, 2))
        centre_px = px - self._sample(self.offset_grid, px)
        return self.camera.image_to_table(centre_px, self.table.ball_radius)

    def to_image(self, xy: np.ndarray) -> np.ndarray:
        """Silhouette centres (N, 2) in pixels of balls resting at cloth points (N, 2) (the inverse of to_table)."""
        xy = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
        centre_px = self.camera.table_to_image(xy, self.table.ball_radius)
        return centre_px + self._sample(self.offset_grid, centre_px)

    def play_area_polygon(self, inset_mm: float = 0.0, z: float | None = None, n_per_side: int = 24) -> np.ndarray:
        """The outline (M, 2) in pixels of the cloth inside the cushion noses shrunk by ``inset_mm``, at height
        ``z`` (default: the ball-centre plane), sampled densely so the lens's curvature is kept."""
        t = self.table
        z = t.ball_radius if z is None else z
        a, b = inset_mm, inset_mm
        xs = np.linspace(a, t.width - a, n_per_side)
        ys = np.linspace(b, t.length - b, n_per_side)
        edge = np.concatenate([
            np.stack([xs, np.full_like(xs, b)], 1), np.stack([np.full_like(ys, t.width - a), ys], 1),
            np.stack([xs[::-1], np.full_like(xs, t.length - b)], 1), np.stack([np.full_like(ys, a), ys[::-1]], 1),
        ])
        return self.camera.table_to_image(edge, z)
