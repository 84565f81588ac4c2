"""The live loop with scripted processors: records reach the match, the store, the light and the display; a slow
processor loses frames (counted, bounded), a slow display slows nothing, a lost camera is reopened and shown.

Threads synchronise on events, never on sleeps: the only timeouts are safety nets against a hang."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pytest

pytest.importorskip("gpiozero")
from gpiozero.pins.mock import MockFactory  # noqa: E402

from rules.log import read_log  # noqa: E402
from rules.match import Match  # noqa: E402
from rules.registry import referee_for  # noqa: E402
from device.led import FoulLight, Indication, make_light  # noqa: E402
from device.live import LiveLoop, PipelineProcessor, ShotStarted  # noqa: E402
from device.sources import Frame, Gap, ReconnectingSource, SourceError  # noqa: E402
from device.store import MatchStore  # noqa: E402

ROOT = Path(__file__).parents[1]
LINES = (ROOT / "fixtures" / "logs" / "three_cushion_demo.jsonl").read_text().splitlines()
TABLE = referee_for("three_cushion").table
SHOTS = [r for _, r in read_log(LINES, "three_cushion", TABLE)]
SAFETY = 20.0  # seconds: only ever reached if the code under test hangs


def fold(records: Sequence[Any]) -> dict:
    match = Match(referee_for("three_cushion", distance=15))
    for r in records:
        match.feed(r)
    return match.summary()


class ListSource:
    """Frames (and source events) from a list, then the end; hooks let a test hold the source at a point."""

    name, fps = "list", 10.0

    def __init__(self, items: Sequence[Any], before: dict[int, threading.Event] | None = None) -> None:
        self.items = list(items)
        self.before = before or {}  # item number -> wait for this event before handing it out
        self.i = 0
        self.exhausted = threading.Event()

    def read(self) -> Any:
        if self.i >= len(self.items):
            self.exhausted.set()
            return None
        if self.i in self.before:
            assert self.before[self.i].wait(SAFETY)
        item = self.items[self.i]
        self.i += 1
        return item


def frames(n: int, fps: float = 10.0, start: int = 0) -> list[Frame]:
    img = np.zeros((4, 4, 3), np.uint8)
    return [Frame(img, i / fps, i) for i in range(start, start + n)]


class Scripted:
    """Emits given outputs when it sees given frame indices; can run a hook at a frame."""

    def __init__(self, at: dict[int, list[Any]], hooks: dict[int, Any] | None = None) -> None:
        self.at = at
        self.hooks = hooks or {}
        self.seen: list[int] = []
        self.gaps: list[Gap] = []

    def process(self, frame: Frame) -> list[Any]:
        self.seen.append(frame.index)
        if frame.index in self.hooks:
            self.hooks[frame.index]()
        return list(self.at.get(frame.index, []))

    def on_gap(self, gap: Gap) -> list[Any]:
        self.gaps.append(gap)
        return []


class RecordingDisplay:
    size = None

    def __init__(self, hold: threading.Event | None = None) -> None:
        self.hold = hold
        self.shown: list[tuple[int, ...]] = []
        self.entered = threading.Event()

    def __enter__(self) -> "RecordingDisplay":
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def show(self, image: np.ndarray) -> None:
        self.shown.append(image.shape)
        self.entered.set()
        if self.hold is not None:
            assert self.hold.wait(SAFETY)


class SpyLight(FoulLight):
    """The real light on a mock pin, remembering every indication it was asked to show."""

    def __init__(self, factory: MockFactory, on: dict[Indication, threading.Event] | None = None) -> None:
        from gpiozero import LED
        super().__init__(LED(17, pin_factory=factory), clock=lambda: 0.0)
        self.history: list[Indication] = []
        self.on = on or {}

    def show(self, indication: Indication, now: float | None = None) -> None:
        super().show(indication, now)
        if not self.history or self.history[-1] is not indication:
            self.history.append(indication)
        if indication in self.on:
            self.on[indication].set()


@pytest.fixture
def factory() -> MockFactory:
    f = MockFactory()
    yield f
    f.reset()


@pytest.fixture
def store(tmp_path: Path) -> MatchStore:
    s = MatchStore(tmp_path / "live.db")
    yield s
    s.close()


def run_loop(loop: LiveLoop) -> Any:
    result: list[Any] = []
    t = threading.Thread(target=lambda: result.append(loop.run()), daemon=True)
    t.start()
    t.join(SAFETY)
    assert not t.is_alive(), "the loop did not finish"
    return result[0]


def test_records_reach_the_match_the_store_the_light_and_the_display(store: MatchStore, factory: MockFactory
                                                                    ) -> None:
    live = store.new_match("three_cushion", ("Ana", "Rui"), distance=15)
    script = {5 * (k + 1): [SHOTS[k]] for k in range(18)}  # shots 1..18: the 18th is B's foul (touched)
    script[92] = [ShotStarted(95.0)]
    script[95] = [SHOTS[18]]
    light = SpyLight(factory)
    display = RecordingDisplay()
    loop = LiveLoop(ListSource(frames(100)), Scripted(script), live, display=display, light=light,
                    frame_queue=256, output_queue=256, max_fps=0)
    stats = run_loop(loop)
    assert stats.error is None and stats.rejected == []
    assert (stats.frames_read, stats.frames_processed, stats.frames_dropped) == (100, 100, 0)
    assert stats.records == stats.verdicts == 19
    assert live.summary() == fold(SHOTS[:19])
    assert len(store.log_rows(live.id)) == 19
    with MatchStore(store.path) as again:
        assert again.resume().summary() == fold(SHOTS[:19])  # what was shown is what was stored
    # The foul lit the light; the next shot starting put it out.
    i = light.history.index(Indication.FOUL)
    assert light.history[i + 1] is Indication.OFF
    assert factory.pin(17).state is False
    assert display.shown[-1] == (480, 800, 3) and stats.boards_shown == len(display.shown)


def test_a_slow_processor_drops_the_oldest_frames_counted_and_bounded(store: MatchStore) -> None:
    live = store.new_match("three_cushion", ("Ana", "Rui"))
    started, n, q = threading.Event(), 200, 4
    source = ListSource(frames(n), before={1: started})  # frame 1 only once frame 0 is being processed

    class Slow(Scripted):
        def process(self, frame: Frame) -> list[Any]:
            if not self.seen:
                started.set()
                assert source.exhausted.wait(SAFETY)  # stuck on the first frame until capture has read all
            return super().process(frame)

    proc = Slow({})
    stats = run_loop(LiveLoop(source, proc, live, display=RecordingDisplay(), frame_queue=q, max_fps=0))
    assert stats.frames_read == n
    assert stats.frames_processed == 1 + q and stats.frames_dropped == n - 1 - q
    assert stats.frame_queue_peak <= q
    assert proc.seen == [0] + list(range(n - q, n))  # the freshest frames survive
    # ... and the processor is told what it missed, as a gap like the source's own.
    assert proc.gaps == [Gap(0.0, (n - q) / 10.0, n - 1 - q, "dropped_behind")]


def test_a_slow_display_never_holds_up_capture_or_refereeing(store: MatchStore) -> None:
    live = store.new_match("three_cushion", ("Ana", "Rui"), distance=15)
    release = threading.Event()
    display = RecordingDisplay(hold=release)
    done = threading.Event()
    script = {10 * (k + 1): [SHOTS[k]] for k in range(6)}
    proc = Scripted(script, hooks={79: done.set})
    loop = LiveLoop(ListSource(frames(80)), proc, live, display=display, frame_queue=256, output_queue=2,
                    max_fps=0)
    runner = threading.Thread(target=loop.run, daemon=True)
    runner.start()
    assert display.entered.wait(SAFETY)  # the display is stuck in its first show()
    assert done.wait(SAFETY)  # ... and yet every frame was captured and processed
    assert len(display.shown) == 1
    release.set()
    runner.join(SAFETY)
    assert not runner.is_alive()
    stats = loop.stats
    assert stats.frames_processed == 80 and stats.verdicts == 6 and stats.frames_dropped == 0
    assert stats.boards_dropped > 0  # stale boards were skipped, not queued
    assert live.summary() == fold(SHOTS[:6])


class Flaky:
    """A camera that delivers its batches of frame times, failing between them; None fails to open."""

    def __init__(self, batches: list[list[float] | None]) -> None:
        self.batches = batches
        self.opened = 0

    def __call__(self) -> Any:
        batch = self.batches[self.opened]
        last = self.opened == len(self.batches) - 1
        self.opened += 1
        return _Session(batch, last)


class _Session:
    name, fps = "flaky", 10.0

    def __init__(self, batch: list[float] | None, last: bool) -> None:
        self.batch, self.last, self.i = batch, last, 0

    def __enter__(self) -> "_Session":
        if self.batch is None:
            raise SourceError("flaky: no camera")
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def read(self) -> Frame | None:
        if self.i < len(self.batch or []):
            self.i += 1
            return Frame(np.zeros((4, 4, 3), np.uint8), self.batch[self.i - 1], self.i - 1)
        if self.last:
            return None  # the end of the test
        raise SourceError("flaky: unplugged")


def test_a_camera_that_fails_for_a_while_is_reopened_shown_on_the_light_and_its_gap_marks_the_shot(
        store: MatchStore, factory: MockFactory) -> None:
    live = store.new_match("three_cushion", ("Ana", "Rui"), distance=15)
    shown_lost = threading.Event()
    light = SpyLight(factory, on={Indication.CAMERA_LOST: shown_lost})
    now = [0.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        # Back off on a fake clock; the first wait lasts until the light shows the fault.
        if not slept:
            assert shown_lost.wait(SAFETY)
        slept.append(s)
        now[0] += s

    before = [round(0.1 * i, 1) for i in range(21)]  # 0.0 .. 2.0 s, then unplugged
    after = [round(8.0 + 0.1 * i, 1) for i in range(31)]  # 8.0 .. 11.0 s
    source = ReconnectingSource(Flaky([before, None, None, after]), clock=lambda: now[0], sleep=sleep)
    statuses: list[str | None] = []

    def renderer(view: Any, size: tuple[int, int]) -> np.ndarray:
        statuses.append(view.status)
        return np.zeros((size[1], size[0], 3), np.uint8)

    # Shot 1 (t 0-5 s) straddles the outage; shot 2 (t 6-11 s) was played... also partly in it; both are marked.
    proc = Scripted({82: [SHOTS[0]], 110: [SHOTS[1]]})
    with source:
        stats = run_loop(LiveLoop(source, proc, live, display=RecordingDisplay(), light=light, frame_queue=256,
                                  output_queue=256, max_fps=0, renderer=renderer))
    assert stats.error is None
    assert stats.camera_losses == 1 and source.reopenings == 1 and slept == [0.5, 1.0, 2.0]
    gap = Gap(2.0, 8.0, 59, "camera_lost")
    assert stats.gaps == [gap] and proc.gaps == [gap] and stats.frames_lost == 59
    assert proc.seen[:21] == list(range(21)) and proc.seen[21] == 80  # indices count the lost frames
    assert [u["why"] for u in stats.unrefereed] == ["camera_lost", "camera_lost"]
    # The marked shots are judged but ask for confirmation: confidence 0 and a note.
    rows = store.log_rows(live.id)
    assert '"confidence":0.0' in rows[0][1] and "frames lost during the shot" in rows[0][1]
    assert live.last_verdict is not None and live.last_verdict.extra.get("confirm") is True
    assert Indication.CAMERA_LOST in light.history and light.history[-1] is Indication.CONFIRM
    assert "CAMERA LOST - NOT REFEREEING" in statuses and statuses[-1] is None


def test_buttons_undo_confirm_and_next_game(store: MatchStore) -> None:
    live = store.new_match("three_cushion", ("Ana", "Rui"), distance=15)
    matches: list[Any] = []

    def next_game(current: Any) -> Any:
        store.end_match(current.id)
        new = store.new_match("three_cushion", current.info.players, distance=15)
        matches.append(new)
        return new

    loop: LiveLoop
    hooks = {30: lambda: loop.press("undo"), 50: lambda: loop.press("confirm"),
             60: lambda: loop.press("next_game")}
    script = {10: [SHOTS[0]], 20: [SHOTS[1]], 40: [SHOTS[1]], 70: [SHOTS[0]]}
    loop = LiveLoop(ListSource(frames(80)), Scripted(script, hooks), live, display=RecordingDisplay(),
                    frame_queue=256, max_fps=0, new_match=next_game)
    stats = run_loop(loop)
    assert stats.rejected == [] and stats.error is None
    first = [r for _, r, _ in store.log_rows(live.id)]
    assert first[2] == '{"control":"undo"}' and len(first) == 4  # shot, shot, undo, the shot again
    assert store.match_info(live.id).ended is not None
    assert len(matches) == 1 and len(store.log_rows(matches[0].id)) == 1
    assert loop.match.summary() == fold(SHOTS[:1])


def test_a_record_the_referee_refuses_is_counted_and_the_loop_goes_on(store: MatchStore) -> None:
    live = store.new_match("three_cushion", ("Ana", "Rui"), distance=15)
    script = {10: [SHOTS[1]], 20: [SHOTS[0]]}  # B's shot first: not B's turn
    stats = run_loop(LiveLoop(ListSource(frames(30)), Scripted(script), live, display=RecordingDisplay(),
                              frame_queue=256, max_fps=0))
    assert len(stats.rejected) == 1 and "A plays 'spot'" in stats.rejected[0]
    assert stats.verdicts == 1 and live.summary() == fold(SHOTS[:1])


def test_a_processor_that_crashes_stops_the_loop_with_one_line(store: MatchStore) -> None:
    live = store.new_match("three_cushion", ("Ana", "Rui"))

    class Broken(Scripted):
        def process(self, frame: Frame) -> list[Any]:
            raise RuntimeError("detector model missing")

    stats = run_loop(LiveLoop(ListSource(frames(1000)), Broken({}), live, display=RecordingDisplay(),
                              max_fps=0))
    assert stats.error == "processing: detector model missing"
    assert stats.frames_read < 1000 or stats.frames_processed == 0


def test_the_pipeline_adapter_hands_frames_and_gaps_to_a_vision_pipeline() -> None:
    class FakePipeline:
        def __init__(self) -> None:
            self.calls: list[Any] = []

        def process(self, image: np.ndarray, t: float) -> Any:
            self.calls.append(("process", t))
            return SHOTS[0] if t == 0.5 else None

        def gap(self, t0: float, t1: float) -> None:
            self.calls.append(("gap", t0, t1))

        def flush(self) -> Any:
            return SHOTS[1]

    pipe = FakePipeline()
    proc = PipelineProcessor(pipe)
    out = [proc.process(f) for f in frames(7)]
    assert out[5] == [SHOTS[0]] and sum(map(len, out)) == 1
    assert proc.on_gap(Gap(0.6, 1.0, 3, "camera_lost")) == []
    assert proc.finish() == [SHOTS[1]]
    assert pipe.calls[-1] == ("gap", 0.6, 1.0)


def test_the_board_size_follows_the_display(store: MatchStore) -> None:
    live = store.new_match("three_cushion", ("Ana", "Rui"))
    display = RecordingDisplay()
    display.size = (1024, 600)
    run_loop(LiveLoop(ListSource(frames(3)), Scripted({}), live, display=display, max_fps=0))
    assert display.shown[-1] == (600, 1024, 3)


def test_make_light_is_what_the_loop_drives(factory: MockFactory) -> None:
    light = make_light(22, pin_factory=factory)
    light.show(Indication.FOUL, now=0.0)
    assert factory.pin(22).state is True


def test_a_gap_reaches_the_processor_between_the_frames_around_it_even_when_its_event_overtakes_them(
        store: MatchStore) -> None:
    """Regression: the gap's event used to be applied as soon as it was read, before the frames from before the
    outage still waiting in the queue, which also made the frame after it look like frames dropped behind."""
    live = store.new_match("three_cushion", ("Ana", "Rui"))
    from device.sources import CameraLost, CameraRestored
    gap = Gap(2.0, 8.0, 59, "camera_lost")
    items = frames(21) + [CameraLost(2.0, "unplugged"), CameraRestored(8.0, 1), gap] + frames(5, start=80)
    source = ListSource(items)
    calls: list[Any] = []

    class Ordered(Scripted):
        def process(self, frame: Frame) -> list[Any]:
            if not calls:
                assert source.exhausted.wait(SAFETY)  # hold frame 0 until everything is queued
            calls.append(frame.index)
            return []

        def on_gap(self, g: Gap) -> list[Any]:
            calls.append(g)
            return []

    stats = run_loop(LiveLoop(source, Ordered({}), live, display=RecordingDisplay(), frame_queue=256, max_fps=0))
    assert calls == list(range(21)) + [gap] + list(range(80, 85))
    assert stats.gaps == [gap] and stats.frames_lost == 59 and stats.frames_dropped == 0
