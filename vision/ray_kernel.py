"""The ray fit's rounds, compiled: edges along rays, their refinement, and the least-squares circle of every ball.

``vision.ray_fit`` says what the fit does and why; ``vision/_ray_kernel.c`` is the arithmetic, built by
``pip install`` (``setup.py``); this module is its Python face: the geometry's tables, the checks, the outputs.

Why C: the rounds were numpy array operations over a frame's balls (a remap per sampling, a few dozen ufuncs per
round), and on the 3-16 balls of a frame each of those ~150 calls cost its dispatch whatever the batch: 0.65 ms of
overhead before the first ball. One pass per ball per ray in C costs the arithmetic alone, ~40 us a ball. (numba
ran it as fast, but its compiler stays resident, +110 MB against the 300 MB budget, and its first compilation
took 18 s.)

The sampling is plain bilinear interpolation at the exact coordinates (the numpy rounds sampled through OpenCV's
remap over the windows stacked as one tall image, their coordinates rounded to 1/1024 px so that a ball's row in
the stack did not change them): the fit of one ball depends on its own window alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

try:
    from vision import _ray_kernel
except ImportError as exc:  # a source tree never installed, or installed where no compiler was
    raise ImportError("vision._ray_kernel is not built: run `pip install -e .` in the project (it compiles "
                      "vision/_ray_kernel.c, which needs gcc and Python's headers)") from exc

N_RAYS = 48
INNER, OUTER = 0.55, 1.45  # sampled part of each ray, in expected radii
SAMPLES = 40
EDGE_LO, EDGE_HI = 0.72, 1.3  # an edge must lie in this band of expected radii
BELOW_RUN = 3  # samples below one half after the edge (about a pixel): a real edge, not a gap at a contact

ANGLES = np.linspace(0.0, 2 * np.pi, N_RAYS, endpoint=False)
_COS, _SIN = np.cos(ANGLES), np.sin(ANGLES)
_S = np.linspace(INNER, OUTER, SAMPLES)
_LO, _HI = int(np.searchsorted(_S, EDGE_LO)), int(np.searchsorted(_S, EDGE_HI))
# The samples an edge is read from: an edge at sample j (from _LO - 1, below _HI) and the BELOW_RUN after it.
BAND = _S[max(_LO - 1, 0):min(_HI + BELOW_RUN, SAMPLES)].copy()
_STEP = float(_S[1] - _S[0])
# Where the steepest fall of a colour difference is looked for about an edge (px), a quarter pixel apart.
OFFSETS = np.arange(-2.0, 2.01, 0.25)
# The least-squares basis of rho(theta) = r + dx cos + dy sin + a cos 2 theta + b sin 2 theta.
BASIS = np.ascontiguousarray(np.stack([np.ones(N_RAYS), _COS, _SIN, np.cos(2 * ANGLES), np.sin(2 * ANGLES)],
                                      axis=-1))  # (K, 5)


class Rounds(NamedTuple):
    """What the rounds leave (named as in ``vision.ray_fit.RayFit``): centres (N, 2) and radii (N,) in px,
    elongations (N,), the rays kept (N, K), which
    balls were balanced (N,) and the radius ratio of each round (iterations,)."""

    centre: np.ndarray
    radius: np.ndarray
    elongation: np.ndarray
    found: np.ndarray
    balanced: np.ndarray
    ratios: np.ndarray


def fit_rounds(masks: np.ndarray, tolerant: np.ndarray, plain: np.ndarray, origins: np.ndarray,
               centres: np.ndarray, radii: np.ndarray, iterations: int,
               given_ratios: Sequence[float] | np.ndarray | None = None) -> Rounds:
    """The fit's rounds over windows (N, S, S) of the soft mask and the two differences, from ``centres`` (N, 2,
    full-resolution px) with windows at ``origins`` (N, 2) and expected radii (N,).

    Each round: every ray's edge, refined; each ball's free fit where its rays surround it ("balanced"), else its
    shift with the radius held at the expected one times the batch's ratio (the median fitted-over-expected of the
    balanced balls, or ``given_ratios[round]`` when given, one per round); the edges more than a pixel off that fit
    dropped (a neighbour's shadow, a chalk mark) and the ball fitted again; its shift (bounded by half a radius)
    applied."""
    n, size = masks.shape[0], masks.shape[-1]
    if masks.shape != (n, size, size) or tolerant.shape != masks.shape or plain.shape != masks.shape:
        raise ValueError(f"fit_rounds: windows {masks.shape}, {tolerant.shape}, {plain.shape} are not (N, S, S)")
    given = np.zeros(0) if given_ratios is None else np.ascontiguousarray(given_ratios, np.float64).reshape(-1)
    if len(given) not in (0, iterations):
        raise ValueError(f"fit_rounds: {len(given)} given ratios for {iterations} rounds")
    out = Rounds(np.empty((n, 2)), np.empty(n), np.empty(n), np.empty((n, N_RAYS), bool), np.empty(n, bool),
                 np.empty(iterations))
    _ray_kernel.fit_rounds(
        np.ascontiguousarray(masks, np.float32), np.ascontiguousarray(tolerant, np.float32),
        np.ascontiguousarray(plain, np.float32), np.ascontiguousarray(origins, np.float64),
        np.ascontiguousarray(centres, np.float64), np.ascontiguousarray(radii, np.float64), given,
        _COS, _SIN, BASIS, BAND, OFFSETS,
        out.centre, out.radius, out.elongation, out.found.view(np.uint8), out.balanced.view(np.uint8), out.ratios,
        n, size, iterations, _STEP, BELOW_RUN)
    return out
