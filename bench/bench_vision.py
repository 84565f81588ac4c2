"""Vision against the virtual table's truth: events, positions at rest, and the referee's verdict.

    python -m bench.bench_vision [--family carom|sinuca|bilhar|chapo | --discipline NAME] [--shots 20]
                                 [--size 1456x1088] [--fps 60] [--jobs N] [--misses] [--cache DIR [--offline]]

Each shot is a random legal layout and shot of the discipline (``sim.scenario.random_scenario``), rendered through
a Pi Global Shutter camera with lens distortion and sensor noise, then replayed (detection, identity, tracking,
events, segmentation). Compared with the exact truth: ball-ball and cushion contacts (recall, precision, time
error), pockets (which ball, which pocket) and Chapó pins (which pin, by a ball or not), whether the events are
the truth's (kinds, balls and order), each ball's resting position at the end of the shot, and whether the verdict
from vision equals the verdict from the truth (both judged from the same state). Prints one table.

``--misses`` lists every contact missed and every one found that the truth does not have, each with what tells
why: the balls' speeds before and after (the truth's), the turn of the ball's direction, the gap vision's paths
leave at the contact, how much of the contact's frames vision saw each ball and how far from the truth (a cue or
an arm over it, a motion smear), and whose the miss is: ``detection`` (a ball mostly unseen about the contact),
``identity`` (vision's ball there is another ball, or is far from the truth), ``shot window`` (vision's first
shot ended before the contact or began after it: a strike it saw elsewhere, e.g. a cue stick tracked as a ball,
cut the window there), else ``events``.

``--cache DIR`` keeps each rendered clip (and what the segmenter was fed, frame by frame) in DIR, so a second run
renders nothing; ``--offline`` then re-runs only segmentation and events on those recorded frames (seconds for a
whole run: for iterating on ``vision/events.py`` and ``vision/shots.py``). The labels are exchanged where the
replay exchanged them (the carom whites named at the first shot's opening or close, resting balls relabelled), so
an offline run of an unchanged segmenter gives the replay's shots; clips cached before the exchanges were recorded
replay without them (their whites may read as swapped: re-run once without ``--offline``).

The snooker reds are told apart by continuity only: vision's names for them are its own, so the reds are compared
as one kind. In Chapó and the pocket games the side to play is the match's input, not vision's output: vision's
record gets the truth's shooter and cue ball, and a shot by side B is judged with the sides' balls exchanged
(the opening state is side A's).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import pickle
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from calibration.file import read_calibration
from rules.balls import CAROM_DISCIPLINES
from rules.controls import Control
from rules.errors import LogError
from rules.events import Event, EventType
from rules.log import read_log
from rules.match import Match
from rules.registry import referee_for
from vision.pipeline import swap_ids

CONTACTS = (EventType.BALL_BALL, EventType.CUSHION)
FAMILIES = {"carom": "three_cushion", "sinuca": "sinuca", "bilhar": "bilhar", "chapo": "chapo"}


def _kind(ball: str | None) -> str | None:
    """A snooker red's id is vision's own name for it: compared as the kind."""
    return "red" if ball is not None and ball.startswith("red") and ball[3:].isdigit() else ball


def _key(e) -> tuple:
    return (e.type, tuple(sorted(_kind(b) for b in e.balls)) if e.balls else (_kind(e.ball), e.cushion))


def match_keyed(truth, found, key) -> tuple[int, int, int]:
    """(matched, in the truth, found) of the events ``key`` names (None: not counted), each matched once."""
    missed, extra = unmatched_keyed(truth, found, key)
    n_truth = sum(key(e) is not None for e in truth)
    return n_truth - len(missed), n_truth, n_truth - len(missed) + len(extra)


def unmatched_keyed(truth, found, key) -> tuple[list[tuple], list[tuple]]:
    """The keys of the truth's events vision has not, and of vision's the truth has not (each matched once)."""
    f_keys = [key(e) for e in found if key(e) is not None]
    missed = []
    for k in (key(e) for e in truth if key(e) is not None):
        if k in f_keys:
            f_keys.remove(k)
        else:
            missed.append(k)
    return missed, f_keys


def pocket_key(e) -> tuple | None:
    return (_kind(e.ball), e.pocket) if e.type is EventType.POCKET else None


def pin_key(e) -> tuple | None:
    return (e.pin, e.by) if e.type is EventType.PIN_DOWN else None


def same_events(truth, found, tie_s: float = 0.004) -> bool:
    """The same events (kinds, balls, cushions, pockets, pins) in the same order; events within ``tie_s`` of each
    other in any order among themselves."""
    def seq(events):
        groups: list[list] = []
        last = None
        for e in events:
            who = tuple(sorted(_kind(b) for b in e.balls)) if e.balls else (_kind(e.ball), e.cushion, e.pocket,
                                                                             e.pin, e.by)
            if last is None or e.t - last > tie_s:
                groups.append([])
            groups[-1].append((e.type.value, who))
            last = e.t
        return [sorted(g) for g in groups]
    return seq(truth) == seq(found)


def as_side_a(discipline: str, truth, found):
    """Vision's record with the truth's shooter and cue ball (the match's to say), both judged as side A's shot
    from the opening state (Chapó: a B shot with the balls 1 and 2 exchanged)."""
    if found is not None:
        found = replace(found, cue_ball=truth.cue_ball, shooter=truth.shooter)
    if truth.shooter == "B":
        if discipline == "chapo":
            truth = swap_ids(truth, "1", "2")
            found = None if found is None else swap_ids(found, "1", "2")
            truth = replace(truth, cue_ball="1")
            found = None if found is None else replace(found, cue_ball="1")
        truth = replace(truth, shooter="A")
        found = None if found is None else replace(found, shooter="A")
    return truth, found


def pair_contacts(truth, found, tol_s: float = 0.02) -> tuple[list[tuple[Event, Event]], list[Event], list[Event]]:
    """The truth's contacts paired with vision's (same kind and balls, within ``tol_s``, nearest first), and those
    of each left unpaired: (pairs, missed, spurious)."""
    t_events = [e for e in truth if e.type in CONTACTS]
    f_events = [e for e in found if e.type in CONTACTS]
    used: set[int] = set()
    pairs, missed = [], []
    for e in t_events:
        best = None
        for n, f in enumerate(f_events):
            if n in used or _key(f) != _key(e):
                continue
            d = abs(f.t - e.t)
            if d <= tol_s and (best is None or d < best[0]):
                best = (d, n)
        if best is not None:
            used.add(best[1])
            pairs.append((e, f_events[best[1]]))
        else:
            missed.append(e)
    return pairs, missed, [f for n, f in enumerate(f_events) if n not in used]


def verdict_of(discipline: str, table, shot) -> tuple | str:
    """The verdict of one shot from the opening state, the side to play being whoever owns the struck ball."""
    carom = discipline in CAROM_DISCIPLINES
    match = Match(referee_for(discipline, table=table, options={"mid_game": "true"} if carom else {}))
    try:
        if carom and shot.cue_ball == "white":
            match.feed(Control("first_player", {"side": "B"}))
        v = match.feed(shot)
    except LogError as exc:
        return f"refused: {exc.problem}"
    return (dict(v.points), v.turn, None if v.foul is None else v.foul.code)


# --- why a contact was missed -----------------------------------------------------------------------------------

class Feed:
    """What the segmenter was fed over a replay: per frame the time and each ball's position (NaN unseen)."""

    def __init__(self, balls: tuple[str, ...]) -> None:
        self.balls = balls
        self.t: list[float] = []
        self.xy: list[np.ndarray] = []
        self.pins: list[Any] = []
        self.gaps: list[tuple[float, float]] = []
        self.at_gap: list[int] = []  # the frame count when each gap was reported
        self.swaps: list[tuple[int, str, str]] = []  # (frame count, a, b): two labels exchanged (look-alikes named)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array(self.t), np.stack(self.xy, axis=1) if self.xy else np.zeros((len(self.balls), 0, 2))


def _truth_xy(frames: list[dict], balls: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The truth's per-frame times (mid-exposure), positions (B, M, 2; NaN off the cloth) and occluded flags."""
    t = np.array([f["t"] for f in frames])
    xy = np.full((len(balls), len(frames), 2), np.nan)
    occ = np.zeros((len(balls), len(frames)), dtype=bool)
    for m, f in enumerate(frames):
        for b, ball in enumerate(balls):
            v = f["balls"].get(ball)
            if v is not None:
                xy[b, m] = v[:2]
                occ[b, m] = bool(v[4])
    return t, xy, occ


def _dir_change(p: np.ndarray, k0: int, k1: int) -> tuple[float, float, float]:
    """(speed before, speed after, turn in degrees) of one ball's truth path about a contact between frames k0 and
    k1 (two-frame differences either side)."""
    m = p.shape[0]
    a, b = max(k0 - 2, 0), min(k1 + 2, m - 1)
    v0 = (p[k0] - p[a]) / max(k0 - a, 1)
    v1 = (p[b] - p[k1]) / max(b - k1, 1)
    s0, s1 = float(np.linalg.norm(v0)), float(np.linalg.norm(v1))
    if s0 < 1e-6 or s1 < 1e-6 or np.isnan(s0) or np.isnan(s1):
        turn = float("nan")
    else:
        turn = float(np.degrees(np.arccos(np.clip(np.dot(v0, v1) / (s0 * s1), -1, 1))))
    return s0, s1, turn


def diagnose(e: Event, truth_frames: list[dict], feed: Feed, table, fps: float, found: tuple[Event, ...],
             vision_names: bool = False, window: tuple[float, float] | None = None) -> dict:
    """What tells why a truth contact was missed (or, ``e`` being vision's and ``vision_names``, why it was found):
    see the module's note. A snooker red's counterpart (vision's red for the truth's, or the other way) is the one
    nearest it over the contact's frames."""
    balls = feed.balls
    r = table.ball_radius
    t_true, xy_true, occ = _truth_xy(truth_frames, balls)
    t_vis, xy_vis = feed.arrays()
    who = list(e.balls) if e.balls else [e.ball]

    k1 = int(np.searchsorted(t_true, e.t))
    k0 = max(k1 - 1, 0)
    k1 = min(k1, len(t_true) - 1)
    near = slice(max(k0 - 4, 0), k1 + 5)
    kv = [int(np.argmin(np.abs(t_vis - tt))) for tt in t_true[near]] if len(t_vis) else []
    reds = [k for k, b in enumerate(balls) if _kind(b) == "red"]

    def counterpart(b: int, from_truth: bool) -> int:
        if _kind(balls[b]) != "red" or not kv:
            return b
        mine = xy_true[b, near] if from_truth else xy_vis[b, kv]
        d = [np.nanmedian(np.linalg.norm((xy_vis[o, kv] if from_truth else xy_true[o, near]) - mine, axis=1))
             if not np.isnan(mine[:, 0]).all() else np.inf for o in reds]
        d = [np.inf if np.isnan(x) else x for x in d]
        return reds[int(np.argmin(d))] if len(d) and np.isfinite(min(d)) else b

    def index(ball: str) -> tuple[int, int] | None:
        """(truth's index, vision's index) of a ball of the event."""
        if ball not in balls:
            return None
        b = balls.index(ball)
        return (counterpart(b, False), b) if vision_names else (b, counterpart(b, True))

    out: dict = {"t": round(e.t, 4), "kind": e.type.value, "who": who if e.balls else [e.ball, e.cushion]}
    blame = "events"
    vis_index: dict[str, int] = {}
    for ball in who:
        bb = index(ball)
        if bb is None:
            continue
        b, bv = bb
        vis_index[ball] = bv
        s0, s1, turn = _dir_change(xy_true[b], k0, k1)
        info = {"v_in": None if np.isnan(s0) else round(s0 * fps), "v_out": None if np.isnan(s1) else round(s1 * fps),
                "turn_deg": None if np.isnan(turn) else round(turn, 1),
                "occluded_frames": int(occ[b, near].sum())}
        # vision's frames are the video's (t = i / fps); the truth's are their mid-exposure times
        if kv:
            pv = xy_vis[bv, kv]
            pt = xy_true[b, near]
            seen = ~np.isnan(pv[:, 0])
            info["seen"] = f"{int(seen.sum())}/{len(kv)}"
            err = np.linalg.norm(pv - pt, axis=1)
            if seen.any():
                info["err_mm"] = round(float(np.nanmedian(err)), 1)
                # another ball's truth nearer vision's reading: identity
                # (not the balls off the table then: their truth is NaN throughout)
                apart = [np.linalg.norm(pv - xy_true[o, near], axis=1)
                         for o in range(len(balls)) if o != b and _kind(balls[o]) != _kind(ball)]
                others = [np.nanmedian(d) for d in apart if not np.isnan(d).all()]
                if others and np.nanmin(others) < info["err_mm"] and np.nanmin(others) < 15:
                    info["looks_like_other"] = True
            if seen.sum() < 0.5 * len(kv):
                blame = "detection"
            elif info.get("looks_like_other") or info.get("err_mm", 0) > 20:
                blame = "identity" if blame == "events" else blame
        out[ball] = info
    # the gap vision's paths leave at the contact (nearest frames)
    if len(t_vis):
        kc = int(np.argmin(np.abs(t_vis - e.t)))
        span = slice(max(kc - 2, 0), kc + 3)
        if e.balls:
            i, j = vis_index.get(e.balls[0]), vis_index.get(e.balls[1])
            if i is not None and j is not None:
                d = np.linalg.norm(xy_vis[i, span] - xy_vis[j, span], axis=1) - 2 * r
                out["gap_mm"] = None if np.isnan(d).all() else round(float(np.nanmin(d)), 1)
        else:
            b = vis_index.get(e.ball)
            if b is not None:
                x, y = xy_vis[b, span, 0], xy_vis[b, span, 1]
                g = {"left": x, "right": table.width - x, "bottom": y, "top": table.length - y}[e.cushion] - r
                out["gap_mm"] = None if np.isnan(g).all() else round(float(np.nanmin(g)), 1)
    # vision's events of the same kind near it (a wrong cushion, the wrong pair, a time off by more than 20 ms)
    close = [f for f in found if f.type is e.type and abs(f.t - e.t) < 0.1 and f is not e]
    if close:
        out["near_found"] = [(round(f.t - e.t, 4), list(f.balls) if f.balls else [f.ball, f.cushion]) for f in close]
    if window is not None and not window[0] - 0.02 <= e.t <= window[1] + 0.02:
        blame = "shot window"  # vision's first shot ended (or began) elsewhere: a strike seen there cut it
    out["blame"] = blame
    return out


# --- one shot ---------------------------------------------------------------------------------------------------

def _clip_dir(args: argparse.Namespace, seed: int) -> str:
    w, h = args.wh
    return os.path.join(args.cache, f"{args.discipline}_{w}x{h}_{args.fps:g}_{seed}")


def _render(args: argparse.Namespace, seed: int, folder: str):
    """The clip's files (rendered unless a cached copy exists) and the seconds spent rendering."""
    from sim.clip import write_clip
    from sim.scenario import random_scenario
    w, h = args.wh
    sc = random_scenario(args.discipline, seed, camera={"sensor": "pi_gs", "size": [w, h], "fps": args.fps})
    base = os.path.join(folder, sc.name)
    if all(os.path.exists(base + s) for s in (".mp4", ".truth.json", ".shots.jsonl", ".calib.json")):
        return base, 0.0
    t0 = time.perf_counter()
    write_clip(sc, folder)
    return base, time.perf_counter() - t0


def _replay(args: argparse.Namespace, base: str, calib) -> tuple[Any, Feed, float]:
    """The replay of one clip, with what its segmenter was fed recorded."""
    from device.replay import ReplaySettings, run_replay
    from device.replay_command import make_detector
    from vision.live import balls_for
    from vision.shots import ShotSegmenter
    feed = Feed(balls_for(args.discipline, {}))
    orig_feed, orig_gap, orig_swap = ShotSegmenter.feed, ShotSegmenter.gap, ShotSegmenter.swap

    def feed_rec(self, t, xy, pins=None):
        feed.t.append(float(t))
        feed.xy.append(np.asarray(xy, dtype=np.float64).copy())
        feed.pins.append(pins)
        return orig_feed(self, t, xy, pins)

    def gap_rec(self, t0, t1):
        feed.gaps.append((float(t0), float(t1)))
        feed.at_gap.append(len(feed.t))
        return orig_gap(self, t0, t1)

    def swap_rec(self, a, b):
        feed.swaps.append((len(feed.t), a, b))
        return orig_swap(self, a, b)

    ShotSegmenter.feed, ShotSegmenter.gap, ShotSegmenter.swap = feed_rec, gap_rec, swap_rec
    try:
        t0 = time.perf_counter()
        res = run_replay(ReplaySettings(base + ".mp4", args.discipline, calib, base + ".calib.json", mid_game=True),
                         make_detector, progress=None)
        return res, feed, time.perf_counter() - t0
    finally:
        ShotSegmenter.feed, ShotSegmenter.gap, ShotSegmenter.swap = orig_feed, orig_gap, orig_swap


FAR_AT_REST_MM = 3.0  # --misses: a ball at rest further than this from the truth is listed


def _load_feed(path: str) -> Feed:
    with open(path, "rb") as f:
        data = pickle.load(f)
    feed = Feed(tuple(data["balls"]))
    vars(feed).update(data)
    return feed


def _offline_shot(args: argparse.Namespace, feed: Feed, calib, cue_ball: str):
    """The first shot the segmenter makes of recorded frames (no detection, no tracking), with the labels
    exchanged where the replay exchanged them (the look-alikes named as the shot opened or closed, the resting
    balls relabelled): the same shot as the replay's. Feeds recorded before swaps were kept have none."""
    from vision.live import strikers_for
    from vision.shots import ShotSegmenter
    seg = ShotSegmenter(feed.balls, calib.table, lambda: cue_ball, strikers=strikers_for(args.discipline))
    gaps = dict(zip(feed.at_gap, feed.gaps))
    swaps: dict[int, list[tuple[str, str]]] = {}
    for m, a, b in getattr(feed, "swaps", ()):
        swaps.setdefault(m, []).append((a, b))
    n = len(feed.t)
    for m, (t, xy, pins) in enumerate(zip(feed.t, feed.xy, feed.pins)):
        if m in gaps:
            seg.gap(*gaps[m])
        for a, b in swaps.get(m, ()):
            seg.swap(a, b)
        shot = seg.feed(t, xy, pins)
        if shot is not None:
            for a, b in swaps.get(m + 1, ()):  # named as it closed: the shot handed over under the new names
                shot = swap_ids(shot, a, b)
            return shot
    shot = seg.flush()
    for a, b in swaps.get(n, ()) if shot is not None else ():
        shot = swap_ids(shot, a, b)
    return shot


def run_one(args: argparse.Namespace, seed: int) -> dict | None:
    """Everything the table and the lists are made of, for one shot (None when the truth has no shot)."""
    carom = args.discipline in CAROM_DISCIPLINES
    out: dict = {"seed": seed, "render_s": 0.0, "replay_s": 0.0, "stage": None}
    with tempfile.TemporaryDirectory() as tmp:
        folder = _clip_dir(args, seed) if args.cache else tmp
        os.makedirs(folder, exist_ok=True)
        feed_file = os.path.join(folder, "feed.pkl")
        if args.offline:
            from sim.scenario import random_scenario
            w, h = args.wh
            name = random_scenario(args.discipline, seed, camera={"sensor": "pi_gs", "size": [w, h],
                                                                  "fps": args.fps}).name
            base = os.path.join(folder, name)
            if not os.path.exists(feed_file):
                raise _NotRecorded(f"no recorded frames in {folder} (run once with --cache)")
        else:
            base, out["render_s"] = _render(args, seed, folder)
        calib = read_calibration(base + ".calib.json")
        truth = [r for _, r in read_log(Path(base + ".shots.jsonl").read_text().splitlines(), args.discipline,
                                        calib.table)]
        if not truth:
            return None
        t_shot = truth[0]
        if args.offline:
            feed = _load_feed(feed_file)
            f_shot = _offline_shot(args, feed, calib, t_shot.cue_ball)
            if f_shot is not None and carom and f_shot.struck_ball in ("white", "spot"):
                f_shot = replace(f_shot, cue_ball=f_shot.struck_ball)
        else:
            res, feed, out["replay_s"] = _replay(args, base, calib)
            out["stage"] = res.stage_ms
            if args.cache:
                with open(feed_file, "wb") as f:
                    pickle.dump(dict(vars(feed)), f)  # plain data: readable whichever module runs the bench
            f_shot = res.shots[0] if res.shots else None
        truth_doc = json.loads(Path(base + ".truth.json").read_text()) if args.misses else None
    t_named, f_named = t_shot, f_shot  # under the names of the frames (the truth's and the feed's)
    if not carom:
        t_shot, f_shot = as_side_a(args.discipline, t_shot, f_shot)
    f_raw = f_shot  # judged as vision saw it
    out["swapped"] = False
    if f_shot is not None and f_shot.struck_ball != t_shot.struck_ball and \
            {f_shot.struck_ball, t_shot.struck_ball} == {"white", "spot"}:
        # The two carom whites taken for each other (mid-game, the spot's dots not resolved): counted, then
        # compared under the truth's names so the other figures measure what they say.
        out["swapped"] = True
        f_shot = swap_ids(f_shot, "white", "spot")
    found_events = f_shot.events if f_shot else ()
    pairs, missed, spurious = pair_contacts(t_shot.events, found_events)
    out["errors"] = [abs(f.t - e.t) for e, f in pairs]
    out["n_truth"] = len(pairs) + len(missed)
    out["n_found"] = len(pairs) + len(spurious)
    out["pockets"] = match_keyed(t_shot.events, found_events, pocket_key)
    out["pins"] = match_keyed(t_shot.events, found_events, pin_key)
    out["exact"] = same_events(t_shot.events, found_events)
    rest_err, far_at_rest, not_found = [], [], []
    if f_shot is not None:
        vision_reds = [q for b, q in f_shot.end.items() if _kind(b) == "red"]
        for ball, p in t_shot.end.items():
            if _kind(ball) == "red" and vision_reds:  # a red: the nearest red vision has
                rest_err.append(float(min(np.hypot(*np.subtract(q, p)) for q in vision_reds)))
            elif ball in f_shot.end:
                rest_err.append(float(np.hypot(*np.subtract(f_shot.end[ball], p))))
            else:
                not_found.append(ball)
                continue
            if rest_err[-1] > FAR_AT_REST_MM:
                far_at_rest.append((ball, round(rest_err[-1], 1), [round(float(v)) for v in p]))
    if f_shot is not None:  # reds are matched to the nearest: those vision has too few of are not found
        n_reds = sum(_kind(b) == "red" for b in t_shot.end)
        not_found += ["red"] * max(n_reds - sum(_kind(b) == "red" for b in f_shot.end), 0)
    out["rest_err"] = rest_err
    out["not_found"] = not_found  # balls at rest in the truth's end that vision has nowhere
    out["far_at_rest"] = far_at_rest
    out["tv"] = verdict_of(args.discipline, calib.table, t_shot)
    out["fv"] = verdict_of(args.discipline, calib.table, f_raw) if f_raw is not None else "no shot found"
    out["slow"] = [(round(f.t - e.t, 4), e.type.value) for e, f in pairs if abs(f.t - e.t) > 0.006]
    if args.misses:
        frames = truth_doc["frames"]
        feed = _under_final_names(feed)
        if carom and _whites_swapped(feed, frames):
            feed = _swapped_feed(feed, "white", "spot")
        win = (f_shot.t_start, f_shot.t_end) if f_shot is not None else None
        if not carom:
            # Diagnosed under the frames' names: a Chapó side-B shot is judged with the balls 1 and 2 exchanged
            # (as_side_a), and its misses read off the other ball's path looked like a ball at rest 700 mm away.
            named_found = f_named.events if f_named else ()
            _, missed, spurious = pair_contacts(t_named.events, named_found)
            found_events, truth_events = named_found, t_named.events
        else:
            truth_events = t_shot.events
        out["missed"] = [diagnose(e, frames, feed, calib.table, args.fps, found_events, window=win) for e in missed]
        out["keyed"] = [(verb, name, k) for name, key in (("pocket", pocket_key), ("pin", pin_key))
                        for verb, keys in zip(("missed", "extra"), unmatched_keyed(t_shot.events, f_shot.events
                                                                                    if f_shot else (), key))
                        for k in keys]
        out["spurious"] = [diagnose(e, frames, feed, calib.table, args.fps, truth_events, vision_names=True)
                           for e in spurious]
    return out


def _under_final_names(feed: Feed) -> Feed:
    """The feed with every frame under the names the replay ended with: a frame recorded before two labels were
    exchanged (the look-alikes named as the first shot opened) is in the old names, and the replay's shot, like
    the segmenter's history, in the new ones (compared raw, a named white read as the truth's spot and every
    contact of a side-B shot was blamed on identity)."""
    swaps = sorted(getattr(feed, "swaps", ()))
    if not swaps:
        return feed
    rows = []
    for f in range(len(feed.xy)):
        order = list(range(len(feed.balls)))
        for m, a, b in swaps:
            if m > f:
                i, j = feed.balls.index(a), feed.balls.index(b)
                order[i], order[j] = order[j], order[i]
        rows.append(order)
    return _relabelled(feed, rows)


def _swapped_feed(feed: Feed, a: str, b: str) -> Feed:
    """The feed under the truth's names when vision took two balls for each other."""
    i, j = feed.balls.index(a), feed.balls.index(b)
    order = [j if k == i else i if k == j else k for k in range(len(feed.balls))]
    return _relabelled(feed, [order] * len(feed.xy))


def _relabelled(feed: Feed, rows: list[list[int]]) -> Feed:
    """A copy of the feed whose frame f holds, for each ball, the row ``rows[f]`` names of the original's."""
    out = Feed(feed.balls)
    out.t, out.pins, out.gaps, out.at_gap = feed.t, feed.pins, feed.gaps, feed.at_gap
    out.xy = [x[order] for x, order in zip(feed.xy, rows)]
    return out


def _whites_swapped(feed: Feed, frames: list[dict]) -> bool:
    """Whether the tracker's white and spot (as the segmenter was fed them, before the first shot settled which is
    which) are the truth's spot and white: told by where each first rests."""
    t_vis, xy = feed.arrays()
    if not len(t_vis):
        return False
    w, s = feed.balls.index("white"), feed.balls.index("spot")
    truth = frames[0]["balls"]
    if "white" not in truth or "spot" not in truth:
        return False
    tw, ts = np.array(truth["white"][:2]), np.array(truth["spot"][:2])
    pw, ps = np.nanmedian(xy[w, :10], axis=0), np.nanmedian(xy[s, :10], axis=0)
    straight = np.nansum([np.linalg.norm(pw - tw), np.linalg.norm(ps - ts)])
    crossed = np.nansum([np.linalg.norm(pw - ts), np.linalg.norm(ps - tw)])
    return bool(crossed < straight)


class _NotRecorded(Exception):
    """--offline: a seed whose frames an earlier run did not record (left out of that run)."""


def _run_seed(job: tuple[argparse.Namespace, int]) -> dict | None:
    try:
        return run_one(*job)
    except LogError as exc:  # the rendered truth itself cannot be read (a record the log check refuses)
        print(f"bench_vision: seed {job[1]} left out: its truth log cannot be judged ({exc})", file=sys.stderr)
    except _NotRecorded as exc:  # one such seed stopped the whole offline run (sinuca 286)
        print(f"bench_vision: seed {job[1]} left out: --offline: {exc}", file=sys.stderr)
    return None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--discipline", default=None, help="a discipline (default: the family's, three_cushion)")
    ap.add_argument("--family", choices=sorted(FAMILIES), default=None,
                    help="carom (three_cushion), sinuca, bilhar or chapo")
    ap.add_argument("--shots", type=int, default=20)
    ap.add_argument("--size", default="1456x1088")
    ap.add_argument("--fps", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=1, help="shots rendered and replayed in parallel (processes)")
    ap.add_argument("--misses", action="store_true", help="list the contacts missed and found in excess, and why")
    ap.add_argument("--cache", default=None, help="keep the rendered clips and the recorded frames in this folder")
    ap.add_argument("--offline", action="store_true",
                    help="with --cache: only segmentation and events, on the frames recorded by an earlier run")
    args = ap.parse_args()
    if args.discipline is None:
        args.discipline = FAMILIES[args.family or "carom"]
    try:
        args.wh = tuple(int(v) for v in args.size.split("x"))
        assert len(args.wh) == 2
    except (ValueError, AssertionError):
        raise SystemExit(f"bench_vision: --size must be WIDTHxHEIGHT, got {args.size!r}") from None
    if args.offline and not args.cache:
        raise SystemExit("bench_vision: --offline needs --cache DIR (the folder of an earlier run)")
    carom = args.discipline in CAROM_DISCIPLINES
    jobs = [(args, args.seed + k) for k in range(args.shots)]
    if args.jobs > 1 and not args.offline:
        with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
            results = pool.map(_run_seed, jobs, chunksize=1)
    else:
        results = [_run_seed(j) for j in jobs]
    shots = [r for r in results if r is not None]
    errors = [x for r in shots for x in r["errors"]]
    n_truth = sum(r["n_truth"] for r in shots)
    n_found = sum(r["n_found"] for r in shots)
    rest_err = [x for r in shots for x in r["rest_err"]]
    not_found = sum(len(r["not_found"]) for r in shots)
    compared = len(shots)
    same = sum(r["tv"] == r["fv"] for r in shots)
    stage = [r["stage"] for r in shots if r["stage"]]
    w, h = args.wh
    matched = len(errors)
    med = {s: statistics.median(d[s] for d in stage) for s in stage[0]} if stage else {}
    mode = " (offline: segmentation and events on recorded frames)" if args.offline else ""
    missing = args.shots - len(shots)
    left_out = f" ({missing} left out: no shot in the truth, or see above)" if missing else ""
    print(f"bench_vision: {args.discipline}, {len(shots)} random shots rendered at {w}x{h}, {args.fps:g} fps{mode}"
          f"{left_out}")
    print(f"  contacts (ball-ball, cushion): recall {matched / max(n_truth, 1):.3f} ({matched}/{n_truth}), "
          f"precision {matched / max(n_found, 1):.3f} ({matched}/{n_found})")
    if errors:
        print(f"  contact time error: median {statistics.median(errors) * 1000:.2f} ms, "
              f"p95 {np.percentile(errors, 95) * 1000:.2f} ms")
    if rest_err:
        print(f"  ball position at rest: median {statistics.median(rest_err):.2f} mm, "
              f"p99 {np.percentile(rest_err, 99):.2f} mm, max {max(rest_err):.2f} mm ({len(rest_err)} balls; "
              f"{not_found} more not found)")
    for name in ("pockets", "pins"):
        m, nt, nf = (sum(r[name][i] for r in shots) for i in range(3))
        if nt or nf:
            print(f"  {name}: recall {m / max(nt, 1):.3f} ({m}/{nt}), precision {m / max(nf, 1):.3f} ({m}/{nf})")
    print(f"  events (kinds, balls, order) as the truth's: {sum(r['exact'] for r in shots)}/{compared}")
    if carom:
        print(f"  identity: the two whites taken for each other in {sum(r['swapped'] for r in shots)} of "
              f"{compared} shots (counted apart)")
    print(f"  verdict from vision == verdict from truth: {same}/{compared} ({same / max(compared, 1):.1%})")
    if med:
        print("  per-frame stages (median ms): " + ", ".join(f"{k} {v:.2f}" for k, v in med.items()))
    print(f"  time: render {sum(r['render_s'] for r in shots):.0f} s, replay {sum(r['replay_s'] for r in shots):.0f} s"
          f" (summed over {max(args.jobs, 1)} job(s))")
    differing = [{"seed": r["seed"], "truth": r["tv"], "vision": r["fv"]} for r in shots if r["tv"] != r["fv"]]
    for d in differing[:20]:
        print("  differs:", json.dumps(d))
    if args.misses:
        blames: dict[str, int] = {}
        for r in shots:
            for d in r["missed"]:
                blames[d["blame"]] = blames.get(d["blame"], 0) + 1
                print(f"  missed  seed {r['seed']}: {json.dumps(d)}")
            for d in r["spurious"]:
                print(f"  extra   seed {r['seed']}: {json.dumps(d)}")
            for verb, name, k in r.get("keyed", ()):
                print(f"  {verb:<7} seed {r['seed']}: {name} {' '.join(str(v) for v in k)}")
            for ball, err, where in r.get("far_at_rest", ()):
                print(f"  at rest seed {r['seed']}: {ball} {err} mm from the truth's place {where}")
            for ball in r.get("not_found", ()):
                print(f"  at rest seed {r['seed']}: {ball} not found")
            for dt, kind in r["slow"]:
                print(f"  late    seed {r['seed']}: {kind} off by {dt * 1000:+.1f} ms")
        print("  missed by whose stage: " + (", ".join(f"{k} {v}" for k, v in sorted(blames.items())) or "none"))


if __name__ == "__main__":
    main()
