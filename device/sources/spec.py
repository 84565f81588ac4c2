"""Source specs as the command line spells them, and the factory that opens each kind.

    picamera2            the Pi camera, default mode (picamera2:MODE for gs, cm3, cm3_120, hq)
    v4l2:0               a USB/V4L2 camera by number (also /dev/video0)
    rtsp://host/path     a network stream (also http://, https://)
    file:clip.mp4        a video file (at its own rate, or as fast as it decodes)
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .frames import FrameSource, SourceError
from .opencv import OpenCVCapture, VideoFileSource
from .picamera import CAMERA_MODES, DEFAULT_MODE, Picamera2Source
from .reconnect import ReconnectingSource

STREAM_SCHEMES = ("rtsp://", "rtsps://", "http://", "https://")


@dataclass(frozen=True)
class SourceSpec:
    kind: str  # "picamera2" | "v4l2" | "stream" | "file"
    target: str | int | None  # camera mode (None: the configured one), device number, URL or path

    @property
    def live(self) -> bool:
        return self.kind != "file"


def parse_source_spec(text: str) -> SourceSpec:
    spec = text.strip()
    if spec == "picamera2":
        return SourceSpec("picamera2", None)
    if spec.startswith("picamera2:"):
        mode = spec.partition(":")[2]
        if mode not in CAMERA_MODES:
            raise SourceError(f"--camera {text}: unknown Pi camera mode {mode!r} (known: {', '.join(CAMERA_MODES)})")
        return SourceSpec("picamera2", mode)
    if spec.startswith("v4l2:") or spec.startswith("/dev/video"):
        number = spec.partition(":")[2] if spec.startswith("v4l2:") else spec[len("/dev/video"):]
        if not number.isdigit():
            raise SourceError(f"--camera {text}: a V4L2 camera is v4l2:N with N a device number")
        return SourceSpec("v4l2", int(number))
    if spec.lower().startswith(STREAM_SCHEMES):
        return SourceSpec("stream", spec)
    if spec.startswith("file:"):
        path = spec[len("file:"):]
        if not path:
            raise SourceError(f"--camera {text}: file: needs a path")
        return SourceSpec("file", path)
    raise SourceError(f"--camera {text!r}: not a source (picamera2[:MODE], v4l2:N, rtsp://..., file:PATH)")


def open_source(spec: SourceSpec, *, mode: str = DEFAULT_MODE, exposure_us: int = 2000,
                analogue_gain: float = 4.0, stream: str = "lores", camera_num: int = 0,
                frame_timeout_s: float = 1.0, realtime: bool = True, backoff_initial: float = 0.5,
                backoff_max: float = 10.0, clock: Callable[[], float] = time.monotonic,
                sleep: Callable[[float], None] | None = None,
                picamera2_factory: Callable[..., object] | None = None) -> FrameSource | ReconnectingSource:
    """The source a spec names; live ones wrapped to reopen with backoff. Nothing is opened yet."""
    if spec.kind == "file":
        if not Path(str(spec.target)).is_file():
            raise SourceError(f"{spec.target}: no such video file")
        return VideoFileSource(str(spec.target), realtime=realtime, clock=clock,
                               sleep=sleep if sleep is not None else time.sleep)

    def opener() -> FrameSource:
        if spec.kind == "picamera2":
            return Picamera2Source(str(spec.target or mode), camera_num=camera_num, exposure_us=exposure_us,
                                   analogue_gain=analogue_gain, stream=stream, frame_timeout_s=frame_timeout_s,
                                   picamera2_factory=picamera2_factory)
        return OpenCVCapture(spec.target, clock=clock)

    name = f"picamera2:{spec.target or mode}" if spec.kind == "picamera2" else str(spec.target)
    return ReconnectingSource(opener, name=name, clock=clock, sleep=sleep, backoff_initial=backoff_initial,
                              backoff_max=backoff_max)
