"""The wizard's eyes: one JPEG per frame for every phone at a bounded rate, the still-table wait, the tapped
camera and the stand-alone feeder."""

from __future__ import annotations

import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from device.sources import Frame
from device.web.camera import FrameFeed, SourceFeeder, StillWatch, TapSource


class Clock:
    def __init__(self) -> None:
        self.t = 50.0

    def __call__(self) -> float:
        return self.t


def table_view(ball_at: tuple[int, int] | None, noise: float = 0.0, seed: int = 0,
               size: tuple[int, int] = (640, 480)) -> np.ndarray:
    """A green cloth with a white ball of a carom ball's size at 640 px across (about 14 px)."""
    w, h = size
    img = np.zeros((h, w, 3), np.uint8)
    img[:] = (40, 120, 30)
    if ball_at is not None:
        cv2.circle(img, ball_at, 7, (235, 235, 235), -1)
    if noise:
        rng = np.random.default_rng(seed)
        img = np.clip(img + rng.normal(0, noise, img.shape), 0, 255).astype(np.uint8)
    return img


def test_one_jpeg_per_frame_for_every_phone_and_no_faster_than_the_rate() -> None:
    clock = Clock()
    feed = FrameFeed(fps=5, width=640, clock=clock)
    assert feed.jpeg() is None and feed.size is None  # nothing before the first frame
    feed.offer(table_view((100, 100), size=(1456, 1088)), 0.0)
    first = feed.jpeg()
    assert first is not None and first[:2] == b"\xff\xd8"
    assert [feed.jpeg() for _ in range(5)] == [first] * 5 and feed.encodes == 1  # five phones, one encode
    small = cv2.imdecode(np.frombuffer(first, np.uint8), cv2.IMREAD_COLOR)
    assert small.shape[1] == 640 and abs(small.shape[0] - 1088 * 640 / 1456) < 1  # downscaled, aspect kept
    assert feed.size == (1456, 1088)  # the camera's own size, for the calibration
    feed.offer(table_view((300, 100), size=(1456, 1088)), 1 / 60)
    assert feed.jpeg() == first and feed.encodes == 1  # a new frame, but 1/5 s has not passed
    clock.t += 0.2
    second = feed.jpeg()
    assert second != first and feed.encodes == 2
    clock.t += 5.0
    assert feed.jpeg() == second and feed.encodes == 2  # no new frame: nothing to encode


def test_still_only_after_the_view_has_not_changed_for_the_hold_time() -> None:
    watch = StillWatch(hold_s=1.0, interval=0.2)
    states = []
    for i in range(60):  # 60 fps for 1 s: a ball rolling 3 px a frame, then stopped
        t = i / 60
        states.append((t, watch.update(table_view((100 + 3 * min(i, 30), 240), noise=1.5, seed=i), t)))
    samples = [(t, s) for t, s in states if abs(t * 5 - round(t * 5)) < 1e-6]
    assert not samples[0][1].moving  # the first look has nothing to compare with
    assert all(s.moving for t, s in samples if 0 < t <= 0.5)
    assert not any(s.still for _, s in states)  # stopped at 0.5 s: not still yet at 1 s
    t = 1.0
    while not watch.state.still:
        t += 1 / 60
        watch.update(table_view((190, 240), noise=1.5, seed=int(t * 60)), t)
        assert t < 3
    # Still one hold after the last sample that saw it move (0.6 s, the first showing it stopped).
    assert 1.55 < t < 1.85 and not watch.state.moving


def test_a_ball_creeping_less_than_the_threshold_per_sample_is_still_moving() -> None:
    """A slow ball shifts each sample by less than a pixel at 320 across; compared with the start of the still
    period, not with the last sample, it shows up once it has moved at all."""
    watch = StillWatch(hold_s=1.0, interval=0.2)
    moving = []
    for k in range(20):  # 1 px at 640 per 0.2 s sample: half a pixel at the watch's 320
        moving.append(watch.update(table_view((100 + k, 240)), 0.2 * k).moving)
    assert sum(moving) >= 5 and not watch.state.still


def test_sensor_noise_alone_is_still() -> None:
    watch = StillWatch(hold_s=1.0, interval=0.2)
    for k in range(7):
        state = watch.update(table_view((200, 200), noise=3.0, seed=k), 0.2 * k)
    assert state.still and state.still_for == pytest.approx(1.2)


def test_the_clock_going_back_starts_the_wait_again() -> None:
    watch = StillWatch(hold_s=1.0, interval=0.2)
    for k in range(6):
        watch.update(table_view(None), 0.2 * k)
    assert watch.state.still
    assert not watch.update(table_view(None), 0.1).still  # a reopened source: its clock restarted


class FakeSource:
    def __init__(self) -> None:
        self.items = [Frame(table_view((10, 10)), 0.0, 0), "an event", Frame(table_view((20, 10)), 0.1, 1)]
        self.stopped = False
        self.entered = 0

    def __enter__(self) -> "FakeSource":
        self.entered += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self.entered -= 1

    def read(self) -> object:
        return self.items.pop(0) if self.items else None

    def stop(self) -> None:
        self.stopped = True


def test_the_tapped_camera_passes_everything_through_and_offers_the_frames() -> None:
    feed, src = FrameFeed(), FakeSource()
    with TapSource(src, feed) as tap:
        assert src.entered == 1
        got = [tap.read() for _ in range(4)]
        tap.stop()  # the live loop's stop() reaches the camera
    assert src.entered == 0 and src.stopped
    assert got[1] == "an event" and got[3] is None
    seq, image, t = feed.latest()
    assert seq == 2 and t == 0.1 and image is got[2].image  # a reference: capture never copies for the wizard


def test_a_video_file_plays_then_its_last_view_stays(tmp_path: Path) -> None:
    clip = tmp_path / "clip.mp4"
    writer = cv2.VideoWriter(str(clip), cv2.VideoWriter_fourcc(*"mp4v"), 50.0, (64, 48))
    for i in range(5):
        writer.write(np.full((48, 64, 3), 40 * i, np.uint8))
    writer.release()
    feed = FrameFeed()
    feeder = SourceFeeder(str(clip), feed, idle_fps=50).start()
    try:
        deadline = time.monotonic() + 10
        while (feed.latest() is None or feed.latest()[0] < 8) and time.monotonic() < deadline:
            time.sleep(0.01)
        seq, image, t = feed.latest()
        assert seq >= 8 and t > 0.1 and abs(int(image.mean()) - 160) <= 3  # the last frame, still offered
        feeder.restart()
        deadline = time.monotonic() + 10
        while abs(int(feed.latest()[1].mean()) - 0) > 3 and time.monotonic() < deadline:
            time.sleep(0.005)
        assert feed.latest()[2] > t  # from the start again, on a clock that kept running
    finally:
        feeder.close()


def test_a_feeder_without_a_camera_says_why(tmp_path: Path) -> None:
    feed = FrameFeed()
    feeder = SourceFeeder(str(tmp_path / "nothing.mp4"), feed).start()
    feeder.close()
    assert feed.latest() is None and "no such file" in (feed.error or "")
