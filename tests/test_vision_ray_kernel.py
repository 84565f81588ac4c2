"""The ray fit's compiled rounds (vision/_ray_kernel.c through vision.ray_kernel) on drawn discs."""

import numpy as np
import pytest

from vision import _ray_kernel
from vision.ray_kernel import N_RAYS, fit_rounds

SIZE = 41


def _disc(cx: float, cy: float, r: float, keep=lambda dx, dy: np.ones_like(dx, bool)) -> np.ndarray:
    """A soft mask (S, S) of a disc, its edge a pixel wide; ``keep`` hides part of it (a cue over the ball)."""
    y, x = np.mgrid[0:SIZE, 0:SIZE].astype(np.float64)
    d = np.hypot(x - cx, y - cy)
    m = np.clip(r + 0.5 - d, 0.0, 1.0)
    m[~keep(x - cx, y - cy)] = 0.0
    return m.astype(np.float32)


def _fit(masks, centres, radii, iterations=3, given=None):
    masks = np.stack(masks)
    diffs = 60.0 * masks  # a colour difference as sharp as the mask
    n = len(masks)
    return fit_rounds(masks, diffs, diffs, np.zeros((n, 2)), np.asarray(centres, float),
                      np.asarray(radii, float), iterations, given)


def test_a_whole_disc_is_found_where_it_is_from_a_guess_off_by_two_pixels():
    r = _fit([_disc(20.3, 19.6, 9.0)], [[18.5, 21.0]], [9.0])
    assert r.balanced[0]
    assert np.hypot(*(r.centre[0] - [20.3, 19.6])) < 0.1
    assert abs(r.radius[0] - 9.0) < 0.15
    assert r.found[0].sum() == N_RAYS
    assert r.elongation[0] < 0.1


def test_a_half_hidden_disc_keeps_its_centre_with_the_radius_held():
    # Only the left half seen: its rays do not surround it, so the radius is held and the shift fitted alone.
    half = _disc(20.0, 20.0, 9.0, keep=lambda dx, dy: dx < 0)
    r = _fit([half], [[21.0, 20.5]], [9.0], given=np.full(3, 1.0))
    assert not r.balanced[0]
    assert r.radius[0] == 9.0
    assert abs(r.centre[0, 0] - 20.0) < 0.25 and abs(r.centre[0, 1] - 20.0) < 0.25
    assert list(r.ratios) == [1.0, 1.0, 1.0]


def test_without_a_balanced_ball_the_held_radius_is_a_little_short():
    half = _disc(20.0, 20.0, 9.0, keep=lambda dx, dy: dy < 0)
    r = _fit([half], [[20.0, 20.0]], [9.0], iterations=1)
    assert not r.balanced[0]
    assert r.radius[0] == pytest.approx(0.97 * 9.0)


def test_a_balls_fit_does_not_depend_on_the_others_in_the_call():
    a, b = _disc(20.2, 20.7, 9.0), _disc(19.0, 21.4, 8.0)
    alone = _fit([a], [[21.0, 20.0]], [9.0], given=np.full(3, 1.0))
    both = _fit([b, a], [[20.0, 20.0], [21.0, 20.0]], [8.0, 9.0], given=np.full(3, 1.0))
    assert np.array_equal(alone.centre[0], both.centre[1])
    assert np.array_equal(alone.found[0], both.found[1])


def test_the_batch_ratio_is_the_median_of_the_balanced_balls():
    discs = [_disc(20.0, 20.0, 9.0), _disc(20.0, 20.0, 9.2), _disc(20.0, 20.0, 10.4)]  # median not mean
    r = _fit(discs, [[20.0, 20.0]] * 3, [9.0, 9.0, 9.0], iterations=1)
    assert r.balanced.all()
    assert r.ratios[0] == pytest.approx(np.median(r.radius) / 9.0, abs=1e-9)


def test_mismatched_windows_and_buffers_are_refused_with_a_message():
    m = np.zeros((1, SIZE, SIZE), np.float32)
    with pytest.raises(ValueError, match="not \\(N, S, S\\)"):
        fit_rounds(m, np.zeros((1, SIZE, SIZE - 1), np.float32), m, np.zeros((1, 2)), np.zeros((1, 2)),
                   np.ones(1), 1)
    with pytest.raises(ValueError, match="given ratios"):
        fit_rounds(m, m, m, np.zeros((1, 2)), np.zeros((1, 2)), np.ones(1), 2, np.ones(3))
    # The C side checks every buffer's length against the sizes it is told: no read past an array's end.
    t = np.ones(N_RAYS)
    out2, out1, found = np.zeros((1, 2)), np.zeros(1), np.zeros((1, N_RAYS), np.uint8)
    with pytest.raises(ValueError, match="masks holds"):
        _ray_kernel.fit_rounds(m[:, :-1], m, m, out2, out2, out1, np.zeros(0), t, t, np.ones((N_RAYS, 5)),
                               np.ones(10), np.ones(17), out2.copy(), out1.copy(), out1.copy(), found,
                               np.zeros(1, np.uint8), np.zeros(1), 1, SIZE, 1, 0.1, 3)
