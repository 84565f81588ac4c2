"""Chalk markings on the cloth (the discipline's spots) found near where the current calibration puts them.

Each spot of the table spec is looked for in a window of +-30 mm around its predicted pixel: the pixels that differ
from the cloth colour form a blob of about a spot's size (a ball on the spot is far larger and is refused), whose
weighted centroid is the observation. Found spots are table points on the cloth (z = 0) for the pose fit, and their
residual is the calibration file's ``markings_mm``.
"""

from __future__ import annotations

import cv2
import numpy as np

from calibration.camera import CameraModel
from calibration.pose import MarkingObservation
from calibration.table_finder import ClothModel
from rules.tables import TableSpec

SPOT_DIAMETER_MM = 10.0
SEARCH_MM = 30.0


def find_markings(image: np.ndarray, camera: CameraModel, table: TableSpec, cloth: ClothModel,
                  spot_diameter_mm: float = SPOT_DIAMETER_MM) -> list[MarkingObservation]:
    h, w = image.shape[:2]
    found: list[MarkingObservation] = []
    names = list(table.spots)
    if not names:
        return found
    xy = np.array([table.spots[n] for n in names], dtype=float)
    px = camera.table_to_image(xy, 0.0)
    ppm = camera.pixels_per_mm(xy)
    for name, p, s, t in zip(names, px, ppm, xy):
        r = int(np.ceil(SEARCH_MM * s)) + 2
        x0, y0 = int(round(p[0])) - r, int(round(p[1])) - r
        if x0 < 0 or y0 < 0 or x0 + 2 * r + 1 > w or y0 + 2 * r + 1 > h:
            continue
        patch = cv2.cvtColor(image[y0:y0 + 2 * r + 1, x0:x0 + 2 * r + 1], cv2.COLOR_BGR2LAB).astype(np.float32)
        diff = patch - cloth.lab.astype(np.float32)
        local = np.median(patch.reshape(-1, 3), axis=0) - cloth.lab.astype(np.float32)
        score = np.sqrt(np.sum((diff - local) ** 2 * np.array([0.5, 1.0, 1.0], np.float32), axis=-1))
        thr = max(12.0, 4.0 * float(np.median(score)))
        blob = (score > thr).astype(np.uint8)
        n, labels, stats, cents = cv2.connectedComponentsWithStats(blob, connectivity=8)
        if n <= 1:
            continue
        centre = np.array([r, r], dtype=float)
        d = np.linalg.norm(cents[1:] - centre, axis=1)
        best = 1 + int(np.argmin(d))
        area = stats[best, cv2.CC_STAT_AREA]
        expect = np.pi * (0.5 * spot_diameter_mm * s) ** 2
        bx, by, bw, bh = stats[best, :4]
        touches = bx == 0 or by == 0 or bx + bw >= 2 * r + 1 or by + bh >= 2 * r + 1
        if touches or not (0.15 * expect <= area <= 4.0 * expect + 4) or d.min() > 20 * s:
            continue
        m = (labels == best).astype(np.float32) * (score - thr * 0.5)
        m = cv2.dilate(m, np.ones((3, 3), np.uint8))
        m = np.clip(m, 0, None)
        yy, xx = np.mgrid[0:2 * r + 1, 0:2 * r + 1]
        tot = m.sum()
        if tot <= 0:
            continue
        c = np.array([(m * xx).sum() / tot + x0, (m * yy).sum() / tot + y0])
        found.append(MarkingObservation(f"spot_{name}", c, t, 0.0))
    return found
