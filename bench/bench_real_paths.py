"""Events and verdicts from real three-cushion paths: erdo100's tracked match, judged by vision's later stages.

    python -m bench.bench_real_paths [--shots N] [--fps 50]

``../shared/real/erdo100__3cushiontool`` holds 182 consecutive shots of one real match (Ersin v Cemal, 2022) as
ball positions over time from a tracking system (t, x, y in metres on the 2.84 x 1.42 m cloth, about 50 Hz; a ball
is sampled only while it moves). Nothing labels the events, but the match itself says, shot by shot, whether the
shooter scored: balls 1 and 2 are the players' whites (ball 3, the red, is never struck first) and a player goes on
striking his own ball while he scores. So shot k scored exactly when shot k+1 (the next shot id) strikes the same
ball. That is a real referee's truth for every shot but the last.

Each shot's samples are put on a regular frame clock (a ball holds its first sample's place until its first move
starts; after that its samples, dense when fast and sparse when it creeps, are joined by straight lines), padded
with still frames, and fed to
``vision.shots.ShotSegmenter`` exactly as the tracker feeds it. The Shot it closes is judged by the three-cushion
referee with the struck ball's side to play. Printed:
- how many data shots gave exactly one judged Shot, and the strike ball against the data's first mover;
- the verdict (point or not) against the match's own truth, with the shots that differ;
- where the contacts sit: for each ball-ball contact the distance between the two centres at its time (2R when
  the geometry is right), for each cushion contact the centre's distance from that cushion's nose (R).
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench.bench_vision import verdict_of
from rules.events import EventType
from rules.shot import Shot
from rules.tables import TableSpec, preset
from vision.shots import ShotSegmenter

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "real" / "erdo100__3cushiontool" / "Scripts" / "08_parameter_identification" / \
    "20221225_2_Match_Ersin_Cemal.DERIVED_trajectories.csv"
BALLS = ("white", "spot", "red")  # the data's balls 1, 2, 3: the two players' whites and the red
ROLLING_DECEL_MM_S2 = 100.0  # a rolling ball slows at about 0.01 g on match cloth


@dataclass(frozen=True)
class RealShot:
    shot_id: int
    samples: dict[str, np.ndarray]  # ball -> (n, 3) rows of t (s), x, y (table mm)

    @property
    def first_mover(self) -> str:
        """The ball whose second sample (its first move) comes first: the struck ball."""
        return min((b for b in BALLS if len(self.samples[b]) > 2), key=lambda b: self.samples[b][1, 0])

    @property
    def t_end(self) -> float:
        return max(float(s[-1, 0]) for s in self.samples.values())


def load_shots(path: Path = DATA) -> list[RealShot]:
    """The match's shots in id order, in table mm: the data's x (along the 2.84 m) is our y, its y our x."""
    rows = np.genfromtxt(path, delimiter=",", skip_header=1)
    shots = []
    for shot_id in np.unique(rows[:, 0]).astype(int):
        mine = rows[rows[:, 0] == shot_id]
        samples = {}
        for k, ball in enumerate(BALLS, start=1):
            r = mine[mine[:, 1] == k]
            r = r[np.argsort(r[:, 2], kind="stable")]
            samples[ball] = without_repeats(np.column_stack([r[:, 2], r[:, 4] * 1000.0, r[:, 3] * 1000.0]))
        shots.append(RealShot(int(shot_id), samples))
    return shots


def without_repeats(samples: np.ndarray, same_mm: float = 0.05) -> np.ndarray:
    """The samples without the tracking system's glitches: a sample repeating exactly a place the ball left
    earlier (not the sample just before it, which is a ball at rest). Two in the match's 74,102 samples, each a
    fifth of a second stale: kept, they read as the ball jumping back and forth."""
    xy = samples[:, 1:]
    keep = np.ones(len(samples), dtype=bool)
    for k in range(2, len(samples)):
        keep[k] = np.linalg.norm(xy[:k - 1] - xy[k], axis=1).min() > same_mm
    return samples[keep]


def scored_by_the_match(shots: list[RealShot]) -> dict[int, bool]:
    """Shot id -> whether it scored, from who struck next (only where the next id follows directly)."""
    out = {}
    for a, b in zip(shots, shots[1:]):
        if b.shot_id == a.shot_id + 1:
            out[a.shot_id] = a.first_mover == b.first_mover
    return out


def on_clock(samples: np.ndarray, t: np.ndarray, start: float | None = None) -> np.ndarray:
    """A ball's (x, y) at each time of ``t``: at its first sample's place until its first move, then joined by
    straight lines between samples; held before the first and after the last.

    The tracker logs a resting ball again only once it has moved, so its second sample comes some way into the
    move (tens of ms after a thin kiss): the move's start is where the ball, run back from its second sample at
    the speed of its first two moving samples and decelerating as a rolling ball does, reaches the resting place.
    A ball whose second moving sample is its last came to rest there: it was going at least as fast as a ball
    that stops in that distance (kissed softly, it creeps 27 mm and 6 mm more, logged 0.4 s and 1 s later: run
    back at the 9 mm/s between those two, it would have "set off" 3 s early, before anything reached it).
    ``start``: when the move began, where that is known otherwise (``kissed_at``)."""
    ts, xy = samples[:, 0].copy(), samples[:, 1:]
    if len(ts) >= 2:
        # Its one moving sample the log's last, the ball may have stopped there: going at least 0 mm/s.
        speed = 0.0
        if len(ts) > 2:
            on = float(np.linalg.norm(xy[2] - xy[1]))
            speed = on / max(ts[2] - ts[1], 1e-6)
            if len(ts) == 3:
                speed = max(speed, float(np.sqrt(2.0 * ROLLING_DECEL_MM_S2 * on)))
        d = float(np.linalg.norm(xy[1] - xy[0]))
        # d = v1 lead + a lead^2 / 2: the ball decelerates, so it was faster before its second sample.
        a = ROLLING_DECEL_MM_S2
        lead = (np.sqrt(speed * speed + 2.0 * a * d) - speed) / a
        if start is not None and ts[0] < start < ts[1]:
            lead = ts[1] - start
        ts[0] = ts[1] - float(np.clip(lead, 1e-3, ts[1] - ts[0]))  # at rest until the move begins
    k = np.clip(np.searchsorted(ts, t, side="right") - 1, 0, len(ts) - 1)  # the sample at or before each time
    nxt = np.minimum(k + 1, len(ts) - 1)
    span = ts[nxt] - ts[k]
    w = np.where((nxt > k) & (t >= ts[k]), (t - ts[k]) / np.where(span > 0, span, 1.0), 0.0)[:, None]
    return xy[k] * (1.0 - w) + xy[nxt] * w


def kissed_at(shot: RealShot, ball: str, radius: float, slack_mm: float = 3.0, step_s: float = 0.002
              ) -> float | None:
    """When another ball reached ``ball`` at rest and set it off, between its last resting sample and its first
    moving one: the other's centre within 2R (and ``slack_mm``) of its resting place, on the side it then left
    from (a kissed ball leaves along the line of centres; a pass a millimetre clear on the other side, seconds
    earlier, set nothing off). None if none did (the cue ball).

    A ball at rest sets off only when something reaches it, so that is when its move began: a softly kissed ball
    creeps, and its first moving sample, 0.4 s after the kiss, says too little of its speed to run it back."""
    s = shot.samples[ball]
    if len(s) < 2:
        return None
    rest = s[0, 1:]
    way = (s[1, 1:] - rest) / max(float(np.linalg.norm(s[1, 1:] - rest)), 1e-9)
    t = np.arange(s[0, 0], s[1, 0], step_s)
    best: tuple[float, float] | None = None  # (how well the line of centres points the way it left, time)
    for other in BALLS:
        if other == ball:
            continue
        p = on_clock(shot.samples[other], t)
        gap = np.linalg.norm(p - rest, axis=1) - 2 * radius
        near = gap <= slack_mm
        # Each approach (a run of near steps) is met at its first step, its line of centres at its closest.
        starts = np.nonzero(near & ~np.concatenate([[False], near[:-1]]))[0]
        for k0 in starts:
            k1 = k0 + int(np.argmax(~near[k0:])) if not near[k0:].all() else len(t)
            kc = k0 + int(np.argmin(gap[k0:k1]))
            line = (rest - p[kc]) / max(float(np.linalg.norm(rest - p[kc])), 1e-9)
            along = float(line @ way)
            if along > 0.5 and (best is None or along > best[0]):
                best = (along, float(t[k0]))
    return None if best is None else best[1]


def replay_paths(shot: RealShot, table: TableSpec, fps: float, lead_s: float = 0.5, tail_s: float = 1.0
                 ) -> list[Shot]:
    """The Shot records the segmenter closes when fed this shot's paths frame by frame, as the tracker would."""
    t = np.arange(-lead_s, shot.t_end + tail_s, 1.0 / fps)
    xy = np.stack([on_clock(shot.samples[b], t, kissed_at(shot, b, table.ball_radius)) for b in BALLS],
                  axis=1)  # (frames, balls, 2)
    struck = shot.first_mover
    seg = ShotSegmenter(BALLS, table, cue_ball=lambda: struck, strikers=("white", "spot"))
    out = [s for s in (seg.feed(float(ti), xi) for ti, xi in zip(t, xy)) if s is not None]
    last = seg.flush()
    return out + ([last] if last is not None else [])


def contact_geometry(shot: RealShot, found: Shot, table: TableSpec) -> tuple[list[float], list[float]]:
    """For each contact found, how far the data's own centres sit from where that contact puts them: ball-ball,
    centre distance minus 2R; cushion, distance from that nose minus R (mm, signed)."""
    r = table.ball_radius

    def at(ball: str, t: float) -> np.ndarray:
        """Where the ball's incoming path puts it at ``t``: a line through its last samples before ``t`` (the
        straight line between two samples cuts the corner at a bounce, up to 10 mm at 2 m/s and 50 Hz)."""
        s = shot.samples[ball]
        before = s[(s[:, 0] <= t) & (s[:, 0] >= t - 0.1)][-3:]
        if len(before) < 2 or np.ptp(before[:, 0]) <= 0:
            return on_clock(s, np.array([t]))[0]
        fit = np.polyfit(before[:, 0], before[:, 1:], 1)
        return fit[0] * t + fit[1]

    pairs, cushions = [], []
    nose = {"left": lambda p: p[0], "right": lambda p: table.width - p[0],
            "bottom": lambda p: p[1], "top": lambda p: table.length - p[1]}
    for e in found.events:
        if e.type is EventType.BALL_BALL:
            a, b = e.balls
            pairs.append(float(np.linalg.norm(at(a, e.t) - at(b, e.t)) - 2 * r))
        elif e.type is EventType.CUSHION and e.cushion in nose:
            cushions.append(float(nose[e.cushion](at(e.ball, e.t)) - r))
    return pairs, cushions


@dataclass
class Score:
    shots: int = 0
    one_shot: int = 0  # data shots that closed as exactly one Shot
    right_ball: int = 0  # of those, struck on the data's first mover
    judged: int = 0  # of those, with the match's own truth (the next shot id follows)
    agree: int = 0
    points: int = 0  # how many of the judged the match scored
    pair_mm: list[float] = field(default_factory=list)
    cushion_mm: list[float] = field(default_factory=list)
    cue_cushions: list[int] = field(default_factory=list)
    differ: list[tuple[int, str]] = field(default_factory=list)


def score(shots: list[RealShot], truth: dict[int, bool], table: TableSpec, fps: float = 50.0) -> Score:
    out = Score(shots=len(shots))
    for shot in shots:
        found = replay_paths(shot, table, fps)
        if len(found) != 1:
            out.differ.append((shot.shot_id, f"{len(found)} shots closed"))
            continue
        out.one_shot += 1
        rec = found[0]
        out.right_ball += rec.struck_ball == shot.first_mover
        p, c = contact_geometry(shot, rec, table)
        out.pair_mm += p
        out.cushion_mm += c
        out.cue_cushions.append(sum(e.type is EventType.CUSHION and e.ball == rec.struck_ball for e in rec.events))
        if shot.shot_id not in truth:
            continue
        verdict = verdict_of("three_cushion", table, rec)
        scored = isinstance(verdict, tuple) and sum(verdict[0].values()) > 0
        out.judged += 1
        out.points += truth[shot.shot_id]
        if scored == truth[shot.shot_id]:
            out.agree += 1
        else:
            foul = f" ({verdict[2]})" if isinstance(verdict, tuple) and verdict[2] else ""
            out.differ.append((shot.shot_id, f"vision {'point' if scored else 'no point'}{foul}, the match "
                                             f"{'point' if truth[shot.shot_id] else 'no point'}"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shots", type=int, default=None, help="only the first N shots")
    ap.add_argument("--fps", type=float, default=50.0, help="the frame clock the paths are put on")
    ap.add_argument("--show", type=int, default=30, help="list at most this many differing shots")
    args = ap.parse_args(argv)
    if not DATA.exists():
        print(f"bench_real_paths: {DATA} is not there (../shared/real is needed)")
        return 2
    table = preset("carom_match")
    shots = load_shots()
    truth = scored_by_the_match(shots)
    sc = score(shots[:args.shots] if args.shots else shots, truth, table, args.fps)
    print(f"bench_real_paths: {sc.shots} real three-cushion shots (erdo100, one match), paths on a "
          f"{args.fps:g} Hz clock")
    print(f"  one Shot closed per data shot: {sc.one_shot}/{sc.shots}; strike on the data's first mover: "
          f"{sc.right_ball}/{sc.one_shot}")
    print(f"  verdict (point or not) as the match went on: {sc.agree}/{sc.judged} "
          f"({sc.agree / max(sc.judged, 1):.1%}); the match scored {sc.points} of those shots")
    if sc.pair_mm:
        print(f"  ball-ball contacts: {len(sc.pair_mm)}, centre distance - 2R: median "
              f"{statistics.median(sc.pair_mm):+.1f} mm, |.| p90 {np.percentile(np.abs(sc.pair_mm), 90):.1f} mm")
    if sc.cushion_mm:
        print(f"  cushion contacts: {len(sc.cushion_mm)}, distance from the nose - R: median "
              f"{statistics.median(sc.cushion_mm):+.1f} mm, |.| p90 {np.percentile(np.abs(sc.cushion_mm), 90):.1f} "
              f"mm; the cue ball's cushions per shot: median {statistics.median(sc.cue_cushions):g}")
    for shot_id, why in sc.differ[:args.show]:
        print(f"  differs: shot {shot_id}: {why}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
