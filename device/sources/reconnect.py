"""A live source that survives its camera: reopened with exponential backoff, its outage reported as events.

``read()`` returns frames, and, in order, ``CameraLost`` when the device fails, ``CameraRestored`` and a ``Gap``
when frames come back (and a ``Gap`` whenever the device itself skipped frames). Frame indices keep counting across
reopenings, the lost frames included, so the index stays a position on the source's clock. The clock and the sleep
are injected: tests drive outages without waiting, and ``stop()`` interrupts a backoff at once.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from types import TracebackType
from typing import Callable

from .frames import CameraLost, CameraRestored, Frame, FrameSource, Gap, SourceError, SourceEvent, frames_missing


class ReconnectingSource:
    def __init__(self, open_source: Callable[[], FrameSource], *, name: str = "camera",
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] | None = None,
                 backoff_initial: float = 0.5, backoff_max: float = 10.0, max_attempts: int | None = None) -> None:
        self._open = open_source
        self.name = name
        self.fps = 0.0
        self._clock = clock
        self._stop = threading.Event()
        self._sleep = sleep if sleep is not None else self._stop.wait
        self.backoff_initial, self.backoff_max = backoff_initial, backoff_max
        self.max_attempts = max_attempts
        self._inner: FrameSource | None = None
        self._pending: deque[Frame | SourceEvent] = deque()
        self._last: Frame | None = None  # the last frame handed out (wrapper's numbering)
        self._inner_last_index: int | None = None
        self._offset = 0  # wrapper index = inner index + offset
        self._lost_since: float | None = None  # set while the camera is away
        self.reopenings = 0
        self._attempts = 0  # tries the last reopening took
        self.frames_lost = 0
        self.delays: list[float] = []  # every backoff slept, for the record

    # --- context --------------------------------------------------------------------------------------------------

    def __enter__(self) -> "ReconnectingSource":
        # No camera at start is the user's to fix: one clear error, no silent retrying.
        self._inner = self._enter(self._open())
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._close_inner()

    def stop(self) -> None:
        """Ask a blocked ``read()`` to give up: it returns ``None``."""
        self._stop.set()

    # --- reading --------------------------------------------------------------------------------------------------

    def read(self) -> Frame | SourceEvent | None:
        while True:
            if self._pending:
                return self._pending.popleft()
            if self._stop.is_set():
                return None
            if self._inner is None:
                if not self._reopen():
                    return None
                continue
            try:
                frame = self._inner.read()
            except SourceError as exc:
                self._close_inner()
                t = self._last.t if self._last is not None else self._clock()
                self._lost_since = t
                return CameraLost(t, str(exc))
            if frame is None:
                return None
            return self._number(frame)

    def _number(self, frame: Frame) -> Frame | SourceEvent:
        """Renumber a frame onto the wrapper's index and queue the events it reveals."""
        if self._lost_since is not None:  # the first frame after an outage
            prev = self._last
            if prev is not None:
                lost = frames_missing(frame.t - prev.t, self.fps)
                self._offset = prev.index + 1 + lost - frame.index
                self.frames_lost += lost
                self._pending.append(CameraRestored(frame.t, self._attempts))
                self._pending.append(Gap(prev.t, frame.t, lost, "camera_lost"))
            self._lost_since = None
        elif self._last is not None and self._inner_last_index is not None:
            skipped = frame.index - self._inner_last_index - 1
            if skipped > 0:  # the device itself dropped frames (its timestamps say so)
                self.frames_lost += skipped
                self._pending.append(Gap(self._last.t, frame.t, skipped, "frames_skipped"))
        self._inner_last_index = frame.index
        out = Frame(frame.image, frame.t, frame.index + self._offset)
        self._last = out
        self._pending.append(out)
        return self._pending.popleft()

    def _reopen(self) -> bool:
        attempts = 0
        delay = self.backoff_initial
        while not self._stop.is_set():
            if self.max_attempts is not None and attempts >= self.max_attempts:
                raise SourceError(f"{self.name}: still lost after {attempts} attempts to reopen it")
            self.delays.append(delay)
            self._sleep(delay)
            if self._stop.is_set():
                break
            attempts += 1
            try:
                self._inner = self._enter(self._open())
            except SourceError:
                delay = min(delay * 2, self.backoff_max)
                continue
            self.reopenings += 1
            self._attempts = attempts
            self._inner_last_index = None
            return True
        return False

    def _enter(self, source: FrameSource) -> FrameSource:
        opened = source.__enter__()
        self.fps = opened.fps or self.fps
        return opened

    def _close_inner(self) -> None:
        inner, self._inner = self._inner, None
        if inner is not None:
            try:
                inner.__exit__(None, None, None)
            except Exception:  # a device that vanished may fail to close; it is gone either way
                pass
