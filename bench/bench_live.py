"""The live loop with vision slowed to half the frame rate: frames dropped and counted, memory flat, no verdict
lost for shots whose frames were kept; and the latency from the last ball stopping to the verdict.

    python -m bench.bench_live [--minutes 10] [--clip fixtures/clips/ball_off_the_table] [--slow 2.0]

The clip is looped (its timestamps carried on) and fed at its own rate through the real vision pipeline, each
frame's processing stretched to ``slow`` frame periods. RSS is sampled every ``--every`` seconds of footage.
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path

import numpy as np

from calibration.file import read_calibration
from device.display import NullSink
from device.live import LiveLoop
from device.sources import Frame, VideoFileSource
from device.store import MatchStore
from vision.live import make_processor

ROOT = Path(__file__).resolve().parent.parent


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * resource.getpagesize() / 1e6


class LoopedClip:
    """A clip's frames again and again at its own rate, timestamps running on (a camera that never stops)."""

    def __init__(self, path: str, seconds: float) -> None:
        with VideoFileSource(path) as src:
            self.fps = src.fps or 30.0
            self.frames = []
            while (f := src.read()) is not None:
                self.frames.append(f.image)
        self.n = int(seconds * self.fps)
        self.name, self.i, self.t0 = f"loop:{path}", 0, None

    def __enter__(self) -> "LoopedClip":
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def read(self) -> Frame | None:
        if self.i >= self.n:
            return None
        t = self.i / self.fps
        if self.t0 is None:
            self.t0 = time.monotonic()
        wait = self.t0 + t - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        frame = Frame(self.frames[self.i % len(self.frames)], t, self.i)
        self.i += 1
        return frame


class Slowed:
    """The vision processor, each frame stretched to ``factor`` frame periods; samples RSS as it goes."""

    def __init__(self, inner, period: float, factor: float, every_s: float, source: "LoopedClip",
                 settle_s: float = 0.3) -> None:
        self.inner, self.period, self.factor, self.every = inner, period, factor, every_s
        self.source, self.settle_s = source, settle_s
        self.rss: list[tuple[float, float]] = []
        self.shot_ends: list[float] = []
        self.latency: list[float] = []

    def process(self, frame):
        t0 = time.perf_counter()
        out = self.inner.process(frame)
        spare = self.period * self.factor - (time.perf_counter() - t0)
        if spare > 0:
            time.sleep(spare)
        if not self.rss or frame.t - self.rss[-1][0] >= self.every:
            self.rss.append((frame.t, rss_mb()))
        for _ in out:
            # The shot closes settle_s of footage after the last ball stopped; this frame reached the camera at
            # t0 + frame.t on the wall clock, and the verdict is judged and shown right after this call.
            self.latency.append(self.settle_s + time.monotonic() - (self.source.t0 + frame.t))
        return out

    def on_gap(self, gap):
        return self.inner.on_gap(gap)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--clip", default=str(ROOT / "fixtures" / "clips" / "ball_off_the_table"))
    ap.add_argument("--slow", type=float, default=2.0, help="processing time per frame, in frame periods")
    ap.add_argument("--every", type=float, default=30.0, help="seconds of footage between RSS samples")
    args = ap.parse_args()
    calib = read_calibration(args.clip + ".calib.json")
    source = LoopedClip(args.clip + ".mp4", args.minutes * 60)
    with tempfile.TemporaryDirectory() as d:
        with MatchStore(str(Path(d) / "m.db")) as store:
            live = store.new_match("three_cushion", ("Ana", "Rui"), table=calib.table)
            processor = Slowed(make_processor(calib, live, calib.camera.image_size), 1 / source.fps, args.slow,
                               args.every, source)
            t0 = time.perf_counter()
            stats = LiveLoop(source, processor, live, display=NullSink()).run()
            wall = time.perf_counter() - t0
    rss = [r for _, r in processor.rss]
    print(json.dumps({
        "footage_s": round(source.n / source.fps, 1), "wall_s": round(wall, 1), "fps": source.fps,
        "frames_read": stats.frames_read, "frames_processed": stats.frames_processed,
        "frames_dropped": stats.frames_dropped, "verdicts": stats.verdicts,
        "rss_mb": {"first": round(rss[0], 1), "max": round(max(rss), 1), "last": round(rss[-1], 1),
                   "samples": [round(r, 1) for r in rss]},
        "verdict_after_last_ball_stops_s_median": round(float(np.median(processor.latency)), 3)
        if processor.latency else None,
    }, indent=1))


if __name__ == "__main__":
    main()
