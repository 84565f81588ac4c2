"""The live loop: capture, processing and outputs on their own threads, joined by bounded queues.

    source ──frames──▶ [frame queue, drop oldest] ──▶ processing: processor.process(frame) → records
                                                                  → the match (fold) and the store
                                                      [output queue, drop oldest] ◀──── board snapshots
                                                                  ▼
                                                      outputs: foul light, scoreboard display

- Capture never waits for anyone: when processing falls behind, the oldest waiting frame is dropped and counted
  (the freshest frames keep the latency low); the queue never grows past its bound.
- Every output message is a full snapshot of the board, so the outputs thread may skip stale ones: a slow display
  loses intermediate boards, never the latest one, and never slows capture or refereeing.
- The processor is injected (``FrameProcessor``): the vision pipeline plugs in here; tests use scripted ones.
- Source events (camera lost / restored, gaps) reach the processor (``on_gap``) and the board; a shot that
  overlaps a gap or an outage is judged but marked: its confidence set to 0 and a note added, so the referee asks
  for confirmation, and it is listed as unrefereed in the stats.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol, Sequence

import numpy as np

from rules.controls import Control
from rules.errors import LogError
from rules.match import Record
from rules.shot import Shot

from .display import DisplaySink
from .led import FoulLight, indication_for
from .scoreboard import BoardView, render, view_for
from .sources import CameraLost, CameraRestored, Frame, Gap, SourceError
from .store import LiveMatch, StoreError


@dataclass(frozen=True)
class ShotStarted:
    """The processor saw the balls start moving: the foul light goes out until the shot's verdict."""

    t: float


Output = Record | ShotStarted


class FrameProcessor(Protocol):
    """Frames in, records out. ``on_gap`` is told of frames that never arrived (the shot under way is suspect)."""

    def process(self, frame: Frame) -> Sequence[Output]: ...

    def on_gap(self, gap: Gap) -> Sequence[Output]: ...


class PipelineProcessor:
    """Adapts a vision pipeline (``process(image, t) -> Shot | None``, ``gap(t0, t1)``, ``flush()``)."""

    def __init__(self, pipeline: Any) -> None:
        self.pipeline = pipeline

    def process(self, frame: Frame) -> list[Output]:
        shot = self.pipeline.process(frame.image, frame.t)
        return [] if shot is None else [shot]

    def on_gap(self, gap: Gap) -> list[Output]:
        self.pipeline.gap(gap.t_start, gap.t_end)
        return []

    def finish(self) -> list[Output]:
        shot = self.pipeline.flush()
        return [] if shot is None else [shot]


@dataclass
class LiveStats:
    frames_read: int = 0
    frames_processed: int = 0
    frames_dropped: int = 0  # processing was behind: dropped from the frame queue
    frames_lost: int = 0  # never arrived from the source (outages, skipped sensor frames)
    frame_queue_peak: int = 0  # the most frames ever waiting (never above the bound)
    boards_dropped: int = 0  # the display was behind: stale boards skipped
    boards_shown: int = 0
    records: int = 0
    verdicts: int = 0
    rejected: list[str] = field(default_factory=list)  # records the referee refused, one line each
    gaps: list[Gap] = field(default_factory=list)
    unrefereed: list[dict[str, Any]] = field(default_factory=list)  # DESIGN.md section 6 quality.unrefereed
    camera_losses: int = 0
    error: str | None = None  # what stopped the loop early, if anything

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["gaps"] = [g.to_dict() for g in self.gaps]
        return d


@dataclass(frozen=True)
class Board:
    """A snapshot of everything the outputs show."""

    summary: Mapping[str, Any]
    verdict: Mapping[str, Any] | None
    camera_lost: bool
    shot_running: bool
    acknowledged: bool
    players: tuple[str, str]


_END = object()


def _offer(q: "queue.Queue[Any]", item: Any) -> int:
    """Put without waiting; when full, drop the oldest first. Returns how many were dropped."""
    dropped = 0
    while True:
        try:
            q.put_nowait(item)
            return dropped
        except queue.Full:
            try:
                q.get_nowait()
                dropped += 1
            except queue.Empty:
                pass


class LiveLoop:
    def __init__(self, source: Any, processor: FrameProcessor, match: LiveMatch, *, display: DisplaySink,
                 light: FoulLight | None = None, board_size: tuple[int, int] = (800, 480),
                 frame_queue: int = 4, output_queue: int = 8, max_fps: float = 10.0,
                 clock: Callable[[], float] = time.monotonic, poll: float = 0.05, max_gap_s: float = 0.1,
                 new_match: Callable[[LiveMatch], LiveMatch] | None = None,
                 renderer: Callable[[BoardView, tuple[int, int]], np.ndarray] = render,
                 web: Any = None, lock: threading.RLock | None = None) -> None:
        self.source = source
        self.processor = processor
        self.match = match
        # The phones' web app (device.web.WebApp), told of every board; it appends controls to the same match, so
        # both append under one lock.
        self.web = web
        self.lock = lock or threading.RLock()
        self.display = display
        self.light = light
        self.board_size = display.size or board_size
        self.max_fps = max_fps
        self.clock = clock
        self.poll = poll  # how often idle threads look at the stop flag and the light ticks
        self.max_gap_s = max_gap_s  # a shorter gap goes to the processor but does not make a shot suspect
        self.new_match = new_match
        self.renderer = renderer
        self.stats = LiveStats()
        self._frames: queue.Queue[Frame] = queue.Queue(maxsize=frame_queue)
        self._outputs: queue.Queue[Any] = queue.Queue(maxsize=output_queue)
        self._events: queue.SimpleQueue[Any] = queue.SimpleQueue()  # source events and button presses: rare
        self._stop = threading.Event()
        self._capture_done = threading.Event()
        # processing-thread state
        self._camera_lost_at: float | None = None
        self._last_frame: Frame | None = None  # the last frame processed
        self._source_lost = 0  # frames the source reported lost since it
        self._pending_gaps: list[Gap] = []  # gaps reported, waiting for the frame that ends them
        self._shot_running = False
        self._acknowledged = False

    # --- control --------------------------------------------------------------------------------------------------

    def stop(self) -> None:
        self._stop.set()
        stop_source = getattr(self.source, "stop", None)
        if callable(stop_source):
            stop_source()  # interrupt a reconnect backoff at once

    def press(self, button: str) -> None:
        """A button press (from gpiozero's thread): handled on the processing thread, in order with the shots."""
        self._events.put(("button", button))

    def call_soon(self, fn: Callable[["LiveLoop"], None]) -> None:
        """Run ``fn(loop)`` on the processing thread between two frames, then redraw the board: how a calibration
        saved from a phone swaps ``processor`` (and a phone's new match ``match``) in order with the shots. An
        exception from ``fn`` stops the loop as a processor's would: a caller that expects one catches it in ``fn``."""
        self._events.put(("call", fn))

    def run(self) -> LiveStats:
        """Run until the source ends (a file) or ``stop()``; returns the figures."""
        threads = [threading.Thread(target=self._guard(self._capture), name="capture", daemon=True),
                   threading.Thread(target=self._guard(self._processing), name="processing", daemon=True),
                   threading.Thread(target=self._guard(self._output), name="outputs", daemon=True)]
        self._publish()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return self.stats

    def _guard(self, body: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                body()
            except Exception as exc:  # one thread failing stops the loop with a one-line reason
                if self.stats.error is None:
                    self.stats.error = f"{threading.current_thread().name}: {exc}"
                self.stop()
                self._capture_done.set()
                _offer(self._outputs, _END)
        return run

    # --- capture --------------------------------------------------------------------------------------------------

    def _capture(self) -> None:
        try:
            while not self._stop.is_set():
                try:
                    item = self.source.read()
                except SourceError as exc:
                    self.stats.error = str(exc)
                    break
                if item is None:
                    break
                if isinstance(item, Frame):
                    self.stats.frames_read += 1
                    self.stats.frames_dropped += _offer(self._frames, item)
                    self.stats.frame_queue_peak = max(self.stats.frame_queue_peak, self._frames.qsize())
                else:
                    self._events.put(("source", item))
        finally:
            self._capture_done.set()

    # --- processing -----------------------------------------------------------------------------------------------

    def _processing(self) -> None:
        while True:
            self._drain_events()
            try:
                frame = self._frames.get(timeout=self.poll)
            except queue.Empty:
                if self._capture_done.is_set() and self._frames.empty():
                    self._drain_events()
                    break
                continue
            # A gap goes to the processor just before the first frame after it, in order with the frames still
            # queued from before it (its event may have overtaken them: events are not queued with the frames).
            self._drain_events()
            self._apply_gaps(until=frame.t)
            self._dropped_gap(frame)
            self._handle(self.processor.process(frame))
            self.stats.frames_processed += 1
            self._last_frame, self._source_lost = frame, 0
        self._apply_gaps(until=None)
        finish = getattr(self.processor, "finish", None)
        if callable(finish) and self.stats.error is None:
            self._handle(finish())
        _offer(self._outputs, _END)

    def _drain_events(self) -> None:
        while True:
            try:
                kind, item = self._events.get_nowait()
            except queue.Empty:
                return
            if kind == "button":
                self._button(item)
            elif kind == "call":
                item(self)
                self._publish()
            elif isinstance(item, CameraLost):
                self._camera_lost_at = item.t
                self.stats.camera_losses += 1
                self._publish()
            elif isinstance(item, CameraRestored):
                self._camera_lost_at = None
                self._publish()
            elif isinstance(item, Gap):
                self._pending_gaps.append(item)

    def _apply_gaps(self, until: float | None) -> None:
        while self._pending_gaps and (until is None or self._pending_gaps[0].t_end <= until):
            gap = self._pending_gaps.pop(0)
            self.stats.frames_lost += gap.frames_lost
            self._source_lost += gap.frames_lost
            self._gap(gap)

    def _dropped_gap(self, frame: Frame) -> None:
        """Frames dropped here, behind, are a gap for the processor like those the source lost."""
        last = self._last_frame
        if last is None:
            return
        dropped = frame.index - last.index - 1 - self._source_lost
        if dropped > 0:
            self._gap(Gap(last.t, frame.t, dropped, "dropped_behind"))

    def _gap(self, gap: Gap) -> None:
        self.stats.gaps.append(gap)
        self._handle(self.processor.on_gap(gap))

    def _button(self, name: str) -> None:
        if name == "undo":
            self._record(Control("undo"))
        elif name == "confirm":
            self._acknowledged = True  # the verdict stands as judged: nothing to log
            self._publish()
        elif name == "next_game" and self.new_match is not None:
            self.match = self.new_match(self.match)
            self._acknowledged = False
            self._publish()

    def _handle(self, outputs: Sequence[Output]) -> None:
        for out in outputs:
            if isinstance(out, ShotStarted):
                self._shot_running = True
                self._publish()
            else:
                self._record(out)

    def _suspect(self, shot: Shot) -> str | None:
        """Why a shot cannot be trusted: frames lost while it was played."""
        if self._camera_lost_at is not None and shot.t_end >= self._camera_lost_at:
            return "camera_lost"
        for gap in self.stats.gaps:
            if gap.t_end - gap.t_start > self.max_gap_s and shot.t_start <= gap.t_end and gap.t_start <= shot.t_end:
                return gap.why
        return None

    def _record(self, record: Record) -> None:
        if isinstance(record, Shot):
            why = self._suspect(record)
            if why is not None:
                self.stats.unrefereed.append({"t_start": record.t_start, "t_end": record.t_end, "why": why})
                # Vision marks a shot it saw only in part itself (confidence 0, the frames lost in its notes): a
                # second note would say the same, and of a shot whose start was lost, wrongly "during".
                if record.confidence > 0.0:
                    record = dataclasses.replace(record, confidence=0.0,
                                                 notes=record.notes + (f"frames lost during the shot ({why})",))
        try:
            with self.lock:
                verdict = self.match.append(record)
        except LogError as exc:
            self.stats.rejected.append(str(exc))
            return
        except StoreError as exc:
            # The store refused a write: refereeing on without a record would lose the match on a restart.
            self.stats.error = str(exc)
            self.stop()
            return
        self.stats.records += 1
        if verdict is not None:
            self.stats.verdicts += 1
            self._shot_running = False
            self._acknowledged = False
        self._publish()

    def _publish(self) -> None:
        last = self.match.last_verdict
        board = Board(dict(self.match.summary()), None if last is None else last.to_dict(),
                      self._camera_lost_at is not None, self._shot_running, self._acknowledged,
                      self.match.info.players)
        self.stats.boards_dropped += _offer(self._outputs, board)
        if self.web is not None:  # cheap, never waits on a phone
            self.web.publish(board.verdict, board.summary,
                             "CAMERA LOST - NOT REFEREEING" if board.camera_lost else None)

    # --- outputs --------------------------------------------------------------------------------------------------

    def _output(self) -> None:
        board: Board | None = None
        pending = False
        last_render: float | None = None
        while True:
            try:
                msg = self._outputs.get(timeout=self.poll)
            except queue.Empty:
                msg = None
            if msg is _END:
                break
            if msg is not None:
                # The light follows every snapshot (cheap, and a foul must light it however brief); the display
                # skips to the newest, everything older being already out of date.
                board, pending = msg, True
                self._light(board)
                while True:
                    try:
                        newer = self._outputs.get_nowait()
                    except queue.Empty:
                        break
                    if newer is _END:
                        self._show(board)
                        return
                    self.stats.boards_dropped += 1
                    board = newer
                    self._light(board)
            if self.light is not None:
                self.light.tick()
            now = self.clock()
            due = not self.max_fps or last_render is None or now - last_render >= 1.0 / self.max_fps
            if board is not None and pending and due:
                self._show(board)
                pending, last_render = False, now
        if board is not None:
            self._show(board)

    def _light(self, board: Board) -> None:
        if self.light is not None:
            self.light.show(self._indication(board))

    def _indication(self, board: Board) -> Any:
        return indication_for(board.verdict, camera_lost=board.camera_lost, shot_running=board.shot_running,
                              acknowledged=board.acknowledged)

    def _show(self, board: Board) -> None:
        status = "CAMERA LOST - NOT REFEREEING" if board.camera_lost else None
        view = view_for(self.match.info.discipline, board.players, board.summary, board.verdict,
                        self.match.referee.table, status=status, acknowledged=board.acknowledged)
        self.display.show(self.renderer(view, self.board_size))
        self.stats.boards_shown += 1
