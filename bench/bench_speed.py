"""Speed of the whole per-frame vision pipeline (detection to events) at 1456 x 1088, on one core.

    python -m bench.bench_speed [--discipline three_cushion] [--shots 2] [--size 1456x1088] [--fps 60]

Renders random shots of the discipline through the Pi Global Shutter camera (``sim.scenario``: the cue, the
strike, the balls running and coming to rest, sensor noise, JPEG), then runs the pipeline over every frame twice,
frame by frame in alternation so that the machine's load falls on both alike: the detector that looks only where
the frame changed (``vision.incremental``, the default) and the whole-frame one (``--default-only``: the default
alone). CPU time of the timing process, OpenCV and the BLAS held to one thread. Prints, for each, the median and
90th percentile per frame of the pipeline's stages (detect, track, segment, total) and of the detector's own (the
change map, foreground, candidates, smears, ray fit, pixel-to-cloth, identity, the empty table's update), the
frame rate implied on a Raspberry Pi 5, whose core is taken as 3.5 times slower than this one (the issue's 3-4x;
the Global Shutter camera gives 60 fps), and the peak resident memory of the default pipeline alone. The clips
are rendered in a process of their own, timed in another, and run once more for memory each in a process of its
own, as the replay runs one pipeline a process (spawned, so neither the renderer nor the second pipeline counts;
the largest peak is printed).
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import collections  # noqa: E402
import inspect  # noqa: E402
import itertools  # noqa: E402
import multiprocessing  # noqa: E402
import resource  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from calibration.file import read_calibration  # noqa: E402
from vision.frame_detector import FrameDetector  # noqa: E402
from vision.live import balls_for, groups_for, lookalikes_for, pins_for, strikers_for  # noqa: E402
from vision.pipeline import VisionPipeline  # noqa: E402

PI5_SLOWER = 3.5
WARMUP = 15  # still frames the detector learns the empty table from (as the replay does)
STAGES = ("detect", "pins", "track", "segment", "total")  # pins: Chapó only (0 elsewhere)
DETECTOR_STAGES = ("change", "foreground", "candidates", "smears", "fit", "to_table", "identity", "background")
MODES = (("changed", "where it changed", True), ("whole", "whole frame", False))
_DEFAULT_INCREMENTAL = inspect.signature(FrameDetector.__init__).parameters["incremental"].default


def _frames(video: str):
    """The clip's frames one by one: held all at once, 7 s at 1456 x 1088 would be 2 GB. Decoded on the calling
    thread alone: FFmpeg's own decoding threads go on decoding the next frames while the pipeline runs, and the
    process's CPU clock, which the stages are timed by, counted their work as the pipeline's (0.1-0.4 ms a frame;
    the camera on the device hands over decoded frames)."""
    cap = cv2.VideoCapture(video, cv2.CAP_FFMPEG, [cv2.CAP_PROP_N_THREADS, 1])
    try:
        while True:
            ok, frame = cap.read()
            if not ok:
                return
            yield frame
    finally:
        cap.release()


def _pipeline(calib, discipline: str, frames: list[np.ndarray], incremental: bool) -> VisionPipeline:
    balls = balls_for(discipline, {})
    detector = FrameDetector(calib.camera, calib.table, discipline, frames[:WARMUP], incremental=incremental)
    # Built as the live loop builds it (vision.live): Chapó's pins are watched every frame. Its stages timed by
    # the process's CPU clock.
    p = VisionPipeline(detector, balls, calib.table, cue_ball=lambda: balls[0],
                       lookalikes=lookalikes_for(discipline), strikers=strikers_for(discipline),
                       groups=groups_for(discipline, balls),
                       pins=pins_for(discipline, calib.camera, calib.table, detector))
    p.clock = time.process_time
    return p


def _step(p: VisionPipeline, frame: np.ndarray, t: float, into: dict[str, list[float]]) -> None:
    """One frame through the pipeline (``VisionPipeline.process``, its stages timed by the process's CPU clock),
    and the detector's own stages."""
    p.detector.timings = {}
    p.process(frame, t)
    stages = [p.times.detect[-1], p.times.pins[-1], p.times.track[-1], p.times.segment[-1]]
    for name, v in zip(STAGES, stages + [sum(stages)]):
        into[name].append(1e3 * v)
    for name in DETECTOR_STAGES:
        into[name].append(1e3 * p.detector.timings.get(name, 0.0))


def _cell(v: list[float]) -> str:
    return f"{np.median(v):.2f} / {np.percentile(v, 90):.2f}"


def _render_clips(discipline: str, seeds: list[int], size: tuple[int, int], fps: float, folder: str
                  ) -> list[tuple[str, str]]:
    """The random shots rendered into ``folder``: (video, calibration file) each. Run in a process of its own: the
    renderer's memory is not the pipeline's."""
    from sim.clip import write_clip
    from sim.scenario import random_scenario
    out = []
    for seed in seeds:
        sc = random_scenario(discipline, seed, camera={"sensor": "pi_gs", "size": list(size), "fps": fps})
        clip = write_clip(sc, folder)
        out.append((str(clip.video), str(clip.calib)))
    return out


def _time_clips(discipline: str, clips: list[tuple[str, str]], fps: float, modes: tuple
                ) -> tuple[dict[str, dict[str, list[float]]], int]:
    """Each clip through a pipeline per mode, frame by frame in alternation, every stage timed; and the frames."""
    cv2.setNumThreads(1)
    times = {mode: {s: [] for s in STAGES + DETECTOR_STAGES} for mode, _, _ in modes}
    n_frames = 0
    for video, calib_file in clips:
        calib = read_calibration(calib_file)
        frames = _frames(video)
        still = list(itertools.islice(frames, WARMUP))
        pipelines = {mode: _pipeline(calib, discipline, still, incremental=inc) for mode, _, inc in modes}
        for n, frame in enumerate(itertools.chain(still, frames)):
            t = n / fps
            for mode, _, _ in modes:
                _step(pipelines[mode], frame, t, times[mode])
            n_frames += 1
        del still, pipelines
    return times, n_frames


def _pipeline_peak_mb(discipline: str, clips: list[tuple[str, str]], fps: float) -> float:
    """Peak resident memory (MB) of a fresh process that runs the default pipeline alone over the clips: what the
    device holds (the frames streamed from the file, as from the camera; no renderer, no second pipeline)."""
    cv2.setNumThreads(1)
    for video, calib_file in clips:
        calib = read_calibration(calib_file)
        frames = _frames(video)
        pending = collections.deque(itertools.islice(frames, WARMUP))
        p = _pipeline(calib, discipline, list(pending), incremental=_DEFAULT_INCREMENTAL)
        n = 0
        while pending:  # as the replay does: each warm-up frame let go once processed
            p.process(pending.popleft(), n / fps)
            n += 1
        for frame in frames:
            p.process(frame, n / fps)
            n += 1
        del p
    # ru_maxrss is in kilobytes on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _in_fresh_process(fn, *args):
    """``fn(*args)`` in a new interpreter (spawned, not forked: nothing of this process's memory comes along)."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(fn, args)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--discipline", default="three_cushion")
    ap.add_argument("--shots", type=int, default=2, help="random shots rendered (each a clip of its own)")
    ap.add_argument("--size", default="1456x1088")
    ap.add_argument("--fps", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=100)
    ap.add_argument("--default-only", action="store_true",
                    help="time the default detector alone (run beside the whole-frame one, each frame's two passes "
                         "share the caches: about a third more for the default's)")
    args = ap.parse_args(argv)
    try:
        w, h = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        ap.error(f"--size must be WIDTHxHEIGHT, got {args.size!r}")
    if args.shots < 1 or args.fps <= 0:
        ap.error("--shots must be >= 1 and --fps positive")
    modes = tuple(m for m in MODES if m[2] == _DEFAULT_INCREMENTAL) if args.default_only else MODES
    seeds = [args.seed + k for k in range(args.shots)]
    with tempfile.TemporaryDirectory() as tmp:
        clips = _in_fresh_process(_render_clips, args.discipline, seeds, (w, h), args.fps, tmp)
        times, n_frames = _in_fresh_process(_time_clips, args.discipline, clips, args.fps, modes)
        # One clip a process, as the replay runs one pipeline a process: the largest peak.
        peak_mb = max(_in_fresh_process(_pipeline_peak_mb, args.discipline, [c], args.fps) for c in clips)
    print(f"bench_speed: {args.discipline}, {args.shots} shots, {n_frames} frames at {w}x{h} {args.fps:g} fps, "
          f"one core, CPU ms per frame (median / p90)")
    print("detector | " + " | ".join(STAGES) + " | Pi 5 fps (median total x 3.5)")
    med = {}
    for mode, label, inc in modes:
        med[mode] = float(np.median(times[mode]["total"]))
        label += " (default)" if inc == _DEFAULT_INCREMENTAL else ""
        print(f"{label} | " + " | ".join(_cell(times[mode][s]) for s in STAGES)
              + f" | {1000.0 / (PI5_SLOWER * med[mode]):.0f}")
    print("detector stages | " + " | ".join(DETECTOR_STAGES))
    for mode, label, _ in modes:
        print(f"{label} | " + " | ".join(_cell(times[mode][s]) for s in DETECTOR_STAGES))
    if len(med) == 2:
        print(f"ratio whole / changed (median total): {med['whole'] / med['changed']:.2f}")
    print(f"peak resident memory of the default pipeline alone (a fresh process a clip, frames streamed from it as "
          f"the replay does): {peak_mb:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
