"""A small CNN over each ball's image, run through onnxruntime, for what colour alone cannot tell: a pool stripe
lying cap-up against the cue ball, the carom spot white's dots against the plain white.

Thin wrapper (one session, pure pre- and post-processing, a warm-up call at start): every ball is resampled to a
fixed 24 x 24 patch spanning 2.3 of its radii, so the net sees every ball at the same scale wherever it lies and
whatever the camera. The ONNX file carries the kinds it outputs in its metadata (``kinds``, comma-separated) and was
trained offline on rendered balls by ``python -m vision.train_identity``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

import cv2
import numpy as np

PATCH = 24
SPAN = 1.15  # the patch covers +-SPAN radii around the centre
MODELS = Path(__file__).with_name("models")


def ball_patches(frame: np.ndarray, px: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """(N, 3, PATCH, PATCH) float32 patches in [0, 1] (BGR planes) around each ball, in one remap call."""
    px = np.asarray(px, dtype=np.float64).reshape(-1, 2)
    radius = np.asarray(radius, dtype=np.float64).reshape(-1)
    n = len(px)
    if n == 0:
        return np.zeros((0, 3, PATCH, PATCH), np.float32)
    g = (np.arange(PATCH) + 0.5) / PATCH * 2.0 - 1.0  # -1..1 across the patch
    gx = px[:, 0, None, None] + SPAN * radius[:, None, None] * g[None, None, :]
    gy = px[:, 1, None, None] + SPAN * radius[:, None, None] * g[None, :, None]
    map_x = np.broadcast_to(gx, (n, PATCH, PATCH)).reshape(n * PATCH, PATCH).astype(np.float32)
    map_y = np.broadcast_to(gy, (n, PATCH, PATCH)).reshape(n * PATCH, PATCH).astype(np.float32)
    patches = cv2.remap(frame, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    patches = patches.reshape(n, PATCH, PATCH, 3).astype(np.float32) * (1.0 / 255.0)
    return np.ascontiguousarray(patches.transpose(0, 3, 1, 2))


# onnxruntime's graph optimisations tried, each session built at one level and the faster kept (``fastest``). The
# full level's layout rewrite (NCHWc, x86 with AVX-512) is worth more or less than nothing by net and CPU: on this
# machine it made the bilhar net five times slower (1.27 ms a patch against 0.23 at the extended level) and the
# carom net twice as fast (0.024 against 0.053). The probabilities agree to 1e-4 (tested). MLAS's NCHWc kernels
# are x86's, so on the Pi's ARM cores the two levels should time alike (not measured there): either is kept.
LEVELS = ("ORT_ENABLE_EXTENDED", "ORT_ENABLE_ALL")


def fastest(sessions: list, input_name: str, clock: Callable[[], float] = time.perf_counter,
            repeats: int = 3) -> Any:
    """The session that runs a batch of four patches soonest (the best of ``repeats`` runs each, after a warm-up
    run, which is also each session's first and slowest)."""
    probe = {input_name: np.zeros((4, 3, PATCH, PATCH), np.float32)}
    best, best_s = None, float("inf")
    for session in sessions:
        session.run(None, probe)
        took = float("inf")
        for _ in range(repeats):
            t0 = clock()
            session.run(None, probe)
            took = min(took, clock() - t0)
        if took < best_s:
            best, best_s = session, took
    return best


class CropClassifier:
    """Kind probabilities from ball patches, through an ONNX model."""

    def __init__(self, path: str | Path) -> None:
        import onnxruntime as ort  # the product's only model runtime

        sessions = []
        for level in LEVELS:
            options = ort.SessionOptions()
            options.intra_op_num_threads = 1  # one core: the rest of the pipeline runs on the other
            options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
            sessions.append(ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"]))
        meta = sessions[0].get_modelmeta().custom_metadata_map
        if "kinds" not in meta:
            raise ValueError(f"{path}: no 'kinds' in the model's metadata")
        self.kinds: tuple[str, ...] = tuple(meta["kinds"].split(","))
        self._input = sessions[0].get_inputs()[0].name
        self.session = fastest(sessions, self._input)

    @classmethod
    def for_discipline(cls, family: str) -> "CropClassifier | None":
        """The committed model for a family (``bilhar``, ``carom``), or None if there is none."""
        path = MODELS / f"identity_{family}.onnx"
        return cls(path) if path.is_file() else None

    def kind_probs(self, frame: np.ndarray, px: np.ndarray, radius: np.ndarray) -> np.ndarray:
        """(N, n_kinds) probabilities, columns in ``self.kinds`` order."""
        patches = ball_patches(frame, px, radius)
        if len(patches) == 0:
            return np.zeros((0, len(self.kinds)))
        logits = self.session.run(None, {self._input: patches})[0].astype(np.float64)
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(axis=1, keepdims=True)
