"""Find the table in a frame: the cloth, the four cushion noses as sub-pixel edge points, and their corners.

1. The cloth is the dominant colour near the image centre (a peak of the a*b* histogram of a central window, any
   cloth colour, any overall light), thresholded in CIELAB with a lightness band wide enough for uneven light; the
   connected region holding the centre, its holes (balls, spots) filled, is the cloth.
2. A convex quadrilateral fitted to that region gives the four sides; an edge touching the picture border means the
   table is not wholly in view, and the error says which way to move the camera.
3. Along each side, away from the corners (pockets, jaws), the nose is found to sub-pixel precision on profiles
   across it: going outwards from the cloth, the first strong rise of "distance from the cloth colour" is the start
   of the dark band under the nose (its face and shadow); the falling edge where that band meets the lit cushion
   top is the nose itself, seen at the nose height (about 37 mm above the cloth: a camera 2.5 m up sees it some
   10 mm outside its cloth footprint near a cushion, so the pose fit places these points at that height). Edges
   are refined by a parabola through the three gradient samples about the peak. Two passes: the second centred on
   a robust fit of the first.

The edge points are the raw measurement. Straight lines through them (``calibration.distortion`` undoes the lens
first) give the corners, and the pose fit uses the points themselves.

Order: a table's corners and sides are named once the long axis is known (the longer pair of opposite sides):
corners bottom-left, bottom-right, top-right, top-left; cushions bottom, right, top, left. With the long axis
across the picture the bottom cushion is on the left (as ``CameraModel.overhead`` frames it); along the picture,
the bottom cushion is at the bottom of the picture.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import cv2
import numpy as np

CUSHION_ORDER = ("bottom", "right", "top", "left")  # side i joins corner i and corner i + 1
CORNER_ORDER = ("bottom_left", "bottom_right", "top_right", "top_left")
COARSE_SIZE = 640  # the longer side of the picture for the coarse stage, pixels
GREY_CHROMA = 12.0  # a cloth this close to neutral (a*b* distance, 8-bit Lab) is grey: no colour stops its flood


class TableNotFound(ValueError):
    """No usable table in the view; the message is one line saying why and what to do."""


@dataclass(frozen=True, eq=False)
class ClothModel:
    lab: np.ndarray  # (3,) median cloth colour in OpenCV's 8-bit Lab
    chroma_tol: float
    light_band: tuple[float, float]  # accepted L range as fractions of the median


@dataclass(frozen=True, eq=False)
class TableOutline:
    """What the finder measured, in full-resolution distorted pixels, table order (see the module docstring)."""

    quad_px: np.ndarray  # (4, 2) coarse corners (straight sides through the cloth region)
    edge_points: tuple[np.ndarray, ...]  # per cushion (bottom, right, top, left): (n, 2) sub-pixel boundary points
    cloth: ClothModel
    mask: np.ndarray  # coarse filled cloth mask (uint8 0/255) at ``scale``
    scale: float  # full-resolution pixels per coarse pixel
    image_size: tuple[int, int]
    edge_kinds: tuple[str, ...] = ("nose",) * 4  # per cushion: "nose" (seen at the nose height) or "cloth" (z = 0)


def median_frame(frames: Iterable[np.ndarray]) -> np.ndarray:
    """The per-pixel median of a few frames: people and balls passing through are gone, the table stays."""
    stack = np.stack(list(frames))
    if stack.shape[0] == 1:
        return stack[0]
    return np.median(stack, axis=0).astype(stack.dtype)


def _to_bgr(image: np.ndarray) -> np.ndarray:
    if image is None or not isinstance(image, np.ndarray) or image.ndim not in (2, 3) or image.size == 0:
        raise TableNotFound("not a picture (expected an image array)")
    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.shape[2] == 4:
        image = image[..., :3]
    if image.dtype != np.uint8:
        image = np.clip(image, 0, 255).astype(np.uint8)
    return np.ascontiguousarray(image)


def estimate_cloth(lab_small: np.ndarray) -> ClothModel:
    """The dominant chroma cluster of the central window."""
    h, w = lab_small.shape[:2]
    win = lab_small[int(0.3 * h):int(0.7 * h), int(0.3 * w):int(0.7 * w)].reshape(-1, 3).astype(np.float32)
    hist, ae, be = np.histogram2d(win[:, 1], win[:, 2], bins=64, range=[[0, 256], [0, 256]])
    hist = cv2.GaussianBlur(hist.astype(np.float32), (5, 5), 1.0)
    ia, ib = np.unravel_index(int(np.argmax(hist)), hist.shape)
    peak = np.array([(ae[ia] + ae[ia + 1]) / 2, (be[ib] + be[ib + 1]) / 2])
    d = np.hypot(win[:, 1] - peak[0], win[:, 2] - peak[1])
    core = win[d < 12]
    if len(core) < 0.15 * len(win):
        raise TableNotFound("no cloth found: no single colour covers the middle of the picture (is the table in "
                            "the centre of the view?)")
    lab = np.median(core, axis=0)
    spread = np.median(np.hypot(core[:, 1] - lab[1], core[:, 2] - lab[2]))
    return ClothModel(lab=lab, chroma_tol=float(max(10.0, 5.0 * spread)), light_band=(0.45, 1.8))


def cloth_mask(lab: np.ndarray, cloth: ClothModel) -> np.ndarray:
    lab = lab.astype(np.float32)
    chroma = np.hypot(lab[..., 1] - cloth.lab[1], lab[..., 2] - cloth.lab[2])
    lo, hi = cloth.light_band
    light = (lab[..., 0] >= lo * cloth.lab[0]) & (lab[..., 0] <= max(hi * cloth.lab[0], cloth.lab[0] + 40))
    return ((chroma < cloth.chroma_tol) & light).astype(np.uint8) * 255


def _region_holding_centre(mask: np.ndarray, lab: np.ndarray | None = None,
                           cloth: ClothModel | None = None) -> tuple[np.ndarray, str | None]:
    """The cloth region: a floating-range flood fill from the cloth-coloured pixel nearest the centre (it follows
    the slow colour drift of vignetting and uneven light, and stops at the sharp cushion edges) inside the pixels
    of roughly the cloth's colour, united with the strict-colour component there; filled and made convex (a cable
    or a cue across the cloth must not cut it in two). Also the picture edge a flood was refused for reaching
    (None if none was): a leak, or the cloth itself running off the picture there."""
    h, w = mask.shape
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    n, labels, stats, cents = cv2.connectedComponentsWithStats(mask, connectivity=4)
    if n <= 1:
        raise TableNotFound("no cloth found in the picture")
    # The component with the most area in the central window, so a cloth-coloured floor elsewhere does not win.
    centre = labels[int(0.3 * h):int(0.7 * h), int(0.3 * w):int(0.7 * w)]
    counts = np.bincount(centre.ravel(), minlength=n)
    counts[0] = 0
    best = int(np.argmax(counts))
    region = (labels == best).astype(np.uint8) * 255
    leak_edge = None
    if lab is not None and cloth is not None:
        f = lab.astype(np.float32)
        chroma = np.hypot(f[..., 1] - cloth.lab[1], f[..., 2] - cloth.lab[2])
        cand = (chroma < 3 * cloth.chroma_tol + 10) & (f[..., 0] >= 0.3 * cloth.lab[0])
        if np.hypot(cloth.lab[1] - 128.0, cloth.lab[2] - 128.0) < GREY_CHROMA:
            # Only a grey cloth: a coloured one stops the flood by its chroma at the rail, and its cushion tops,
            # of the cloth's colour, are better kept in the region (the noses are searched from there inwards).
            cand &= ~_dark_band(lab, cloth)
        ys, xs = np.nonzero(region[int(0.3 * h):int(0.7 * h), int(0.3 * w):int(0.7 * w)])
        if len(xs):
            k = len(xs) // 2
            seed = (int(xs[k] + int(0.3 * w)), int(ys[k] + int(0.3 * h)))
            img = lab.copy()
            img[~cand] = 0
            flood = _flood(img, seed)
            # A cable or a cue lying across the cloth stops the flood: the cloth beyond it (a corner, its cushions)
            # is flooded from the strict region's pieces the first flood did not reach.
            for seed2 in _cut_off_seeds(region, flood):
                flood = cv2.bitwise_or(flood, _flood(img, seed2))
            merged = cv2.bitwise_or(region, flood)
            n2, lab2, st2, _ = cv2.connectedComponentsWithStats(merged, connectivity=4)
            if n2 > 2:
                merged = (lab2 == 1 + int(np.argmax(st2[1:, cv2.CC_STAT_AREA]))).astype(np.uint8) * 255
            # A flood that reached the picture's border where the strict region did not has leaked (a grey
            # cloth through a thin shadow to a grey floor): keep the strict region then.
            if _border_run(merged) <= max(_border_run(region), 0.01 * (h + w)):
                region = merged
            else:
                leak_edge = _check_in_view(merged, strict=False)
    contours, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    filled = np.zeros_like(region)
    hull = cv2.convexHull(np.concatenate(contours))
    cv2.drawContours(filled, [hull], -1, 255, thickness=cv2.FILLED)
    return filled, leak_edge


def _without_chalk_lines(lab: np.ndarray) -> np.ndarray:
    """The coarse Lab picture with its thin bright lines (balklines, Chapo's cabana lines, a spot) painted over by
    the median of what is about them: lines drawn from cushion to cushion would otherwise cut the cloth region into
    fields (neither the cloth's colour nor a step the flood takes), and the largest field is not the table."""
    light = np.ascontiguousarray(lab[..., 0])
    k = 2 * int(round(0.005 * max(light.shape))) + 1  # 7 px at the coarse 640: a chalk line is one or two
    hat = cv2.morphologyEx(light, cv2.MORPH_TOPHAT, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    med = cv2.medianBlur(lab, k)
    # Chalk is white: paler than the cloth about it (a lit, cloth-coloured highlight along a cushion's nose is
    # not, and painting it over would move the region's edge there); on a grey cloth any bright line is chalk.
    chroma = np.hypot(lab[..., 1].astype(np.float32) - 128, lab[..., 2].astype(np.float32) - 128)
    chroma_med = np.hypot(med[..., 1].astype(np.float32) - 128, med[..., 2].astype(np.float32) - 128)
    pale = (chroma < chroma_med - 3) | (chroma_med < 8)
    line = cv2.dilate(((hat > 12) & pale).astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
    if not line.any():
        return lab
    out = lab.copy()
    out[line] = med[line]
    return out


def _dark_band(lab: np.ndarray, cloth: ClothModel) -> np.ndarray:
    """The thin dark lines of the coarse picture (bool): the face band under each cushion's nose, seen from the
    front, a few coarse pixels wide. A grey cloth gives the floating flood no colour to stop on there, and where
    the lens bends the band and the blur softens it, the flood creeps into it in small steps and along it into
    the rail; a barrier of the pixels much darker than their surroundings within a few band widths (a black-hat)
    stops it. Smooth shading (vignetting, lamp pools) and bright chalk lines are not such lines."""
    light = np.ascontiguousarray(lab[..., 0])
    k = 2 * int(round(0.006 * max(light.shape))) + 1  # 9 px at the coarse 640: three times the band's width
    hat = cv2.morphologyEx(light, cv2.MORPH_BLACKHAT, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    return hat > max(15.0, 0.2 * float(cloth.lab[0]))


def _flood(img: np.ndarray, seed: tuple[int, int]) -> np.ndarray:
    """A floating-range flood fill of the cloth from ``seed`` (uint8 0/255 mask, specks opened away)."""
    h, w = img.shape[:2]
    ff = np.zeros((h + 2, w + 2), np.uint8)
    cv2.floodFill(img, ff, seed, 0, (3, 2, 2), (3, 2, 2), 4 | cv2.FLOODFILL_MASK_ONLY | (255 << 8))
    return cv2.morphologyEx(ff[1:-1, 1:-1], cv2.MORPH_OPEN, np.ones((9, 9), np.uint8))


def _cut_off_seeds(region: np.ndarray, flood: np.ndarray, most: int = 3) -> list[tuple[int, int]]:
    """Seeds in the pieces of the strict cloth region that the flood missed and that hold a wide disc (a piece of
    cloth beyond a cable, not a speck or a thin strip along the flood's edge): the disc's centre, widest first."""
    rest = ((region > 0) & (flood == 0)).astype(np.uint8)
    if not rest.any():
        return []
    h, w = region.shape
    wide = 0.02 * max(h, w)
    dist = cv2.distanceTransform(rest, cv2.DIST_L2, 5)
    n, labels = cv2.connectedComponents(rest, connectivity=4)
    widest = np.zeros(n, np.float32)
    np.maximum.at(widest, labels.ravel(), dist.ravel())
    seeds = []
    for lab_id in np.argsort(-widest)[:most]:
        if lab_id == 0 or widest[lab_id] < wide:
            continue
        ys, xs = np.nonzero((labels == lab_id) & (dist >= widest[lab_id] - 0.5))
        seeds.append((int(xs[0]), int(ys[0])))
    return seeds


def _border_run(mask: np.ndarray) -> int:
    return int(np.count_nonzero(mask[0]) + np.count_nonzero(mask[-1]) + np.count_nonzero(mask[:, 0])
               + np.count_nonzero(mask[:, -1]))


_BORDER_ADVICE = {
    "top": "the table runs off the top of the picture: tilt the camera up or raise it",
    "bottom": "the table runs off the bottom of the picture: tilt the camera down or raise it",
    "left": "the table runs off the left of the picture: pan the camera left or raise it",
    "right": "the table runs off the right of the picture: pan the camera right or raise it",
}


_OPPOSITE = {"top": "bottom", "bottom": "top", "left": "right", "right": "left"}


def border_advice(edges: Sequence[str], what: str = "cloth") -> str:
    """One line naming every picture edge the table runs off and what to move: one edge, or two adjacent ones,
    are mended by tilting or panning; two opposite edges only by a wider view (raise the camera or zoom out)."""
    edges = list(dict.fromkeys(edges))
    tail = {"corner": f" ({'a corner' if len(edges) == 1 else 'corners'} of the table at the picture's edge)",
            "cloth": " (the whole cloth must be in view)"}[what]
    if len(edges) == 1:
        return _BORDER_ADVICE[edges[0]] + tail
    names = " and the ".join(edges)
    if any(_OPPOSITE[e] in edges for e in edges):
        return (f"the table runs off the {names} of the picture: raise the camera or widen the view (zoom out), "
                f"then tilt or pan the camera to centre it" + tail)
    moves = " and ".join(_BORDER_ADVICE[e].split(": ")[1].removesuffix(" or raise it") for e in edges)
    return f"the table runs off the {names} of the picture: {moves}, or raise it" + tail


def _check_in_view(filled: np.ndarray, strict: bool = True) -> str | None:
    """The picture border the cloth region runs off (the advice is given later, if the nose is not in view
    there either: a cushion's top may be cut off while its nose is still seen)."""
    h, w = filled.shape
    edges = {"top": filled[0, :], "bottom": filled[-1, :], "left": filled[:, 0], "right": filled[:, -1]}
    runs = {k: int(np.count_nonzero(v)) for k, v in edges.items()}
    worst = max(runs, key=runs.get)  # type: ignore[arg-type]
    n_off = sum(1 for k, v in runs.items() if v > 0.03 * (w if k in ("top", "bottom") else h))
    if n_off >= 3 and strict:
        raise TableNotFound("no table outline found: the cloth colour fills the picture (too close, or a blank "
                            "picture?)")
    if runs[worst] > 0.03 * (w if worst in ("top", "bottom") else h):
        return worst
    return None


def _quad(filled: np.ndarray) -> np.ndarray:
    contours, _ = cv2.findContours(filled, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    cnt = max(contours, key=cv2.contourArea)
    hull = cv2.convexHull(cnt)
    quad = None
    try:
        quad = cv2.approxPolyN(hull, 4, ensure_convex=True).reshape(-1, 2).astype(np.float64)
    except (cv2.error, AttributeError):
        pass
    if quad is None or len(quad) != 4:
        peri = cv2.arcLength(hull, True)
        for eps in np.linspace(0.01, 0.1, 30):
            approx = cv2.approxPolyDP(hull, eps * peri, True)
            if len(approx) <= 4:
                break
        if len(approx) != 4:
            raise TableNotFound("the cloth is not a four-sided region (is the table wholly in view?)")
        quad = approx.reshape(-1, 2).astype(np.float64)
    return quad


def order_corners(quad: np.ndarray) -> np.ndarray:
    """Table order bottom-left, bottom-right, top-right, top-left (module docstring) from any four corners."""
    q = np.asarray(quad, dtype=np.float64).reshape(4, 2)
    c = q.mean(axis=0)
    ang = np.arctan2(q[:, 1] - c[1], q[:, 0] - c[0])
    q = q[np.argsort(ang)]  # clockwise on screen (v down)
    side = np.linalg.norm(q - np.roll(q, -1, axis=0), axis=1)  # side i: q[i] -> q[i+1]
    # The long axis: the pair of opposite sides that is longer; the short sides are the cushions bottom and top.
    if side[0] + side[2] > side[1] + side[3]:
        q = np.roll(q, -1, axis=0)  # now sides 1 and 3 are the long ones, side 0 a short one
    # Candidates for the bottom cushion: side 0 (q0 -> q1) or side 2 (q2 -> q3).
    mid0 = (q[0] + q[1]) / 2
    mid2 = (q[2] + q[3]) / 2
    along = mid2 - mid0  # bottom -> top if side 0 is the bottom
    if abs(along[0]) >= abs(along[1]):
        bottom_is_0 = along[0] > 0  # long axis across the picture: the bottom cushion on the left
    else:
        bottom_is_0 = along[1] < 0  # long axis along the picture: the bottom cushion at the bottom
    if not bottom_is_0:
        q = np.roll(q, -2, axis=0)
    # Corner order BL, BR, TR, TL: the bottom cushion runs from BL to BR, x to the right standing at the bottom.
    # On screen (v down) the table frame is mirrored, so BL -> BR -> TR goes counter-clockwise on screen.
    a, b = q[0], q[1]
    cross = (b - a)[0] * (q[2] - b)[1] - (b - a)[1] * (q[2] - b)[0]
    if cross > 0:  # clockwise on screen: swap to counter-clockwise keeping the bottom side
        q = q[[1, 0, 3, 2]]
    return q


def _gradients(score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return cv2.Sobel(score, cv2.CV_32F, 1, 0, ksize=3) / 8, cv2.Sobel(score, cv2.CV_32F, 0, 1, ksize=3) / 8


def _profile_edges(grads: tuple[np.ndarray, np.ndarray], points: np.ndarray, normals: np.ndarray, half: float,
                   step: float = 0.25, inward: float | None = None, sign: float = 1.0,
                   skip_bright_lines: tuple[np.ndarray, np.ndarray, float] | None = None,
                   reach: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Sub-pixel positions of the steepest rise of the score along each normal within +-half, and the rise.

    The gradient field is sampled with bicubic interpolation (differentiating a bilinear profile instead would be
    piecewise constant and snap every edge to a half pixel), its peak refined by a parabola. With ``inward`` the
    window reaches that far into the cloth and the first strong rise from the inside wins (the cloth edge, not the
    cushion top's outer edge when the cushion has the cloth's colour). ``skip_bright_lines`` (score, lightness,
    the cloth's lightness) passes over thin bright lines on the cloth (a baulk line, a chalk line): a rise that
    is brighter than the cloth and falls back to it within a few pixels."""
    gx, gy = grads
    far = half if reach is None else max(half, reach)
    offs = np.arange(-(half if inward is None else inward), far + step / 2, step, dtype=np.float32)
    sx = (points[:, None, 0] + offs[None, :] * normals[:, None, 0]).astype(np.float32)
    sy = (points[:, None, 1] + offs[None, :] * normals[:, None, 1]).astype(np.float32)
    nx = normals[:, None, 0].astype(np.float32)
    ny = normals[:, None, 1].astype(np.float32)
    grad = (cv2.remap(gx, sx, sy, cv2.INTER_CUBIC, borderMode=cv2.BORDER_REPLICATE) * nx
            + cv2.remap(gy, sx, sy, cv2.INTER_CUBIC, borderMode=cv2.BORDER_REPLICATE) * ny) * np.float32(sign)
    if inward is None:
        i = np.clip(np.argmax(grad[:, 2:-2], axis=1) + 2, 1, len(offs) - 2)
    else:
        # Strong means a quarter of the strongest rise near the region's edge (not of one further out, past the
        # nose, with ``reach``: a bright rail would drown a faint nose).
        near = grad[:, :int(np.searchsorted(offs, half)) + 1]
        peak = (grad[:, 1:-1] >= grad[:, :-2]) & (grad[:, 1:-1] >= grad[:, 2:]) \
            & (grad[:, 1:-1] > np.maximum(0.1 * near.max(axis=1, keepdims=True), 3.0))
        if skip_bright_lines is not None:
            score_img, light_img, l_cloth = skip_bright_lines
            sp = cv2.remap(score_img, sx, sy, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
            lp = cv2.remap(light_img, sx, sy, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
            a, b, c = int(round(1.5 / step)), int(round(5.0 / step)), int(round(2.0 / step))
            m = len(offs)
            ia = np.minimum(np.arange(1, m - 1) + a, m - 1)
            ib = np.minimum(np.arange(1, m - 1) + b, m - 1)
            ic = np.maximum(np.arange(1, m - 1) - c, 0)
            # Brighter than the cloth just inside it, and back down a few pixels further out (the cloth's own
            # lightness drifts with vignetting, so compare with the cloth beside the line, not the centre's).
            bright_line = (lp[:, ia] > lp[:, ic] + 8) & (lp[:, ib] < lp[:, ia] - 6)
            peak &= ~bright_line
        i = np.argmax(peak, axis=1) + 1
    rows = np.arange(len(points))
    g0, g1, g2 = grad[rows, i - 1], grad[rows, i], grad[rows, i + 1]
    den = g0 - 2 * g1 + g2
    frac = np.where(np.abs(den) > 1e-9, 0.5 * (g0 - g2) / np.where(den == 0, 1, den), 0.0)
    frac = np.clip(frac, -0.5, 0.5)
    off = offs[i] + frac * step
    return points + off[:, None] * normals, g1


def _fit_line_robust(pts: np.ndarray, iters: int = 6) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Total-least-squares line with Tukey reweighting: (point, unit direction, inlier mask)."""
    w = np.ones(len(pts))
    for _ in range(iters):
        c = (pts * w[:, None]).sum(0) / w.sum()
        d = pts - c
        cov = (d * w[:, None]).T @ d
        evals, evecs = np.linalg.eigh(cov)
        n = evecs[:, 0]
        r = d @ n
        s = max(1.4826 * np.median(np.abs(r)), 0.05)
        u = r / (4.685 * s)
        w = np.where(np.abs(u) < 1, (1 - u * u) ** 2, 0.0)
        if w.sum() < 5:
            break
    return c, evecs[:, 1], np.abs(r) < 3 * s


def _side_samples(q: np.ndarray, contour: np.ndarray, n: int, margin: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per side: the stretch of the cloth region's contour between the contour points nearest two adjacent quad
    corners (so a strongly curved, fisheye side is followed), less ``margin`` of its length at each end (pockets,
    jaws, rounded corners), thinned to about ``n``; and the chord's outward normal."""
    out = []
    c = q.mean(axis=0)
    idx = [int(np.nanargmin(np.linalg.norm(contour - corner, axis=1))) for corner in q]
    m = len(contour)
    for i in range(4):
        a, b = q[i], q[(i + 1) % 4]
        d = (b - a) / np.linalg.norm(b - a)
        nrm = np.array([-d[1], d[0]])
        if ((a + b) / 2 - c) @ nrm < 0:
            nrm = -nrm
        i0, i1 = idx[i], idx[(i + 1) % 4]
        # The contour runs one way round; take the stretch from corner i to corner i+1 that does not hold the
        # other two corners.
        fwd = (np.arange(m) - i0) % m
        span = (i1 - i0) % m
        others = [(idx[j] - i0) % m for j in range(4) if j not in (i, (i + 1) % 4)]
        if any(0 < o < span for o in others):
            seg = contour[(i0 - np.arange((i0 - i1) % m + 1)) % m]
        else:
            seg = contour[(i0 + np.arange(span + 1)) % m]
        del fwd
        k0 = int(margin * len(seg))
        seg = seg[k0:len(seg) - k0]
        if len(seg) > n:
            seg = seg[np.linspace(0, len(seg) - 1, n).astype(int)]
        out.append((seg, np.repeat(nrm[None], len(seg), axis=0)))
    return out


def find_outline(image: np.ndarray, corner_margin: float = 0.07, samples_per_side: int = 160) -> TableOutline:
    """Measure the cloth boundary of the table in ``image`` (BGR); raise TableNotFound saying why."""
    img = _to_bgr(image)
    h, w = img.shape[:2]
    if min(h, w) < 64:
        raise TableNotFound(f"the picture is too small ({w}x{h})")
    scale = max(h, w) / COARSE_SIZE
    small = cv2.resize(img, (int(round(w / scale)), int(round(h / scale))), interpolation=cv2.INTER_AREA) \
        if scale > 1 else img
    scale = w / small.shape[1]
    gray = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    if float(gray.std()) < 4.0:
        raise TableNotFound("the picture is blank (no contrast): is the lens covered or the light off?")
    lab_small = cv2.cvtColor(cv2.GaussianBlur(small, (5, 5), 1.0), cv2.COLOR_BGR2LAB)
    lab_small = _without_chalk_lines(lab_small)
    cloth = estimate_cloth(lab_small)
    filled, leak_edge = _region_holding_centre(cloth_mask(lab_small, cloth), lab_small, cloth)
    frac = np.count_nonzero(filled) / filled.size
    off_border = _check_in_view(filled)
    if frac < 0.08:
        raise TableNotFound(f"the cloth covers only {100 * frac:.0f}% of the picture: move the camera closer or "
                            "centre it over the table")
    coarse_quad = _quad(filled)
    sh0, sw0 = filled.shape
    cnts, _ = cv2.findContours(filled, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    cpts = max(cnts, key=cv2.contourArea).reshape(-1, 2).astype(np.float64)
    # The region's own corners (the contour points nearest the quad's corners, which may lie outside a rounded,
    # fisheye region) must not be on the picture's edge.
    cut: list[str] = []
    for x, y in (cpts[int(np.argmin(np.linalg.norm(cpts - q, axis=1)))] for q in coarse_quad):
        gaps = {"left": x, "right": sw0 - 1 - x, "top": y, "bottom": sh0 - 1 - y}
        # A corner of the cloth at the picture's edge: the corner itself is not seen. A corner in the picture's
        # own corner is cut by both edges.
        cut += [e for e in sorted(gaps, key=gaps.get) if gaps[e] < 2 and e not in cut]  # type: ignore[arg-type]
    if cut:
        raise TableNotFound(border_advice(cut, "corner"))
    quad = order_corners(coarse_quad * scale + (scale - 1) / 2)
    contours, _ = cv2.findContours(filled, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    contour = max(contours, key=cv2.contourArea).reshape(-1, 2).astype(np.float64)
    sh, sw = filled.shape
    on_border = (contour[:, 0] <= 1) | (contour[:, 1] <= 1) | (contour[:, 0] >= sw - 2) | (contour[:, 1] >= sh - 2)
    contour = contour * scale + (scale - 1) / 2
    lab, clipped, grads = _cloth_distance(img, filled)
    light = np.ascontiguousarray(lab[..., 0])
    lgrads = _gradients(light)
    hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV).astype(np.float32)
    hue, sat = np.ascontiguousarray(hsv[..., 0]), np.ascontiguousarray(hsv[..., 1])
    cloth_bgr = cv2.cvtColor(cloth.lab.reshape(1, 1, 3).astype(np.uint8), cv2.COLOR_LAB2BGR)
    cloth_hsv = cv2.cvtColor(cloth_bgr, cv2.COLOR_BGR2HSV).reshape(3).astype(np.float32)
    edges: list[np.ndarray] = []
    kinds: list[str] = []
    marked = contour.copy()
    marked[on_border] = np.nan
    for pts, nrm in _side_samples(quad, marked, samples_per_side, corner_margin):
        keep = np.isfinite(pts).all(axis=1)
        if off_border is not None and keep.mean() < 0.6:
            raise TableNotFound(_BORDER_ADVICE[off_border] + " (the whole cloth must be in view)")
        pts, nrm = pts[keep], nrm[keep]
        if len(pts) < 10:
            raise _edge_not_found(leak_edge, "a cushion is hidden or out of view (too little of its edge is visible)")
        half = max(6.0, 3.0 * scale + 3.0)
        short = float(np.min(np.linalg.norm(quad - np.roll(quad, 1, axis=0), axis=1)))
        inward = max(half, 0.08 * short)
        e1, g1 = _profile_edges(grads, pts, nrm, half, inward=inward,
                                skip_bright_lines=(clipped, light, float(cloth.lab[0])), reach=0.035 * short)
        ok1 = g1 > 0.5
        if ok1.sum() < 10:
            raise _edge_not_found(leak_edge)
        # The nose: going on outwards, the dark band (the face under the nose, seen from the front, and its
        # shadow) ends where the lightness rises again, at the lit cushion top or the rail: that edge is the nose,
        # at the nose height. Where no dark band shows (a cushion seen from behind), the rise is kept ("cloth").
        # (a) the band then the lit, cloth-coloured cushion top: a falling edge of the colour distance.
        band = max(4.0, 0.025 * short)
        ef, g2 = _profile_edges(grads, e1 + (0.5 + band / 2) * nrm, nrm, band / 2, sign=-1.0)
        after = _sample(clipped, ef + 2.0 * nrm)
        peak = _sample(clipped, (e1 + ef) / 2)
        is_band = ok1 & (g2 > 0.3 * g1) & (after < 0.5 * peak)
        if is_band.sum() >= 0.5 * ok1.sum():
            edges.append(_follow(ef[is_band], nrm[is_band], grads, sign=-1.0))
            kinds.append("nose")
            continue
        # (b) the band then the rail (the cushion top foreshortened away): the lightness rises at the nose. The
        # band is the cloth in shadow: darker, of the cloth's hue (a dark rail is not).
        band = max(5.0, 0.04 * short)
        ef, g2 = _profile_edges(lgrads, e1 + (0.5 + band / 2) * nrm, nrm, band / 2, sign=1.0)
        l_in = _sample(light, e1 - 2.0 * nrm)
        mid = (e1 + ef) / 2
        l_band = _sample(light, mid)
        h_band = _sample(hue, mid)
        s_band = _sample(sat, mid)
        dh = np.abs(h_band - cloth_hsv[0])
        dh = np.minimum(dh, 180.0 - dh)
        same_hue = (s_band > 70) & (cloth_hsv[1] > 50) & (dh < 13)
        is_band = ok1 & (g2 > 2.0) & (l_band < l_in - 8.0) & same_hue & (np.linalg.norm(ef - e1, axis=1) > 1.0)
        if is_band.sum() >= 0.5 * ok1.sum():
            e2 = _follow(ef[is_band], nrm[is_band], lgrads, sign=1.0)
            kinds.append("nose")
        else:
            e2 = _follow(e1[ok1], nrm[ok1], grads, sign=1.0)
            kinds.append("cloth")
        if len(e2) < 10:
            raise _edge_not_found(leak_edge)
        edges.append(e2)
    if any(len(e) < 10 for e in edges):
        raise _edge_not_found(leak_edge)
    return TableOutline(quad, tuple(edges), cloth, filled, scale, (w, h), tuple(kinds))


def _cloth_distance(img: np.ndarray,
                    filled: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Full-resolution "distance from the cloth colour" for the profiles (lightness counted half, clipped), with
    the Lab picture it came from and its gradients."""
    lab = cv2.cvtColor(img, cv2.COLOR_BGR2LAB).astype(np.float32)
    diff = lab - _local_cloth(lab, filled)
    score = np.sqrt(0.25 * diff[..., 0] ** 2 + diff[..., 1] ** 2 + diff[..., 2] ** 2)
    clipped = np.minimum(score, 60.0)
    return lab, clipped, _gradients(clipped)


def noses_along(image: np.ndarray, outline: TableOutline, guides: Sequence[np.ndarray],
                normals: Sequence[np.ndarray], half: float = 3.0) -> list[np.ndarray | None]:
    """Each nose re-measured along a guide curve (its image as a fitted camera predicts it, outward ``normals``):
    the edge of ``find_outline``'s noses (the dark band under the nose meeting the lit cushion top) within ``half``
    px of the guide, here as the rise of the lightness alone: a JPEG keeps its colour at half the resolution, and
    the colour distance's edge wanders by up to a pixel along a nose (chroma blur and siting), which the corner,
    extrapolated into a pocket, multiplies. Points with no clear edge there are dropped; a cushion is None when
    fewer than 70 % of its points keep an edge (not that kind of nose, or the guide is off), and the caller keeps
    what it had."""
    light = np.ascontiguousarray(cv2.cvtColor(_to_bgr(image), cv2.COLOR_BGR2LAB)[..., 0].astype(np.float32))
    grads = _gradients(light)
    out: list[np.ndarray | None] = []
    for base, nrm in zip(guides, normals):
        base = np.asarray(base, dtype=np.float64)
        nrm = np.asarray(nrm, dtype=np.float64)
        if len(base) < 10:
            out.append(None)
            continue
        e, g = _profile_edges(grads, base, nrm, half, sign=1.0)
        keep = (g > 2.0) & (np.linalg.norm(e - base, axis=1) < half - 0.5)
        out.append(e[keep] if keep.mean() >= 0.7 else None)
    return out


def _edge_not_found(leak_edge: str | None,
                    why: str = "a cushion edge is too faint to measure (is the cloth lit?)") -> TableNotFound:
    """The error for cushion edges that were not found: where the cloth's colour ran off the picture (the flood
    reached an edge), the likelier reason is the table running off there, and that says what to move."""
    if leak_edge is not None:
        return TableNotFound(_BORDER_ADVICE[leak_edge] + " (the cloth's colour reaches that edge and its cushion "
                             "edges are not all found)")
    return TableNotFound(why)


def _local_cloth(lab: np.ndarray, filled: np.ndarray) -> np.ndarray:
    """The cloth's colour where each pixel is, as the cloth region shows it (vignetting, uneven light): a
    normalised convolution of the cloth pixels (the region eroded away from its edge), reaching a little past the
    region so the cushions are compared with the cloth beside them, the region's median further out."""
    h, w = lab.shape[:2]
    sh, sw = filled.shape
    core = cv2.erode(filled, np.ones((7, 7), np.uint8))
    small = cv2.resize(lab, (sw, sh), interpolation=cv2.INTER_AREA)
    m = (core > 0).astype(np.float32)
    sigma = 0.03 * max(sh, sw)
    num = cv2.GaussianBlur(small * m[..., None], (0, 0), sigma)
    den = cv2.GaussianBlur(m, (0, 0), sigma)[..., None]
    local = num / np.maximum(den, 1e-6)
    med = np.median(small[core > 0], axis=0) if core.any() else small.reshape(-1, 3).mean(0)
    wgt = np.clip(den / 0.05, 0, 1)
    local = local * wgt + med * (1 - wgt)
    return cv2.resize(local.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)


def _sample(img: np.ndarray, pts: np.ndarray) -> np.ndarray:
    p = pts.astype(np.float32)
    return cv2.remap(img, p[:, 0].reshape(1, -1), p[:, 1].reshape(1, -1), cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_REPLICATE).ravel()


def _follow(pts: np.ndarray, nrm: np.ndarray, grads: tuple[np.ndarray, np.ndarray], sign: float = 1.0) -> np.ndarray:
    """Re-measure edge points centred on a robust quartic through them (a distorted nose is a smooth curve)."""
    c, d, inl = _fit_line_robust(pts)
    t = (pts - c) @ d
    off = (pts - c) @ np.array([-d[1], d[0]])
    for _ in range(3):
        coef = np.polyfit(t[inl], off[inl], 4)
        r = off - np.polyval(coef, t)
        s = max(1.4826 * np.median(np.abs(r[inl])), 0.1)
        inl = np.abs(r) < 3 * s
    base = c + t[:, None] * d + np.polyval(coef, t)[:, None] * np.array([-d[1], d[0]])
    e, g = _profile_edges(grads, base, nrm, 3.0, sign=sign)
    keep = (g > 0.5) & (np.linalg.norm(e - base, axis=1) < 2.5)
    return e[keep]


def fit_side_lines(points: Sequence[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    return [_fit_line_robust(p) for p in points]


def intersect(l1: tuple[np.ndarray, np.ndarray], l2: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    (c1, d1), (c2, d2) = l1, l2
    a = np.array([d1, -d2]).T
    s = np.linalg.solve(a, c2 - c1)
    return c1 + s[0] * d1


def straight_corners(edge_points: Sequence[np.ndarray]) -> np.ndarray:
    """Corners as intersections of straight lines through each cushion's points (no lens model)."""
    lines = [(c, d) for c, d, _ in fit_side_lines(edge_points)]
    # Corner i is where side i-1 meets side i (BL: left and bottom).
    return np.array([intersect(lines[(i - 1) % 4], lines[i]) for i in range(4)])


def hidden_nose(image: np.ndarray, points: np.ndarray, centre: np.ndarray, max_px: float,
                cloth: ClothModel | None = None) -> np.ndarray | None:
    """The nose of a cushion seen from behind, from the outer edge of its top (``points``, where the rail starts):
    the cloth-coloured top and the cloth differ only slightly in brightness, so the step is found first on the
    profile averaged along the whole cushion (inwards from the outer edge, up to ``max_px``), then point by point
    within 2 px of it. None when no step stands out."""
    pts = np.asarray(points, dtype=np.float64)
    if len(pts) < 10:
        return None
    c, d, _ = _fit_line_robust(pts)
    n_in = np.array([-d[1], d[0]])
    if (np.asarray(centre) - c) @ n_in < 0:
        n_in = -n_in
    lab = cv2.GaussianBlur(cv2.cvtColor(_to_bgr(image), cv2.COLOR_BGR2LAB).astype(np.float32), (0, 0), 1.0)
    light = np.ascontiguousarray(lab[..., 0])
    step = 0.5
    offs = np.arange(-8.0, max_px, step, dtype=np.float32)
    sx = (pts[:, None, 0] + offs[None, :] * n_in[0]).astype(np.float32)
    sy = (pts[:, None, 1] + offs[None, :] * n_in[1]).astype(np.float32)
    prof = cv2.remap(light, sx, sy, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    mean = np.median(prof, axis=0)
    grad = np.abs(np.gradient(mean, step))
    start = 8  # skip what is still rail: search from where the colour is the cloth's (the cushion's top)
    if cloth is not None:
        d = lab - cloth.lab.astype(np.float32)
        score = np.ascontiguousarray(np.sqrt(0.25 * d[..., 0] ** 2 + d[..., 1] ** 2 + d[..., 2] ** 2))
        sprof = np.median(cv2.remap(score, sx, sy, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE), axis=0)
        inside = np.flatnonzero(sprof < 20)
        if len(inside) == 0:
            return None
        start = int(inside[0])
    grad[:start + max(6, int(0.3 * (max_px - 4) / 2.5 / step))] = 0  # past the blur of the rail's own edge
    k = int(np.argmax(grad))
    noise = np.median(np.abs(np.gradient(prof, step, axis=1)))
    if grad[k] < max(0.8, 1.5 * noise / np.sqrt(len(pts)) * 4):
        return None
    sign = -1.0 if mean[min(k + 2, len(mean) - 1)] < mean[max(k - 2, 0)] else 1.0
    base = pts + offs[k] * n_in
    gx = cv2.Sobel(light, cv2.CV_32F, 1, 0, ksize=3) / 8
    gy = cv2.Sobel(light, cv2.CV_32F, 0, 1, ksize=3) / 8
    e, g = _profile_edges((gx, gy), base, np.repeat(n_in[None], len(pts), axis=0), 2.0, sign=sign)
    keep = g > 0.3
    return e[keep] if keep.sum() >= 10 else None
