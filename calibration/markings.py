"""Chalk markings on the cloth found near where the current calibration puts them: the discipline's spots, and the
points where chalk lines meet (the balkline crossings, the snooker D's ends on the baulk line).

Each spot of the table spec is looked for in a window of +-30 mm around its predicted pixel: the pixels that differ
from the cloth colour form a blob of about a spot's size (a ball on the spot, or beside it, is far larger and the
spot is refused), whose weighted centroid is the observation.

A junction of chalk lines is measured on its arms, the lines leaving it: across each arm, at steps along it, the
lightness profile (in table millimetres through the current calibration) shows the chalk as a thin bright peak,
whose offset from where the line should be is the calibration's error across that arm there. A straight fit of
those offsets along each arm, taken at the junction, and two arms at an angle give the error's two components at
the junction, so the pixel where the junction is seen. Lines of any shape are measured the same way (the D's arc
too). A junction is kept only where its arms show a clear thin line, so a table without those markings gives none.

Found markings are table points on the cloth (z = 0) for the pose fit, and their residual is the calibration
file's ``markings_mm``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

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
        # A ball on or against the spot: a blob of a ball's size within a ball's radius of it (its marking dots,
        # its shadow's edge would pass for the spot).
        # Against the cloth itself, not the window's median (a ball filling the window would be its median).
        raw = np.sqrt(np.sum(diff ** 2 * np.array([0.5, 1.0, 1.0], np.float32), axis=-1)) > 25.0
        near = np.hypot(*(np.mgrid[0:2 * r + 1, 0:2 * r + 1] - r)) < (table.ball_radius + SPOT_DIAMETER_MM) * s
        if np.count_nonzero(raw & near & (labels != best)) > 2.0 * expect + 4:
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
    return found + find_line_junctions(image, camera, table)


@dataclass(frozen=True)
class Arm:
    """A chalk line leaving a junction: ``point(s)`` its centre line at ``s`` mm from the junction, ``normal(s)``
    its unit normal there (table frame)."""

    point: Callable[[np.ndarray], np.ndarray]
    normal: Callable[[np.ndarray], np.ndarray]
    reach: tuple[float, float] = (30.0, 160.0)  # mm from the junction: clear of a ball on a spot there


def _straight(x: tuple[float, float], d: tuple[float, float], reach: tuple[float, float] = (30.0, 160.0)) -> Arm:
    x0, dd = np.asarray(x, float), np.asarray(d, float)
    n = np.array([-dd[1], dd[0]])
    return Arm(lambda s: x0 + np.asarray(s)[..., None] * dd, lambda s: np.broadcast_to(n, np.shape(s) + (2,)), reach)


def _arc(centre: tuple[float, float], radius: float, theta0: float, turn: float) -> Arm:
    """An arc leaving the junction at angle ``theta0`` about ``centre``, turning by ``turn`` (+-1)."""
    c = np.asarray(centre, float)

    def ang(s: np.ndarray) -> np.ndarray:
        return theta0 + turn * np.asarray(s) / radius

    return Arm(lambda s: c + radius * np.stack([np.cos(ang(s)), np.sin(ang(s))], -1),
               lambda s: np.stack([np.cos(ang(s)), np.sin(ang(s))], -1))


def line_junctions(table: TableSpec) -> list[tuple[str, tuple[float, float], list[Arm]]]:
    """Where the chalk lines of the table's possible markings meet, with their arms: the balkline crossings of
    either balkline game on a carom table, the D's two ends on the baulk line of a snooker table."""
    W, L = table.width, table.length
    out: list[tuple[str, tuple[float, float], list[Arm]]] = []
    if table.name.startswith("carom"):
        for d in (473.0, 710.0):
            xs = [d, W - d] if d == 473.0 else [W / 2]
            ys = [d, L - d]
            for x in xs:
                for y in ys:
                    arms = [_straight((x, y), v) for v in ((1, 0), (-1, 0), (0, 1), (0, -1))]
                    out.append((f"balkline{d:g}_{x:g}_{y:g}", (x, y), arms))
    if "baulk_line_y" in table.lines and "d_radius" in table.lines:
        b, r = float(table.lines["baulk_line_y"]), float(table.lines["d_radius"])
        for end, theta0, turn in (("right", 0.0, -1.0), ("left", np.pi, 1.0)):
            x = W / 2 + (r if end == "right" else -r)
            arms = [_straight((x, b), (1, 0)), _straight((x, b), (-1, 0)), _arc((W / 2, b), r, theta0, turn)]
            out.append((f"d_{end}", (x, b), arms))
    return out


def _lightness(image: np.ndarray) -> np.ndarray:
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2LAB) if image.ndim == 3 else image
    light = lab[..., 0] if image.ndim == 3 else lab
    return cv2.GaussianBlur(light.astype(np.float32), (0, 0), 0.7)


def _arm_offsets(light: np.ndarray, camera: CameraModel, arm: Arm, step: float = 20.0,
                 ds: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """Along the arm: the chalk's offset across it (mm, through ``camera``) where a clear thin line shows."""
    h, w = light.shape
    s = np.arange(arm.reach[0], arm.reach[1] + 1e-9, step)
    q = arm.point(s)
    n = arm.normal(s)
    # A 3 mm line is blurred over a pixel or two: "thin" and the window are in pixels as much as in millimetres.
    mm_px = 1.0 / float(np.median(camera.pixels_per_mm(q)))
    thin_mm = max(5.0, 2.5 * mm_px)
    half = max(15.0, 2.0 * thin_mm + 3.0 * mm_px)
    o = np.arange(-half, half + ds / 2, ds)
    pts = q[:, None, :] + o[None, :, None] * n[:, None, :]
    px = camera.table_to_image(pts, 0.0).astype(np.float32)
    inside = (px[..., 0] > 1) & (px[..., 0] < w - 2) & (px[..., 1] > 1) & (px[..., 1] < h - 2)
    prof = cv2.remap(light, px[..., 0], px[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    base = np.median(prof, axis=1, keepdims=True)
    p = prof - base
    mad = np.median(np.abs(p), axis=1) + 0.5
    k = np.argmax(p, axis=1)
    rows = np.arange(len(s))
    peak = p[rows, k]
    # Thin: back below half height a little way either side of the peak (a ball's edge or a lit rail is wide).
    far = int(round(thin_mm / ds))
    lo, hi = np.clip(k - far, 0, len(o) - 1), np.clip(k + far, 0, len(o) - 1)
    thin = (p[rows, lo] < 0.5 * peak) & (p[rows, hi] < 0.5 * peak) & (k - far >= 0) & (k + far < len(o))
    ok = inside.all(axis=1) & thin & (peak > np.maximum(8.0, 5.0 * mad))
    # Sub-sample centre: the centroid of the peak's upper half.
    win = np.clip(k[:, None] + np.arange(-far, far + 1)[None, :], 0, len(o) - 1)
    vals = p[rows[:, None], win]
    wgt = np.clip(vals - 0.5 * peak[:, None], 0, None)
    centre = (wgt * o[win]).sum(axis=1) / np.maximum(wgt.sum(axis=1), 1e-9)
    return s[ok], centre[ok]


def find_line_junctions(image: np.ndarray, camera: CameraModel, table: TableSpec,
                        min_samples: int = 4) -> list[MarkingObservation]:
    """The junctions of :func:`line_junctions` that show (module docstring), as point observations."""
    junctions = line_junctions(table)
    if not junctions:
        return []
    light = _lightness(image)
    found: list[MarkingObservation] = []
    for name, x, arms in junctions:
        rows, rhs = [], []
        for arm in arms:
            s, off = _arm_offsets(light, camera, arm)
            if len(s) < min_samples:
                continue
            keep = np.ones(len(s), bool)
            for _ in range(2):  # a straight fit along the arm, twice, dropping what is off it (a ball's edge)
                coef = np.polyfit(s[keep], off[keep], 1)
                r = off - np.polyval(coef, s)
                keep = np.abs(r) < max(3.0 * 1.4826 * float(np.median(np.abs(r[keep]))), 0.6)
            if keep.sum() < min_samples:
                continue
            coef = np.polyfit(s[keep], off[keep], 1)
            rows.append(arm.normal(np.array(0.0)))
            rhs.append(float(coef[1]))  # the offset at the junction
        if len(rows) < 2:
            continue
        a = np.array(rows)
        if np.linalg.svd(a, compute_uv=False)[-1] < 0.5:  # all arms along one direction: half the answer
            continue
        delta, *_ = np.linalg.lstsq(a, np.array(rhs), rcond=None)
        px = camera.table_to_image(np.asarray(x) + delta, 0.0)
        found.append(MarkingObservation(name, px, np.asarray(x, dtype=float), 0.0))
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
