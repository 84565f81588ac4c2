"""Raspberry Pi camera modes the referee is built for, as the renderer needs them."""

from __future__ import annotations

from dataclasses import dataclass

from calibration.camera import CameraModel
from rules.tables import TableSpec


@dataclass(frozen=True)
class SensorMode:
    name: str
    image_size: tuple[int, int]
    fps: float
    readout_s: float  # rolling shutter: time from the first row's exposure to the last's (0: global shutter)
    exposure_s: float  # default exposure: short enough to keep a fast ball's smear to a few ball widths
    noise_sigma: float  # read noise, 8-bit grey levels
    dist: tuple[float, float, float, float, float] = (-0.06, 0.01, 0.0, 0.0, 0.0)  # a wide lens, mild barrel


SENSORS: dict[str, SensorMode] = {
    # Pi Global Shutter camera (IMX296): 1456x1088 at 60 fps, no rolling shutter.
    "pi_gs": SensorMode("pi_gs", (1456, 1088), 60.0, 0.0, 1 / 500, 2.0),
    # Camera Module 3 (IMX708): full-width 2304x1296 mode at 56 fps, and the 1536x864 binned mode at 120 fps.
    "pi_cm3_2304": SensorMode("pi_cm3_2304", (2304, 1296), 56.0, 0.016, 1 / 500, 2.5),
    "pi_cm3_1536": SensorMode("pi_cm3_1536", (1536, 864), 120.0, 0.0075, 1 / 1000, 3.0),
    # HQ camera (IMX477): 2028x1080 at 50 fps.
    "pi_hq_2028": SensorMode("pi_hq_2028", (2028, 1080), 50.0, 0.018, 1 / 500, 2.0),
}


def sensor(name: str) -> SensorMode:
    try:
        return SENSORS[name]
    except KeyError:
        raise KeyError(f"unknown sensor mode {name!r} (known: {', '.join(sorted(SENSORS))})") from None


def camera_for(table: TableSpec, mode: SensorMode, *, image_size: tuple[int, int] | None = None,
               height_mm: float = 2000.0, tilt_deg: float = 0.0,
               dist: tuple[float, float, float, float, float] | None = None) -> CameraModel:
    """An overhead camera of this mode over the table, its lens chosen to frame the table and rails.
    ``image_size`` renders a scaled-down image of the same view (for small tests and fixtures)."""
    cam = CameraModel.overhead(table, mode.image_size, height_mm=height_mm, tilt_deg=tilt_deg,
                               dist=mode.dist if dist is None else dist)
    return cam if image_size is None or tuple(image_size) == mode.image_size else cam.scaled(tuple(image_size))
