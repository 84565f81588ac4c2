"""Which preset a table is, from the calibrated view: pockets, then markings.

Every preset's play area is about 2:1, so the aspect alone tells nothing; a view calibrated with any of them gives
table coordinates right up to scale. Then:

- pockets: the holes are much darker than the cushion top beside them. Six (corners and middles of the long
  cushions) is a snooker or pool table; four corners alone is Chapó; none is carom;
- on a six-pocket table a baulk line across at 0.2065 L (or 0.7935 L, seen from the other end) is snooker (the
  full-size table unless told otherwise: the scale of a view cannot tell 3569 mm from 2840 mm without a known
  size; ``--table sinuca_br`` says so), and no line is pool.

The answer says why; the command prints it and ``--table`` overrides it.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import CameraModel
from calibration.pose import nose_height_mm
from calibration.table_finder import TableOutline
from rules.tables import TableSpec


@dataclass(frozen=True)
class PresetGuess:
    name: str
    why: str
    pockets: tuple[str, ...]


def _sample(gray: np.ndarray, cam: CameraModel, xy: np.ndarray, z: float = 0.0) -> np.ndarray:
    px = cam.table_to_image(np.asarray(xy, dtype=float), z).astype(np.float32)
    h, w = gray.shape
    ok = (px[:, 0] >= 1) & (px[:, 0] < w - 2) & (px[:, 1] >= 1) & (px[:, 1] < h - 2)
    vals = cv2.remap(gray, px[:, 0].reshape(1, -1), px[:, 1].reshape(1, -1), cv2.INTER_LINEAR).ravel()
    return np.where(ok, vals, np.nan)


def pockets_seen(image: np.ndarray, camera: CameraModel, table: TableSpec) -> tuple[str, ...]:
    """The pockets whose mouths are seen: much darker than the cushion top beside them (an open hole), or of another
    colour altogether (a net or a liner showing in the hole, white or leather on PoolJK's table) where the cushion
    tops on both sides are the same colour."""
    gray = cv2.GaussianBlur(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), (0, 0), 2.0).astype(np.float32)
    lab = cv2.GaussianBlur(cv2.cvtColor(image, cv2.COLOR_BGR2LAB).astype(np.float32), (0, 0), 2.0)
    chans = [np.ascontiguousarray(lab[..., i]) for i in range(3)]
    W, L = table.width, table.length
    o = 0.014 * L  # just outside the nose, where a pocket's hole is and a cushion top otherwise
    probes = {
        "bottom_left": ([-o, -o], [[-o, 0.12 * L], [0.2 * W, -o]]),
        "bottom_right": ([W + o, -o], [[W + o, 0.12 * L], [0.8 * W, -o]]),
        "top_left": ([-o, L + o], [[-o, 0.88 * L], [0.2 * W, L + o]]),
        "top_right": ([W + o, L + o], [[W + o, 0.88 * L], [0.8 * W, L + o]]),
        "left_middle": ([-o, L / 2], [[-o, 0.42 * L], [-o, 0.58 * L]]),
        "right_middle": ([W + o, L / 2], [[W + o, 0.42 * L], [W + o, 0.58 * L]]),
    }
    found = []
    for name, (hole, refs) in probes.items():
        # A few samples over the hole's mouth, the darkest counts; the reference is the brighter cushion beside.
        hx, hy = hole
        spread = np.array([[0, 0], [0.3 * o, 0], [-0.3 * o, 0], [0, 0.3 * o], [0, -0.3 * o]])
        v_hole = np.nanmin(_sample(gray, camera, np.array([hx, hy]) + spread))
        # The cushion tops are at the nose's height: seen at an angle, their points at the cloth's height would
        # fall on the dark face under the nose.
        zc = nose_height_mm(table)
        v_ref = np.nanmedian(_sample(gray, camera, np.array(refs, dtype=float), zc))
        if np.isfinite(v_hole) and np.isfinite(v_ref) and v_hole < 0.5 * v_ref and v_ref - v_hole > 25:
            found.append(name)
            continue
        hole_lab = np.stack([_sample(c, camera, np.array([hx, hy]) + spread) for c in chans], -1)  # (5, 3)
        # Each reference is the median over a few points about it: a single sample beside the nose's edge on a
        # 3280 px fisheye picture moves by a grey level per tenth of a pixel the calibration shifts.
        ref_pts = np.asarray(refs, dtype=float)[:, None, :] + spread[None]  # (2, 5, 2)
        ref_lab = np.stack([np.median(_sample(c, camera, ref_pts.reshape(-1, 2), zc).reshape(2, -1), axis=1)
                            for c in chans], -1)  # (2, 3)
        if not (np.isfinite(hole_lab).all() and np.isfinite(ref_lab).all()):
            continue
        w = np.array([0.5, 1.0, 1.0])  # lightness counts half: light falls off towards the rails
        refs_alike = np.linalg.norm((ref_lab[0] - ref_lab[1]) * w) < 15
        unlike = np.linalg.norm((hole_lab - ref_lab.mean(0)) * w, axis=1)
        if refs_alike and np.median(unlike) > 40:
            found.append(name)
    return tuple(found)


def baulk_line_seen(image: np.ndarray, camera: CameraModel, table: TableSpec) -> bool:
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2LAB).astype(np.float32)
    light = cv2.GaussianBlur(lab[..., 0], (0, 0), 1.0)
    W, L = table.width, table.length
    xs = np.linspace(0.1 * W, 0.9 * W, 60)
    for y_line in (0.2065 * L, 0.7935 * L):
        offs = np.linspace(-40, 40, 41)
        prof = np.array([np.nanmedian(_sample(light, camera, np.stack([xs, np.full_like(xs, y_line + d)], -1)))
                         for d in offs])
        if not np.isfinite(prof).all():
            continue
        centre = prof[18:23]
        side = np.concatenate([prof[:10], prof[-10:]])
        if np.max(np.abs(centre - np.median(side))) > 6 + 4 * np.std(side):
            return True
    return False


def detect_preset(image: np.ndarray, camera: CameraModel, table: TableSpec,
                  outline: TableOutline | None = None) -> PresetGuess:
    """Guess the preset of the table in ``image``, calibrated (camera) with any 2:1 preset ``table``."""
    pockets = pockets_seen(image, camera, table)
    middles = sum(p.endswith("_middle") for p in pockets)
    corners = len(pockets) - middles
    if middles >= 1 and corners >= 2:
        if baulk_line_seen(image, camera, table):
            return PresetGuess("snooker_full", f"{len(pockets)} pockets and a baulk line", pockets)
        return PresetGuess("pool_9ft", f"{len(pockets)} pockets, no baulk line", pockets)
    if corners >= 3 and middles == 0:
        return PresetGuess("chapo", "four corner pockets, none in the middle", pockets)
    if not pockets:
        return PresetGuess("carom_match", "no pockets", pockets)
    return PresetGuess("carom_match", f"unclear pockets ({', '.join(pockets)}), taken as carom", pockets)
