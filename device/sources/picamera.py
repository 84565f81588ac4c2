"""The Raspberry Pi cameras through picamera2 (imported here, lazily, only when a Pi camera is opened).

Each supported sensor has one configuration: a sensor mode that reads the whole width at a high rate, fixed exposure
and gain (auto-exposure off) so that a ball at speed smears over few pixels and the brightness does not pump when a
player leans over the table, and a frame duration pinned to the mode's rate so timestamps are evenly spaced. The
low-resolution "lores" stream (YUV420, converted to BGR here) is what detection reads where it suffices; calibrate
on the stream you run on, since pixel coordinates differ between the two.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import TracebackType
from typing import Any, Callable

import cv2
import numpy as np

from .frames import Frame, SourceError, frames_missing


@dataclass(frozen=True)
class CameraMode:
    name: str
    sensor: str
    size: tuple[int, int]  # the main stream and sensor output, width x height
    fps: float
    lores: tuple[int, int]  # the low-resolution stream, same aspect, even sizes


CAMERA_MODES: dict[str, CameraMode] = {m.name: m for m in (
    CameraMode("gs", "Global Shutter (IMX296)", (1456, 1088), 60.0, (728, 544)),
    CameraMode("cm3", "Camera Module 3 (IMX708)", (2304, 1296), 56.0, (1152, 648)),
    CameraMode("cm3_120", "Camera Module 3 (IMX708), binned", (1536, 864), 120.0, (768, 432)),
    CameraMode("hq", "HQ Camera (IMX477)", (2028, 1080), 50.0, (1014, 540)),
)}
DEFAULT_MODE = "gs"


def camera_controls(mode: CameraMode, exposure_us: int, analogue_gain: float) -> dict[str, Any]:
    """Fixed exposure and gain, auto-exposure off, and the frame period pinned to the mode's rate."""
    period_us = int(round(1e6 / mode.fps))
    if exposure_us > period_us:
        raise SourceError(f"exposure {exposure_us} us is longer than a frame at {mode.fps:g} fps ({period_us} us)")
    return {
        "ExposureTime": int(exposure_us),
        "AnalogueGain": float(analogue_gain),
        "AeEnable": False,
        "FrameDurationLimits": (period_us, period_us),
    }


def _import_picamera2() -> Callable[..., Any]:
    try:
        from picamera2 import Picamera2  # the "pi" extra; absent off the Pi
    except ImportError:
        raise SourceError("picamera2 is not installed (pip install 'arbitro[pi]' on the Raspberry Pi)") from None
    return Picamera2


class Picamera2Source:
    """One Pi camera; frames from ``stream`` ("lores" or "main"), timed by the sensor (``SensorTimestamp``)."""

    def __init__(self, mode: str = DEFAULT_MODE, *, camera_num: int = 0, exposure_us: int = 2000,
                 analogue_gain: float = 4.0, stream: str = "lores", buffer_count: int = 6,
                 frame_timeout_s: float = 1.0, picamera2_factory: Callable[..., Any] | None = None) -> None:
        if mode not in CAMERA_MODES:
            raise SourceError(f"picamera2: unknown camera mode {mode!r} (known: {', '.join(CAMERA_MODES)})")
        if stream not in ("lores", "main"):
            raise SourceError(f"picamera2: stream {stream!r} is neither 'lores' nor 'main'")
        self.mode = CAMERA_MODES[mode]
        self.name = f"picamera2:{mode}"
        self.fps = self.mode.fps
        self.camera_num = camera_num
        self.stream = stream
        self.buffer_count = buffer_count
        # A camera whose cable comes loose does not raise: the request never completes. Waiting this long for one
        # turns the silence into a SourceError, which the reconnecting wrapper answers by reopening.
        self.frame_timeout_s = frame_timeout_s
        self.controls = camera_controls(self.mode, exposure_us, analogue_gain)
        self._factory = picamera2_factory
        self._cam: Any = None
        self._index = 0
        self._last_t: float | None = None
        self.frames_lost = 0

    def configuration(self, cam: Any) -> Any:
        m = self.mode
        return cam.create_video_configuration(
            # "RGB888" is picamera2's name for the 24-bit layout whose bytes are B, G, R: OpenCV's BGR.
            main={"size": m.size, "format": "RGB888"},
            lores={"size": m.lores, "format": "YUV420"},
            # A raw stream of the full size selects the sensor mode that reads the whole width at this rate.
            raw={"size": m.size},
            controls=dict(self.controls),
            buffer_count=self.buffer_count,
        )

    def __enter__(self) -> "Picamera2Source":
        factory = self._factory or _import_picamera2()
        try:
            cam = factory(self.camera_num)
        except (RuntimeError, IndexError, OSError) as exc:
            raise SourceError(f"{self.name}: cannot open camera {self.camera_num} ({exc})") from None
        try:
            cam.configure(self.configuration(cam))
            cam.start()
        except Exception as exc:
            cam.close()
            raise SourceError(f"{self.name}: cannot start camera {self.camera_num} ({exc})") from None
        self._cam = cam
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        cam, self._cam = self._cam, None
        if cam is None:
            return
        try:
            cam.stop()
        except Exception:  # a camera that has gone away may fail to stop; closing still frees it
            pass
        finally:
            cam.close()

    def read(self) -> Frame:
        if self._cam is None:
            raise SourceError(f"{self.name}: read before the camera was opened")
        try:
            # The context manager hands the buffer back to the camera as soon as the array is copied out.
            with self._cam.captured_request(wait=self.frame_timeout_s) as request:
                image = self._image(request.make_array(self.stream))
                t = request.get_metadata()["SensorTimestamp"] / 1e9
        except Exception as exc:  # a timeout, or libcamera reporting a vanished camera in its many ways
            cancel = getattr(self._cam, "cancel_all_and_flush", None)  # picamera2's tidy-up after a timeout
            if callable(cancel):
                try:
                    cancel()
                except Exception:
                    pass
            raise SourceError(f"{self.name}: camera stopped delivering frames ({str(exc) or type(exc).__name__})"
                              ) from None
        if self._last_t is not None:
            lost = frames_missing(t - self._last_t, self.fps)
            self.frames_lost += lost
            self._index += lost
        frame = Frame(image, t, self._index)
        self._index += 1
        self._last_t = t
        return frame

    def _image(self, array: np.ndarray) -> np.ndarray:
        if self.stream == "lores":
            # YUV420 planar: an (h * 3/2, w) array; OpenCV turns it into BGR (and copies out of the buffer).
            return cv2.cvtColor(array, cv2.COLOR_YUV2BGR_I420)
        return np.array(array[:, :, :3], copy=True)  # drop the padding byte of 32-bit formats, own the memory
