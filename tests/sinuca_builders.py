"""Builders for sinuca tests: a ``Game`` that plays shots described by what the cue ball hits first and what drops.

The game keeps the layout between shots the way a camera would see it: the previous shot's end positions, the
verdict's re-spots, and the cue ball placed in the D when it is in hand.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Mapping

from rules import events as E
from rules.controls import Control
from rules.match import Match
from rules.shot import Shot
from rules.sinuca import SinucaReferee, rack
from rules.tables import Point, preset

T = preset("sinuca_br")
R = T.ball_radius
W, L = T.width, T.length
BAULK = T.lines["baulk_line_y"]
D_RADIUS = T.lines["d_radius"]
IN_D = (W / 2 + 40.0, BAULK - 80.0)
SPOT = dict(T.spots)
VALUE = {"yellow": 2, "green": 3, "brown": 4, "blue": 5, "pink": 6, "black": 7}
COLOURS = tuple(VALUE)


def opening_layout(reds: int = 15) -> dict[str, Point]:
    lay = rack(T, reds)
    lay["cue"] = IN_D
    return lay


def colours_from(first: str, cue: Point = (300.0, 600.0)) -> dict[str, Point]:
    """A layout with no reds and the colours from ``first`` up on their spots."""
    lay = {c: SPOT[c] for c in COLOURS[COLOURS.index(first):]}
    lay["cue"] = cue
    return lay


def as_list(x: str | Iterable[str] | None) -> list[str]:
    if x is None:
        return []
    return [x] if isinstance(x, str) else list(x)


class Game:
    """One match: ``shot(...)`` returns the verdict as JSON (a dict); ``control(...)`` feeds a control record."""

    def __init__(self, layout: Mapping[str, Point] | None = None, *, reds: int = 15, table=T,
                 state=None, **options: object) -> None:
        opts = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in options.items()}
        if reds != 15:
            opts["reds"] = str(reds)
        self.reds = reds
        self.ref = SinucaReferee(table=table, options=opts)
        self.match = Match(self.ref)
        if state is None and layout is not None:
            # A hand-built position in the middle of a frame: the cue ball is on the table, not in hand.
            state = replace(self.ref.opening(), balls={b: p for b, p in layout.items() if b != "cue"},
                            cue=layout.get("cue"))
        if state is not None:
            self.match.state = state
        self.layout: dict[str, Point] = dict(layout) if layout is not None else opening_layout(reds)
        self._paused: dict[str, Point] | None = None
        self.t = 0.0
        self.n = 0

    @property
    def state(self):
        return self.match.state

    def make(self, first=None, pots=(), off=(), *, cue_to: Point | None = None, moved: Mapping | None = None,
             start: Mapping | None = None, strike: str = "cue", strikes: int = 1, touched=(), moving=(),
             nominated: str | None = None, free_ball: str | None = None, pocket: str = "top_left",
             end: Mapping | None = None) -> Shot:
        start = dict(self.layout if start is None else start)
        t = self.t
        evs = [E.strike(t + 0.01 + 0.001 * i, strike) for i in range(strikes)]
        for b in as_list(first):
            evs.append(E.ball_ball(t + 0.1, "cue", b))
        pots, off = as_list(pots), as_list(off)
        for i, b in enumerate(pots):
            evs.append(E.pocket(t + 0.5 + 0.01 * i, b, pocket))
        for b in off:
            evs.append(E.off_table(t + 0.7, b))
        for b in as_list(touched):
            evs.append(E.touched(t + 0.8, b))
        evs.sort(key=lambda e: e.t)
        if end is None:
            end = {b: p for b, p in start.items() if b not in pots and b not in off}
            if cue_to is not None and "cue" in end:
                end["cue"] = cue_to
            end.update(moved or {})
        return Shot(cue_ball="cue", t_start=t, t_end=t + 1.0, start=start, events=tuple(evs), end=dict(end),
                    moving_at_strike=tuple(as_list(moving)), nominated=nominated, free_ball=free_ball)

    def play(self, shot: Shot) -> dict:
        self.n += 1
        v = self.match.feed(shot, f"test line {self.n}")
        self.t = shot.t_end + 1.0
        d = v.to_dict()
        lay = dict(shot.end)
        for r in v.respot:
            lay[r.ball] = r.at
        if "re-spotted black" in d["announce"]:
            lay = {"black": SPOT["black"]}
        if d["cue_in_hand"] or "cue" not in lay:
            lay["cue"] = IN_D
        if d["game_over"]:
            self._paused = lay
            lay = opening_layout(self.reds)
        self.layout = lay
        return d

    def shot(self, first=None, pots=(), off=(), **kw) -> dict:
        return self.play(self.make(first, pots, off, **kw))

    def control(self, kind: str, **fields: object) -> None:
        self.n += 1
        self.match.feed(Control(kind, dict(fields)), f"test line {self.n}")
        if kind == "play_on" and self._paused is not None:
            self.layout, self._paused = self._paused, None

    def summary(self) -> dict:
        return self.match.summary()
