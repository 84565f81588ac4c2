"""The hand-marked real views of ``tests/real_corners.json``: where they are and how each is read.

The footage lives in ``../shared/real`` beside the repository and is never copied into it. An entry names a picture
or a clip (``path``), or a folder of a clip's frames with a ``frames`` glob (``"frames": "000*.jpg"``): then the
view is the per-pixel median of those frames, as ``arbitro calibrate`` takes the median of a clip's first still
frames (the balls and the cue that move over the shot are gone, the table stays).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT.parent / "shared" / "real"
ANNOTATIONS = ROOT / "tests" / "real_corners.json"


def annotations() -> list[dict[str, Any]]:
    """The views of tests/real_corners.json, in its order."""
    return json.loads(ANNOTATIONS.read_text())["views"]


def real_path(entry: dict[str, Any]) -> Path:
    return REAL / entry["path"]


def read_real_view(entry: dict[str, Any]) -> np.ndarray:
    """The BGR view an entry names (module docstring); FileNotFoundError when the footage is absent."""
    from calibration.table_finder import median_frame
    from device.calibrate_command import read_view

    path = real_path(entry)
    if not path.exists():
        raise FileNotFoundError(f"{path} is absent (the real footage lives in ../shared/real beside the repository)")
    if "frames" not in entry:
        return read_view(str(path))
    files = sorted(path.glob(entry["frames"]))
    if not files:
        raise FileNotFoundError(f"{path}/{entry['frames']}: no frames")
    return median_frame([cv2.imread(str(f), cv2.IMREAD_COLOR) for f in files])
