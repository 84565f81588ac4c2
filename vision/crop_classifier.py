"""A small CNN over each ball's image, run through onnxruntime, for what colour alone cannot tell: a pool stripe
lying cap-up against the cue ball, the carom spot white's dots against the plain white.

Thin wrapper (one session, pure pre- and post-processing, a warm-up call at start): every ball is resampled to a
fixed 24 x 24 patch spanning 2.3 of its radii, so the net sees every ball at the same scale wherever it lies and
whatever the camera. The ONNX file carries the kinds it outputs in its metadata (``kinds``, comma-separated) and was
trained offline on rendered balls by ``python -m vision.train_identity``.
"""

from __future__ import annotations

from pathlib import Path

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


class CropClassifier:
    """Kind probabilities from ball patches, through an ONNX model."""

    def __init__(self, path: str | Path) -> None:
        import onnxruntime as ort  # the product's only model runtime

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1  # one core: the rest of the pipeline runs on the other
        # Not ORT_ENABLE_ALL, the default: its layout rewrite (NCHWc, on x86 with AVX-512) made this small net five
        # times slower here, 1.22 ms a patch against 0.23, the outputs the same to 3e-5 in the logits. (MLAS's
        # NCHWc kernels are x86's: on the Pi's ARM cores the rewrite does not happen, and this level loses nothing.)
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        meta = self.session.get_modelmeta().custom_metadata_map
        if "kinds" not in meta:
            raise ValueError(f"{path}: no 'kinds' in the model's metadata")
        self.kinds: tuple[str, ...] = tuple(meta["kinds"].split(","))
        self._input = self.session.get_inputs()[0].name
        self.session.run(None, {self._input: np.zeros((1, 3, PATCH, PATCH), np.float32)})  # warm-up

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
