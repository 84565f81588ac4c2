"""A picture of what the calibration found, drawn over the view: the cushion edge points, the cushion lines through
the calibrated camera, the corners, the diamonds and spots where the calibration puts them, the markings found, and
a table-millimetre grid (every 100 mm faint, every diamond strong). For the user to check at a glance."""

from __future__ import annotations

from typing import Sequence

import cv2
import numpy as np

from calibration.camera import CameraModel
from calibration.pose import MarkingObservation
from rules.tables import TableSpec


def _polyline(img: np.ndarray, cam: CameraModel, xy: np.ndarray, colour, thick: int, shift: int = 4) -> None:
    px = cam.table_to_image(xy, 0.0)
    ok = np.isfinite(px).all(axis=1)
    if ok.sum() < 2:
        return
    pts = np.round(px[ok] * (1 << shift)).astype(np.int64)
    pts = np.clip(pts, -(1 << 28), 1 << 28).astype(np.int32)
    cv2.polylines(img, [pts.reshape(-1, 1, 2)], False, colour, thick, cv2.LINE_AA, shift)


def draw_overlay(image: np.ndarray, camera: CameraModel, table: TableSpec,
                 edge_points: Sequence[np.ndarray] = (), markings: Sequence[MarkingObservation] = (),
                 max_side: int = 1280) -> np.ndarray:
    img = image.copy() if image.ndim == 3 else cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    h, w = img.shape[:2]
    s = min(1.0, max_side / max(h, w))
    cam = camera.scaled((int(round(w * s)), int(round(h * s)))) if s < 1 else camera
    if s < 1:
        img = cv2.resize(img, cam.image_size, interpolation=cv2.INTER_AREA)
    thick = max(1, int(round(max(cam.image_size) / 900)))
    W, L = table.width, table.length
    n = 200
    grid = img.copy()
    for x in np.arange(100.0, W, 100.0):
        _polyline(grid, cam, np.stack([np.full(n, x), np.linspace(0, L, n)], -1), (255, 255, 255), 1)
    for y in np.arange(100.0, L, 100.0):
        _polyline(grid, cam, np.stack([np.linspace(0, W, n), np.full(n, y)], -1), (255, 255, 255), 1)
    img = cv2.addWeighted(grid, 0.35, img, 0.65, 0)
    for k in range(1, 4):
        _polyline(img, cam, np.stack([np.full(n, k * W / 4), np.linspace(0, L, n)], -1), (255, 255, 0), thick)
    for k in range(1, 8):
        _polyline(img, cam, np.stack([np.linspace(0, W, n), np.full(n, k * L / 8)], -1), (255, 255, 0), thick)
    for e in edge_points:
        for p in np.asarray(e)[:: max(1, len(e) // 60)] * s:
            cv2.circle(img, (int(round(p[0])), int(round(p[1]))), thick + 1, (0, 0, 255), -1, cv2.LINE_AA)
    border = np.array([[0, 0], [W, 0], [W, L], [0, L], [0, 0]], dtype=float)
    dense = np.concatenate([np.linspace(border[i], border[i + 1], n) for i in range(4)])
    _polyline(img, cam, dense, (0, 255, 255), thick)
    corners = cam.table_to_image(border[:4], 0.0)
    for name, p in zip(("BL", "BR", "TR", "TL"), corners):
        c = (int(round(p[0])), int(round(p[1])))
        cv2.circle(img, c, 6 * thick, (255, 0, 255), thick, cv2.LINE_AA)
        cv2.putText(img, name, (c[0] + 8 * thick, c[1] - 6 * thick), cv2.FONT_HERSHEY_SIMPLEX, 0.5 * thick,
                    (255, 0, 255), thick, cv2.LINE_AA)
    if table.diamonds:
        for p in cam.table_to_image(np.asarray(table.diamonds, dtype=float), 0.0):
            cv2.drawMarker(img, (int(round(p[0])), int(round(p[1]))), (0, 255, 0), cv2.MARKER_DIAMOND, 8 * thick,
                           thick)
    if table.spots:
        for p in cam.table_to_image(np.asarray(list(table.spots.values()), dtype=float), 0.0):
            cv2.drawMarker(img, (int(round(p[0])), int(round(p[1]))), (255, 255, 255), cv2.MARKER_CROSS, 8 * thick,
                           thick)
    for m in markings:
        p = m.px * s
        cv2.circle(img, (int(round(p[0])), int(round(p[1]))), 5 * thick, (0, 200, 0), thick, cv2.LINE_AA)
    for z, ball in ((table.ball_radius, True),):
        # A ball-sized circle at the centre spot, at its centre height: the scale at a glance.
        c = cam.table_to_image(np.array([[W / 2, L / 2]]), z)[0]
        r = table.ball_radius * float(cam.pixels_per_mm(np.array([W / 2, L / 2]), z))
        cv2.circle(img, (int(round(c[0])), int(round(c[1]))), max(2, int(round(r))), (0, 165, 255), thick,
                   cv2.LINE_AA)
    return img
