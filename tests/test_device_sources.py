"""Frame sources: picamera2 against a fake Picamera2, a real mp4 file, the spec parser, and reopening with backoff."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import cv2
import numpy as np
import pytest

from device.sources import (
    CAMERA_MODES, CameraLost, CameraRestored, Frame, Gap, Picamera2Source, ReconnectingSource, SourceError,
    SourceSpec, VideoFileSource, iter_frames, open_source, parse_source_spec,
)


# --- a fake picamera2, mimicking the calls the adapter makes -------------------------------------------------------

class FakeRequest:
    def __init__(self, cam: "FakePicamera2", ts_ns: int) -> None:
        self.cam, self.ts_ns, self.released = cam, ts_ns, False

    def make_array(self, name: str) -> np.ndarray:
        w, h = self.cam.config[name]["size"]
        if self.cam.config[name]["format"] == "YUV420":
            a = np.full((h * 3 // 2, w), 128, np.uint8)
            a[:h] = 200  # the luma plane: a bright grey frame
            return a
        return np.full((h, w, 3), 50, np.uint8)

    def get_metadata(self) -> dict:
        return {"SensorTimestamp": self.ts_ns, "ExposureTime": self.cam.config["controls"]["ExposureTime"]}

    def release(self) -> None:
        self.released = True


class FakePicamera2:
    instances: list["FakePicamera2"] = []

    def __init__(self, camera_num: int = 0, timestamps_ns: list[int] | None = None) -> None:
        self.camera_num = camera_num
        self.timestamps = list(timestamps_ns if timestamps_ns is not None else [int(i * 1e9 / 60) for i in range(5)])
        self.calls: list[str] = []
        self.requests: list[FakeRequest] = []
        self.config: dict = {}
        self.waits: list[float | None] = []
        self.hang = False  # the request never completes: picamera2 raises TimeoutError after ``wait``
        FakePicamera2.instances.append(self)

    def create_video_configuration(self, main: dict = {}, lores: dict | None = None, raw: dict = {},
                                   controls: dict = {}, buffer_count: int = 6, **kw: object) -> dict:
        self.calls.append("create_video_configuration")
        return {"main": dict(main), "lores": None if lores is None else dict(lores), "raw": dict(raw),
                "controls": dict(controls), "buffer_count": buffer_count}

    def configure(self, config: dict) -> None:
        self.calls.append("configure")
        self.config = config

    def start(self) -> None:
        self.calls.append("start")

    def stop(self) -> None:
        self.calls.append("stop")

    def close(self) -> None:
        self.calls.append("close")

    def cancel_all_and_flush(self) -> None:
        self.calls.append("cancel_all_and_flush")

    @contextlib.contextmanager
    def captured_request(self, wait: float | None = None, flush: bool | None = None) -> Iterator[FakeRequest]:
        self.waits.append(wait)
        if self.hang:
            raise TimeoutError()
        if not self.timestamps:
            raise RuntimeError("Camera frontend has timed out!")
        request = FakeRequest(self, self.timestamps.pop(0))
        self.requests.append(request)
        try:
            yield request
        finally:
            request.release()


def test_picamera2_and_gpiozero_are_never_imported_at_module_level() -> None:
    code = ("import sys, device.sources, device.live, device.run_command, device.led, device.display, "
            "device.store, device.config, device.scoreboard;"
            "print('picamera2' in sys.modules, 'gpiozero' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=Path(__file__).parents[1])
    assert out.stdout.strip() == "False False", out.stderr


@pytest.mark.parametrize("mode, size, fps", [
    ("gs", (1456, 1088), 60.0), ("cm3", (2304, 1296), 56.0), ("cm3_120", (1536, 864), 120.0),
    ("hq", (2028, 1080), 50.0),
])
def test_each_pi_camera_gets_its_mode_with_fixed_exposure_and_gain(mode: str, size: tuple, fps: float) -> None:
    cam = FakePicamera2()
    with Picamera2Source(mode, exposure_us=1500, analogue_gain=3.0, picamera2_factory=lambda n: cam) as src:
        assert src.fps == fps
    config = cam.config
    assert config["main"] == {"size": size, "format": "RGB888"}
    assert config["raw"] == {"size": size}
    assert config["lores"]["format"] == "YUV420"
    lw, lh = config["lores"]["size"]
    assert lw % 2 == 0 and lh % 2 == 0 and abs(lw / lh - size[0] / size[1]) < 0.01
    controls = config["controls"]
    assert controls["ExposureTime"] == 1500 and controls["AnalogueGain"] == 3.0 and controls["AeEnable"] is False
    period = int(round(1e6 / fps))
    assert controls["FrameDurationLimits"] == (period, period)
    assert cam.calls == ["create_video_configuration", "configure", "start", "stop", "close"]


def test_picamera2_frames_come_from_lores_timed_by_the_sensor_and_every_buffer_is_released() -> None:
    ts = [10_000_000_000 + int(i * 1e9 / 60) for i in range(4)]
    cam = FakePicamera2(timestamps_ns=ts)
    with Picamera2Source("gs", picamera2_factory=lambda n: cam) as src:
        frames = [src.read() for _ in range(4)]
    assert [f.index for f in frames] == [0, 1, 2, 3]
    assert [f.t for f in frames] == pytest.approx([t / 1e9 for t in ts])
    assert frames[0].image.shape == (544, 728, 3)  # lores YUV420 converted to BGR
    assert int(frames[0].image.mean()) > 150
    assert all(r.released for r in cam.requests)


def test_picamera2_main_stream_and_skipped_sensor_frames_are_counted() -> None:
    period = 1e9 / 60
    ts = [int(i * period) for i in (0, 1, 4, 5)]  # frames 2 and 3 never arrived
    cam = FakePicamera2(timestamps_ns=ts)
    with Picamera2Source("gs", stream="main", picamera2_factory=lambda n: cam) as src:
        frames = [src.read() for _ in range(4)]
    assert frames[0].image.shape == (1088, 1456, 3)
    assert [f.index for f in frames] == [0, 1, 4, 5]
    assert src.frames_lost == 2


def test_picamera2_failure_is_a_source_error_and_the_camera_is_still_closed() -> None:
    cam = FakePicamera2(timestamps_ns=[0])
    with pytest.raises(SourceError, match="stopped delivering"):
        with Picamera2Source("gs", picamera2_factory=lambda n: cam) as src:
            src.read()
            src.read()
    assert cam.calls[-2:] == ["stop", "close"]


def test_a_camera_that_goes_silent_times_out_into_a_source_error() -> None:
    """A loose ribbon cable makes requests never complete: the bounded wait turns that into a lost camera."""
    cam = FakePicamera2(timestamps_ns=[0])
    with Picamera2Source("gs", frame_timeout_s=0.25, picamera2_factory=lambda n: cam) as src:
        src.read()
        cam.hang = True
        with pytest.raises(SourceError, match="stopped delivering frames .TimeoutError"):
            src.read()
    assert cam.waits == [0.25, 0.25]
    assert cam.calls[-3:] == ["cancel_all_and_flush", "stop", "close"]


def test_exposure_longer_than_a_frame_is_refused() -> None:
    with pytest.raises(SourceError, match="longer than a frame"):
        Picamera2Source("cm3_120", exposure_us=9000, picamera2_factory=FakePicamera2)


def test_missing_picamera2_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "picamera2", None)  # import fails as on a machine without it
    with pytest.raises(SourceError, match="picamera2 is not installed"):
        with Picamera2Source("gs"):
            pass


# --- a real video file ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("clip") / "clip.mp4"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), 25.0, (64, 48))
    assert writer.isOpened()
    for i in range(20):
        img = np.zeros((48, 64, 3), np.uint8)
        img[:, : 3 * i] = 255  # a bar that grows frame by frame
        writer.write(img)
    writer.release()
    return path


def test_file_source_yields_every_frame_with_container_timestamps(clip: Path) -> None:
    with VideoFileSource(str(clip)) as src:
        frames = list(iter_frames(src))
    assert src.fps == pytest.approx(25.0)
    assert [f.index for f in frames] == list(range(20))
    assert [f.t for f in frames] == pytest.approx([i / 25.0 for i in range(20)], abs=1e-3)
    assert frames[5].image.shape == (48, 64, 3)
    assert frames[5].image[:, :14].mean() > 200 and frames[5].image[:, 20:].mean() < 50


def test_file_source_at_its_own_rate_sleeps_on_the_injected_clock(clip: Path) -> None:
    now = [100.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    with VideoFileSource(str(clip), realtime=True, clock=lambda: now[0], sleep=sleep) as src:
        frames = list(iter_frames(src))
    assert len(frames) == 20
    assert sum(slept) == pytest.approx(19 / 25.0, abs=1e-3)  # the clip's duration, no more
    assert now[0] - 100.0 == pytest.approx(frames[-1].t - frames[0].t, abs=1e-3)


def test_a_missing_or_unreadable_file_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no such video file"):
        open_source(SourceSpec("file", str(tmp_path / "nope.mp4")))
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"not a video")
    with pytest.raises(SourceError, match="cannot open the video file"):
        with VideoFileSource(str(junk)):
            pass


def damaged_copy(src: Path, dst: Path) -> Path:
    """``src`` with 60 kB a third of the way in overwritten with noise (a bad stretch of a card)."""
    data = bytearray(src.read_bytes())
    start = len(data) // 3
    data[start:start + 60_000] = np.random.default_rng(1).integers(0, 256, 60_000, dtype=np.uint8).tobytes()
    dst.write_bytes(bytes(data))
    return dst


def test_a_damaged_stretch_of_a_file_is_read_past_and_its_frames_show_as_a_gap(tmp_path: Path) -> None:
    clip = Path(__file__).resolve().parent.parent / "fixtures" / "clips" / "three_cushion_point_and_miss.mp4"
    cap = cv2.VideoCapture(str(clip))
    whole = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))
    fps = cap.get(cv2.CAP_PROP_FPS)
    cap.release()
    with VideoFileSource(str(damaged_copy(clip, tmp_path / "damaged.mp4"))) as src:
        frames = list(iter_frames(src))
        damaged = src.damaged_reads
    steps = np.diff([f.t for f in frames]) * fps
    assert damaged > 0 and len(frames) + damaged == whole  # every frame either decoded or counted
    assert len(frames) > whole * 0.6  # the frames after the damage were read too
    assert round(steps.max()) == damaged + 1 and np.sum(np.round(steps) > 1) == 1  # one gap, as long as the loss


# --- the spec parser -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, spec", [
    ("picamera2", SourceSpec("picamera2", None)),
    ("picamera2:cm3_120", SourceSpec("picamera2", "cm3_120")),
    ("v4l2:0", SourceSpec("v4l2", 0)),
    ("/dev/video2", SourceSpec("v4l2", 2)),
    ("rtsp://10.0.0.5:554/table1", SourceSpec("stream", "rtsp://10.0.0.5:554/table1")),
    ("file:clip.mp4", SourceSpec("file", "clip.mp4")),
])
def test_source_specs(text: str, spec: SourceSpec) -> None:
    assert parse_source_spec(text) == spec


@pytest.mark.parametrize("text, message", [
    ("picamera2:v1", "unknown Pi camera mode"), ("v4l2:x", "device number"), ("file:", "needs a path"),
    ("webcam", "not a source"),
])
def test_bad_source_specs_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(SourceError, match=message):
        parse_source_spec(text)


def test_capture_uses_device_times_when_the_backend_gives_them_and_counts_lost_frames() -> None:
    times_ms = iter([1000.0, 1033.3, 1133.3])  # 30 fps, then two frames missing

    class DeviceTimed:
        def __init__(self, *a: object) -> None:
            self.t = 0.0

        def isOpened(self) -> bool:
            return True

        def set(self, prop: int, value: float) -> bool:
            return True

        def get(self, prop: int) -> float:
            return 30.0 if prop == cv2.CAP_PROP_FPS else self.t

        def read(self) -> tuple[bool, np.ndarray]:
            self.t = next(times_ms)
            return True, np.zeros((2, 2, 3), np.uint8)

        def release(self) -> None:
            pass

    from device.sources import OpenCVCapture
    with OpenCVCapture(0, clock=lambda: 99.0, capture_factory=DeviceTimed) as src:
        got = [src.read() for _ in range(3)]
    assert [f.t for f in got] == pytest.approx([1.0, 1.0333, 1.1333])
    assert [f.index for f in got] == [0, 1, 4] and src.frames_lost == 2


def test_v4l2_capture_opens_with_the_v4l2_backend_and_times_frames_with_the_clock() -> None:
    class FakeCapture:
        def __init__(self, target: object, backend: int) -> None:
            self.target, self.backend, self.reads = target, backend, 0

        def isOpened(self) -> bool:
            return True

        def set(self, prop: int, value: float) -> bool:
            return True

        def get(self, prop: int) -> float:
            return 30.0 if prop == cv2.CAP_PROP_FPS else 0.0

        def read(self) -> tuple[bool, np.ndarray | None]:
            self.reads += 1
            return (self.reads <= 2, np.zeros((4, 4, 3), np.uint8) if self.reads <= 2 else None)

        def release(self) -> None:
            pass

    from device.sources import OpenCVCapture
    times = iter([1.0, 1.0 + 1 / 30, 5.0])
    made: list[FakeCapture] = []
    def factory(*a: object) -> FakeCapture:
        made.append(FakeCapture(*a))
        return made[-1]

    src = OpenCVCapture(0, clock=lambda: next(times), capture_factory=factory)
    with src:
        assert made[0].backend == cv2.CAP_V4L2
        assert [src.read().t, src.read().t] == pytest.approx([1.0, 1.0 + 1 / 30])
        with pytest.raises(SourceError, match="no frame"):
            src.read()


# --- reopening with backoff -------------------------------------------------------------------------------------

class FlakyCamera:
    """Each opening delivers its batch of frame times, then fails; a batch of None fails to open."""

    def __init__(self, batches: list[list[float] | None]) -> None:
        self.batches = batches
        self.opened = 0

    def __call__(self) -> "FlakyCamera._Session":
        batch = self.batches[min(self.opened, len(self.batches) - 1)]
        self.opened += 1
        return FlakyCamera._Session(batch)

    class _Session:
        name, fps = "flaky", 10.0

        def __init__(self, batch: list[float] | None) -> None:
            self.batch, self.i = batch, 0

        def __enter__(self) -> "FlakyCamera._Session":
            if self.batch is None:
                raise SourceError("flaky: no camera")
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def read(self) -> Frame | None:
            if self.batch is not None and self.i < len(self.batch):
                t = self.batch[self.i]
                self.i += 1
                return Frame(np.zeros((2, 2), np.uint8), t, self.i - 1)
            raise SourceError("flaky: unplugged")


def test_a_lost_camera_is_reopened_with_backoff_and_the_gap_is_reported() -> None:
    now = [0.0]
    camera = FlakyCamera([[0.0, 0.1, 0.2], None, None, [1.0, 1.1]])
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    src = ReconnectingSource(camera, clock=lambda: now[0], sleep=sleep, backoff_initial=0.5, backoff_max=1.5)
    items = []
    with src:
        for _ in range(9):
            items.append(src.read())
    frames = [i for i in items if isinstance(i, Frame)]
    events = [i for i in items if not isinstance(i, Frame)]
    assert [f.t for f in frames] == [0.0, 0.1, 0.2, 1.0, 1.1]
    # Indices keep counting across the outage: 7 frames at 10 fps never came between t=0.2 and t=1.0.
    assert [f.index for f in frames] == [0, 1, 2, 10, 11]
    assert isinstance(events[0], CameraLost) and events[0].t == 0.2 and "unplugged" in events[0].why
    assert events[1] == CameraRestored(1.0, 3)
    assert events[2] == Gap(0.2, 1.0, 7, "camera_lost")
    assert isinstance(events[3], CameraLost)  # the second batch ran out too
    assert slept[:3] == [0.5, 1.0, 1.5]  # doubling, capped
    assert src.reopenings == 1 and src.frames_lost == 7


def test_no_camera_at_start_is_an_error_not_a_silent_retry() -> None:
    src = ReconnectingSource(FlakyCamera([None]), sleep=lambda s: None)
    with pytest.raises(SourceError, match="no camera"):
        with src:
            pass


def test_giving_up_after_max_attempts_and_stop_interrupts_backoff() -> None:
    src = ReconnectingSource(FlakyCamera([[0.0], None]), sleep=lambda s: None, max_attempts=3)
    with src:
        assert isinstance(src.read(), Frame)
        assert isinstance(src.read(), CameraLost)
        with pytest.raises(SourceError, match="after 3 attempts"):
            src.read()
    stopping = ReconnectingSource(FlakyCamera([[0.0], None]))
    with stopping:
        stopping.read(), stopping.read()
        stopping.stop()
        assert stopping.read() is None  # the default sleep is the stop event: no wait


def test_device_skipped_frames_are_a_gap_too() -> None:
    class Skipping(FlakyCamera._Session):
        def read(self) -> Frame | None:
            frames = {0: 0, 1: 1, 2: 4}
            if self.i in frames:
                idx = frames[self.i]
                self.i += 1
                return Frame(np.zeros((2, 2), np.uint8), idx / 10, idx)
            return None

    src = ReconnectingSource(lambda: Skipping([]), sleep=lambda s: None)
    with src:
        items = [src.read() for _ in range(5)]
    assert items[2] == Gap(0.1, 0.4, 2, "frames_skipped")  # announced before the frame after it
    assert items[3].index == 4 and items[4] is None
    assert src.frames_lost == 2


def test_pi_mode_table_matches_the_supported_cameras() -> None:
    assert set(CAMERA_MODES) == {"gs", "cm3", "cm3_120", "hq"}
