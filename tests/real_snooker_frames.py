"""The real overhead snooker frames of LukasSeglias/billiard-ai with their per-ball truth, and a camera for them.

Read from ``../shared/real`` (never copied into the repository). The annotation gives every ball's pixel centre and
colour, and its position in the authors' table frame (mm, origin at the table centre, x along the image's width, y
up the image). Our camera model for the view is fitted here to those positions (a pinhole without distortion, the
ball centres at z = R, the focal length set from the ball's apparent size), and the cushion noses were read off
the first frame by eye: (62, 80), (1172, 80), (1172, 636), (62, 636) pixels.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from calibration.camera import CameraModel
from rules.tables import TableSpec, preset

REAL = Path(os.environ.get("ARBITRO_REAL", Path(__file__).resolve().parents[2] / "shared" / "real"))
FOLDER = REAL / "LukasSeglias__billiard-ai/test/billiard_detection/resources/test_detection/with_projector_on/with_halo_2"
BALL_DIAMETER = 52.5
NOSE_CORNERS_PX = np.array([[62.0, 80.0], [1172.0, 80.0], [1172.0, 636.0], [62.0, 636.0]])
# The authors' colour names -> our snooker ball kinds.
KINDS = {"WHITE": "cue", "RED": "red", "YELLOW": "yellow", "GREEN": "green", "BROWN": "brown", "BLUE": "blue",
         "PINK": "pink", "BLACK": "black"}


@dataclass(frozen=True)
class Case:
    image: Path
    px: np.ndarray  # (N, 2) true pixel centres
    kinds: tuple[str, ...]  # snooker kind of each ball (cue, red, yellow, ...)
    table_xy: np.ndarray  # (N, 2) the authors' table coordinates (mm)


def available() -> bool:
    return (FOLDER / "testcases.json").is_file()


def cases() -> list[Case]:
    data = json.loads((FOLDER / "testcases.json").read_text())
    out = []
    for c in data["cases"]:
        name = Path(c["image"]).name.replace(".png", ".jpg")  # converted to JPEG, the json still says .png
        balls = c["balls"]
        out.append(Case(FOLDER / name, np.array([[b["pixelX"], b["pixelY"]] for b in balls], float),
                        tuple(KINDS[b["type"]] for b in balls), np.array([[b["x"], b["y"]] for b in balls], float)))
    return out


def camera_and_table(all_cases: list[Case] | None = None) -> tuple[CameraModel, TableSpec]:
    """A CameraModel and TableSpec for the view, fitted to the annotated balls of every frame."""
    all_cases = all_cases or cases()
    px = np.concatenate([c.px for c in all_cases])
    xy_a = np.concatenate([c.table_xy for c in all_cases])
    r = BALL_DIAMETER / 2
    size = (1280, 720)
    # The authors' frame has its origin at the table centre; ours at the bottom-left nose corner with x across the
    # table: rotate by a quarter turn (x_ours = -y_theirs, y_ours = x_theirs) and shift later by the nose corners.
    xy = np.stack([-xy_a[:, 1], xy_a[:, 0]], axis=1)
    h, _ = cv2.findHomography(xy, px)
    ppm = np.sqrt(abs(np.linalg.det(h[:2, :2]))) / h[2, 2]  # pixels per mm near the table centre
    depth = 1600.0  # any plausible camera height: only f / depth is seen, fixed by the ball's apparent size
    f = ppm * depth
    k = np.array([[f, 0, (size[0] - 1) / 2], [0, f, (size[1] - 1) / 2], [0, 0, 1]])
    obj = np.concatenate([xy, np.full((len(xy), 1), r)], axis=1)
    ok, rvec, tvec = cv2.solvePnP(obj, px, k, np.zeros(5), flags=cv2.SOLVEPNP_ITERATIVE)
    if not ok:
        raise RuntimeError("solvePnP failed on the annotations")
    cam = CameraModel(size, k, np.zeros(5), rvec.ravel(), tvec.ravel())
    corners = cam.image_to_table(NOSE_CORNERS_PX, 0.0)
    lo = corners.min(axis=0)
    hi = corners.max(axis=0)
    # Move the table origin to the bottom-left nose corner: shift the pose by the same amount.
    shift = np.array([lo[0], lo[1], 0.0])
    tvec2 = cam.tvec + cam.rotation @ shift
    cam = CameraModel(size, k, np.zeros(5), cam.rvec.copy(), tvec2)
    w, length = hi - lo
    table = preset("snooker_full").with_overrides(name="lukas_small_snooker", width=float(w), length=float(length),
                                                  ball_diameter=BALL_DIAMETER)
    return cam, table


@dataclass(frozen=True)
class Score:
    recall: float
    precision: float
    median_px: float
    p90_px: float
    true: int
    found: int


def match(found_px: np.ndarray, true_px: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Greedy nearest matching within ``tol`` px: (true index, found index) pairs."""
    if len(found_px) == 0 or len(true_px) == 0:
        return np.zeros(0, int), np.zeros(0, int)
    d = np.linalg.norm(true_px[:, None, :] - found_px[None, :, :], axis=2)
    pairs_t, pairs_f = [], []
    for flat in np.argsort(d, axis=None):
        i, j = np.unravel_index(flat, d.shape)
        if d[i, j] > tol:
            break
        if i in pairs_t or j in pairs_f:
            continue
        pairs_t.append(i)
        pairs_f.append(j)
    return np.array(pairs_t, int), np.array(pairs_f, int)


def score(per_frame: list[tuple[np.ndarray, np.ndarray]], tol: float) -> Score:
    """Recall, precision and centre error over frames of (found px, true px)."""
    errs, n_true, n_found, n_match = [], 0, 0, 0
    for found, true in per_frame:
        ti, fi = match(found, true, tol)
        errs += list(np.linalg.norm(true[ti] - found[fi], axis=1))
        n_true += len(true)
        n_found += len(found)
        n_match += len(ti)
    e = np.array(errs) if errs else np.array([np.inf])
    return Score(n_match / max(n_true, 1), n_match / max(n_found, 1), float(np.median(e)),
                 float(np.percentile(e, 90)), n_true, n_found)
