"""The detector alone on the last frame of each clip ``bench_vision`` rendered: the resting balls' error as the
fit reads them through the clips' own compression, in a minute instead of a replay's ten.

    python -m bench.bench_rest_frames --cache DIR [--shots N]

``DIR`` is a family's ``bench_vision --cache`` folder (its clips are rendered there on the first run). For each
clip: the empty-table model painted from its first frame (``background_without_empty_table``, as a replay without
an empty table starts), then one whole-frame detection of its last frame, every ball on the cloth matched to the
nearest detection (a snooker red to the nearest red-or-other; farther than 15 mm is "not found"). Prints the
median, p90 and p99 error (mm, the cloth point under the centre) and the median of each ball.

Why it exists: the fit's edge refinement tuned on still frames through JPEG at 92 (``bench_detection``) did not
carry over to the clips, which go through JPEG and then MPEG-4 (a red's edge is spread wider): a change that made
``bench_detection``'s pool balls 0.62 -> 0.41 mm made these 0.52 -> 0.57 (2026-12-07). No tracking, no shot: the
difference between these figures and ``bench_vision``'s "at rest" is the tracker's and the segmenter's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import cv2
import numpy as np

from bench.bench_vision import _kind
from calibration.file import read_calibration
from vision.detection import BallDetector

FOUND_MM = 15.0


def _end_frames(clip: Path) -> tuple[np.ndarray, np.ndarray] | None:
    """The first and the last frame of a clip (None when it cannot be read)."""
    cap = cv2.VideoCapture(str(clip))
    try:
        ok, first = cap.read()
        n = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))
        if not ok or n < 2:
            return None
        cap.set(cv2.CAP_PROP_POS_FRAMES, n - 1)
        ok, last = cap.read()
        return (first, last) if ok else None
    finally:
        cap.release()


def clip_errors(folder: Path) -> dict[str, list[float]]:
    """Each resting ball's error (mm, by kind) in one cached clip's last frame."""
    frames = _end_frames(next(folder.glob("*.mp4")))
    if frames is None:
        return {}
    calib = read_calibration(next(folder.glob("*.calib.json")))
    truth = json.loads(next(folder.glob("*.truth.json")).read_text())["frames"][-1]["balls"]
    detector = BallDetector(calib.camera, calib.table)
    # The empty-table model as the replay paints it (``FrameDetector``), from the still frame it has.
    model = detector.background_without_empty_table(frames[0], rounds=3, around_candidates=False)
    found = detector.detect(frames[1], 0.0, model)
    out: dict[str, list[float]] = {}
    for ball, entry in truth.items():  # [x, y, u, v, occluded] for each ball on the cloth
        d = np.linalg.norm(found.xy - np.asarray(entry[:2]), axis=1) if len(found) else np.array([np.inf])
        out.setdefault(_kind(ball), []).append(float(d.min()))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", type=Path, required=True, help="a bench_vision --cache folder")
    ap.add_argument("--shots", type=int, default=0, help="the first N clips only (0: all)")
    args = ap.parse_args(argv)
    folders = sorted(p for p in args.cache.iterdir() if p.is_dir() and any(p.glob("*.mp4"))) \
        if args.cache.is_dir() else []
    if args.shots:
        folders = folders[:args.shots]
    if not folders:
        print(f"bench_rest_frames: no clips in {args.cache} (run bench_vision --cache there first)", file=sys.stderr)
        return 2
    by_kind: dict[str, list[float]] = {}
    for folder in folders:
        for kind, errors in clip_errors(folder).items():
            by_kind.setdefault(kind, []).extend(errors)
    errors = np.array([e for v in by_kind.values() for e in v])
    near = errors[errors < FOUND_MM]
    print(f"bench_rest_frames: {args.cache}, {len(folders)} clips, last frame, one whole-frame detection")
    if not len(near):
        print("  no ball found")
        return 0
    p90, p99 = np.percentile(near, [90, 99])
    print(f"  at rest: median {np.median(near):.2f} mm, p90 {p90:.2f}, p99 {p99:.2f}, max {near.max():.2f} "
          f"({len(near)} balls; {len(errors) - len(near)} not found)")
    print("  median by ball: " + ", ".join(
        f"{k} {statistics.median([e for e in v if e < FOUND_MM]):.2f}" for k, v in by_kind.items()
        if any(e < FOUND_MM for e in v)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
