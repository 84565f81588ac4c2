"""Lens distortion without a chessboard (plumb-line), lens priors, and the chessboard / ChArUco path of OpenCV.

Plumb-line: the four cushion noses are straight lines in the world, so with the right radial distortion (k1, k2
about the image centre) their edge points, undistorted, lie on four straight lines. The fit minimises the
orthogonal distances (in pixels) of the points to their lines, with robust weights (a person's arm over a cushion,
a pocket's jaw). The curvature of a line only fixes the distortion in pixel terms, k1 / f^2 and k2 / f^4; the focal
length comes from the lens prior or the pose fit, which keep those pixel terms.

Lens priors: the horizontal field of view of the usual Raspberry Pi modules at full sensor width (binned modes keep
it), and a typical distortion to start from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import cv2
import numpy as np

from calibration.camera import LENS_MODELS, CameraModel
from calibration.pose import MarkingObservation, PoseFit
from rules.tables import TableSpec


@dataclass(frozen=True)
class LensPrior:
    name: str
    hfov_deg: float
    k1: float = 0.0
    k2: float = 0.0
    focal_sigma: float = 0.03  # relative uncertainty of the focal length from the field of view
    k1_sigma: float = 0.05  # how far k1 and k2 may stray from the prior (a Gaussian prior in the fits)
    k2_sigma: float = 0.03
    model: str = "pinhole"  # the lens model the calibration ends with ("fisheye": the equidistant model)

    def camera_matrix(self, image_size: tuple[int, int]) -> np.ndarray:
        w, h = image_size
        f = (w / 2.0) / math.tan(math.radians(self.hfov_deg) / 2.0)
        return np.array([[f, 0.0, (w - 1) / 2.0], [0.0, f, (h - 1) / 2.0], [0.0, 0.0, 1.0]])


LENSES = {
    "cm3": LensPrior("cm3", 66.0, -0.02),  # Camera Module 3, standard lens
    "cm3_wide": LensPrior("cm3_wide", 102.0, -0.30, 0.08, k1_sigma=0.1, k2_sigma=0.05),  # Camera Module 3 Wide
    "v2": LensPrior("v2", 62.2, 0.0),  # Camera Module 2
    "v1": LensPrior("v1", 53.5, 0.0),
    # A Pi camera behind a wide M12 lens, barrel-distorted as a fisheye is within the table (PoolJK's snooker rig).
    # The pinhole fit starts it; the equidistant model finishes it (calibration.camera: a polynomial in tan(theta)
    # bends the noses into the corner pockets, 4-24 px off the marked corners on PoolJK's stills).
    "fisheye": LensPrior("fisheye", 77.0, -0.22, 0.03, focal_sigma=0.2, k1_sigma=0.2, k2_sigma=0.1,
                         model="fisheye"),
    # Any camera (a phone, a broadcast camera): the pose fit finds the focal length; the distortion stays mild
    # unless the noses' curvature insists (then calibration.auto loosens it: see UNTOLD_WIDE).
    "unknown": LensPrior("unknown", 60.0, 0.0, focal_sigma=0.6, k1_sigma=0.05, k2_sigma=0.01),
}


# An untold lens whose noses the plumb-line fit finds strongly barrel-bent (k1 below UNTOLD_BARREL_K1 at the
# 60 degree start's focal length: the wide Camera Module 3 gives -0.8 to -1.3 there, the standard one, phones and
# broadcast cameras -0.07 to +0.06) is a wide lens: its k1 (about -0.3 at its own focal length) may then stray
# +-0.2 and k2 +-0.05 from none (held at +-0.05, the pose fit pulled it halfway to zero, off the targets).
UNTOLD_BARREL_K1 = -0.3
UNTOLD_WIDE = LensPrior("unknown", 60.0, 0.0, focal_sigma=0.6, k1_sigma=0.2, k2_sigma=0.05)


def lens_prior(name: str | None) -> LensPrior:
    if name is None:
        return LENSES["unknown"]
    try:
        return LENSES[name]
    except KeyError:
        raise ValueError(f"unknown lens {name!r} (known: {', '.join(sorted(LENSES))})") from None


def lens_model_of(dist: Sequence[float]) -> str:
    """The lens model whose coefficients these are: five (k1, k2, p1, p2, k3) pinhole, four (k1..k4) fisheye."""
    n = int(np.asarray(dist).size)
    for name, count in LENS_MODELS.items():
        if n == count:
            return name
    raise ValueError(f"{n} distortion coefficients: neither the pinhole model's 5 nor the fisheye model's 4")


def _intrinsic_model(image_size: tuple[int, int], k: np.ndarray, dist: Sequence[float],
                     tvec: Sequence[float] = (0.0, 0.0, 1000.0)) -> CameraModel:
    d = np.asarray(dist, dtype=float).ravel()
    return CameraModel(image_size, k, d, np.zeros(3), np.asarray(tvec, dtype=float), lens_model_of(d))


def undistort_points(image_size: tuple[int, int], k: np.ndarray, dist: Sequence[float], px: np.ndarray) -> np.ndarray:
    """Distorted pixels (n, 2) to ideal (undistorted) pixels of the same camera matrix."""
    n = _intrinsic_model(image_size, k, dist).undistort(px)
    return n @ k[:2, :2].T + k[:2, 2]


def distort_points(image_size: tuple[int, int], k: np.ndarray, dist: Sequence[float], ideal: np.ndarray) -> np.ndarray:
    """Ideal (undistorted) pixels (n, 2) of the camera matrix ``k`` to distorted ones, through either lens model."""
    kinv = np.linalg.inv(k)
    p = np.concatenate([ideal, np.ones((len(ideal), 1))], axis=1) @ kinv.T
    if lens_model_of(dist) == "fisheye":
        return _intrinsic_model(image_size, k, dist, (0.0, 0.0, 0.0)).project(p)
    px, _ = cv2.projectPoints(p.reshape(-1, 1, 3), np.zeros(3), np.zeros(3), k, np.asarray(dist, dtype=float))
    return px.reshape(-1, 2)


def _line_residuals(pts: np.ndarray) -> np.ndarray:
    c = pts.mean(axis=0)
    d = pts - c
    _, evecs = np.linalg.eigh(d.T @ d)
    return d @ evecs[:, 0]


@dataclass(frozen=True)
class PlumbLineFit:
    dist_coeffs: np.ndarray  # (5,) k1, k2, 0, 0, 0 for ``camera_matrix``
    camera_matrix: np.ndarray
    rms_px: float  # straightness residual after the fit
    rms_before_px: float  # with no distortion
    inliers: tuple[np.ndarray, ...]


def plumb_line(edge_points: Sequence[np.ndarray], image_size: tuple[int, int], k: np.ndarray,
               fit_k2: bool = True, k_init: tuple[float, float] = (0.0, 0.0), iters: int = 12,
               k_sigma: tuple[float, float] | None = None, sigma_px: float = 0.3) -> PlumbLineFit:
    """Radial distortion (k1, k2) that makes each set of edge points straight (Levenberg-Marquardt, Tukey weights).
    With ``k_sigma`` the coefficients are held near ``k_init`` by a Gaussian prior of those widths."""
    pts = [np.asarray(p, dtype=np.float64) for p in edge_points]
    weights = [np.ones(len(p)) for p in pts]

    def residuals(params: np.ndarray) -> np.ndarray:
        dist = [params[0], params[1] if fit_k2 else 0.0, 0.0, 0.0, 0.0]
        out = []
        for p, w in zip(pts, weights):
            u = undistort_points(image_size, k, dist, p)
            c = (u * w[:, None]).sum(0) / w.sum()
            d = u - c
            _, evecs = np.linalg.eigh((d * w[:, None]).T @ d)
            out.append(d @ evecs[:, 0] * np.sqrt(w))
        if k_sigma is not None:
            prior = [(params[0] - k_init[0]) / k_sigma[0] * sigma_px, (params[1] - k_init[1]) / k_sigma[1] * sigma_px]
            out.append(np.array(prior if fit_k2 else prior[:1]))
        return np.concatenate(out)

    x = np.array(k_init[:2] if fit_k2 else k_init[:1], dtype=np.float64)
    if not fit_k2:
        x = np.array([x[0], 0.0])[:1]

    def full(xv: np.ndarray) -> np.ndarray:
        return residuals(np.array([xv[0], xv[1] if fit_k2 else 0.0]))

    rms0 = float(np.sqrt(np.mean(full(np.zeros_like(x)) ** 2)))
    if not np.sqrt(np.mean(full(x) ** 2)) <= rms0:  # a start past the lens model's fold: start from no distortion
        x = np.zeros_like(x)
    lam = 1e-3
    for it in range(iters):
        if it in (2, 5, 8):  # reweight: drop points far off their line
            dist = [x[0], x[1] if fit_k2 else 0.0, 0, 0, 0]
            for i, p in enumerate(pts):
                r = _line_residuals(undistort_points(image_size, k, dist, p))
                s = max(1.4826 * np.median(np.abs(r)), 0.05)
                u = r / (4.685 * s)
                weights[i] = np.where(np.abs(u) < 1, (1 - u * u) ** 2, 0.0) + 1e-9
        r0 = full(x)
        jac = np.empty((len(r0), len(x)))
        for j in range(len(x)):
            h = 1e-5 if j == 0 else 1e-5
            dx = np.zeros_like(x)
            dx[j] = h
            jac[:, j] = (full(x + dx) - r0) / h
        a = jac.T @ jac
        g = jac.T @ r0
        step = np.linalg.solve(a + lam * np.diag(np.diag(a) + 1e-12), -g)
        if np.sum(full(x + step) ** 2) < np.sum(r0 ** 2):
            x = x + step
            lam *= 0.3
        else:
            lam *= 10
        if np.abs(step).max() < 1e-7:
            break
    dist = np.array([x[0], x[1] if fit_k2 else 0.0, 0.0, 0.0, 0.0])
    r = full(x)
    return PlumbLineFit(dist, k.copy(), float(np.sqrt(np.mean(r ** 2))), rms0,
                        tuple(w > 0.01 for w in weights))


# --- chessboard / ChArUco (OpenCV's own calibration) ---------------------------------------------------------------

@dataclass(frozen=True)
class IntrinsicCalibration:
    image_size: tuple[int, int]
    camera_matrix: np.ndarray
    dist_coeffs: np.ndarray
    rms_px: float
    views_used: int


def calibrate_chessboard(images: Sequence[np.ndarray], pattern: tuple[int, int], square_mm: float = 25.0
                         ) -> IntrinsicCalibration:
    """Intrinsics from views of a chessboard with ``pattern`` inner corners (cols, rows): cv2.findChessboardCorners,
    cornerSubPix, cv2.calibrateCamera. Raises ValueError (one line) when fewer than three views show the board."""
    obj = np.zeros((pattern[0] * pattern[1], 3), np.float32)
    obj[:, :2] = np.mgrid[0:pattern[0], 0:pattern[1]].T.reshape(-1, 2) * square_mm
    obj_pts, img_pts, size = [], [], None
    crit = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 50, 1e-3)
    for im in images:
        gray = im if im.ndim == 2 else cv2.cvtColor(im, cv2.COLOR_BGR2GRAY)
        size = (gray.shape[1], gray.shape[0])
        ok, corners = cv2.findChessboardCorners(gray, pattern, cv2.CALIB_CB_ADAPTIVE_THRESH | cv2.CALIB_CB_NORMALIZE_IMAGE)
        if not ok:
            continue
        corners = cv2.cornerSubPix(gray, corners, (5, 5), (-1, -1), crit)
        obj_pts.append(obj)
        img_pts.append(corners)
    if len(obj_pts) < 3 or size is None:
        raise ValueError(f"chessboard {pattern[0]}x{pattern[1]} found in {len(obj_pts)} of {len(images)} views "
                         "(need 3 or more)")
    rms, k, dist, _, _ = cv2.calibrateCamera(obj_pts, img_pts, size, None, None)
    return IntrinsicCalibration(size, k, dist.ravel()[:5], float(rms), len(obj_pts))


def calibrate_charuco(images: Sequence[np.ndarray], squares: tuple[int, int], square_mm: float, marker_mm: float,
                      dictionary: int = cv2.aruco.DICT_4X4_50) -> IntrinsicCalibration:
    """Intrinsics from views of a ChArUco board (OpenCV's CharucoDetector and calibrateCamera)."""
    board = cv2.aruco.CharucoBoard(squares, square_mm, marker_mm, cv2.aruco.getPredefinedDictionary(dictionary))
    det = cv2.aruco.CharucoDetector(board)
    obj_pts, img_pts, size = [], [], None
    for im in images:
        gray = im if im.ndim == 2 else cv2.cvtColor(im, cv2.COLOR_BGR2GRAY)
        size = (gray.shape[1], gray.shape[0])
        corners, ids, _, _ = det.detectBoard(gray)
        if ids is None or len(ids) < 6:
            continue
        o, i = board.matchImagePoints(corners, ids)
        obj_pts.append(o)
        img_pts.append(i)
    if len(obj_pts) < 3 or size is None:
        raise ValueError(f"ChArUco board found in {len(obj_pts)} of {len(images)} views (need 3 or more)")
    rms, k, dist, _, _ = cv2.calibrateCamera(obj_pts, img_pts, size, None, None)
    return IntrinsicCalibration(size, k, dist.ravel()[:5], float(rms), len(obj_pts))


# --- the equidistant (fisheye) model: from the pinhole fit, and its own pose fit --------------------------------------

def pinhole_to_fisheye(camera: CameraModel, max_theta: float) -> CameraModel:
    """The equidistant model that bends rays as ``camera``'s radial polynomial does, out to ``max_theta`` (rad) off
    the axis: k1..k4 by linear least squares on theta_d / theta - 1 = sum k_i theta^(2i). Where the pinhole
    polynomial folds back (past its maximum radius), it is not followed."""
    if camera.lens_model == "fisheye":
        return camera
    k1, k2, _, _, k3 = camera.dist_coeffs
    theta = np.linspace(0.02, max(0.1, float(max_theta)), 200)
    t = np.tan(theta)
    r_d = t * (1 + t * t * (k1 + t * t * (k2 + t * t * k3)))
    ok = np.concatenate([[True], np.diff(r_d) > 0])
    ok &= np.cumprod(ok).astype(bool)  # up to the first fold
    a = np.stack([theta ** (2 * i + 2) for i in range(4)], axis=-1)[ok]
    kb = np.linalg.lstsq(a, (r_d / theta - 1)[ok], rcond=None)[0]
    return CameraModel(camera.image_size, camera.camera_matrix.copy(), kb, camera.rvec.copy(), camera.tvec.copy(),
                       "fisheye")


def _lm_step(residuals, x: np.ndarray, lam: float) -> tuple[np.ndarray, float, bool]:
    """One Levenberg-Marquardt step with a forward-difference Jacobian; whether it moved (meaningfully)."""
    r0 = residuals(x)
    jac = np.empty((len(r0), len(x)))
    for j in range(len(x)):
        h = 1e-7 if j < 3 else (1e-6 * max(1.0, abs(x[j])) if j < 6 else 1e-6)
        dx = np.zeros_like(x)
        dx[j] = h
        jac[:, j] = (residuals(x + dx) - r0) / h
    a = jac.T @ jac
    g = jac.T @ r0
    cost = float(np.sum(r0 ** 2))
    for _ in range(8):
        step = np.linalg.solve(a + lam * np.diag(np.diag(a) + 1e-9), -g)
        new = float(np.sum(residuals(x + step) ** 2))
        if new < cost:
            return x + step, max(lam * 0.3, 1e-9), cost - new > 1e-9 * cost and np.abs(step).max() > 1e-10
        lam *= 10
    return x, lam, False


def refine_fisheye(camera: CameraModel, table: TableSpec, edge_points: Sequence[np.ndarray], focal_prior: float,
                   focal_sigma: float, edge_z: Sequence[float], edge_offset: Sequence[float] = (0.0,) * 4,
                   markings: Sequence[MarkingObservation] = (), sigma_px: float = 0.2, k_sigma: float = 0.5,
                   iters: int = 30, fit_lens: bool = True) -> PoseFit:
    """The pose, focal length, principal point and k1..k4 of an equidistant camera from the cushion edge points
    (each must map onto its cushion's line at its height) and the markings found, as ``calibration.pose.refine_pose``
    does for the pinhole model: Levenberg-Marquardt with Tukey weights, the focal length held by the lens prior,
    the principal point by 2 % of the picture, k1..k4 loosely near zero (``k_sigma``: an equidistant lens needs
    only small terms, and loose ones would wiggle past the last edge point into the corners). ``fit_lens=False``
    fits the pose alone, the lens as ``camera`` has it (fisheye intrinsics from a chessboard)."""
    if camera.lens_model != "fisheye":
        raise ValueError("refine_fisheye needs a fisheye camera (see pinhole_to_fisheye)")
    f0 = camera.focal
    k0 = camera.camera_matrix
    size = camera.image_size
    pp_sigma = 0.02 * max(size)
    pts = [np.asarray(e, dtype=np.float64) for e in edge_points]
    allpts = np.concatenate(pts)
    side = np.concatenate([np.full(len(e), i) for i, e in enumerate(pts)])
    off = np.broadcast_to(np.asarray(edge_offset, dtype=float), (4,))
    target = (np.array([0.0, table.width, table.length, 0.0]) + np.array([-1.0, 1.0, 1.0, -1.0]) * off)[side]
    axis = np.array([1, 0, 1, 0])[side]
    ez = np.broadcast_to(np.asarray(edge_z, dtype=float), (4,))[side]
    mk_px = np.array([m.px for m in markings]).reshape(-1, 2)
    mk_xy = np.array([m.table_xy for m in markings]).reshape(-1, 2)
    mk_z = np.array([m.z for m in markings])
    # Pixels per mm across each cushion line where each point is, from the start camera: near the picture's edge an
    # equidistant lens squeezes the view radially, so f / depth would count a far cushion's mm as up to 3x too many
    # pixels (over-weighting it, and overstating the reprojection figure).
    xy0 = camera.image_to_table(allpts, ez)
    step = np.zeros_like(xy0)
    step[np.arange(len(xy0)), axis] = 1.0
    scale = np.linalg.norm(camera.table_to_image(xy0 + step, ez) - camera.table_to_image(xy0, ez), axis=-1)
    mk_scale = camera.pixels_per_mm(mk_xy) if len(mk_px) else np.zeros(0)

    def cam_of(x: np.ndarray) -> CameraModel:
        k = k0.copy()
        k[0, 0] = k[1, 1] = f0 * np.exp(x[6])
        k[0, 2] += x[11]
        k[1, 2] += x[12]
        return CameraModel(size, k, x[7:11], x[:3], x[3:6], "fisheye")

    def edge_res(cam: CameraModel) -> np.ndarray:
        xy = cam.image_to_table(allpts, ez)
        return (xy[np.arange(len(xy)), axis] - target) * scale

    weights = np.ones(len(allpts))

    def residuals(x: np.ndarray) -> np.ndarray:
        cam = cam_of(x)
        out = [edge_res(cam) / sigma_px * np.sqrt(weights)]
        if len(mk_px):
            out.append(((cam.image_to_table(mk_px, mk_z) - mk_xy) * mk_scale[:, None] / max(sigma_px, 0.5)).ravel())
        out.append(np.array([(f0 * np.exp(x[6]) - focal_prior) / (focal_sigma * focal_prior)]))
        out.append(x[7:11] / k_sigma)
        out.append(np.array([x[11], x[12]]) / pp_sigma)
        return np.concatenate(out)

    x = np.concatenate([camera.rvec, camera.tvec, [0.0], camera.dist_coeffs, [0.0, 0.0]])
    # Without ``fit_lens`` the parameters are the pose alone, the lens as given.
    fixed = x[6:].copy()
    n_free = len(x) if fit_lens else 6

    def full(xf: np.ndarray) -> np.ndarray:
        return xf if fit_lens else np.concatenate([xf, fixed])

    def fit_residuals(xf: np.ndarray) -> np.ndarray:
        return residuals(full(xf))

    x = x[:n_free]
    lam = 1e-3
    # Converge on every point first, then reweight (Tukey) and converge again, three times: weights taken far from
    # the solution would drop good points and lock the fit into a wrong valley.
    for phase, budget in enumerate((iters // 2, iters // 6, iters // 6, iters // 6)):
        if phase:
            r = edge_res(cam_of(full(x)))
            s = max(1.4826 * np.median(np.abs(r)), 0.05)
            u = r / (4.685 * s)
            weights = np.where(np.abs(u) < 1, (1 - u * u) ** 2, 0.0) + 1e-9
        for _ in range(budget):
            x, lam, moved = _lm_step(fit_residuals, x, lam)
            if not moved:
                break
    cam = cam_of(full(x))
    r = edge_res(cam)
    inl = weights > 0.01
    mres = np.linalg.norm(cam.image_to_table(mk_px, mk_z) - mk_xy, axis=1) if len(mk_px) else np.zeros(0)
    return PoseFit(cam, float(np.sqrt(np.mean(r[inl] ** 2))) if inl.any() else float("nan"), float(inl.mean()), mres)
