"""The calibration file (``*.calib.json``, DESIGN.md section 6): write it, and read it back validated.

A reader never shows a traceback: every problem is a :class:`CalibrationFileError` whose message is one line naming
the file and the field (``table.calib.json: camera_matrix: must be 3x3 numbers, got 2x3``).

Fields: ``version``, ``table`` (a preset name, or a full spec ``{"width", "length", "ball_diameter", ...}``, optionally
``"preset"`` naming the preset whose markings it scales), ``image_size`` ``[w, h]``, ``camera_matrix`` 3x3,
``dist_coeffs`` (k1, k2, p1, p2, k3), or with ``lens_model`` ``"fisheye"`` the equidistant model's (k1, k2, k3, k4)
(``lens_model`` absent: ``"pinhole"``, as every file before it was written), ``rvec``, ``tvec`` (table -> camera, mm),
``corners_px``, ``quality`` (a flat object of figures: ``reprojection_px``, ``markings_mm``, ...).

``corners_px`` (DESIGN.md names it, this says what it is): the four corners of the play area as the picture shows
them, in the order bottom-left, bottom-right, top-right, top-left of the table frame (section 2), in distorted pixels
of the full picture. Each is a **cushion-nose corner at the nose height**: where the noses of the two cushions meet
(extended into the pocket on a pocket table, round the curved jaws), at ``calibration.pose.nose_height_mm`` above the
cloth (37 mm on a carom table, 63.5 % of the ball's diameter on a pocket table), i.e. ``camera.table_to_image(corner,
z=nose height)``, not the corner of the cloth at z = 0, which a tilted or off-centre camera sees a few pixels
inwards of it. ``--corners`` by hand and the wizard's dragged corners mean the same points.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from calibration.camera import CALIB_VERSION, LENS_MODELS, CameraModel
from rules.tables import PRESETS, TableSpec, _diamonds  # noqa: F401  (_diamonds: the L/8, W/4 rule for bare specs)

CORNER_NAMES = ("bottom_left", "bottom_right", "top_right", "top_left")


class CalibrationFileError(ValueError):
    """A calibration file that cannot be used; the message is one line naming the field."""


@dataclass(frozen=True, eq=False)
class Calibration:
    """Everything a calibration file holds: the camera over the table, the table, the corners as seen, figures."""

    camera: CameraModel
    table: TableSpec
    corners_px: np.ndarray  # (4, 2) in CORNER_NAMES order
    quality: Mapping[str, float] = field(default_factory=dict)
    table_field: Any = None  # what the file says under "table" (a preset name or a spec); None: the table's name

    def to_dict(self) -> dict[str, Any]:
        d = self.camera.to_dict()
        d["table"] = self.table_field if self.table_field is not None else table_to_field(self.table)
        d["corners_px"] = np.asarray(self.corners_px, dtype=float).reshape(4, 2).tolist()
        d["quality"] = {k: (float(v) if isinstance(v, (int, float, np.floating)) else v)
                        for k, v in self.quality.items()}
        order = ("version", "table", "image_size", "camera_matrix", "lens_model", "dist_coeffs", "rvec", "tvec",
                 "corners_px", "quality")
        return {k: d[k] for k in order if k in d}


def table_to_field(table: TableSpec) -> Any:
    """A preset by name when the spec is that preset unchanged, else the full spec."""
    base = PRESETS.get(table.name)
    if base is not None and base == table:
        return table.name
    spec: dict[str, Any] = {"name": table.name, "width": table.width, "length": table.length,
                            "ball_diameter": table.ball_diameter}
    if base is not None:
        spec["preset"] = table.name
    return spec


def write_calibration(path: str | Path, calib: Calibration) -> None:
    text = json.dumps(calib.to_dict(), indent=1)
    Path(path).write_text(text + "\n", encoding="utf-8")


def read_calibration(path: str | Path) -> Calibration:
    """Read and validate a calibration file; raises CalibrationFileError with a one-line message."""
    p = Path(path)
    name = p.name
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise CalibrationFileError(f"{name}: no such calibration file") from None
    except OSError as exc:
        raise CalibrationFileError(f"{name}: cannot read ({exc.strerror or exc})") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CalibrationFileError(f"{name}: not a calibration file (not JSON: {str(exc).splitlines()[0]})") from None
    try:
        return calibration_from_dict(data)
    except CalibrationFileError as exc:
        raise CalibrationFileError(f"{name}: {exc}") from None


def calibration_from_dict(data: Any) -> Calibration:
    if not isinstance(data, dict):
        raise CalibrationFileError("not a calibration file (expected a JSON object)")
    if "version" not in data:
        raise CalibrationFileError("version: missing (is this a calibration file?)")
    if data["version"] != CALIB_VERSION:
        raise CalibrationFileError(f"version: unknown version {data['version']!r} (this reader knows {CALIB_VERSION})")
    for key in ("table", "image_size", "camera_matrix", "dist_coeffs", "rvec", "tvec", "corners_px"):
        if key not in data:
            raise CalibrationFileError(f"{key}: missing")
    size = _numbers(data["image_size"], "image_size", (2,))
    if not all(float(v).is_integer() and 16 <= v <= 20000 for v in size):
        raise CalibrationFileError(f"image_size: must be [width, height] whole pixels in 16..20000, got {size.tolist()}")
    w, h = int(size[0]), int(size[1])
    k = _numbers(data["camera_matrix"], "camera_matrix", (3, 3))
    if not (k[0, 0] > 0 and k[1, 1] > 0 and np.allclose(k[2], [0, 0, 1]) and k[1, 0] == 0):
        raise CalibrationFileError("camera_matrix: must be [[fx, s, cx], [0, fy, cy], [0, 0, 1]] with fx, fy > 0")
    if not (-w <= k[0, 2] <= 2 * w and -h <= k[1, 2] <= 2 * h):
        raise CalibrationFileError("camera_matrix: principal point far outside the image")
    lens_model = data.get("lens_model", "pinhole")
    if not isinstance(lens_model, str) or lens_model not in LENS_MODELS:
        raise CalibrationFileError(f"lens_model: must be one of {', '.join(repr(m) for m in LENS_MODELS)}, "
                                   f"got {lens_model!r}")
    dist = _numbers(data["dist_coeffs"], "dist_coeffs", (LENS_MODELS[lens_model],), flatten=True)
    if lens_model == "fisheye" and not np.all(np.abs(dist) < 10):
        raise CalibrationFileError("dist_coeffs: the fisheye model's k1..k4 must be small numbers (|k| < 10)")
    rvec = _numbers(data["rvec"], "rvec", (3,), flatten=True)
    tvec = _numbers(data["tvec"], "tvec", (3,), flatten=True)
    corners = _numbers(data["corners_px"], "corners_px", (4, 2))
    table = table_from_field(data["table"])
    quality = data.get("quality", {})
    if not isinstance(quality, dict):
        raise CalibrationFileError("quality: must be an object of named figures")
    camera = CameraModel((w, h), k, dist, rvec, tvec, lens_model)
    if camera.camera_centre[2] <= 0:
        raise CalibrationFileError("tvec: the camera is below the cloth (z must point up towards the camera)")
    return Calibration(camera, table, corners, dict(quality), data["table"])


def table_from_field(value: Any) -> TableSpec:
    if isinstance(value, str):
        if value not in PRESETS:
            raise CalibrationFileError(f"table: unknown preset {value!r} (known: {', '.join(sorted(PRESETS))})")
        return PRESETS[value]
    if not isinstance(value, dict):
        raise CalibrationFileError("table: must be a preset name or an object with width, length, ball_diameter")
    known = {"name", "preset", "width", "length", "ball_diameter"}
    unknown = sorted(set(value) - known)
    if unknown:
        raise CalibrationFileError(f"table: unknown field {unknown[0]!r} (known: {', '.join(sorted(known))})")
    nums = {}
    for key, lo, hi in (("width", 300.0, 3000.0), ("length", 500.0, 5000.0), ("ball_diameter", 20.0, 150.0)):
        if key not in value:
            raise CalibrationFileError(f"table.{key}: missing")
        v = value[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not lo <= v <= hi:
            raise CalibrationFileError(f"table.{key}: must be a number of mm in {lo:g}..{hi:g}, got {v!r}")
        nums[key] = float(v)
    if nums["width"] > nums["length"]:
        raise CalibrationFileError("table: width (across) must not exceed length (along)")
    base_name = value.get("preset")
    name = str(value.get("name", base_name or "custom"))
    if base_name is None:
        return TableSpec(name=name, width=nums["width"], length=nums["length"], ball_diameter=nums["ball_diameter"],
                         diamonds=_diamonds(nums["width"], nums["length"], 8, 4))
    if base_name not in PRESETS:
        raise CalibrationFileError(f"table.preset: unknown preset {base_name!r} (known: {', '.join(sorted(PRESETS))})")
    return scaled_table(PRESETS[base_name], nums["width"], nums["length"], nums["ball_diameter"], name)


def scaled_table(base: TableSpec, width: float, length: float, ball_diameter: float, name: str | None = None) -> TableSpec:
    """A preset measured to another size: spots and diamonds keep their fractions of the play area."""
    if width == base.width and length == base.length and ball_diameter == base.ball_diameter:
        return base if name in (None, base.name) else replace(base, name=name)
    sx, sy = width / base.width, length / base.length
    spots = {k: (x * sx, y * sy) for k, (x, y) in base.spots.items()}
    diamonds = tuple((x * sx, y * sy) for x, y in base.diamonds)
    lines = {k: (v * sy if k.endswith("_y") else v * sx) for k, v in base.lines.items()}
    return replace(base, name=name or base.name, width=width, length=length, ball_diameter=ball_diameter,
                   spots=spots, diamonds=diamonds, lines=lines)


def _numbers(value: Any, name: str, shape: tuple[int, ...], flatten: bool = False) -> np.ndarray:
    want = "x".join(str(s) for s in shape)
    try:
        arr = np.array(value, dtype=object)
    except Exception:
        raise CalibrationFileError(f"{name}: must be {want} numbers") from None
    if flatten and arr.ndim == 2 and 1 in arr.shape:
        arr = arr.reshape(-1)
    if arr.shape != shape:
        got = "x".join(str(s) for s in arr.shape) or "a scalar"
        raise CalibrationFileError(f"{name}: must be {want} numbers, got {got}")
    flat = arr.reshape(-1)
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in flat):
        raise CalibrationFileError(f"{name}: must be {want} numbers, found a non-number")
    out = flat.astype(np.float64).reshape(shape)
    if not np.isfinite(out).all():
        raise CalibrationFileError(f"{name}: must be finite numbers (found NaN or infinity)")
    return out
