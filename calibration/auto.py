"""Automatic calibration from one view: find the table, straighten the noses, fit the pose, check the markings.

``calibrate_view(image, table, lens=...)`` returns a :class:`calibration.file.Calibration` (write it with
``write_calibration``) and what was measured on the way (for the overlay). ``calibrate_from_corners`` is the manual
path: four corners clicked by hand, the lens from the prior.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from calibration.camera import CameraModel
from calibration.distortion import (UNTOLD_BARREL_K1, UNTOLD_WIDE, LensPrior, distort_points, lens_model_of,
                                    lens_prior, pinhole_to_fisheye, plumb_line, refine_fisheye, undistort_points)
from calibration.file import Calibration
from calibration.markings import diamond_residuals, find_diamonds, find_markings
from calibration.pose import (MarkingObservation, PoseFit, focal_from_rectangle, initial_pose, nose_height_mm,
                             refine_pose, table_corners)
from calibration.table_finder import (TableNotFound, TableOutline, find_outline, fit_side_lines, hidden_nose,
                                      intersect, noses_along)
from rules.tables import TableSpec


def _side_middle(table: TableSpec, i: int) -> tuple[float, float]:
    return [(table.width / 2, 0.0), (table.width, table.length / 2), (table.width / 2, table.length),
            (0.0, table.length / 2)][i]


CUSHION_TOP_WIDTH_MM = 50.0  # nose to rail across a cushion's top (a typical cushion; only for cushions seen from behind)


@dataclass(frozen=True, eq=False)
class ViewCalibration:
    calibration: Calibration
    outline: TableOutline | None
    fit: PoseFit | None
    markings: tuple[MarkingObservation, ...]
    edge_points: tuple[np.ndarray, ...] = ()  # the nose points the pose was fitted to, per cushion in table order


def _lines_corners(edge_points, size, k, dist) -> np.ndarray:
    ideal = [undistort_points(size, k, dist, e) for e in edge_points]
    lines = [(c, d) for c, d, _ in fit_side_lines(ideal)]
    corners = np.array([intersect(lines[(i - 1) % 4], lines[i]) for i in range(4)])
    return corners


_EDGE_ADVICE = {
    "top": "tilt the camera up or raise it", "bottom": "tilt the camera down or raise it",
    "left": "pan the camera left or raise it", "right": "pan the camera right or raise it",
}


def _check_corners_in_view(corners: np.ndarray, size: tuple[int, int]) -> None:
    """Every cushion-nose corner must be seen: one at or past the picture's edge is extrapolated, not measured."""
    w, h = size
    m = 0.005 * max(w, h)
    names = ("bottom-left", "bottom-right", "top-right", "top-left")
    for name, (x, y) in zip(names, corners):
        gaps = {"left": x - m, "right": w - 1 - m - x, "top": y - m, "bottom": h - 1 - m - y}
        edge = min(gaps, key=gaps.get)  # type: ignore[arg-type]
        if gaps[edge] < 0 or not np.isfinite([x, y]).all():
            raise TableNotFound(f"the table's {name} corner is at the {edge} edge of the picture: "
                                f"{_EDGE_ADVICE[edge]} (the whole cloth must be in view)")


def _plausible(f: float | None, f_prior: float) -> bool:
    return f is not None and 0.3 * f_prior < f < 3.0 * f_prior


def _choose_long_axis(edges, corners_ideal, table: TableSpec, k: np.ndarray, f_prior: float, kinds):
    """The finder takes the longer pair of sides in the picture for the long cushions; under strong perspective
    (a photo from the end of the table) the near short cushion can look the longest. When only the other choice
    gives a plausible focal length for a W x L rectangle, take it (keeping the bottom cushion rule)."""
    f_a = focal_from_rectangle(corners_ideal, table, k[:2, 2])
    if _plausible(f_a, f_prior):
        return edges, corners_ideal, kinds
    rolled = np.roll(corners_ideal, 1, axis=0)
    f_b = focal_from_rectangle(rolled, table, k[:2, 2])
    if not _plausible(f_b, f_prior):
        return edges, corners_ideal, kinds
    e = [edges[3], edges[0], edges[1], edges[2]]
    kn = [kinds[3], kinds[0], kinds[1], kinds[2]]
    # Bottom cushion rule of the finder: along the picture, the bottom cushion at the bottom; across, on the left.
    mid0 = (rolled[0] + rolled[1]) / 2
    mid2 = (rolled[2] + rolled[3]) / 2
    along = mid2 - mid0
    bottom_ok = along[0] > 0 if abs(along[0]) >= abs(along[1]) else along[1] < 0
    if not bottom_ok:
        rolled = np.roll(rolled, 2, axis=0)
        e = [e[2], e[3], e[0], e[1]]
        kn = [kn[2], kn[3], kn[0], kn[1]]
    return tuple(e), rolled, tuple(kn)


JAW_CLEARANCE_BALLS = 1.25  # past a pocket's jaw point the nose is straight again after this many ball diameters


def nose_stretches(table: TableSpec) -> list[list[tuple[float, float]]]:
    """Per cushion (table order), the stretches of its nose line (mm along it from its first corner) that are
    straight: clear of every pocket's curved jaws by ``JAW_CLEARANCE_BALLS`` ball diameters (the jaw points'
    distance from the pocket, on that cushion, plus that much; on a table without pockets that much from each
    corner, 77 mm on a carom table). Measured on the Pi's fisheye still of a full-size snooker table, its noses leave
    their line some 100 mm from a corner pocket and 110 mm from a middle one's centre: these give 127 and 113 mm."""
    corners = np.array([[0.0, 0.0], [table.width, 0.0], [table.width, table.length], [0.0, table.length]])
    clear = JAW_CLEARANCE_BALLS * table.ball_diameter
    out = []
    for i in range(4):
        a, b = corners[i], corners[(i + 1) % 4]
        n = float(np.linalg.norm(b - a))
        d = (b - a) / n
        cuts = [(-1.0, clear), (n - clear, n + 1.0)]  # the corners themselves, pocket or not
        for p in table.pockets:
            drop = np.asarray(p.drop, dtype=float)
            s_drop = float((drop - a) @ d)
            if abs(float((drop - a) @ np.array([-d[1], d[0]]))) > 1.0 or not -1.0 <= s_drop <= n + 1.0:
                continue  # not on this cushion's line
            jaws = [float((np.asarray(j) - a) @ d) for j in p.jaws
                    if abs(float((np.asarray(j) - a) @ np.array([-d[1], d[0]]))) < 1.0]
            reach = max((abs(j - s_drop) for j in jaws), default=0.0) + clear
            cuts.append((s_drop - reach, s_drop + reach))
        cuts.sort()
        spans, at = [], 0.0
        for lo, hi in cuts:
            if lo > at:
                spans.append((at, min(lo, n)))
            at = max(at, hi)
        out.append([(lo, hi) for lo, hi in spans if hi - lo > 2 * table.ball_diameter])
    return out


def _noses_to_the_corners(image: np.ndarray, outline: TableOutline, cam: CameraModel, table: TableSpec, hn: float,
                          kinds: tuple[str, ...], offs: list[float]) -> tuple[np.ndarray, ...] | None:
    """The cushion noses measured along ``cam``'s image of each nose line over its straight stretches
    (``nose_stretches``), a point every 2 px or so; None unless every cushion's nose is found that way (a cushion
    seen from behind, or a finder edge that is not a nose, keeps the finder's points: then all do). The finder
    keeps 7 % of each side's cloth contour off its corners (pockets, jaws, a rounded cloth region); past its last
    points the corner was the fitted lens's extrapolation: on the Pi's 3280 px still 2-3 px astray in a pocket, on
    a broadcast's carom table 3 px inside the dark band, and on the wide Camera Module 3 a focal length 1.3 % short
    (bench_calibration view 34: 0.66 mm ball median, 0.11 with the noses measured to the corners)."""
    if any(k != "nose" for k in kinds) or any(offs):
        return None
    corners = np.array([[0.0, 0.0], [table.width, 0.0], [table.width, table.length], [0.0, table.length]])
    outward = np.array([[0.0, -1.0], [1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    guides, normals = [], []
    for i, spans in enumerate(nose_stretches(table)):
        a, b = corners[i], corners[(i + 1) % 4]
        d = (b - a) / np.linalg.norm(b - a)
        ppm = float(cam.pixels_per_mm(np.asarray(_side_middle(table, i)), hn))
        s = np.concatenate([np.arange(lo, hi, 2.0 / max(ppm, 1e-3)) for lo, hi in spans]) if spans else np.zeros(0)
        xy = a + s[:, None] * d
        p = cam.table_to_image(xy, hn)
        q = cam.table_to_image(xy + outward[i], hn)
        nrm = q - p
        guides.append(p)
        normals.append(nrm / np.maximum(np.linalg.norm(nrm, axis=1, keepdims=True), 1e-12))
    found = noses_along(image, outline, guides, normals)
    if any(f is None or len(f) < 20 for f in found):
        return None
    return tuple(found)  # type: ignore[arg-type]


def calibrate_view(image: np.ndarray, table: TableSpec, lens: str | LensPrior | None = None,
                   intrinsics: tuple[np.ndarray, np.ndarray] | None = None, use_markings: bool = True,
                   outline: TableOutline | None = None) -> ViewCalibration:
    """Calibrate from a view of the table (BGR). ``intrinsics`` (camera matrix, distortion) from a chessboard fixes
    the lens: five coefficients (k1, k2, p1, p2, k3) for the pinhole model, four (k1..k4) for the fisheye one
    (``cv2.fisheye.calibrate``'s, as ``CameraModel`` names them); otherwise the plumb-line fit and the pose fit find
    it, starting from the ``lens`` prior."""
    h, w = image.shape[:2]
    size = (w, h)
    prior = lens if isinstance(lens, LensPrior) else lens_prior(lens)
    if outline is None:
        outline = find_outline(image)
    edges = outline.edge_points
    kinds = outline.edge_kinds
    if intrinsics is not None:
        k = np.asarray(intrinsics[0], dtype=float)
        dist = np.asarray(intrinsics[1], dtype=float).ravel()
        focal_sigma, fit_lens = 1e-4, False
        model = lens_model_of(dist)
    else:
        k = prior.camera_matrix(size)
        pl = plumb_line(edges, size, k, k_init=(prior.k1, prior.k2), k_sigma=(prior.k1_sigma, prior.k2_sigma))
        if prior.name == "unknown" and pl.dist_coeffs[0] < UNTOLD_BARREL_K1:
            prior = UNTOLD_WIDE  # an untold wide lens: its noses' curvature insists
            pl = plumb_line(edges, size, k, k_init=(prior.k1, prior.k2), k_sigma=(prior.k1_sigma, prior.k2_sigma))
        if prior.k1_sigma >= 0.1:
            # A loose prior: the fit can settle on a poor local minimum; start it from a few strengths too.
            for k1 in (prior.k1 - prior.k1_sigma, prior.k1 + prior.k1_sigma / 2):
                alt = plumb_line(edges, size, k, k_init=(k1, prior.k2), k_sigma=(prior.k1_sigma, prior.k2_sigma))
                if alt.rms_px < pl.rms_px:
                    pl = alt
        dist = pl.dist_coeffs
        focal_sigma, fit_lens = prior.focal_sigma, True
        model = "pinhole"  # for now: a fisheye prior's equidistant fit follows the pinhole one, below
    f_prior = float(k[0, 0])
    corners_ideal = _lines_corners(edges, size, k, dist)
    edges, corners_ideal, kinds = _choose_long_axis(edges, corners_ideal, table, k, f_prior, kinds)
    if fit_lens:
        f_h = focal_from_rectangle(corners_ideal, table, k[:2, 2])
        if f_h is not None and prior.focal_sigma > 0.2 and 0.2 * f_prior < f_h < 5 * f_prior:
            # An unknown lens: a tilted view tells the focal length; rescale k1, k2 to keep the curvature.
            q = f_h / f_prior
            k = k.copy()
            k[0, 0] = k[1, 1] = f_h
            dist = dist * np.array([q ** 2, q ** 4, 1, 1, 1])
            corners_ideal = _lines_corners(edges, size, k, dist)
            f_prior = f_h
    corners_px = distort_points(size, k, dist, corners_ideal)
    hn = nose_height_mm(table)
    ez = [hn if kind == "nose" else 0.0 for kind in kinds]
    if model == "fisheye":  # OpenCV's pose solvers know the pinhole model only: they take the ideal corners
        rvec, tvec = initial_pose(corners_ideal, table, k, np.zeros(5), float(np.mean(ez)))
    else:
        rvec, tvec = initial_pose(corners_px, table, k, dist, float(np.mean(ez)))
    cam0 = CameraModel(size, k, dist, rvec, tvec, model)
    kp = (prior.k1, prior.k2, prior.k1_sigma, prior.k2_sigma) if fit_lens else None
    # A fisheye: k3 and the principal point join the fit (not an untold lens, whose distortion is merely free).
    wide = fit_lens and prior.model == "fisheye"

    def refit(camera: CameraModel, edge_offset: Sequence[float] = (0.0,) * 4,
              found: Sequence[MarkingObservation] = (), iters: int = 25) -> PoseFit:
        if model == "fisheye":  # fisheye intrinsics: the pose alone, through the given lens
            return refine_fisheye(camera, table, edges, f_prior, focal_sigma, ez, edge_offset, found,
                                  fit_lens=False)
        return refine_pose(camera, table, edges, f_prior, focal_sigma, markings=found, fit_focal=fit_lens,
                           fit_distortion=fit_lens, iters=iters, k_prior=kp, edge_z=ez, edge_offset=edge_offset,
                           fit_wide_lens=wide)

    fit = refit(cam0)
    # A cushion seen from behind (the camera beyond its line, a photo from the end of the table) hides its nose: the
    # edge without a dark band is then the outer edge of its top, where the rail starts.
    offs = [0.0] * 4
    c = fit.camera.camera_centre
    behind = [c[1] < 0, c[0] > table.width, c[1] > table.length, c[0] < 0]
    edges = list(edges)
    centre = np.concatenate(edges).mean(axis=0)
    for i in range(4):
        if behind[i]:
            ppm = float(fit.camera.pixels_per_mm(np.array(_side_middle(table, i)), hn))
            nose = hidden_nose(image, edges[i], centre, 2.5 * CUSHION_TOP_WIDTH_MM * ppm + 4, outline.cloth)
            if nose is not None:
                edges[i], ez[i] = nose, hn
            else:
                offs[i], ez[i] = CUSHION_TOP_WIDTH_MM, hn
    edges = tuple(edges)
    if any(behind):
        fit = refit(fit.camera, offs)
    markings: tuple[MarkingObservation, ...] = ()
    if use_markings:
        markings = tuple(find_markings(image, fit.camera, table, outline.cloth))
        if len(markings) >= 2:
            fit = refit(fit.camera, offs, markings, iters=10)
    if fit_lens and prior.model == "fisheye":
        # The pinhole fit has placed the table; the equidistant model, started from it, follows the lens out to the
        # corner pockets, past the last nose points, where the pinhole polynomial bends away.
        theta = np.arctan(np.linalg.norm(fit.camera.undistort(np.concatenate(edges)), axis=-1))
        start = pinhole_to_fisheye(fit.camera, 1.15 * float(theta.max()))
        fit = refine_fisheye(start, table, edges, f_prior, focal_sigma, ez, offs, markings)
    # The finder's nose points stop well short of the corners (7 % of each side: 230 px on the Pi's 3280 px
    # stills), and past them the corner is the lens model's extrapolation, 2-3 px astray in a pocket (or, on a
    # broadcast's carom table, inside the dark band under the noses). Guided by this fit, the noses are measured
    # again out to where each pocket's jaw starts to curve (a carom table's corner), and fitted again.
    longer = _noses_to_the_corners(image, outline, fit.camera, table, hn, kinds, offs)
    if longer is not None:
        edges = longer
        if fit.camera.lens_model == "fisheye":
            fit = refine_fisheye(fit.camera, table, edges, f_prior, focal_sigma, ez, offs, markings,
                                 fit_lens=fit_lens)
        else:
            fit = refit(fit.camera, offs, markings, iters=10)
    cam = fit.camera
    corners = cam.table_to_image(table_corners(table)[:, :2], hn)  # the nose corners as seen
    _check_corners_in_view(corners, size)
    quality = {"reprojection_px": round(fit.rms_px, 4), "edge_inliers": round(fit.inlier_fraction, 3),
               "markings_found": len(markings)}
    if len(fit.marking_residuals_mm):
        quality["markings_mm"] = round(float(np.sqrt(np.mean(fit.marking_residuals_mm ** 2))), 3)
    if use_markings:
        found = find_diamonds(image, cam, table, hn)
        dres = diamond_residuals(found, cam, table)
        quality["diamonds_found"] = int(sum(len(v) for v in found.values()))
        quality["diamonds_used"] = int(len(dres))
        if len(dres):
            quality["diamonds_mm"] = round(float(np.sqrt(np.mean(dres ** 2))), 3)
    quality["focal_px"] = round(cam.focal, 2)
    return ViewCalibration(Calibration(cam, table, corners, quality), outline, fit, markings, tuple(edges))


def calibrate_from_corners(corners_px: np.ndarray, image_size: tuple[int, int], table: TableSpec,
                           lens: str | LensPrior | None = None,
                           intrinsics: tuple[np.ndarray, np.ndarray] | None = None) -> Calibration:
    """The manual path: the four cushion-nose corners in table order (bottom-left, bottom-right, top-right,
    top-left), seen at the nose height."""
    corners_px = np.asarray(corners_px, dtype=float).reshape(4, 2)
    prior = lens if isinstance(lens, LensPrior) else lens_prior(lens)
    if intrinsics is not None:
        k, dist = np.asarray(intrinsics[0], float), np.asarray(intrinsics[1], float).ravel()
    else:
        k = prior.camera_matrix(image_size)
        dist = np.array([prior.k1, prior.k2, 0, 0, 0], dtype=float)
        if prior.focal_sigma > 0.2:
            f_h = focal_from_rectangle(undistort_points(image_size, k, dist, corners_px), table, k[:2, 2])
            if f_h is not None and 0.2 * k[0, 0] < f_h < 5 * k[0, 0]:
                k = k.copy()
                k[0, 0] = k[1, 1] = f_h
    hn = nose_height_mm(table)
    model = lens_model_of(dist)
    if model == "fisheye":  # OpenCV's pose solvers know the pinhole model only: they take the ideal corners
        rvec, tvec = initial_pose(undistort_points(image_size, k, dist, corners_px), table, k, np.zeros(5), hn)
    else:
        rvec, tvec = initial_pose(corners_px, table, k, dist, hn)
    cam = CameraModel(image_size, k, dist, rvec, tvec, model)
    back = cam.table_to_image(table_corners(table)[:, :2], hn)
    rms = float(np.sqrt(np.mean(np.sum((back - corners_px) ** 2, axis=1))))
    return Calibration(cam, table, corners_px, {"reprojection_px": round(rms, 4), "manual_corners": 1})
