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

from calibration.camera import CameraModel


@dataclass(frozen=True)
class LensPrior:
    name: str
    hfov_deg: float
    k1: float = 0.0
    k2: float = 0.0
    focal_sigma: float = 0.03  # relative uncertainty of the focal length from the field of view
    k1_sigma: float = 0.05  # how far k1 and k2 may stray from the prior (a Gaussian prior in the fits)
    k2_sigma: float = 0.03

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
    "fisheye": LensPrior("fisheye", 77.0, -0.22, 0.03, focal_sigma=0.2, k1_sigma=0.2, k2_sigma=0.1),
    # Any camera (a phone, a broadcast camera): the pose fit finds the focal length; the distortion stays mild
    # unless the noses' curvature insists.
    "unknown": LensPrior("unknown", 60.0, 0.0, focal_sigma=0.6, k1_sigma=0.05, k2_sigma=0.01),
}


def lens_prior(name: str | None) -> LensPrior:
    if name is None:
        return LENSES["unknown"]
    try:
        return LENSES[name]
    except KeyError:
        raise ValueError(f"unknown lens {name!r} (known: {', '.join(sorted(LENSES))})") from None


def _intrinsic_model(image_size: tuple[int, int], k: np.ndarray, dist: Sequence[float]) -> CameraModel:
    return CameraModel(image_size, k, np.asarray(dist, dtype=float), np.zeros(3), np.array([0.0, 0.0, 1000.0]))


def undistort_points(image_size: tuple[int, int], k: np.ndarray, dist: Sequence[float], px: np.ndarray) -> np.ndarray:
    """Distorted pixels (n, 2) to ideal (undistorted) pixels of the same camera matrix."""
    n = _intrinsic_model(image_size, k, dist).undistort(px)
    return n @ k[:2, :2].T + k[:2, 2]


def distort_points(image_size: tuple[int, int], k: np.ndarray, dist: Sequence[float], ideal: np.ndarray) -> np.ndarray:
    kinv = np.linalg.inv(k)
    p = np.concatenate([ideal, np.ones((len(ideal), 1))], axis=1) @ kinv.T
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
