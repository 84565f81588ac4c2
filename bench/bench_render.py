"""How long the virtual camera takes to render a 10 s clip at 1456x1088, 60 fps, on one core.

    python3 bench/bench_render.py [--runs 3] [--seconds 10] [--sensor pi_gs] [--encode]

The clip is a pool break (16 balls, most of them moving for seconds: the worst case for motion blur) with the
default exposure effects: motion blur, sensor noise and JPEG. The process is pinned to one CPU and OpenCV to one
thread. Prints the physics time, then per run the set-up (table art and background warp) and frame times, then
the median of the runs.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import cv2  # noqa: E402

from sim.render import Renderer  # noqa: E402
from sim.scenario import Scenario, ShotSpec  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="render-time benchmark")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--sensor", default="pi_gs")
    ap.add_argument("--encode", action="store_true", help="also write the frames with cv2.VideoWriter (mp4v)")
    args = ap.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    cv2.setNumThreads(1)

    scenario = Scenario("bilhar", name="bench", camera={"sensor": args.sensor},
                        shots=(ShotSpec("cue", 7500.0, direction=90.4, tip=(0.0, 0.1), t=1.0, shooter="A"),))
    t0 = time.perf_counter()
    traj = scenario.simulate()
    print(f"physics: {time.perf_counter() - t0:.2f} s for {traj.t_end:.1f} s of play, {len(traj.events)} events")
    camera = scenario.camera_model()
    fps = scenario.fps()
    n = int(args.seconds * fps)
    totals = []
    for run in range(args.runs):
        t0 = time.perf_counter()
        renderer = Renderer(scenario.table_spec(), scenario.discipline, camera, traj, scenario.render_effects())
        renderer.render(0.0)  # builds the table art, the background warp and the ray cache
        setup = time.perf_counter() - t0
        writer = None
        if args.encode:
            path = os.path.join(tempfile.mkdtemp(), "bench.mp4")
            writer = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*"mp4v"), fps, camera.image_size)
        t1 = time.perf_counter()
        for i in range(n):
            img, _ = renderer.render(i / fps)
            if writer is not None:
                writer.write(img)
        if writer is not None:
            writer.release()
        frames = time.perf_counter() - t1
        totals.append(setup + frames)
        print(f"run {run + 1}: set-up {setup:.2f} s, {n} frames {frames:.2f} s ({1000 * frames / n:.1f} ms/frame), "
              f"total {setup + frames:.2f} s")
    w, h = camera.image_size
    print(f"median: {statistics.median(totals):.2f} s to render {args.seconds:g} s at {w}x{h} and {fps:g} fps "
          f"on one core{' with encoding' if args.encode else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
