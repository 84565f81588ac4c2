"""The chalk lines in an empty-table model learnt from a frame with balls on it.

The replay learns its empty table from its first frames: it paints out whatever differs from a wide median of them
(``BallDetector.background_without_empty_table``). A chalk line (the snooker baulk line and its D, Chapó's cabaña
lines, a balkline's lines) is thinner than the median's window, so it differs as much as a ball does; painted out,
it was foreground in every frame after, and a ball resting against it was read with the line in its outline
(Chapó seed 118's 1, 3.6 mm off). Here the lines are found (``chalk_lines``), kept as the frame has them, never used
as a source of the paint (``painted_keeping_lines``), and carried straight through the holes painted where a ball
stood on one (``_bridge_lines``).
"""

from __future__ import annotations

import cv2
import numpy as np


def chalk_lines(differs: np.ndarray) -> np.ndarray:
    """The long, thin parts (uint8 0/1) of a mask of what differs from the cloth: the chalk lines (the baulk line
    and its D, Chapó's lines, a balkline's boxes), a pixel or two wide at the reduced resolution and longer than
    a ball is across. What lies along a line of ``_LINE_PX`` at some angle but is no part of a blob (over
    ``_MIN_BLOB_PX`` of ``_THICK`` squares); a ball, a cue, a hand and a ball's shadow all are."""
    thick = cv2.morphologyEx(differs, cv2.MORPH_OPEN, _THICK)
    # ... of some size: a line straddling the pixels is 3 wide here and there, and such a stretch fitting the square
    # was taken for a blob, painted and grown, and the line had holes along it (sinuca seed 138's baulk line by the
    # green).
    _, labels, stats, _ = cv2.connectedComponentsWithStats(thick, connectivity=8)
    thick = (stats[:, cv2.CC_STAT_AREA] >= _MIN_BLOB_PX)[labels].astype(np.uint8) & thick
    # Looked for in the mask grown by a pixel: a line a pixel or two wide at a slant is a staircase that no
    # straight kernel fits, grown it holds one at every angle.
    grown = cv2.dilate(differs, _THICK)
    long = np.zeros_like(differs)
    for kernel in _LINE_KERNELS:
        long |= cv2.morphologyEx(grown, cv2.MORPH_OPEN, kernel)
    return long & differs & (1 - thick)


def painted_keeping_lines(frame: np.ndarray, hole: np.ndarray, lines: np.ndarray,
                          under_balls: np.ndarray | None = None) -> np.ndarray:
    """``frame`` with ``hole`` (uint8 0/1) painted over from the cloth round it, and the chalk ``lines`` (uint8 0/1,
    the frame's size) as the frame has them outside the hole and carried straight through it, but for the pixels
    ``under_balls`` (uint8 0/1, optional), which stay cloth.

    The lines are painted over too before they are put back: a line left beside the hole is a source the painting
    spreads, and the paint round a ball resting by a line smeared the line into a pale blob that every later frame
    differed from (Chapó seed 200: the Mingo, 16 px from its line, read 8 mm onto it every other frame, then as set
    off and touched)."""
    if not lines.any():
        return cv2.inpaint(frame, hole, 5, cv2.INPAINT_TELEA)
    # Grown by a pixel: the lines' soft edges, a blend of line and cloth, are no source either.
    keep = cv2.dilate(lines, _THICK)
    out = cv2.inpaint(frame, hole | keep, 5, cv2.INPAINT_TELEA)
    kept = keep & (1 - hole)
    cv2.copyTo(frame, kept, out)
    cloth = out.copy() if under_balls is not None else None
    _bridge_lines(frame, out, hole, kept)
    if cloth is not None:
        cv2.copyTo(cloth, under_balls & hole, out)
    return out


def _bridge_lines(frame: np.ndarray, out: np.ndarray, hole: np.ndarray, kept: np.ndarray) -> None:
    """Where a straight line enters a hole and leaves it on the far side, the band along it
    across the hole in ``out`` made of the frame's pixels just beyond the hole's two sides, at the same offset from
    the line and blended by how far across they are (in place).

    Without it the line had a gap where a ball stood on it (the snooker fixture clip's brown on the baulk line):
    stubs of line at the ball's edge differed from the cloth painted there, and the ball's reading swung by 2 mm
    from frame to frame with the stubs in or out of its outline, until it read as touched."""
    n, labels, stats, _ = cv2.connectedComponentsWithStats(hole, connectivity=8)
    h, w = hole.shape
    for c in range(1, n):
        x, y, bw, bh = stats[c, :4]
        reach = max(bw, bh)  # the lines are followed this far past the hole
        x0, y0 = max(x - reach, 0), max(y - reach, 0)
        x1, y1 = min(x + bw + reach, w), min(y + bh + reach, h)
        in_hole = (labels[y0:y1, x0:x1] == c).astype(np.uint8)
        line_here = np.ascontiguousarray(kept[y0:y1, x0:x1])
        at_edge = cv2.dilate(in_hole, _EDGE) & line_here
        n_ends, end_labels = cv2.connectedComponents(at_edge, connectivity=8)
        if n_ends < 3:  # a line must come in and go out
            continue
        _, line_labels = cv2.connectedComponents(line_here, connectivity=8)
        ends = [_line_end(end_labels == e, line_labels, reach) for e in range(1, n_ends)]
        for i in range(len(ends)):
            for j in range(i + 1, len(ends)):
                _bridge(frame, out, in_hole, (x0, y0), ends[i], ends[j])


def _line_end(end: np.ndarray, line_labels: np.ndarray, reach: int) -> tuple[np.ndarray, np.ndarray]:
    """Where a line meets a hole's edge (the pixels ``end``, window coordinates): their centre (x, y), and the
    pixels (M, 2) of the line they belong to within ``reach`` of it."""
    ys, xs = np.nonzero(end)
    centre = np.array([xs.mean(), ys.mean()])
    label = np.bincount(line_labels[ys, xs]).argmax()
    ly, lx = np.nonzero(line_labels == label)
    pts = np.stack([lx, ly], axis=1).astype(np.float64)
    return centre, pts[np.linalg.norm(pts - centre, axis=1) <= reach]


def _bridge(frame: np.ndarray, out: np.ndarray, in_hole: np.ndarray, origin: tuple[int, int],
            a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> None:
    """The band from line end ``a`` to ``b`` across the hole, if the two are one line, copied in from beyond each
    end (see ``_bridge_lines``). One line: each end's line runs on, away from the hole, along the chord between
    them (the direction of the pixels at one end alone can be another line's: the D leaving the baulk line where
    a ball stands at their junction, sinuca seed 138's green)."""
    (ca, pa), (cb, pb) = a, b
    chord = cb - ca
    if np.linalg.norm(chord) < 2.0:
        return
    axis_point, u = ca, chord / np.linalg.norm(chord)
    for tolerance in (2 * _INLIER_PX, _INLIER_PX):  # about the chord, then about the fit to what lay along it
        normal = np.array([-u[1], u[0]])
        ta, tb = (pa - axis_point) @ u, (pb - axis_point) @ u
        sa, sb = (ca - axis_point) @ u, (cb - axis_point) @ u
        near_a = np.abs((pa - axis_point) @ normal) <= tolerance
        near_b = np.abs((pb - axis_point) @ normal) <= tolerance
        on_a, on_b = pa[near_a & (ta <= sa)], pb[near_b & (tb >= sb)]
        # Each side's line runs on along the chord, unbroken, for a stretch: not a line crossing the chord's band
        # (a few pixels of it), nor an arc bending away.
        run_a, run_b = sa - ta[near_a & (ta <= sa)], tb[near_b & (tb >= sb)] - sb
        if min(len(run_a), len(run_b)) == 0 or min(run_a.max(), run_b.max()) < _MIN_RUN_PX or \
                len(on_a) < _DENSITY * run_a.max() or len(on_b) < _DENSITY * run_b.max():
            return
        fitted, point = _fit_line(np.concatenate([on_a, on_b]))
        if abs(float(fitted @ u)) < _COS_ALONG or abs(float(_fit_line(on_a)[0] @ _fit_line(on_b)[0])) < _COS_SIDES:
            return
        u = fitted if fitted @ u > 0 else -fitted
        axis_point = point
    normal = np.array([-u[1], u[0]])
    # The ends' places on the line's axis: the centre of a hole's edge pixels can lie off it (where another line
    # meets it there too), and a bridge from there carried the line across shifted sideways.
    ca = axis_point + ((ca - axis_point) @ u) * u
    cb = axis_point + ((cb - axis_point) @ u) * u
    length = float((cb - ca) @ u)
    if length < 2.0:
        return
    half = float(np.percentile(np.abs((np.concatenate([on_a, on_b]) - axis_point) @ normal), 95)) + 1.0
    ys, xs = np.nonzero(in_hole)
    rel = np.stack([xs, ys], axis=1) - ca
    t, s = rel @ u, rel @ normal
    band = (t >= 0) & (t <= length) & (np.abs(s) <= half)
    if not band.any():
        return
    t, s, xs, ys = t[band], s[band], xs[band], ys[band]
    # From a pixel's offset across the line, just beyond each end (by the band's half-width: the hole's edge may
    # cross the line at a slant), blended linearly from one end to the other (the light changes along a line).
    beyond = half + 2.0
    ox, oy = origin
    from_a = _sample(frame, ca - beyond * u + s[:, None] * normal + (ox, oy))
    from_b = _sample(frame, cb + beyond * u + s[:, None] * normal + (ox, oy))
    f = (t / length)[:, None]
    out[ys + oy, xs + ox] = np.clip((1 - f) * from_a + f * from_b + 0.5, 0, 255).astype(np.uint8)


def _fit_line(pts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The straight line fitted to pixels (N, 2): its unit direction and a point on it."""
    vx, vy, px, py = cv2.fitLine(pts.astype(np.float32), cv2.DIST_L2, 0, 0.01, 0.01).ravel()
    return np.array([vx, vy], dtype=np.float64), np.array([px, py], dtype=np.float64)


def _sample(image: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """Bilinear samples (N, 3) of a BGR ``image`` at points (N, 2), clamped to the image."""
    m = xy.astype(np.float32).reshape(-1, 1, 2)
    got = cv2.remap(image, m[..., 0], m[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return got.reshape(-1, 3).astype(np.float64)


def _line_kernel(length: int, angle_deg: float) -> np.ndarray:
    """A one-pixel line of ``length`` through the centre of a square kernel, at ``angle_deg``."""
    k = np.zeros((length, length), np.uint8)
    c = (length - 1) / 2
    dx, dy = np.cos(np.radians(angle_deg)) * c, np.sin(np.radians(angle_deg)) * c
    cv2.line(k, (int(round(c - dx)), int(round(c - dy))), (int(round(c + dx)), int(round(c + dy))), 1)
    return k


_THICK = np.ones((3, 3), np.uint8)  # reduced-resolution pixels: a chalk line (1-2 px there) is thinner; a cue is not
_MIN_BLOB_PX = 20  # ... and what fits it is a blob over this area (a ball at the reduced resolution is 90 and more)
_LINE_PX = 21  # longer than a ball across at the reduced resolution, grown by a pixel (14-16 px at 1456 x 1088)
_LINE_KERNELS = tuple(_line_kernel(_LINE_PX, a) for a in np.arange(0.0, 180.0, 15.0))
_EDGE = np.ones((5, 5), np.uint8)  # a line's pixels within 2 px of a hole are where it meets the hole
_MIN_RUN_PX = 16  # full-resolution pixels a line runs on along the chord past each side of a hole, to bridge it ...
_DENSITY = 2.0  # ... with at least this many of its pixels a pixel of that run (a line kept is 3-6 px wide)
_INLIER_PX = 4.0  # a line kept is a few pixels wide at full resolution (nearest-upscaled, grown by one): its pixels
# lie within this of its axis
# One straight line: the fit of both sides within 8 degrees of the chord, and each side's own fit within 3 degrees
# of the other's. Not an arc: a straight band across a hole by the D (a ball and its shadow, 50 px tall at 1456 x
# 1088) was 2 px off the arc, a stripe beside the ball in every frame (sinuca seed 114's red, whose kiss was lost).
_COS_ALONG = float(np.cos(np.radians(8.0)))
_COS_SIDES = float(np.cos(np.radians(3.0)))

__all__ = ["chalk_lines", "painted_keeping_lines"]
