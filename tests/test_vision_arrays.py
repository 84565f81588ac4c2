"""The per-frame path's array helpers against their plain numpy definitions."""

import numpy as np
import pytest

from vision.arrays import shrink


@pytest.mark.parametrize("factor", [2, 3, 4, 8])
def test_shrink_is_the_block_mean_within_rounding(factor: int) -> None:
    rng = np.random.default_rng(factor)
    image = rng.integers(0, 256, size=(101, 203, 3), dtype=np.uint8)
    out = shrink(image, factor)
    h, w = 101 // factor, 203 // factor
    assert out.shape == (h, w, 3) and out.dtype == np.uint8
    exact = image[:h * factor, :w * factor].reshape(h, factor, w, factor, 3).mean(axis=(1, 3))
    # Each halving rounds to a whole level, so each adds at most half a level (one step: OpenCV's own rounding).
    halvings = int(np.log2(factor)) if factor & (factor - 1) == 0 else 1
    assert np.abs(out - exact).max() <= 0.5 * halvings + 1e-9
    assert np.abs(out - exact).mean() < 0.5


def test_shrink_by_one_is_the_image_itself() -> None:
    image = np.zeros((5, 7), np.uint8)
    assert shrink(image, 1) is image
