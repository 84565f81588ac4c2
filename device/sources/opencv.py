"""OpenCV sources: a live capture (USB/V4L2 camera, RTSP or HTTP stream) and a video file.

A live capture is timestamped by the device when the backend reports increasing buffer times
(``CAP_PROP_POS_MSEC``: V4L2 does), else with the injected monotonic clock when ``read()`` returns. Lost frames are
counted only from device times: a late read is not a lost frame, since the driver queues what arrived.

A file is timestamped from the container (``CAP_PROP_POS_MSEC``), else from its index and frame rate, and is played
at its own rate (sleeping on the injected clock) or as fast as it decodes.
"""

from __future__ import annotations

import time
from types import TracebackType
from typing import Any, Callable

import cv2

from .frames import Frame, SourceError, frames_missing


class OpenCVCapture:
    """A live camera or stream through ``cv2.VideoCapture``."""

    def __init__(self, target: int | str, *, width: int = 0, height: int = 0, fps: float = 0.0,
                 clock: Callable[[], float] = time.monotonic,
                 capture_factory: Callable[..., Any] = cv2.VideoCapture) -> None:
        self.target = target
        self.name = f"v4l2:{target}" if isinstance(target, int) else str(target)
        self.width, self.height, self.fps = width, height, fps
        self._clock = clock
        self._factory = capture_factory
        self._cap: Any = None
        self._index = 0
        self._last_t: float | None = None
        self._device_times = True
        self.frames_lost = 0

    def __enter__(self) -> "OpenCVCapture":
        backend = cv2.CAP_V4L2 if isinstance(self.target, int) else cv2.CAP_FFMPEG
        cap = self._factory(self.target, backend)
        if not cap.isOpened():
            cap.release()
            raise SourceError(f"{self.name}: cannot open the camera or stream")
        if self.width and self.height:
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.width)
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.height)
        if self.fps:
            cap.set(cv2.CAP_PROP_FPS, self.fps)
        reported = float(cap.get(cv2.CAP_PROP_FPS) or 0.0)
        self.fps = reported if reported > 0 else self.fps
        self._cap = cap
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None

    def read(self) -> Frame:
        if self._cap is None:
            raise SourceError(f"{self.name}: read before the source was opened")
        ok, image = self._cap.read()
        if not ok or image is None:
            # A live source has no end: no frame means the camera went away or the stream dropped.
            raise SourceError(f"{self.name}: no frame (camera unplugged or stream down)")
        device_t = float(self._cap.get(cv2.CAP_PROP_POS_MSEC) or 0.0) / 1000.0
        from_device = device_t > 0 and (self._last_t is None or device_t > self._last_t) and self._device_times
        t = device_t if from_device else self._clock()
        if not from_device:
            self._device_times = False  # one frame without a device time: the clock for the rest of the session
        elif self._last_t is not None:
            lost = frames_missing(t - self._last_t, self.fps)
            self.frames_lost += lost
            self._index += lost
        frame = Frame(image, t, self._index)
        self._index += 1
        self._last_t = t
        return frame


MAX_DAMAGED_READS = 600  # failed reads in a row tried before a file is taken to end there (10 s at 60 fps)


class VideoFileSource:
    """A video file, at its own rate (``realtime=True``) or as fast as it decodes."""

    def __init__(self, path: str, *, realtime: bool = False, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.path = path
        self.name = f"file:{path}"
        self.realtime = realtime
        self.fps = 0.0
        self._clock, self._sleep = clock, sleep
        self._cap: Any = None
        self._index = 0
        self._last_t = -1.0
        self._wall0: float | None = None  # the clock when the first frame was handed out
        self._t0 = 0.0  # that frame's timestamp
        self._frame_count = 0
        self.damaged_reads = 0  # reads that failed inside the file, before frames that decoded again

    def __enter__(self) -> "VideoFileSource":
        cap = cv2.VideoCapture(self.path)
        if not cap.isOpened():
            cap.release()
            raise SourceError(f"{self.path}: cannot open the video file")
        self.fps = float(cap.get(cv2.CAP_PROP_FPS) or 0.0)
        self._frame_count = int(cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0)  # 0: the container does not say
        self._cap = cap
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None

    def read(self) -> Frame | None:
        """The next frame, or None at the end. A damaged stretch of the file (a bad sector, a recording cut and
        resumed) fails to decode frame after frame: while the container says frames remain, reading goes on past
        it (up to ``MAX_DAMAGED_READS`` failures running), and the frames after keep their own times, so the
        frames lost show as a gap in time (``damaged_reads`` counts the failures)."""
        if self._cap is None:
            raise SourceError(f"{self.name}: read before the source was opened")
        ok, image = self._cap.read()
        failures = 0
        while (not ok or image is None) and failures < MAX_DAMAGED_READS and self._index < self._frame_count:
            failures += 1
            ok, image = self._cap.read()
        if not ok or image is None:
            return None
        if failures:
            self.damaged_reads += failures
        t = self._timestamp()
        if self.realtime:
            self._pace(t)
        frame = Frame(image, t, self._index)
        self._index += 1
        self._last_t = t
        return frame

    def _timestamp(self) -> float:
        ms = float(self._cap.get(cv2.CAP_PROP_POS_MSEC) or 0.0)
        t = ms / 1000.0
        # Some containers and backends give no times (0, or not increasing): fall back to index / fps.
        if self._index > 0 and t <= self._last_t:
            if self.fps <= 0:
                raise SourceError(f"{self.path}: the file has neither frame times nor a frame rate")
            t = self._index / self.fps
        return t

    def _pace(self, t: float) -> None:
        now = self._clock()
        if self._wall0 is None:
            self._wall0, self._t0 = now, t
            return
        wait = (t - self._t0) - (now - self._wall0)
        if wait > 0:
            self._sleep(wait)
