"""The wizard's eyes: the camera's newest frame shared with the phones as JPEG, and the wait for a still table.

A Pi that referees at 60 fps has little to spare, so the live view is periodic JPEG, not a stream per phone: the
newest frame is downscaled and encoded at most ``fps`` times a second, once for every phone asking, and a phone asks
for the next picture only when the last one has arrived. (MJPEG would hold a server thread per viewer for as long
as the page is open, and a phone that sleeps leaves it hanging; one short request per picture does neither.)

Frames come from the live loop's own camera (``TapSource`` wraps its source: the camera cannot be opened twice)
or, for ``arbitro web --source``, from a ``SourceFeeder`` thread reading a picture, a video file or a camera.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Callable

import numpy as np

LIVE_FPS = 5.0  # the live view's rate: enough to aim a camera, cheap next to the vision's 60 fps
LIVE_WIDTH = 640  # pixels across; a phone shows it a few centimetres wide
JPEG_QUALITY = 70


def _shrink(image: np.ndarray, width: int) -> np.ndarray:
    """``image`` at most ``width`` across. Averaging by a whole factor first: OpenCV's area resize is ten times
    faster at a whole factor (0.3 ms for 1456x1088 by 2 here, 8 ms by 2.275), and what is left is a small step
    that bilinear does without aliasing."""
    import cv2

    h, w = image.shape[:2]
    k = w // width
    if k >= 2:
        image = cv2.resize(image, (w // k, h // k), interpolation=cv2.INTER_AREA)
        h, w = image.shape[:2]
    if w > width:
        image = cv2.resize(image, (width, max(1, round(h * width / w))), interpolation=cv2.INTER_LINEAR)
    return image


def _encode_jpeg(image: np.ndarray, width: int, quality: int) -> bytes | None:
    import cv2

    ok, buf = cv2.imencode(".jpg", _shrink(image, width), [cv2.IMWRITE_JPEG_QUALITY, quality])
    return buf.tobytes() if ok else None


class FrameFeed:
    """The newest frame of a camera, and its JPEG for the live view.

    ``offer`` is called by whoever reads the camera (the live loop's capture thread): it keeps a reference and
    returns at once, so capture never waits for a phone. ``jpeg`` encodes in the asking request's thread, at most
    ``fps`` times a second whatever the number of phones; while one request encodes, the others get the previous
    picture instead of waiting.
    """

    def __init__(self, *, fps: float = LIVE_FPS, width: int = LIVE_WIDTH, quality: int = JPEG_QUALITY,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if fps <= 0 or width < 16 or not 1 <= quality <= 100:
            raise ValueError("FrameFeed: fps > 0, width >= 16 and quality 1..100")
        self.interval, self.width, self.quality, self.clock = 1.0 / fps, width, quality, clock
        self._lock = threading.Lock()
        self._seq = 0  # frames offered so far
        self._image: np.ndarray | None = None
        self._t = 0.0
        self._jpeg: tuple[int, bytes] | None = None  # (the frame's seq, its JPEG)
        self._encoded_at = -float("inf")
        self._encoding = False
        self.encodes = 0  # how many JPEGs were made (the benchmark and the tests read it)
        self.error: str | None = None  # why the feeder has no frames, for the page

    def offer(self, image: np.ndarray, t: float) -> None:
        with self._lock:
            self._seq += 1
            self._image, self._t = image, float(t)
            self.error = None

    def latest(self) -> tuple[int, np.ndarray, float] | None:
        """(seq, image, t) of the newest frame, or None before the first."""
        with self._lock:
            return None if self._image is None else (self._seq, self._image, self._t)

    @property
    def size(self) -> tuple[int, int] | None:
        """The camera's frame size (width, height), once a frame has come."""
        with self._lock:
            return None if self._image is None else (int(self._image.shape[1]), int(self._image.shape[0]))

    def jpeg(self) -> bytes | None:
        """The live view's newest JPEG (None before the first frame)."""
        with self._lock:
            cached = self._jpeg
            due = self.clock() - self._encoded_at >= self.interval
            if (self._image is None or self._encoding or not due
                    or (cached is not None and cached[0] == self._seq)):
                return None if cached is None else cached[1]
            seq, image = self._seq, self._image
            self._encoding = True
        data = None
        try:
            data = _encode_jpeg(image, self.width, self.quality)
        finally:
            with self._lock:
                self._encoding = False
                self._encoded_at = self.clock()
                if data is not None:
                    self._jpeg = (seq, data)
                    self.encodes += 1
                cached = self._jpeg
        return None if cached is None else cached[1]


class TapSource:
    """A frame source that also offers each frame to a FrameFeed: the live loop's camera, seen by the wizard."""

    def __init__(self, source: Any, feed: FrameFeed) -> None:
        self.source, self.feed = source, feed

    def __enter__(self) -> "TapSource":
        self.source.__enter__()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> Any:
        return self.source.__exit__(exc_type, exc, tb)

    def read(self) -> Any:
        from ..sources import Frame

        item = self.source.read()
        if isinstance(item, Frame):
            self.feed.offer(item.image, item.t)
        return item

    def __getattr__(self, name: str) -> Any:  # stop(), name, fps...: the wrapped source's
        return getattr(self.source, name)


# --- the still-table wait ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Stillness:
    moving: bool  # the last sample differed from the view the still period started with (seen moving)
    still_for: float  # seconds (on the frames' clock) the view has not changed
    still: bool  # still_for reached the hold time: the still can be taken


class StillWatch:
    """Has the view stopped changing? Each sample (one every ``interval`` s of the frames' clock) is compared with
    the sample the current still period began with, not just with the one before, so a ball rolling slowly
    enough to move less than a threshold between two samples still counts as moving once it has moved at all.

    A pixel changed when its grey level (at about ``width`` pixels across, lightly blurred so sensor noise does
    not count) differs by more than ``level``; the view changed when at least ``min_pixels`` did: at 320 pixels
    across a ball on a full carom table is about 7 pixels wide, so a moving ball changes a few tens.
    """

    def __init__(self, *, hold_s: float = 1.0, interval: float = 0.2, level: int = 20, min_pixels: int = 6,
                 width: int = 320) -> None:
        self.hold_s, self.interval, self.level, self.min_pixels, self.width = (
            hold_s, interval, level, min_pixels, width)
        self.reset()

    def reset(self) -> None:
        self._ref: np.ndarray | None = None
        self._since = 0.0
        self._last_t: float | None = None
        self.state = Stillness(False, 0.0, False)

    def _small(self, image: np.ndarray) -> np.ndarray:
        import cv2

        grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        h, w = grey.shape[:2]
        k = max(1, w // self.width)  # a whole factor (fast, see _shrink): 364 across from 1456, 320 from 640
        small = cv2.resize(grey, (w // k, h // k), interpolation=cv2.INTER_AREA) if k > 1 else grey
        return cv2.GaussianBlur(small, (5, 5), 0).astype(np.int16)

    def update(self, image: np.ndarray, t: float) -> Stillness:
        """Look at one frame; frames closer than ``interval`` to the last sample are skipped (state unchanged)."""
        if self._last_t is not None and t < self._last_t:
            self.reset()  # the clock went back (a source reopened): start over
        if self._last_t is not None and t - self._last_t < self.interval:
            return self.state
        self._last_t = t
        small = self._small(image)
        if self._ref is None or self._ref.shape != small.shape:
            self._ref, self._since = small, t  # the first look: a still period starts, nothing seen moving yet
            moving = False
        elif int((np.abs(small - self._ref) > self.level).sum()) >= self.min_pixels:
            self._ref, self._since = small, t
            moving = True
        else:
            moving = False
        still_for = t - self._since
        self.state = Stillness(moving, round(still_for, 3), still_for >= self.hold_s)
        return self.state


# --- a camera of its own (arbitro web --source) --------------------------------------------------------------------

class SourceFeeder:
    """Reads a picture, a video file or a camera spec in its own thread and offers the frames to a feed.

    A picture is offered ``idle_fps`` times a second. A video file plays at its own rate and then its last frame
    stays, as a camera's view would; ``restart()`` plays it again from the start, so every still wait of the
    wizard sees the same footage (what makes the wizard testable on a rendered clip). A camera is read as it comes.
    """

    def __init__(self, source: str, feed: FrameFeed, *, idle_fps: float = LIVE_FPS,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.source, self.feed, self.idle_interval, self.sleep = source, feed, 1.0 / idle_fps, sleep
        self._stop = threading.Event()
        self._restart = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> "SourceFeeder":
        self._thread = threading.Thread(target=self._run, name="arbitro-wizard-camera", daemon=True)
        self._thread.start()
        return self

    def restart(self) -> None:
        self._restart.set()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        from ..calibrate_command import IMAGE_SUFFIXES, VIDEO_SUFFIXES

        path = Path(self.source)
        try:
            if path.is_file() and path.suffix.lower() not in VIDEO_SUFFIXES:
                self._picture(path)
            elif path.is_file() or path.suffix.lower() in IMAGE_SUFFIXES | VIDEO_SUFFIXES:
                self._video(path)
            else:
                self._camera()
        except Exception as exc:  # the page says why there is no picture; the thread ends
            self.feed.error = f"{self.source}: {exc}"

    def _picture(self, path: Path) -> None:
        import cv2

        image = cv2.imdecode(np.fromfile(str(path), dtype=np.uint8), cv2.IMREAD_COLOR)
        if image is None:
            raise ValueError("not a readable picture")
        t = 0.0
        while not self._stop.is_set():
            self.feed.offer(image, t)
            t += self.idle_interval
            self.sleep(self.idle_interval)

    def _video(self, path: Path) -> None:
        from ..sources import Frame
        from ..sources.opencv import VideoFileSource

        if not path.is_file():
            raise ValueError("no such file")
        t0 = 0.0  # the feed's clock keeps running across restarts, as a camera's would
        while not self._stop.is_set():
            self._restart.clear()
            last: tuple[np.ndarray, float] | None = None
            with VideoFileSource(str(path), realtime=True, sleep=self._sleep_or_stop) as src:
                while not (self._stop.is_set() or self._restart.is_set()):
                    item = src.read()
                    if item is None:
                        break
                    if isinstance(item, Frame):
                        last = (item.image, t0 + item.t)
                        self.feed.offer(*last)
            if last is None:
                raise ValueError("the video has no frames")
            t = last[1]
            while not (self._stop.is_set() or self._restart.is_set()):  # the clip ended: its last view stays
                t += self.idle_interval
                self.feed.offer(last[0], t)
                self.sleep(self.idle_interval)
            t0 = t + self.idle_interval

    def _sleep_or_stop(self, seconds: float) -> None:
        self._stop.wait(seconds)

    def _camera(self) -> None:
        from ..sources import Frame
        from ..sources.spec import open_source, parse_source_spec

        with open_source(parse_source_spec(self.source), realtime=True) as src:
            while not self._stop.is_set():
                item = src.read()
                if item is None:
                    return
                if isinstance(item, Frame):
                    self.feed.offer(item.image, item.t)
