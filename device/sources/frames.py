"""What every frame source hands the live loop: frames with timestamps, and events when the stream breaks.

A ``FrameSource`` is a context manager: entering opens the camera or file, leaving releases it, whatever happened.
Inside, ``read()`` gives the next frame, ``None`` at the end of a finite stream (a file), and raises ``SourceError``
when the device fails; iterating yields frames until the end.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import TracebackType
from typing import Iterator, Protocol

import numpy as np


class SourceError(RuntimeError):
    """The camera or stream cannot be opened or stopped delivering frames; the message is one line for the user."""


@dataclass(frozen=True)
class Frame:
    image: np.ndarray  # BGR (or single-channel grey), as OpenCV expects
    t: float  # seconds on the source's clock (DESIGN.md section 2)
    index: int  # the frame's number on that clock: consecutive when nothing was lost


@dataclass(frozen=True)
class CameraLost:
    """The source failed: the LED shows it and the shot under way cannot be refereed."""

    t: float  # the last frame's time (or the clock's, before any frame)
    why: str


@dataclass(frozen=True)
class CameraRestored:
    t: float  # the first frame's time after the outage
    attempts: int  # how many reopenings it took


@dataclass(frozen=True)
class Gap:
    """Frames that never arrived, between two frames that did: a shot overlapping it is not refereed."""

    t_start: float  # the last frame before the gap
    t_end: float  # the first frame after it
    frames_lost: int
    why: str  # "camera_lost" or "frames_skipped"

    def to_dict(self) -> dict[str, object]:
        return {"t_start": self.t_start, "t_end": self.t_end, "frames_lost": self.frames_lost, "why": self.why}


SourceEvent = CameraLost | CameraRestored | Gap


class FrameSource(Protocol):
    """A camera, a stream or a file; ``fps`` is the nominal rate (0 when unknown)."""

    name: str
    fps: float

    def __enter__(self) -> "FrameSource": ...

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None: ...

    def read(self) -> Frame | None: ...


def iter_frames(source: FrameSource) -> Iterator[Frame]:
    """Every frame of an opened source until its end."""
    while (frame := source.read()) is not None:
        yield frame


def frames_missing(dt: float, fps: float) -> int:
    """Frames that should have arrived in an interval of ``dt`` seconds between two frames, at ``fps``.

    Half a period of tolerance: sensor timestamps jitter by far less, and one missing frame doubles the interval.
    """
    if fps <= 0 or dt <= 0:
        return 0
    return max(0, int(round(dt * fps)) - 1)
