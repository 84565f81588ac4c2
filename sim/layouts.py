"""Opening layouts per discipline, ball colours, and a seeded random legal layout generator."""

from __future__ import annotations

import math
import random

from rules.balls import CAROM_DISCIPLINES, CHAPO_PINS, snooker_reds
from rules.tables import TableSpec, preset, DEFAULT_PRESET

Layout = dict[str, tuple[float, float]]

# A hair between racked balls, so that a rack does not start as a pile of simultaneous contacts.
_RACK_GAP = 0.05


def table_for(discipline: str) -> TableSpec:
    return preset(DEFAULT_PRESET[discipline])


def pins_for(discipline: str) -> tuple[str, ...]:
    return CHAPO_PINS if discipline == "chapo" else ()


def cue_ball_for(discipline: str, shooter: str = "A") -> str:
    """The ball the shooter plays: carom, own ball (A has the spot ball, Art. 5.3); elsewhere the cue ball."""
    if discipline in CAROM_DISCIPLINES:
        return "spot" if shooter == "A" else "white"
    if discipline == "chapo":
        return "1" if shooter == "A" else "2"
    return "cue"


def opening_layout(discipline: str, table: TableSpec | None = None, *, reds: int = 15) -> Layout:
    t = table or table_for(discipline)
    w, l, d = t.width, t.length, t.ball_diameter
    if discipline in CAROM_DISCIPLINES:
        s = t.spots
        return {"red": s["top"], "white": s["bottom"], "spot": s["start_right"]}
    if discipline == "sinuca":
        lay: Layout = {c: t.spots[c] for c in ("yellow", "green", "brown", "blue", "pink", "black")}
        pink = t.spots["pink"]
        pitch = d + _RACK_GAP
        row_dy = pitch * math.sqrt(3) / 2
        names = list(snooker_reds(reds))
        row = 0
        while names:
            for k in range(row + 1):
                if not names:
                    break
                lay[names.pop(0)] = (pink[0] + (k - row / 2) * pitch, pink[1] + pitch + row * row_dy)
            row += 1
        lay["cue"] = (w / 2 - t.lines["d_radius"] / 2, t.lines["baulk_line_y"] - t.lines["d_radius"] / 2)
        return lay
    if discipline == "bilhar":
        foot = t.spots["foot"]
        pitch = d + _RACK_GAP
        row_dy = pitch * math.sqrt(3) / 2
        order = ["1", "9", "2", "10", None, "3", "11", "4", "12", "5", "13", "6", "14", "7", "15"]
        lay = {}
        k = 0
        for row in range(5):
            for c in range(row + 1):
                ball = order[k]
                k += 1
                if ball is not None:  # no 8 (Art. 3): its place in the middle of the third row stays empty
                    lay[ball] = (foot[0] + (c - row / 2) * pitch, foot[1] + row * row_dy)
        lay["cue"] = t.spots["head"]
        return lay
    if discipline == "chapo":
        return {"1": (w / 2 + 150.0, l / 4 - 120.0), "2": (w / 2 - 250.0, l * 0.62), "mingo": t.spots["mingo"]}
    raise KeyError(discipline)


def ball_colour(ball: str, discipline: str) -> tuple[tuple[int, int, int], str]:
    """(BGR colour, pattern) of a ball: pattern is 'plain', 'dots' (carom spot white), 'stripe' (pool 9-15)."""
    white = (236, 240, 242)
    if discipline in CAROM_DISCIPLINES:
        return {"white": (white, "plain"), "spot": (white, "dots"), "red": ((40, 30, 200), "plain")}[ball]
    if discipline == "chapo":
        return {"1": (white, "plain"), "2": ((40, 200, 235), "plain"), "mingo": ((40, 30, 200), "plain")}[ball]
    if discipline == "sinuca":
        colours = {"cue": white, "yellow": (30, 210, 240), "green": (60, 140, 20), "brown": (30, 70, 120),
                   "blue": (200, 90, 20), "pink": (180, 140, 250), "black": (25, 25, 25)}
        return (colours.get(ball, (40, 30, 200)), "plain")
    if discipline == "bilhar":
        if ball == "cue":
            return (white, "plain")
        n = int(ball)
        palette = {1: (30, 200, 245), 2: (200, 80, 20), 3: (40, 40, 220), 4: (130, 40, 110), 5: (20, 130, 250),
                   6: (60, 130, 30), 7: (30, 40, 120)}
        return (palette[n if n < 8 else n - 8], "plain" if n < 8 else "stripe")
    raise KeyError(discipline)


def random_layout(discipline: str, rng: random.Random, table: TableSpec | None = None,
                  balls: tuple[str, ...] | None = None) -> Layout:
    """Balls at random on the cloth, no two touching, none touching a cushion or in a pocket's mouth; Chapó balls
    also clear of the pins' cross."""
    t = table or table_for(discipline)
    names = balls or tuple(opening_layout(discipline, t))
    r = t.ball_radius
    margin = r + 2.0
    pins = [t.spots[p] for p in pins_for(discipline)]
    pin_clear = r + t.pin_base_diameter / 2 + 5.0
    out: Layout = {}
    for name in names:
        for _ in range(10_000):
            p = (rng.uniform(margin, t.width - margin), rng.uniform(margin, t.length - margin))
            if any(math.dist(p, q) < 2 * r + 5.0 for q in out.values()):
                continue
            if any(math.dist(p, pk.drop) < pk.mouth + r for pk in t.pockets):
                continue
            if any(math.dist(p, q) < pin_clear for q in pins):
                continue
            out[name] = p
            break
        else:
            raise RuntimeError("no room for the balls")
    return out
