"""Sub-pixel ball centres from radial profiles: the silhouette's edge found along rays from a first guess.

For each ball, rays leave the guessed centre at evenly spaced angles; along each the soft "not cloth" mask is
sampled at full resolution and the edge is where it falls below one half and stays there for about a pixel. A ray
that meets no such edge near the expected radius is dropped: it runs into a touching ball, an arm or a cue lying
over the ball, or a shadowless gap. The centre, the radius and the ellipticity (a motion smear) are then the
least-squares fit of rho(theta) = r + dx cos + dy sin + a cos 2 theta + b sin 2 theta to the kept edges. Dropping
rays, not pixels, is what makes touching balls and balls half under a cue come out right without segmentation.

The windows are gathered for the frame's balls at once (a few array operations); the rounds of the fit run
compiled, ball by ball and ray by ray (``vision.ray_kernel``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import cv2
import numpy as np

from vision.arrays import clamp
from vision.background import (ColourReference, DifferenceParams, brightness_ratio, colour_difference,
                               shade_invariant_difference)
from vision.ray_kernel import ANGLES, N_RAYS, OUTER, Rounds, fit_rounds


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


def _row_medians(v: np.ndarray) -> np.ndarray:
    """np.median(v, axis=1) of a (N, P) array, by one partition: np.median's generic path cost five times as much
    on the few balls of a frame."""
    p = v.shape[1]
    mid = p // 2
    if p % 2:
        return np.partition(v, mid, axis=1)[:, mid]
    part = np.partition(v, (mid - 1, mid), axis=1)
    return (part[:, mid - 1] + part[:, mid]) / 2


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
    angles = ANGLES
    if n == 0:
        z = np.zeros(0)
        return RayFit(np.zeros((0, 2)), z, z, np.zeros((0, N_RAYS), bool), angles)
    radii = np.asarray(radii, dtype=np.float64)
    half = int(np.ceil(radii.max() * (OUTER + 0.1))) + 5  # the first guess is within a pixel or two
    masks, tolerant, plain, origins = window_maps(frame, ref, params, centres, half)
    masks, weak = _low_contrast_masks(frame, ref, masks, tolerant, origins, radii, params)
    c = np.asarray(centres, dtype=np.float64).copy()
    fits = fit_rounds(masks, tolerant, plain, origins, c, radii, iterations, radius_ratio)
    _short_balls_again(fits, frame, ref, params, masks, plain, origins, c, radii, weak)
    return RayFit(fits.centre, fits.radius, fits.elongation, fits.found, angles, tuple(map(float, fits.ratios)))


def _short_balls_again(fits: Rounds, frame: np.ndarray, ref: ColourReference, params: DifferenceParams,
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
    ratio = float(fits.ratios[-1]) if len(fits.ratios) else 1.0
    held = ratio * radii
    short = np.nonzero(fits.balanced & ~weak & (fits.radius < _SHORT * held) & (held - fits.radius > _SHORT_PX))[0]
    if not len(short):
        return
    size = masks.shape[1]
    si = np.stack([_shade_invariant_window(frame, ref, params, origins[i], size) for i in short])
    soft = np.minimum(si * (1.0 / params.saturation), 1.0)
    again = fit_rounds(soft, si, plain[short], origins[short], centres[short], radii[short], len(fits.ratios),
                       fits.ratios)
    # Kept where it reaches farther, but not beyond the batch's radius (a fit taking a shadow in). Its rays found
    # stay the first fit's, and with them its score: the refit finds fewer (seed 104's 10: 36-38 of 44-48, the
    # band's shaded rim is soft), and on real overhead snooker frames (bench_detection, LukasSeglias) balls whose
    # score fell with the refit's rays were lost, recall 0.978 -> 0.964; as it is, 0.980.
    expected = held[short]
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


# A balanced ball fitted under this share of the batch's radius is fitted again (see above) ... At 0.92 a navy ball
# at rest whose first fit came out at 0.91-0.92 flipped from frame to frame between a fit 1.6 px off and the refit's
# (bilhar seed 106's 2, 3 mm apart); at 0.95 the balls fitted well (0.95 and up) are still left alone.
_SHORT = 0.95
# ... and short by at least this many pixels: a fit's radius wanders by a few tenths of a pixel, which on a small
# ball (6 px, the fixture clips' 30 fps) is 5 % and more; refitted from such noise, a ball came out up to 4 mm
# elsewhere in a whole-frame search than where the incremental detector found it from another guess.
_SHORT_PX = 0.5
_LONG = 1.03  # ... and the new fit is kept only under this share
