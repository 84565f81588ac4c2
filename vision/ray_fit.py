"""Sub-pixel ball centres from radial profiles: the silhouette's edge found along rays from a first guess.

For each ball, rays leave the guessed centre at evenly spaced angles; along each the soft "not cloth" mask is
sampled at full resolution and the edge is where it falls below one half and stays there for about a pixel. A ray
that meets no such edge near the expected radius is dropped: it runs into a touching ball, an arm or a cue lying
over the ball, or a shadowless gap. The centre, the radius and the ellipticity (a motion smear) are then the
least-squares fit of rho(theta) = r + dx cos + dy sin + a cos 2 theta + b sin 2 theta to the kept edges. Dropping
rays, not pixels, is what makes touching balls and balls half under a cue come out right without segmentation.

Everything is batched over the balls of a frame: one gather, a few array operations, one small solve per ball.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.arrays import clamp
from vision.background import ColourReference, DifferenceParams, colour_difference, unit_and_norm

N_RAYS = 48
_INNER, _OUTER = 0.55, 1.45  # sampled part of each ray, in expected radii
_SAMPLES = 40
_EDGE_LO, _EDGE_HI = 0.72, 1.3  # an edge must lie in this band of expected radii
_BELOW_RUN = 3  # samples below one half after the edge (about a pixel): a real edge, not a gap at a contact


@dataclass(frozen=True)
class RayFit:
    centre: np.ndarray  # (N, 2) silhouette centre, full-resolution pixels
    radius: np.ndarray  # (N,) fitted silhouette radius (px)
    elongation: np.ndarray  # (N,) major minus minor half-extent (px): motion smear
    valid: np.ndarray  # (N, K) which rays found the edge
    angles: np.ndarray  # (K,)
    # Fitted over expected silhouette radius, per iteration: the radius held for the balls without balanced rays.
    radius_ratio: tuple[float, ...] = ()


def _windows(centres: np.ndarray, half: int, shape: tuple[int, int]) -> np.ndarray:
    """Integer window origins (N, 2) of size 2*half+1 around ``centres``, kept inside an image of ``shape``."""
    h, w = shape
    o = np.round(centres).astype(int) - half
    o[:, 0] = clamp(o[:, 0], 0, w - (2 * half + 1))
    o[:, 1] = clamp(o[:, 1], 0, h - (2 * half + 1))
    return o


_ANGLES = np.linspace(0.0, 2 * np.pi, N_RAYS, endpoint=False)
_COS64, _SIN64 = np.cos(_ANGLES), np.sin(_ANGLES)
_UNIT = np.stack([_COS64, _SIN64])  # (2, K) the rays' directions
_S = np.linspace(_INNER, _OUTER, _SAMPLES)
_LO, _HI = int(np.searchsorted(_S, _EDGE_LO)), int(np.searchsorted(_S, _EDGE_HI))
# An edge is a sample j in [_LO - 1, _HI) above one half with the _BELOW_RUN after it below: only the samples from
# _LO - 1 to _HI - 1 + _BELOW_RUN are ever looked at (29 of the 40), and they are taken outermost first, so that
# the outermost edge is the first found.
_J0 = max(_LO - 1, 0)
_J1 = min(_HI - 1 + _BELOW_RUN, _SAMPLES - 1) + 1
_S_OUT = _S[_J0:_J1][::-1].copy()
_OFFS = np.arange(-2.0, 2.01, 0.25)
_AROUND = np.array([-1, 0, 1])
# The least-squares basis of rho(theta) = r + dx cos + dy sin + a cos 2 theta + b sin 2 theta, and its per-ray outer
# products: the normal equations of every ball are then one matrix product with the ray weights.
_BASIS = np.stack([np.ones(N_RAYS), np.cos(_ANGLES), np.sin(_ANGLES), np.cos(2 * _ANGLES), np.sin(2 * _ANGLES)],
                  axis=-1)  # (K, 5)
_OUTER_PRODUCTS = (_BASIS[:, :, None] * _BASIS[:, None, :]).reshape(N_RAYS, 25)
_GRID = 1024.0  # sample coordinates rounded to 1/1024 px: exact in float32 up to 16k rows of windows
_RIDGE = 1e-6  # added to the normal matrices' diagonal: a ball with no rays on one side stays solvable
_RIDGE_EYE = _RIDGE * np.eye(5)
_MOVING_PX = 2.0  # a ball this far from every place of the frame before is moving (fit_balls' moving_from)


def window_maps(frame: np.ndarray, ref: ColourReference, params: DifferenceParams, centres: np.ndarray,
                half: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """In windows (N, S, S) around ``centres``: the soft mask; the unsaturated shadow-tolerant difference it comes
    from, then the plain colour distance to the background, their windows stacked as one tall image (2 N S, S);
    and the windows' origins (N, 2)."""
    n = len(centres)
    size = 2 * half + 1
    origins = _windows(centres, half, frame.shape[:2])
    # Slicing window by window beats one fancy-indexed gather here: each copy is a few contiguous rows.
    f = np.empty((n * size, size, 3), np.uint8)
    bg = np.empty((n * size, size, 3), np.uint8)
    for i, (x, y) in enumerate(origins):
        f[i * size:(i + 1) * size] = frame[y:y + size, x:x + size]
        bg[i * size:(i + 1) * size] = ref.image[y:y + size, x:x + size]
    # The background's colour directions made here from its 8-bit windows (the same values as the reference's
    # own): read from the full-resolution float images, each window was 16 bytes a pixel from memory out of cache.
    unit, norm = unit_and_norm(bg)
    d = colour_difference(f, unit, norm, params)
    soft = cv2.min(cv2.multiply(d, 1.0 / params.saturation), 1.0)
    diff = cv2.subtract(f, bg, dtype=cv2.CV_32F)
    plain = cv2.sqrt(cv2.transform(cv2.multiply(diff, diff), np.ones((1, 3), np.float32)))
    return soft.reshape(n, size, size), np.concatenate([d, plain]), origins


def _bilinear(stacked: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """Sample M square float32 windows stacked as one tall image (M * S, S) at window coordinates ``xy`` (2, M, ...:
    the x then the y of every point), bilinearly; float32 out, shaped like one of x and y.

    Through one cv2.remap over the tall image (each window's rows offset by its index): an order of magnitude
    faster than numpy's gathers for the ~100k samples of a full table. The coordinates are first rounded to
    1/1024 px, so that with the row offset added they are still exact in float32: unrounded, a window far down
    the stack kept fewer bits of its fractions than the first, and a ball's fit (whose ray decisions are
    thresholds) moved by up to 0.2 px with its place in the batch: searched again in a changed rectangle, it came
    out elsewhere than in the whole frame. (Not remap's own fixed-point maps: those sample on a 1/32 px grid.)
    The x and the y are one array so that each step is one numpy call on both (a call costs more than its work)."""
    s = stacked.shape[1]
    m = xy.shape[1]
    shape = xy.shape[1:]
    q = clamp(xy.reshape(2, m, -1), 0.0, s - 1.001)
    q *= _GRID
    np.rint(q, out=q)
    q /= _GRID
    q[1] += (np.arange(m) * s)[:, None]
    q = q.astype(np.float32)
    return cv2.remap(stacked, q[0], q[1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE).reshape(shape)


def edge_radii(masks: np.ndarray, local_centres: np.ndarray, radii: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Edge distance (N, K) along each ray and whether it was found (N, K); ``masks`` (N, S, S) float32."""
    n, size, _ = masks.shape
    # Coordinates in float64, as remap's 1/32 px grid would round float32 sums either way.
    rho = radii[:, None] * _S_OUT  # (N, L) outermost first
    xy = local_centres.T[:, :, None, None] + _UNIT[:, None, :, None] * rho[None, :, None, :]  # (2, N, K, L)
    prof = _bilinear(masks.reshape(n * size, size), xy).astype(np.float64)  # (N, K, L)
    below = prof < 0.5
    # Sample i (outermost first) is an edge when it is high and the _BELOW_RUN samples just outside it (i - 1 ..
    # i - RUN) are low; edge[..., e] is sample e + _BELOW_RUN's.
    m = below.shape[-1] - _BELOW_RUN
    edge = ~below[..., _BELOW_RUN:]
    for k in range(1, _BELOW_RUN + 1):
        edge &= below[..., _BELOW_RUN - k:_BELOW_RUN - k + m]
    i = np.argmax(edge, axis=-1)  # the outermost qualifying transition: an inner dip (a dark patch on a black
    # ball) is not the edge
    found = edge.reshape(-1, m)[np.arange(n * N_RAYS), i.reshape(-1)].reshape(i.shape)
    at = np.arange(n * N_RAYS).reshape(n, N_RAYS) * prof.shape[-1] + i + _BELOW_RUN
    flat = prof.reshape(-1)
    p0, p1 = flat[at], flat[at - 1]
    frac = clamp((p0 - 0.5) / np.maximum(p0 - p1, 1e-6), 0.0, 1.0)
    step = radii * (_S[1] - _S[0])
    r_edge = radii[:, None] * _S_OUT[i + _BELOW_RUN] + frac * step[:, None]
    return r_edge, found


def refine_edges(both: np.ndarray, local_centres: np.ndarray, r_edge: np.ndarray, found: np.ndarray) -> np.ndarray:
    """Move each found edge to the steepest outward fall of a colour difference within 2 px of it.

    A fixed threshold on the soft mask sits farther out where the ball contrasts strongly with the cloth (its lit
    side) than where it contrasts weakly (its shaded side, a dark ball), and JPEG's blurred chroma widens that
    difference; the steepest point of an edge stays where the edge is. The plain colour distance gives the
    sharpest edges, except where a shadow lies beyond the ball's shaded side: there it sees the shadow as more
    ball, and the shadow-tolerant difference (which sees the shadow as cloth) is used instead.

    ``both``: the two differences' windows stacked as one tall image (2 N S, S), the shadow-tolerant ones first:
    one remap samples both at the same points. (Exact as two remaps would be: the stack is far from the 16k rows
    where the coordinates' rounding would no longer hold.) The steepest fall is the parabolic peak of the outward
    derivative."""
    n = len(r_edge)
    rho = r_edge[..., None] + _OFFS  # (N, K, M)
    xy = local_centres.T[:, :, None, None] + _UNIT[:, None, :, None] * rho[None]  # (2, N, K, M)
    # The second half of the stack is the plain distance's windows: the same points, rows N * S further down.
    xy = np.concatenate([xy, xy], axis=1)
    q = _bilinear(both, xy).astype(np.float64)  # (2N, K, M)
    slope = q[..., 2:] - q[..., :-2]  # (2N, K, M - 2) central differences at offs[1:-1]
    ms = slope.shape[-1]
    j = clamp(np.argmin(slope, axis=-1), 1, ms - 2)
    at = (np.arange(2 * n * N_RAYS).reshape(2 * n, N_RAYS) * ms + j)[..., None] + _AROUND
    s0, s1, s2 = np.moveaxis(slope.reshape(-1)[at], -1, 0)
    denom = s0 - 2 * s1 + s2
    delta = clamp(0.5 * (s0 - s2) / np.where(np.abs(denom) > 1e-6, denom, np.inf), -1.0, 1.0)
    fall = (r_edge + _OFFS[1:-1][j].reshape(2, n, N_RAYS)) + (delta * 0.25).reshape(2, n, N_RAYS)
    inside = (q[..., 0] + q[..., 1] + q[..., 2]) / 3.0
    outside = (q[..., -1] + q[..., -2] + q[..., -3]) / 3.0
    r_tol, r_plain = fall
    in_t, in_p, out_t, out_p = inside[:n], inside[n:], outside[:n], outside[n:]
    clean_outside = out_p < 0.3 * np.maximum(in_p, 1e-6)
    refined = np.where(clean_outside & (in_p - out_p > 8.0), r_plain, r_tol)
    ok = found & ((in_t - out_t > 8.0) | (in_p - out_p > 8.0))
    return np.where(ok, refined, r_edge)


def _median(v: np.ndarray) -> float:
    """np.median of a short non-empty 1-d array, without its generic machinery (a tenth of the time)."""
    v = np.sort(v)
    m = len(v) // 2
    return float(v[m]) if len(v) % 2 else 0.5 * float(v[m - 1] + v[m])


def _normal_equations(r_edge: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The weighted least-squares system of every ball: matrices (N, 5, 5) and right-hand sides (N, 5)."""
    a = (w @ _OUTER_PRODUCTS).reshape(-1, 5, 5)
    b = (w * r_edge) @ _BASIS
    return a, b


def _solve_free(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(N, 5): r, dx, dy, a, b with the radius free."""
    return np.linalg.solve(a + _RIDGE_EYE, b[..., None])[..., 0]


def _solve_fixed(a: np.ndarray, b: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """(N, 5): the radius held at ``radius`` (N,), the shift fitted alone (a 2 x 2 system, solved in closed form),
    the harmonics zero."""
    # The shift's system is the free one's (dx, dy) block with the held radius moved to the right-hand side.
    a11, a12, a22 = a[:, 1, 1] + _RIDGE, a[:, 1, 2], a[:, 2, 2] + _RIDGE
    b1 = b[:, 1] - radius * a[:, 0, 1]
    b2 = b[:, 2] - radius * a[:, 0, 2]
    det = a11 * a22 - a12 * a12
    out = np.zeros((len(b), 5))
    out[:, 0] = radius
    out[:, 1] = (a22 * b1 - a12 * b2) / det
    out[:, 2] = (a11 * b2 - a12 * b1) / det
    return out


def _solve(a: np.ndarray, b: np.ndarray, balanced: np.ndarray, n_balanced: int, held: np.ndarray,
           free: np.ndarray | None = None) -> np.ndarray:
    """(N, 5): the free solution for the ``balanced`` balls, the one with the radius held at ``held`` (N,) for
    the others; each system solved only if some ball needs it (``free``: the free one, if already solved)."""
    if n_balanced == len(balanced):
        return _solve_free(a, b) if free is None else free
    fixed = _solve_fixed(a, b, held)
    if n_balanced == 0:
        return fixed
    return np.where(balanced[:, None], _solve_free(a, b) if free is None else free, fixed)


def _iterate(masks: np.ndarray, both: np.ndarray, local: np.ndarray, radii: np.ndarray, ratio: float | None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """One pass of the fit from centres ``local`` (N, 2, window coordinates): each ball's shift (N, 2), radius
    (N,), elongation (N,), the rays kept (N, K), and the radius ratio held (``ratio``, or the batch's median)."""
    r_edge, found = edge_radii(masks, local, radii)
    r_edge = refine_edges(both, local, r_edge, found)
    w = found.astype(np.float64)
    a, b = _normal_equations(r_edge, w)
    count = a[:, 0, 0]
    # Each half of the circle must have edges for the radius to be separable from the shift.
    cos_cov = np.abs(a[:, 0, 1]) / np.maximum(count, 1)
    sin_cov = np.abs(a[:, 0, 2]) / np.maximum(count, 1)
    balanced = (count >= 0.6 * N_RAYS) & (cos_cov < 0.25) & (sin_cov < 0.25)
    n_balanced = int(np.count_nonzero(balanced))
    free = _solve_free(a, b) if n_balanced else None
    if ratio is None:
        ratio = _median(free[balanced, 0] / radii[balanced]) if n_balanced else 0.97
    sol = _solve(a, b, balanced, n_balanced, radii * ratio, free)
    # One pass of outlier rejection: edges more than a pixel off the fit (a neighbour's shadow, a chalk mark).
    pred = sol @ _BASIS.T
    keep = found & (np.abs(r_edge - pred) < 1.0)
    w = keep.astype(np.float64)
    a, b = _normal_equations(r_edge, w)
    sol = _solve(a, b, balanced, n_balanced, radii * ratio)
    ok = a[:, 0, 0] >= 5
    shift = np.where(ok[:, None], sol[:, 1:3], 0.0)
    # A wild shift means the guess was not a ball: keep it bounded, the score will say the rest.
    shift = clamp(shift, -0.5 * radii[:, None], 0.5 * radii[:, None])
    radius = np.where(ok, sol[:, 0], radii)
    elong = np.where(ok & balanced, 2.0 * np.hypot(sol[:, 3], sol[:, 4]), 0.0)
    return shift, radius, elong, keep, float(ratio)


def fit_balls(frame: np.ndarray, ref: ColourReference, params: DifferenceParams, centres: np.ndarray,
              radii: np.ndarray, iterations: int = 2, radius_ratio: tuple[float, ...] | None = None,
              moving_from: np.ndarray | None = None) -> RayFit:
    """Refine ball centres (N, 2) of expected silhouette radii (N,) in a full-resolution ``frame``.

    A ball whose edge rays do not surround it (half under a cue, a dark ball's shaded side) has its radius held at
    the expected one times the fitted-over-expected ratio of the balls that do: the median over this batch, or
    ``radius_ratio`` (one per iteration, as ``RayFit.radius_ratio`` gives them) when given: a few balls searched
    again where the frame changed would otherwise get a ratio of their own, and the held ball a different fit
    than in the whole frame.

    ``moving_from``: where the balls were a frame ago (M, 2 pixels), with ``radius_ratio``. A ball whose first
    pass puts it more than ``_MOVING_PX`` from all of them is moving, and that pass's fit stands: the passes after
    it move a centre by 0.05 px or so (0.1 mm), which counts for a ball at rest, whose resting place is the mean
    of such fits, and not for one moving 4 mm a frame or more. (Nor for a ball fitted from its own fit of the
    frame before, it would seem; but one pass for those put bench_vision's carom balls at rest 0.50 mm off, two
    0.48.)"""
    n = len(centres)
    angles = _ANGLES
    if n == 0:
        z = np.zeros(0)
        return RayFit(np.zeros((0, 2)), z, z, np.zeros((0, N_RAYS), bool), angles)
    if radius_ratio is not None and len(radius_ratio) != iterations:
        raise ValueError(f"radius_ratio needs one value per iteration ({iterations}), got {len(radius_ratio)}")
    if moving_from is not None and radius_ratio is None:
        raise ValueError("moving_from needs radius_ratio: a part of the batch would get a ratio of its own")
    radii = np.asarray(radii, dtype=np.float64)
    half = int(np.ceil(radii.max() * (_OUTER + 0.1))) + 5  # the first guess is within a pixel or two
    masks, both, origins = window_maps(frame, ref, params, centres, half)
    size = masks.shape[1]
    c = np.asarray(centres, dtype=np.float64).copy()
    radius = radii.copy()
    elong = np.zeros(n)
    found = np.zeros((n, N_RAYS), bool)
    ratios: list[float] = []
    for it in range(iterations):
        given = None if radius_ratio is None else radius_ratio[it]
        on = None  # all the balls
        if it and moving_from is not None:
            gap = np.hypot(c[:, None, 0] - moving_from[None, :, 0], c[:, None, 1] - moving_from[None, :, 1])
            on = np.nonzero(gap.min(axis=1) < _MOVING_PX)[0] if len(moving_from) else np.zeros(0, int)
        if on is not None and len(on) < n:  # some balls moving: the others alone go on
            ratios.append(float(given))
            if len(on) == 0:
                continue
            sub_both = both.reshape(2, n, size, size)[:, on].reshape(2 * len(on) * size, size)
            shift, radius[on], elong[on], found[on], _ = _iterate(masks[on], sub_both, c[on] - origins[on],
                                                                  radii[on], given)
            c[on] += shift
            continue
        shift, radius, elong, found, ratio = _iterate(masks, both, c - origins, radii, given)
        ratios.append(ratio)
        c += shift
    return RayFit(c, radius, elong, found, angles, tuple(ratios))
