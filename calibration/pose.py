"""The camera's pose over the table from the cushion noses, refined jointly with the lens; markings as a check.

1. Start: the corners (intersections of the plumb-line-straightened noses) and the known play area give the pose by
   ``cv2.solvePnP`` (IPPE for a plane); a tilted view also gives the focal length from the homography (the two
   orthogonality constraints of a rectangle's axes, principal point at the image centre).
2. Refine: every edge point of a cushion must map onto that cushion's line in the table (x = 0, x = W, y = 0,
   y = L at the nose height). A Levenberg-Marquardt fit over the pose, the focal length (held by the lens prior with its
   uncertainty) and k1, k2 (in pixel terms, so a focal change keeps the curvature the noses showed) minimises those
   distances in pixels, with Tukey weights against a person's arm over a cushion; the chalk markings (spots, the
   points where chalk lines meet: table points on the cloth, ``calibration.markings``) join the fit where they are
   found. The pixel aspect is fitted too, held near square. An untold lens seen nearly straight down leaves the
   focal length and the height in a long valley that only the markings (37 mm below the noses) close: the fit
   then starts from the best of a scan over the focal length.
3. Quality: the RMS edge residual in pixels (``reprojection_px``), and the residual of the found markings in mm
   (``markings_mm``, with how many were found).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import cv2
import numpy as np

from calibration.camera import CameraModel
from rules.tables import TableSpec


ASPECT_SIGMA = 0.01  # prior on log(fy / fx): square pixels, give or take a scaled sensor mode's 0.4 %


def nose_height_mm(table: TableSpec) -> float:
    """The cushion nose's height above the cloth: 37 mm on a carom table, else 63.5 % of the ball's diameter (the
    usual rule for pocket tables)."""
    if table.name.startswith("carom"):
        return 37.0
    return round(0.635 * table.ball_diameter, 1)


def table_corners(table: TableSpec, z: float = 0.0) -> np.ndarray:
    """The four play-area corners in table order (bottom-left, bottom-right, top-right, top-left), (4, 3)."""
    w, l = table.width, table.length
    return np.array([[0, 0, z], [w, 0, z], [w, l, z], [0, l, z]], dtype=np.float64)


def focal_from_rectangle(ideal_corners: np.ndarray, table: TableSpec, principal: Sequence[float]) -> float | None:
    """The focal length (px) that makes the imaged rectangle's axes orthogonal and its sides W x L; None when the
    view is too square-on to tell (the constraints vanish for a camera looking straight down)."""
    obj = table_corners(table)[:, :2]
    img = np.asarray(ideal_corners, dtype=np.float64) - np.asarray(principal, dtype=np.float64)
    h, _ = cv2.findHomography(obj, img)
    if h is None:
        return None
    h1, h2 = h[:, 0], h[:, 1]
    a = np.array([h1[0] * h2[0] + h1[1] * h2[1], h1[0] ** 2 + h1[1] ** 2 - h2[0] ** 2 - h2[1] ** 2])
    b = np.array([-h1[2] * h2[2], -(h1[2] ** 2 - h2[2] ** 2)])
    scale = np.linalg.norm(h[:2, :2])
    if np.linalg.norm(b) * scale ** 2 < 1e-9 * np.linalg.norm(a) or a @ a == 0:
        return None
    w = (a @ b) / (a @ a)  # 1 / f^2
    if not w > 0:
        return None
    f = float(1.0 / np.sqrt(w))
    return f if np.isfinite(f) else None


def initial_pose(corners_px: np.ndarray, table: TableSpec, k: np.ndarray, dist: np.ndarray,
                 z: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """The pose from the four corners (SQPnP, or IPPE for the plane when that fails; OpenCV 5's IPPE can return NaN
    for a near square-on view), then an iterative polish when that does better. ``z``: the corners' height above
    the cloth (the nose height for nose corners)."""
    obj = table_corners(table, z)
    img = np.asarray(corners_px, dtype=np.float64).reshape(-1, 1, 2)
    rvec = tvec = np.full((3, 1), np.nan)
    for flag in (cv2.SOLVEPNP_SQPNP, cv2.SOLVEPNP_IPPE):
        try:
            ok, rvec, tvec = cv2.solvePnP(obj, img, k, dist, flags=flag)
        except cv2.error:  # corners that no camera sees this way (a failed outline)
            ok = False
        if ok and np.isfinite(rvec).all() and np.isfinite(tvec).all():
            break
        rvec = tvec = np.full((3, 1), np.nan)
    if not (np.isfinite(rvec).all() and np.isfinite(tvec).all()):
        raise ValueError("the four corners do not give a camera pose (are they in table order?)")
    try:
        ok2, r2, t2 = cv2.solvePnP(obj, img, k, dist, rvec.copy(), tvec.copy(), useExtrinsicGuess=True,
                                   flags=cv2.SOLVEPNP_ITERATIVE)
    except cv2.error:
        ok2, r2, t2 = False, rvec, tvec

    def err(r: np.ndarray, t: np.ndarray) -> float:
        back, _ = cv2.projectPoints(obj, r, t, k, dist)
        return float(np.abs(back.reshape(-1, 2) - img.reshape(-1, 2)).max())

    if ok2 and np.isfinite(r2).all() and np.isfinite(t2).all() and err(r2, t2) < err(rvec, tvec):
        rvec, tvec = r2, t2
    return rvec.ravel(), tvec.ravel()


@dataclass(frozen=True)
class MarkingObservation:
    """A marking seen in the image: its pixel position and where it is on the table (z above the cloth)."""

    name: str
    px: np.ndarray  # (2,)
    table_xy: np.ndarray  # (2,)
    z: float = 0.0


@dataclass(frozen=True, eq=False)
class PoseFit:
    camera: CameraModel
    rms_px: float  # edge points' distance to their cushion lines, RMS over inliers
    inlier_fraction: float
    marking_residuals_mm: np.ndarray = field(default_factory=lambda: np.zeros(0))


def _camera(base: CameraModel, p: np.ndarray, f0: float, k_ref: tuple[float, float]) -> CameraModel:
    """Parameters: pose (6), log focal change, k1, k2, k3 (at the starting focal length, so a focal change keeps the
    distortion in pixels), principal point offset (2, px), log pixel aspect (fy / fx: a sensor mode scaled to
    another aspect, 1456x1088 delivered as 640x480, has pixels 0.4 % taller than wide)."""
    q = float(np.exp(p[6]))
    a = float(np.exp(0.5 * p[12]))
    k = base.camera_matrix.copy()
    k[0, 0] = f0 * q / a
    k[1, 1] = f0 * q * a
    k[0, 2] += p[10]
    k[1, 2] += p[11]
    dist = np.array([p[7] * q ** 2, p[8] * q ** 4, 0.0, 0.0, p[9] * q ** 6])
    return CameraModel(base.image_size, k, dist, p[:3], p[3:6])


def refine_pose(camera: CameraModel, table: TableSpec, edge_points: Sequence[np.ndarray], focal_prior: float,
                focal_sigma: float, markings: Sequence[MarkingObservation] = (), fit_focal: bool = True,
                fit_distortion: bool = True, sigma_px: float = 0.2, iters: int = 25,
                k_prior: tuple[float, float, float, float] | None = None,
                edge_z: float | Sequence[float] = 0.0, edge_offset: float | Sequence[float] = 0.0,
                fit_wide_lens: bool = False) -> PoseFit:
    """Joint LM fit of pose, focal length and radial distortion to the cushion edge points (see module docstring).
    ``k_prior`` (k1, k2, sigma1, sigma2) holds the distortion near a lens's values; ``edge_z`` is the height of the
    edge points above the cloth (the nose height), one for all or one per cushion; ``edge_offset`` how far outside
    the cushion line they are (mm, per cushion: the outer edge of a cushion top seen from behind).
    ``fit_wide_lens`` frees k3 and the principal point too (held by priors), for a fisheye."""
    fx0, fy0 = float(camera.camera_matrix[0, 0]), float(camera.camera_matrix[1, 1])
    f0 = float(np.sqrt(fx0 * fy0))
    k1, k2 = float(camera.dist_coeffs[0]), float(camera.dist_coeffs[1])
    k3 = float(camera.dist_coeffs[4])
    p = np.concatenate([camera.rvec, camera.tvec, [0.0, k1, k2, k3, 0.0, 0.0, float(np.log(fy0 / fx0))]])
    free = np.array([True] * 6 + [fit_focal, fit_distortion, fit_distortion] + [fit_wide_lens] * 3 + [fit_focal])
    pp_sigma = 0.02 * max(camera.image_size)
    pts = [np.asarray(e, dtype=np.float64) for e in edge_points]
    allpts = np.concatenate(pts)
    side = np.concatenate([np.full(len(e), i) for i, e in enumerate(pts)])
    off = np.broadcast_to(np.asarray(edge_offset, dtype=float), (len(pts),))
    target = (np.array([0.0, table.width, table.length, 0.0]) + np.array([-1.0, 1.0, 1.0, -1.0]) * off)[side]
    axis = np.array([1, 0, 1, 0])[side]  # bottom/top constrain y, right/left constrain x
    mk_px = np.array([m.px for m in markings]).reshape(-1, 2)
    mk_xy = np.array([m.table_xy for m in markings]).reshape(-1, 2)
    mk_z = np.array([m.z for m in markings])
    weights = np.ones(len(allpts))
    ez = np.broadcast_to(np.asarray(edge_z, dtype=float), (len(pts),))
    edge_z = ez[side]
    # Pixels per mm across each cushion line where each point is, from the start camera's own projection (as
    # refine_fisheye does): f / depth at a cushion's middle counts a steeply seen far cushion at several times the
    # pixels its millimetres really cover there (the phone photo's: ~4x), over-weighting it and bending k2.
    xy0 = camera.image_to_table(allpts, edge_z)
    unit = np.zeros_like(xy0)
    unit[np.arange(len(xy0)), axis] = 1.0
    scale_ppm = np.linalg.norm(camera.table_to_image(xy0 + unit, edge_z) - camera.table_to_image(xy0, edge_z), axis=-1)

    def residuals(pv: np.ndarray) -> np.ndarray:
        cam = _camera(camera, pv, f0, (k1, k2))
        xy = cam.image_to_table(allpts, edge_z)
        r = (xy[np.arange(len(xy)), axis] - target) * scale_ppm / sigma_px * np.sqrt(weights)
        out = [r]
        if len(mk_px):
            mxy = cam.image_to_table(mk_px, mk_z)
            # A chalk spot is a small blob: its centroid is good to about half a pixel, not a fifth.
            out.append(((mxy - mk_xy) * camera.pixels_per_mm(mk_xy)[:, None] / max(sigma_px, 0.5)).ravel())
        prior_f = (f0 * np.exp(pv[6]) - focal_prior) / (focal_sigma * focal_prior)
        out.append(np.array([prior_f]))
        if k_prior is not None:
            out.append(np.array([(pv[7] - k_prior[0]) / k_prior[2], (pv[8] - k_prior[1]) / k_prior[3]]))
        if fit_wide_lens:
            out.append(np.array([pv[9] / 0.05, pv[10] / pp_sigma, pv[11] / pp_sigma]))
        if fit_focal:
            out.append(np.array([pv[12] / ASPECT_SIGMA]))  # square pixels unless the noses insist
        return np.concatenate(out)

    idx = np.flatnonzero(free)

    def reweight(x: np.ndarray) -> None:
        nonlocal weights
        cam = _camera(camera, x, f0, (k1, k2))
        xy = cam.image_to_table(allpts, edge_z)
        r = (xy[np.arange(len(xy)), axis] - target) * scale_ppm
        s = max(1.4826 * np.median(np.abs(r)), 0.05)
        u = r / (4.685 * s)
        weights = np.where(np.abs(u) < 1, (1 - u * u) ** 2, 0.0) + 1e-9

    def lm(x: np.ndarray, iters: int, reweight_at: tuple[int, ...]) -> tuple[np.ndarray, float]:
        lam = 1e-3
        for it in range(iters):
            if it in reweight_at:
                reweight(x)
            r0 = residuals(x)
            jac = np.empty((len(r0), len(idx)))
            for jj, j in enumerate(idx):
                h = 1e-6 * max(1.0, abs(x[j])) if j >= 3 else 1e-7
                if j >= 6:
                    h = 1e-6
                dx = np.zeros_like(x)
                dx[j] = h
                jac[:, jj] = (residuals(x + dx) - r0) / h
            a = jac.T @ jac
            g = jac.T @ r0
            improved = False
            for _ in range(6):
                step = np.linalg.solve(a + lam * np.diag(np.diag(a) + 1e-9), -g)
                xn = x.copy()
                xn[idx] += step
                if np.sum(residuals(xn) ** 2) < np.sum(r0 ** 2):
                    x, lam, improved = xn, lam * 0.3, True
                    break
                lam *= 10
            if not improved or np.abs(step).max() < 1e-10:
                if it > 12 or not reweight_at:
                    break
        return x, float(np.sum(residuals(x) ** 2))

    x = p.copy()
    if fit_focal and focal_sigma >= 0.2 and len(mk_px) >= 2:
        # An untold lens seen nearly straight down: the focal length and the height trade along a long valley
        # (the noses alone cannot tell them apart) that only the markings, on the cloth 37 mm below the noses,
        # close; a local fit crawls along it. Start from the best of a scan over the focal length, each moving
        # the camera along its axis so the table keeps its size in the picture.
        centre = np.array([table.width / 2, table.length / 2, 0.0])
        best = (np.inf, x)
        for q in np.exp(np.linspace(np.log(0.55), np.log(1.6), 12)):
            xc = x.copy()
            xc[6] += np.log(q)
            pc = _camera(camera, x, f0, (k1, k2)).to_camera(centre)
            xc[3:6] = x[3:6] + (q - 1.0) * pc
            xc, cost = lm(xc, 6, ())
            if cost < best[0]:
                best = (cost, xc)
        x = best[1]
    x, _ = lm(x, iters, (3, 7, 12))
    cam = _camera(camera, x, f0, (k1, k2))
    xy = cam.image_to_table(allpts, edge_z)
    r = (xy[np.arange(len(xy)), axis] - target) * scale_ppm
    inl = weights > 0.01
    mres = np.zeros(0)
    if len(mk_px):
        mres = np.linalg.norm(cam.image_to_table(mk_px, mk_z) - mk_xy, axis=1)
    return PoseFit(cam, float(np.sqrt(np.mean(r[inl] ** 2))) if inl.any() else float("nan"), float(inl.mean()), mres)
