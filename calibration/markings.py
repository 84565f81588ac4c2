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


def find_diamonds(image: np.ndarray, camera: CameraModel, table: TableSpec, rail_z: float,
                  reach_mm: float = 220.0) -> dict[str, np.ndarray]:
    """Diamonds on the rails, as a check of the calibration along each cushion.

    Each rail is resampled into a strip in table millimetres (1 mm cells, at ``rail_z``): along the cushion, and
    from 15 mm to ``reach_mm`` outside its nose. A diamond is a small blob brighter (or darker) than the rail around
    it; its along-cushion position is compared with where the table spec puts it (L/8 or W/4 steps). The rail's
    true height and the diamonds' distance out are not known, and the first shifts a diamond along the cushion in
    proportion to its distance from the point under the camera; that one term is fitted per cushion and what is
    left is the residual. Returns, per cushion, (expected along, measured along) pairs in mm."""
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float32) if image.ndim == 3 else image.astype(np.float32)
    W, L = table.width, table.length
    out: dict[str, np.ndarray] = {}
    sides = {
        "bottom": ([d[0] for d in table.diamonds if d[1] == 0.0 and 0 < d[0] < W], lambda a, o: (a, -o)),
        "top": ([d[0] for d in table.diamonds if d[1] == L and 0 < d[0] < W], lambda a, o: (a, L + o)),
        "left": ([d[1] for d in table.diamonds if d[0] == 0.0 and 0 < d[1] < L], lambda a, o: (-o, a)),
        "right": ([d[1] for d in table.diamonds if d[0] == W and 0 < d[1] < L], lambda a, o: (W + o, a)),
    }
    h, w = gray.shape
    for name, (alongs, to_xy) in sides.items():
        if not alongs:
            continue
        pairs = []
        for a0 in alongs:
            aa, oo = np.meshgrid(np.arange(a0 - 60.0, a0 + 60.5, 1.0), np.arange(15.0, reach_mm, 1.0))
            x, y = to_xy(aa, oo)
            px = camera.table_to_image(np.stack([x, y], -1), rail_z).astype(np.float32)
            if not ((px[..., 0] > 0) & (px[..., 0] < w - 1) & (px[..., 1] > 0) & (px[..., 1] < h - 1)).all():
                continue
            strip = cv2.remap(gray, px[..., 0], px[..., 1], cv2.INTER_LINEAR)
            # A blob about 10 mm across: difference of Gaussians, either sign.
            dog = cv2.GaussianBlur(strip, (0, 0), 3.0) - cv2.GaussianBlur(strip, (0, 0), 9.0)
            k = int(np.argmax(np.abs(dog)))
            r, c = np.unravel_index(k, dog.shape)
            if abs(dog[r, c]) < max(6.0, 5.0 * float(np.median(np.abs(dog)))):
                continue
            r0, r1, c0, c1 = max(r - 6, 0), min(r + 7, dog.shape[0]), max(c - 6, 0), min(c + 7, dog.shape[1])
            wgt = np.clip(np.sign(dog[r, c]) * dog[r0:r1, c0:c1], 0, None)
            if wgt.sum() <= 0:
                continue
            cc = (wgt * np.arange(c0, c1)[None, :]).sum() / wgt.sum()
            pairs.append((a0, float(aa[0, 0] + cc)))
        if pairs:
            out[name] = np.array(pairs)
    return out


def diamond_residuals(found: dict[str, np.ndarray], camera: CameraModel, table: TableSpec) -> np.ndarray:
    """Along-cushion residuals (mm) of the diamonds after the one parallax term per cushion (module docstring)."""
    c = camera.camera_centre
    res = []
    for name, pairs in found.items():
        if len(pairs) < 4:
            continue
        along_cam = c[0] if name in ("bottom", "top") else c[1]
        d = pairs[:, 1] - pairs[:, 0]
        a = pairs[:, 0] - along_cam
        keep = np.abs(d - np.median(d)) < 25.0  # a blob that is not the diamond (an arm, a sponsor's board)
        if keep.sum() < 4:  # two terms fitted: fewer than four diamonds would check next to nothing
            continue
        design = np.stack([a, np.ones_like(a)], axis=1)  # the parallax term, and a shift of the diamonds' origin
        for _ in range(2):
            coef, *_ = np.linalg.lstsq(design[keep], d[keep], rcond=None)
            r = d - design @ coef
            keep = np.abs(r) < max(3.0 * 1.4826 * np.median(np.abs(r[keep])), 2.0)
        if keep.sum() >= 4:
            res.append(r[keep])
    return np.concatenate(res) if res else np.zeros(0)
