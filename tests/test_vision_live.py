"""The vision pipeline in the live loop (``vision.live.LiveVision``): the frames dropped while the detector is
built reach the segmenter as a gap from the last warm-up frame, and balls that moved in it make a shot marked
for the referee to confirm.

Threads synchronise on events, never on sleeps: the only timeouts are safety nets against a hang."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import vision.live
from device.live import LiveLoop
from device.sources import Frame, Gap
from device.store import MatchStore
from vision.detections import Detections
from vision.live import LiveVision

SAFETY = 20.0  # seconds: only ever reached if the code under test hangs
FPS = 30.0
WARM = 10  # warm-up frames 0..9
BUILT_AT = 40  # the detector is built once the source has handed out frames up to 39
LAST = 100
BALLS = ("white", "spot", "red")
BEFORE = np.array([(300.0, 1500.0), (700.0, 600.0), (1000.0, 2000.0)])
AFTER = np.array([(300.0, 1500.0), (900.0, 2300.0), (400.0, 2500.0)])  # the spot played, the red hit
SIZE = (64, 48)


class Paced:
    """Frames 0..LAST-1; a frame waits for the processor to be two frames behind it at most (so none is dropped),
    except while the detector is being built: once the last warm-up frame is in the processor's hands, frames
    WARM..BUILT_AT-1 are handed out at once, as a camera goes on delivering."""

    name, fps = "paced", FPS

    def __init__(self, taken: dict[int, threading.Event], processed: dict[int, threading.Event],
                 reached: threading.Event) -> None:
        self.taken, self.processed, self.reached = taken, processed, reached
        self.i = 0

    def read(self) -> Frame | None:
        n = self.i
        if n >= LAST:
            return None
        if n == BUILT_AT:
            self.reached.set()
        if n == WARM:
            assert self.taken[WARM - 1].wait(SAFETY)
        elif 2 <= n < WARM or n >= BUILT_AT:
            assert self.processed[n - 2].wait(SAFETY)
        self.i += 1
        return Frame(np.zeros((SIZE[1], SIZE[0], 3), np.uint8), n / FPS, n)


class Tracked(LiveVision):
    def __init__(self, *args: Any, taken: dict[int, threading.Event], processed: dict[int, threading.Event],
                 **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.taken, self.processed = taken, processed

    def process(self, frame: Any) -> list[Any]:
        self.taken[frame.index].set()
        out = super().process(frame)
        self.processed[frame.index].set()
        return out


class Display:
    size = None

    def show(self, image: np.ndarray) -> None:
        pass


@pytest.mark.parametrize("moved", [True, False])
def test_balls_moved_while_the_detector_was_built_make_a_shot_for_the_referee_to_confirm(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moved: bool) -> None:
    reached = threading.Event()
    detected: list[float] = []

    class SlowToBuild:
        """The detector: built only once the camera has delivered 30 more frames than the loop could take; it then
        reads the balls where they rest before, and (``moved``) elsewhere after, the warm-up's last frame."""

        def __init__(self, camera: Any, table: Any, discipline: str, still_frames: Any, options: Any) -> None:
            assert len(still_frames) == WARM
            assert reached.wait(SAFETY)

        def detect(self, image: np.ndarray, t: float) -> Detections:
            detected.append(t)
            xy = AFTER if moved and t > (WARM - 0.5) / FPS else BEFORE
            px = np.array([(10.0, 10.0), (30.0, 10.0), (50.0, 30.0)])
            return Detections(t, xy, px, np.full(3, 4.0), np.ones(3), BALLS, np.eye(3))

    monkeypatch.setattr(vision.live, "FrameDetector", SlowToBuild)
    store = MatchStore(tmp_path / "live.db")
    try:
        live = store.new_match("three_cushion", ("Ana", "Rui"), distance=15)
        calibration = SimpleNamespace(camera=SimpleNamespace(image_size=SIZE), table=live.referee.table)
        taken, processed = ({n: threading.Event() for n in range(LAST)} for _ in range(2))
        proc = Tracked(calibration, live, SIZE, taken=taken, processed=processed)
        loop = LiveLoop(Paced(taken, processed, reached), proc, live, display=Display(), frame_queue=4, max_fps=0)
        done: list[Any] = []
        runner = threading.Thread(target=lambda: done.append(loop.run()), daemon=True)
        runner.start()
        runner.join(SAFETY)
        assert not runner.is_alive(), "the loop did not finish"
        stats = done[0]
        assert stats.error is None and stats.rejected == []
        # The loop was stuck building the detector: the 26 frames it could not keep are one gap, from the last
        # warm-up frame (which the pipeline saw: the balls' resting points before the gap) to the next one it got.
        dropped = BUILT_AT - 4 - WARM
        assert stats.frames_dropped == dropped
        assert stats.gaps == [Gap((WARM - 1) / FPS, (BUILT_AT - 4) / FPS, dropped, "dropped_behind")]
        assert detected[:WARM + 1] == [n / FPS for n in range(WARM)] + [(BUILT_AT - 4) / FPS]
        rows = store.log_rows(live.id)
        if not moved:
            assert rows == [] and stats.records == 0  # nothing moved in the gap: nothing to judge
            return
        assert len(rows) == 1 and stats.verdicts == 1
        shot = json.loads(rows[0][1])
        assert shot["confidence"] == 0.0
        assert shot["notes"] == [f"frames lost {(WARM - 1) / FPS:.3f}-{(BUILT_AT - 4) / FPS:.3f} s: the shot's start "
                                 "was not seen"]  # once: the loop does not say it again
        assert shot["t_start"] == pytest.approx((WARM - 1) / FPS)
        for b, ball in enumerate(BALLS):
            assert shot["start"][ball] == pytest.approx(list(BEFORE[b]), abs=0.5)
            assert shot["end"][ball] == pytest.approx(list(AFTER[b]), abs=0.5)
        assert live.last_verdict is not None and live.last_verdict.extra.get("confirm") is True
        assert [u["why"] for u in stats.unrefereed] == ["dropped_behind"]
    finally:
        store.close()
