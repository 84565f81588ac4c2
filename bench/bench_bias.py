"""Where the tracked positions lean: each frame's error against the gap to the nearest ball and the nearest cushion.

    python -m bench.bench_bias --cache DIR [--balls]

Reads what a ``bench_vision --cache DIR`` run left (each clip's truth and the positions its segmenter was fed,
``feed.pkl``), no rendering and no detection: a minute for 30 clips. For every ball seen in every frame, its
error is split into the part towards the nearest other ball, towards the nearest cushion nose and along its own
motion, and the table prints those parts' mean and median and the error's median and 90th percentile by gap
(balls at rest and moving apart). ``--balls`` adds, for balls at rest within 10 mm of a cushion, the same per ball.

Why: a slow contact is timed from positions a mm apart; a lean of a few tenths towards a cushion or away from a
ball close by moves the contact by tens of ms at 50 mm/s. The bench's own lists (``bench_vision --misses``) name
single shots; this says which gaps and which balls lean, over all of them.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import pickle
import sys

import numpy as np

from calibration.file import read_calibration

AT_REST_MM_S = 5.0  # slower than this in the truth, a ball is at rest
SAME_BALL_MM = 10.0  # a reading further than this from the truth is another ball's, or a lost one's: left out
BALL_BINS = ((-1.0, 0.5), (0.5, 2.0), (2.0, 5.0), (5.0, 10.0), (10.0, 20.0), (20.0, np.inf))
CUSHION_BINS = ((-1.0, 1.0), (1.0, 3.0), (3.0, 6.0), (6.0, 10.0), (10.0, 20.0), (20.0, 60.0), (60.0, np.inf))
SPEED_BINS = ((5.0, 50.0), (50.0, 150.0), (150.0, 400.0), (400.0, 1000.0), (1000.0, np.inf))
FAR = 20.0  # mm: a ball this far from any other (or any cushion) is "away" from it in the other table


def _clip_rows(folder: str) -> list[tuple]:
    """(ball, gap to ball, error towards it, gap to cushion, error towards it, speed, |error|, error along the
    motion) for every ball seen in every frame of one cached clip."""
    base = glob.glob(os.path.join(folder, "*.mp4"))[0][:-4]
    table = read_calibration(base + ".calib.json").table
    w, length, r = table.width, table.length, table.ball_radius
    with open(base + ".truth.json") as f:
        truth = json.load(f)
    with open(os.path.join(folder, "feed.pkl"), "rb") as f:
        feed = pickle.load(f)
    frames = truth["frames"]
    t_truth = np.array([fr["t_frame"] for fr in frames])
    normals = np.array([[-1.0, 0.0], [1.0, 0.0], [0.0, -1.0], [0.0, 1.0]])  # left, right, bottom, top
    rows = []
    for t, xy in zip(feed["t"], feed["xy"]):
        k = int(np.argmin(np.abs(t_truth - t)))
        if abs(t_truth[k] - t) > 1e-3:
            continue
        now, before = frames[k]["balls"], frames[max(k - 1, 0)]["balls"]
        names = [b for b in feed["balls"] if b in now]
        places = np.array([now[b][:2] for b in names], dtype=float)
        for i, ball in enumerate(feed["balls"]):
            if ball not in now or np.isnan(xy[i, 0]):
                continue
            p = np.array(now[ball][:2], dtype=float)
            err = np.asarray(xy[i], dtype=float) - p
            if np.hypot(*err) > SAME_BALL_MM:
                continue
            others = places[[n != ball for n in names]] - p
            if len(others):
                dist = np.hypot(others[:, 0], others[:, 1])
                j = int(np.argmin(dist))
                ball_gap, to_ball = dist[j] - 2 * r, float(err @ (others[j] / dist[j]))
            else:
                ball_gap, to_ball = np.inf, 0.0
            noses = np.array([p[0] - r, w - r - p[0], p[1] - r, length - r - p[1]])
            c = int(np.argmin(noses))
            step = p - np.array(before[ball][:2], dtype=float) if ball in before else np.zeros(2)
            run = float(np.hypot(*step))
            along = float(err @ step / run) if run > 1e-9 else 0.0
            rows.append((ball, ball_gap, to_ball, noses[c], float(err @ normals[c]), run * truth["fps"],
                         float(np.hypot(*err)), along))
    return rows


MIN_FRAMES = 20  # a row with fewer ball-frames is not printed


def _print_rows(rows: list[tuple[str, np.ndarray]], lean: np.ndarray, err: np.ndarray) -> None:
    """One table row per (label, selection) with enough ball-frames: how many, the lean's mean and median, the
    error's median and p90 (mm)."""
    for label, s in rows:
        if s.sum() >= MIN_FRAMES:
            print(f"{label} | {int(s.sum())} | {lean[s].mean():+.2f} / {np.median(lean[s]):+.2f} | "
                  f"{np.median(err[s]):.2f} / {np.percentile(err[s], 90):.2f}")


def _by_gap(bins: tuple[tuple[float, float], ...], gap: np.ndarray, rest: np.ndarray,
            where: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """(label, selection) for each gap bin, at rest and moving, within ``where``."""
    return [(f"{lo:g}-{hi:g} {state}", sel & (gap >= lo) & (gap < hi) & where)
            for lo, hi in bins for state, sel in (("at rest", rest), ("moving", ~rest))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", required=True, help="a bench_vision --cache folder (one family's clips)")
    ap.add_argument("--balls", action="store_true", help="per ball, at rest within 10 mm of a cushion")
    args = ap.parse_args()
    folders = sorted(d for d in glob.glob(os.path.join(args.cache, "*"))
                     if os.path.exists(os.path.join(d, "feed.pkl")) and glob.glob(os.path.join(d, "*.mp4")))
    if not folders:
        print(f"bench_bias: no recorded clips in {args.cache} (run bench_vision --cache there first)",
              file=sys.stderr)
        return 2
    rows = [row for d in folders for row in _clip_rows(d)]
    ball = np.array([row[0] for row in rows])
    ball_gap, to_ball, nose_gap, to_nose, speed, err, along = np.array([row[1:] for row in rows], dtype=float).T
    rest = speed < AT_REST_MM_S
    print(f"bench_bias: {len(folders)} clips, {len(rows)} ball-frames ({args.cache})")
    print("gap to the nearest ball (mm), away from cushions | frames | lean towards it mean / median (mm) | "
          "error median / p90 (mm)")
    _print_rows(_by_gap(BALL_BINS, ball_gap, rest, nose_gap > FAR), to_ball, err)
    print("gap to the nearest cushion nose (mm), away from balls | frames | lean towards it | error")
    _print_rows(_by_gap(CUSHION_BINS, nose_gap, rest, ball_gap > FAR), to_nose, err)
    print("speed (mm/s) | frames | lean along the motion | error")
    _print_rows([(f"{lo:g}-{hi:g}", (speed >= lo) & (speed < hi)) for lo, hi in SPEED_BINS], along, err)
    if args.balls:
        print("ball at rest within 10 mm of a cushion | frames | lean towards it | error")
        near = rest & (nose_gap < 10.0) & (ball_gap > FAR)
        _print_rows([(b, near & (ball == b)) for b in sorted(set(ball[near]))], to_nose, err)
    return 0


if __name__ == "__main__":
    sys.exit(main())
