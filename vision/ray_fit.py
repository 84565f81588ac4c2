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

import functools
from dataclasses import dataclass

import cv2
import numpy as np

from vision.arrays import clamp
from vision.background import (ColourReference, DifferenceParams, brightness_ratio, colour_difference,
                               shade_invariant_difference)

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
_S = np.linspace(_INNER, _OUTER, _SAMPLES)
_LO, _HI = int(np.searchsorted(_S, _EDGE_LO)), int(np.searchsorted(_S, _EDGE_HI))
# The samples edge_radii reads: an edge at sample j (from _LO - 1, below _HI) and the _BELOW_RUN after it; the rest
# of each ray was sampled for nothing (a third of the samples).
_BAND = slice(max(_LO - 1, 0), min(_HI + _BELOW_RUN, _SAMPLES))
_OFFS = np.arange(-2.0, 2.01, 0.25)
# The least-squares basis of rho(theta) = r + dx cos + dy sin + a cos 2 theta + b sin 2 theta, and its per-ray outer
# products: the normal equations of every ball are then one matrix product with the ray weights.
_BASIS = np.stack([np.ones(N_RAYS), np.cos(_ANGLES), np.sin(_ANGLES), np.cos(2 * _ANGLES), np.sin(2 * _ANGLES)],
                  axis=-1)  # (K, 5)
_OUTER_PRODUCTS = (_BASIS[:, :, None] * _BASIS[:, None, :]).reshape(N_RAYS, 25)
_GRID = 1024.0  # sample coordinates rounded to 1/1024 px: exact in float32 up to 16k rows of windows
_RIDGE = 1e-6  # added to the normal matrices' diagonal: a ball with no rays on one side stays solvable


def window_maps(frame: np.ndarray, ref: ColourReference, params: DifferenceParams, centres: np.ndarray,
                half: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """In windows (N, S, S) around ``centres``: the soft mask, the unsaturated shadow-tolerant difference it comes
    from, the plain colour distance to the background, and the windows' origins (N, 2)."""
    n = len(centres)
    size = 2 * half + 1
    origins = _windows(centres, half, frame.shape[:2])
    # Slicing window by window beats one fancy-indexed gather here: each copy is a few contiguous rows.
    f = np.empty((n, size, size, 3), np.uint8)
    u = np.empty((n, size, size, 3), np.float32)
    nm = np.empty((n, size, size), np.float32)
    bg = np.empty((n, size, size, 3), np.float32)
    for i, (x, y) in enumerate(origins):
        f[i] = frame[y:y + size, x:x + size]
        u[i] = ref.unit[y:y + size, x:x + size]
        nm[i] = ref.norm[y:y + size, x:x + size]
        bg[i] = ref.image[y:y + size, x:x + size]
    f = f.reshape(n * size, size, 3)
    d = colour_difference(f, u.reshape(n * size, size, 3), nm.reshape(n * size, size), params)
    soft = cv2.min(cv2.multiply(d, 1.0 / params.saturation), 1.0)
    diff = cv2.subtract(f.astype(np.float32), bg.reshape(n * size, size, 3))
    plain = cv2.sqrt(cv2.transform(cv2.multiply(diff, diff), np.ones((1, 3), np.float32)))
    return soft.reshape(n, size, size), d.reshape(n, size, size), plain.reshape(n, size, size), origins


def _bilinear(stacked: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Sample M square float32 windows stacked as one tall image (M * S, S) at window coordinates x, y (M, ...),
    bilinearly; float32 out, shaped like x.

    Through one cv2.remap over the tall image (each window's rows offset by its index): an order of magnitude
    faster than numpy's gathers for the ~100k samples of a full table. The coordinates are first rounded to
    1/1024 px, so that with the row offset added they are still exact in float32: unrounded, a window far down
    the stack kept fewer bits of its fractions than the first, and a ball's fit (whose ray decisions are
    thresholds) moved by up to 0.2 px with its place in the batch: searched again in a changed rectangle, it came
    out elsewhere than in the whole frame. (Not remap's own fixed-point maps: those sample on a 1/32 px grid.)"""
    return _bilinear_each((stacked,), x, y)[0]


def _bilinear_each(stacks: tuple[np.ndarray, ...], x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, ...]:
    """``_bilinear`` of each of several stacks of the same shape at the same points, the coordinates made once."""
    s = stacks[0].shape[1]
    m = len(x)
    xg, yg = _on_grid(x.reshape(m, -1), s), _on_grid(y.reshape(m, -1), s, s)
    return tuple(cv2.remap(st, xg, yg, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE).reshape(x.shape)
                 for st in stacks)


def _on_grid(v: np.ndarray, s: int, row_step: int = 0) -> np.ndarray:
    """Window coordinates (M, L) held inside a window of side ``s``, rounded to 1/``_GRID`` px, plus ``row_step``
    times each row's index; float32. In place on one temporary: this runs on every sample of every fit."""
    t = np.maximum(v, 0.0)
    np.minimum(t, s - 1.001, out=t)
    t *= _GRID
    np.rint(t, out=t)
    t /= _GRID
    if row_step:
        t += (np.arange(len(t)) * row_step)[:, None]
    return t.astype(np.float32)


def _pick(a: np.ndarray, j: np.ndarray) -> np.ndarray:
    """a[..., j] per leading index: a (..., L), j (...) integer."""
    flat = a.reshape(-1, a.shape[-1])
    return flat[np.arange(len(flat)), j.reshape(-1)].reshape(j.shape)


def edge_radii(masks: np.ndarray, local_centres: np.ndarray, radii: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Edge distance (N, K) along each ray and whether it was found (N, K); ``masks`` (N, S, S) float32."""
    n, size, _ = masks.shape
    # Only the samples an edge can be read from: the band's and the run of low ones after it (_BAND).
    s = _S[_BAND]
    # Coordinates in float64, as remap's 1/32 px grid would round float32 sums either way.
    rho = radii[:, None] * s[None, :]  # (N, J)
    cx = local_centres[:, 0, None, None] + _COS64[None, :, None] * rho[:, None, :]
    cy = local_centres[:, 1, None, None] + _SIN64[None, :, None] * rho[:, None, :]
    prof = _bilinear(masks.reshape(n * size, size), cx, cy)  # (N, K, J) float32
    below = prof < 0.5
    m = len(s) - _BELOW_RUN
    edge = ~below[..., :m]  # sample j high, samples j+1 .. j+RUN low
    for k in range(1, _BELOW_RUN + 1):
        edge &= below[..., k:k + m]
    # The outermost qualifying transition: an inner dip (a dark patch on a black ball) is not the edge.
    j = m - 1 - np.argmax(edge[..., ::-1], axis=-1)
    found = edge.any(axis=-1)
    p0 = _pick(prof, j).astype(np.float64)
    p1 = _pick(prof, j + 1).astype(np.float64)
    frac = clamp((p0 - 0.5) / np.maximum(p0 - p1, 1e-6), 0.0, 1.0)
    step = radii * (_S[1] - _S[0])
    r_edge = radii[:, None] * s[j] + frac * step[:, None]
    return r_edge, found


def refine_edges(tolerant: np.ndarray, plain: np.ndarray, local_centres: np.ndarray, r_edge: np.ndarray,
                 found: np.ndarray) -> np.ndarray:
    """Move each found edge to the steepest outward fall of a colour difference within 2 px of it.

    A fixed threshold on the soft mask sits farther out where the ball contrasts strongly with the cloth (its lit
    side) than where it contrasts weakly (its shaded side, a dark ball), and JPEG's blurred chroma widens that
    difference; the steepest point of an edge stays where the edge is. The plain colour distance gives the
    sharpest edges, except where a shadow lies beyond the ball's shaded side: there it sees the shadow as more
    ball, and the shadow-tolerant difference (which sees the shadow as cloth) is used instead.

    ``tolerant``, ``plain``: the two differences' windows, each stacked as one tall image (N * S, S). (Not the
    two as one image: remap rounds its coordinates to 1/32 px, and the larger row offsets of a taller stack round
    differently, which moves a few edges by a sample.) The steepest fall is the parabolic peak of the outward
    derivative."""
    n = len(r_edge)
    rho = r_edge[..., None] + _OFFS  # (N, K, M)
    cx = local_centres[:, 0, None, None] + _COS64[None, :, None] * rho
    cy = local_centres[:, 1, None, None] + _SIN64[None, :, None] * rho
    q = np.concatenate(_bilinear_each((tolerant, plain), cx, cy)).astype(np.float64)
    slope = q[..., 2:] - q[..., :-2]  # (2N, K, M - 2) central differences at offs[1:-1]
    j = clamp(np.argmin(slope, axis=-1), 1, slope.shape[-1] - 2)
    s0, s1, s2 = _pick(slope, j - 1), _pick(slope, j), _pick(slope, j + 1)
    denom = s0 - 2 * s1 + s2
    delta = clamp(0.5 * (s0 - s2) / np.where(np.abs(denom) > 1e-6, denom, np.inf), -1.0, 1.0)
    fall = np.concatenate([r_edge, r_edge]) + _OFFS[1:-1][j] + delta * 0.25
    inside = (q[..., 0] + q[..., 1] + q[..., 2]) / 3.0
    outside = (q[..., -1] + q[..., -2] + q[..., -3]) / 3.0
    r_tol, r_plain = fall[:n], fall[n:]
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


def _row_medians(v: np.ndarray) -> np.ndarray:
    """np.median(v, axis=1) of a (N, P) array, by one partition: np.median's generic path cost five times as much
    on the few balls of a frame."""
    p = v.shape[1]
    mid = p // 2
    if p % 2:
        return np.partition(v, mid, axis=1)[:, mid]
    part = np.partition(v, (mid - 1, mid), axis=1)
    return (part[:, mid - 1] + part[:, mid]) / 2


def _normal_equations(r_edge: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The weighted least-squares system of every ball: matrices (N, 5, 5) and right-hand sides (N, 5)."""
    a = (w @ _OUTER_PRODUCTS).reshape(-1, 5, 5)
    b = (w * r_edge) @ _BASIS
    return a, b


def _solve_free(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(N, 5): r, dx, dy, a, b with the radius free."""
    return np.linalg.solve(a + _RIDGE * np.eye(5)[None], b[..., None])[..., 0]


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


def _low_contrast_masks(frame: np.ndarray, ref: ColourReference, masks: np.ndarray, tolerant: np.ndarray,
                        origins: np.ndarray, radii: np.ndarray, params: DifferenceParams
                        ) -> tuple[np.ndarray, np.ndarray]:
    """The soft masks (N, S, S) with each ball's saturation lowered to its own contrast where that is weak, and
    which balls (N,) had theirs made so.

    A ball nearly the cloth's colour (snooker's green on green cloth: 13-14 grey levels of shadow-tolerant
    difference inside it, against 2-4 on the cloth) never reaches one half of a mask saturated at 55: no ray finds
    its edge. Its edge is where the difference falls to half of the ball's own (the half-maximum of its profile),
    so the mask of such a ball is saturated at the median difference inside it instead; the gain is capped so that
    a candidate on bare cloth (noise of a few grey levels) does not become a ball. A ball that already fills its
    mask (nearly every ball: 57-280 inside) is untouched.

    A weak ball's mask is made of the shade-invariant difference (``vision.background``): the shadow-tolerant one
    of a ball near the cloth's colour fades on its shaded half, and the fit came out 4-5 px towards the light."""
    n, size, _ = masks.shape
    inner = _from_centre(size // 2) < _LEVEL_INNER * float(radii.min())  # the windows are centred on the guesses
    level = _row_medians(tolerant[:, inner])
    gain = clamp(_LEVEL_FILL * params.saturation / np.maximum(level, 1e-3), 1.0, _MAX_GAIN)
    weak = np.nonzero(gain > 1.0)[0]
    changed = np.zeros(n, bool)
    if len(weak):
        masks = masks.copy()
        for i in weak:  # a few balls at most: one small window each
            x, y = origins[i]
            win = (slice(y, y + size), slice(x, x + size))
            if brightness_ratio(frame[win], ref.unit[win], ref.norm[win])[inner].mean() < params.shadow_floor:
                # Darker than any shadow (the black): its darkness is its contrast, which the tolerant difference
                # already counts, and the shade-invariant one would lift its dark pixels' noise into a ball.
                continue
            d = _shade_invariant_window(frame, ref, params, origins[i], size)
            # Smoothed first: at the gain, the cloth's pixel noise (and a video's blocky chroma) reaches the mask's
            # half here and there, and a ray stopped by a speck just outside the ball finds no edge. The
            # half-maximum of a symmetric blur of an edge is where the edge is.
            calm = cv2.GaussianBlur(d, (0, 0), _WEAK_SIGMA)
            gain_i = float(clamp(_LEVEL_FILL * params.saturation / max(float(np.median(d[inner])), 1e-3), 1.0,
                                 _MAX_GAIN))
            masks[i] = np.minimum(calm * (gain_i / params.saturation), 1.0)
            changed[i] = True
    return masks, changed


@functools.lru_cache(maxsize=8)
def _from_centre(half: int) -> np.ndarray:
    """(2 half + 1, 2 half + 1) each pixel's distance from the window's centre (made once a window size)."""
    yy, xx = np.mgrid[-half:half + 1, -half:half + 1]
    out = np.hypot(xx, yy)
    out.flags.writeable = False  # shared by every call
    return out


_LEVEL_INNER = 0.6  # the part of a ball (in expected radii) whose median difference is its contrast
_LEVEL_FILL = 0.9  # a ball whose inside differs by less than this share of the saturation gets a gain ...
_MAX_GAIN = 4.0  # ... of at most this: the green's 13 grey levels fill the mask, the cloth's noise (2-4) does not
_WEAK_SIGMA = 1.0  # px: the smoothing of a weak ball's difference before its gain


def fit_balls(frame: np.ndarray, ref: ColourReference, params: DifferenceParams, centres: np.ndarray,
              radii: np.ndarray, iterations: int = 2, radius_ratio: tuple[float, ...] | None = None) -> RayFit:
    """Refine ball centres (N, 2) of expected silhouette radii (N,) in a full-resolution ``frame``.

    A ball whose edge rays do not surround it (half under a cue, a dark ball's shaded side) has its radius held at
    the expected one times the fitted-over-expected ratio of the balls that do: the median over this batch, or
    ``radius_ratio`` (one per iteration, as ``RayFit.radius_ratio`` gives them) when given: a few balls searched
    again where the frame changed would otherwise get a ratio of their own, and the held ball a different fit
    than in the whole frame.

    A ball whose rays surround it but whose fitted radius comes out short of the batch's (under ``_SHORT`` of it)
    is fitted again on the shade-invariant difference (``_short_balls_again``)."""
    n = len(centres)
    angles = _ANGLES
    if n == 0:
        z = np.zeros(0)
        return RayFit(np.zeros((0, 2)), z, z, np.zeros((0, N_RAYS), bool), angles)
    radii = np.asarray(radii, dtype=np.float64)
    half = int(np.ceil(radii.max() * (_OUTER + 0.1))) + 5  # the first guess is within a pixel or two
    masks, tolerant, plain, origins = window_maps(frame, ref, params, centres, half)
    masks, weak = _low_contrast_masks(frame, ref, masks, tolerant, origins, radii, params)
    if radius_ratio is not None and len(radius_ratio) != iterations:
        raise ValueError(f"radius_ratio needs one value per iteration ({iterations}), got {len(radius_ratio)}")
    c = np.asarray(centres, dtype=np.float64).copy()
    fits = _iterate(masks, tolerant, plain, origins, c, radii, iterations, radius_ratio)
    _short_balls_again(fits, frame, ref, params, masks, plain, origins, c, radii, weak)
    return RayFit(fits.centre, fits.radius, fits.elongation, fits.found, angles, tuple(fits.ratios))


@dataclass
class _Fits:
    centre: np.ndarray
    radius: np.ndarray
    elongation: np.ndarray
    found: np.ndarray
    balanced: np.ndarray
    ratios: list[float]


def _iterate(masks: np.ndarray, tolerant: np.ndarray, plain: np.ndarray, origins: np.ndarray, centres: np.ndarray,
             radii: np.ndarray, iterations: int, radius_ratio: tuple[float, ...] | None) -> _Fits:
    """The fit's rounds over the windows' masks (N, S, S) and differences (N, S, S), from ``centres`` (N, 2)."""
    n, size, _ = masks.shape
    tolerant, plain = tolerant.reshape(n * size, size), plain.reshape(n * size, size)
    c = centres.copy()
    radius = radii.copy()
    elong = np.zeros(n)
    found = np.zeros((n, N_RAYS), bool)
    balanced = np.zeros(n, bool)
    ratios: list[float] = []
    for it in range(iterations):
        local = c - origins
        r_edge, found = edge_radii(masks, local, radii)
        r_edge = refine_edges(tolerant, plain, local, r_edge, found)
        w = found.astype(np.float64)
        a, b = _normal_equations(r_edge, w)
        count = a[:, 0, 0]
        # Each half of the circle must have edges for the radius to be separable from the shift.
        cos_cov = np.abs(a[:, 0, 1]) / np.maximum(count, 1)
        sin_cov = np.abs(a[:, 0, 2]) / np.maximum(count, 1)
        balanced = (count >= 0.6 * N_RAYS) & (cos_cov < 0.25) & (sin_cov < 0.25)
        free = _solve_free(a, b)
        if radius_ratio is not None:
            ratio = radius_ratio[it]
        else:
            ratio = _median(free[balanced, 0] / radii[balanced]) if balanced.any() else 0.97
        ratios.append(float(ratio))
        sol = np.where(balanced[:, None], free, _solve_fixed(a, b, radii * ratio))
        # One pass of outlier rejection: edges more than a pixel off the fit (a neighbour's shadow, a chalk mark).
        pred = sol @ _BASIS.T
        keep = found & (np.abs(r_edge - pred) < 1.0)
        w = keep.astype(np.float64)
        a, b = _normal_equations(r_edge, w)
        sol = np.where(balanced[:, None], _solve_free(a, b), _solve_fixed(a, b, radii * ratio))
        ok = a[:, 0, 0] >= 5
        shift = np.where(ok[:, None], sol[:, 1:3], 0.0)
        # A wild shift means the guess was not a ball: keep it bounded, the score will say the rest.
        shift = clamp(shift, -0.5 * radii[:, None], 0.5 * radii[:, None])
        c += shift
        radius = np.where(ok, sol[:, 0], radii)
        elong = np.where(ok & balanced, 2.0 * np.hypot(sol[:, 3], sol[:, 4]), 0.0)
        found = keep
    return _Fits(c, radius, elong, found, balanced, ratios)


def _short_balls_again(fits: _Fits, frame: np.ndarray, ref: ColourReference, params: DifferenceParams,
                       masks: np.ndarray, plain: np.ndarray, origins: np.ndarray, centres: np.ndarray,
                       radii: np.ndarray, weak: np.ndarray) -> None:
    """Fit again, on the shade-invariant difference (``vision.background``), each ball whose rays surround it but
    whose radius came out under ``_SHORT`` of the batch's, and keep the new place and size where it reaches farther
    (in place).

    Bilhar's navy 10 and 2 and its green 14 on the blue cloth: on the shaded side the band's chroma offset from
    the cloth shrinks with the shading, the shadow-tolerant difference reads it as cloth, and the white rest of a
    striped ball makes a smaller circle of its own, which the free fit takes (seed 104's 10 8.6 mm off, a radius
    0.80-0.84 of the batch's; every ball placed within a mm fitted 0.95 or more). Not for every ball: a shadow
    on a dark cloth is not quite the cloth's chroma either (a camera's black level), and the shade-invariant
    difference lifts it towards a ball (real overhead snooker frames: recall 0.978 -> 0.951 with it everywhere).
    From the same windows and guesses as the first fit, so a ball's reading moves continuously with its pixels;
    the weak balls' masks are the shade-invariant difference already."""
    ratio = fits.ratios[-1] if fits.ratios else 1.0
    short = np.nonzero(fits.balanced & ~weak & (fits.radius < _SHORT * ratio * radii))[0]
    if not len(short):
        return
    size = masks.shape[1]
    si = np.stack([_shade_invariant_window(frame, ref, params, origins[i], size) for i in short])
    soft = np.minimum(si * (1.0 / params.saturation), 1.0)
    again = _iterate(soft, si, plain[short], origins[short], centres[short], radii[short], len(fits.ratios),
                     tuple(fits.ratios))
    # Kept where it reaches farther, but not beyond the batch's radius (a fit taking a shadow in). Its rays found
    # stay the first fit's, and with them its score: the refit finds fewer (seed 104's 10: 36-38 of 44-48, the
    # band's shaded rim is soft), and on real overhead snooker frames (bench_detection, LukasSeglias) balls whose
    # score fell with the refit's rays were lost, recall 0.978 -> 0.964; as it is, 0.980.
    expected = ratio * radii[short]
    better = again.balanced & (again.radius > fits.radius[short]) & (again.radius < _LONG * expected)
    kept = short[better]
    fits.centre[kept], fits.radius[kept], fits.elongation[kept] = \
        again.centre[better], again.radius[better], again.elongation[better]


def _shade_invariant_window(frame: np.ndarray, ref: ColourReference, params: DifferenceParams, origin: np.ndarray,
                            size: int) -> np.ndarray:
    """The shade-invariant difference (``vision.background``) in one window of ``size`` at ``origin`` (x, y)."""
    x, y = origin
    win = (slice(y, y + size), slice(x, x + size))
    return shade_invariant_difference(frame[win], ref.unit[win], ref.norm[win], params)


_SHORT = 0.92  # a balanced ball fitted under this share of the batch's radius is fitted again (see above) ...
_LONG = 1.03  # ... and the new fit is kept only under this share
