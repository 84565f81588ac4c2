"""Figures for the edge runtime on this machine: scoreboard rendering, framebuffer writes, store commits,
resuming a match, and the live loop's own cost per frame.

    python -m device.bench [--quick]

Run it on the Pi itself for the device's figures (its SD card makes the synchronous=FULL commits far slower
than a laptop's SSD).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from rules.log import read_log
from rules.registry import referee_for

from .display import FramebufferSink, NullSink
from .live import LiveLoop
from .scoreboard_demo import carom_view
from .scoreboard import render
from .sources import Frame
from .store import MatchStore

ROOT = Path(__file__).resolve().parents[1]


def _ms(fn: Callable[[], Any], n: int) -> dict[str, float]:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return {"median_ms": round(statistics.median(times), 3), "p95_ms": round(times[int(0.95 * (len(times) - 1))], 3)}


def bench_render(n: int) -> dict[str, Any]:
    view = carom_view()
    return {f"{w}x{h}": _ms(lambda: render(view, (w, h)), n) for w, h in ((800, 480), (1024, 600))}


def bench_framebuffer(n: int, tmp: Path) -> dict[str, Any]:
    out = {}
    img = render(carom_view(), (800, 480))
    for bpp in (16, 32):
        sysfs = tmp / f"fb{bpp}"
        sysfs.mkdir()
        (sysfs / "virtual_size").write_text("800,480")
        (sysfs / "bits_per_pixel").write_text(str(bpp))
        dev = tmp / f"fb{bpp}.dev"
        dev.write_bytes(bytes(800 * 480 * bpp // 8))
        with FramebufferSink(dev, sysfs) as fb:
            out[f"{bpp}bit_800x480"] = _ms(lambda: fb.show(img), n)
    return out


def bench_store(tmp: Path) -> dict[str, Any]:
    lines = (ROOT / "fixtures" / "logs" / "three_cushion_demo.jsonl").read_text().splitlines()
    table = referee_for("three_cushion").table
    records = [r for _, r in read_log(lines, "three_cushion", table)]
    path = tmp / "bench.db"
    with MatchStore(path) as store:
        live = store.new_match("three_cushion", ("Ana", "Rui"), distance=15)
        times = []
        for r in records:
            t0 = time.perf_counter()
            live.append(r)
            times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    t0 = time.perf_counter()
    with MatchStore(path) as store:
        store.open_match(1)
    resume = (time.perf_counter() - t0) * 1000
    return {"append_median_ms": round(statistics.median(times), 3), "append_max_ms": round(times[-1], 3),
            "records": len(records), "reopen_and_refold_ms": round(resume, 2)}


class _Frames:
    """Frames of a lores-sized image, as fast as asked or paced like a camera (sleeping, as a driver blocks)."""

    name = "bench"

    def __init__(self, n: int, shape: tuple[int, int, int], fps: float = 0.0) -> None:
        self.n, self.i, self.img, self.fps = n, 0, np.zeros(shape, np.uint8), fps
        self.t0 = time.perf_counter()

    def read(self) -> Frame | None:
        if self.i >= self.n:
            return None
        if self.fps:
            wait = self.t0 + self.i / self.fps - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
        self.i += 1
        return Frame(self.img, self.i / (self.fps or 60.0), self.i - 1)


class _Nothing:
    def process(self, frame: Frame) -> list:
        return []

    def on_gap(self, gap: Any) -> list:
        return []


def bench_loop(n: int, fps: float, tmp: Path) -> dict[str, Any]:
    with MatchStore(tmp / f"loop{fps:g}.db") as store:
        live = store.new_match("three_cushion", ("Ana", "Rui"))
        loop = LiveLoop(_Frames(n, (544, 728, 3), fps), _Nothing(), live, display=NullSink(), frame_queue=4)
        t0, c0 = time.perf_counter(), time.process_time()
        stats = loop.run()
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"frames": n, "source_fps": fps or "unpaced", "frames_per_s": round(n / dt),
            "processed": stats.frames_processed, "dropped": stats.frames_dropped,
            "queue_peak": stats.frame_queue_peak, "cpu_per_frame_us": round(cpu / n * 1e6, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m device.bench")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args(argv)
    n = 10 if args.quick else 50
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        figures = {"render": bench_render(n), "framebuffer": bench_framebuffer(n, tmp), "store": bench_store(tmp),
                   "loop_unpaced": bench_loop(500 if args.quick else 3000, 0.0, tmp),
                   "loop_paced_120fps": bench_loop(120 if args.quick else 360, 120.0, tmp)}
    print(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
