"""Snooker table geometry for the sinuca referee: snookers (sinuca Art. 9, 10), re-spot points (Art. 27-30), the D.

Pure functions over table millimetres (DESIGN.md section 2). Balls are discs of radius ``R`` on the cloth; the cushion
knuckles are the pocket ``jaws`` points of the table preset. Standard library only.

Snooker (Art. 9): the cue ball, moving in a straight line from where it rests, must be able to graze first *both*
extreme edges of a ball on. Its centre then travels from its position to a point at 2R from the ball on; the path is
obstructed by another ball whose centre comes within 2R of the moving centre first, or by a knuckle within R. The
cushions themselves are not obstacles (Art. 10), and neither is a red ball when a red is on (Art. 10): the caller
leaves them out of ``obstacles``.

The decision is exact, not sampled: along the fan of directions that reach the ball on, whether a given obstacle
blocks changes only at its tangent directions or where the cue ball would touch it and the ball on at once. Testing
every such critical direction and the midpoint between each consecutive pair decides whether any direction is clear.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from .tables import Point, TableSpec

EPS = 1e-9
NONE, PARTIAL, TOTAL = "none", "partial", "total"
_RANK = {NONE: 0, PARTIAL: 1, TOTAL: 2}


@dataclass(frozen=True)
class Obstacle:
    name: str
    at: Point
    reach: float  # the distance between centres at which the moving cue ball touches it: 2R a ball, R a knuckle


@dataclass(frozen=True)
class SnookerCall:
    """How a ball on can be reached: ``none`` (both edges clear), ``partial`` (some point), ``total`` (no point)."""

    kind: str
    first_obstacles: frozenset[str] = frozenset()  # the nearest obstacle of each blocked direction (sinuca Art. 9.4)

    @property
    def snookered(self) -> bool:
        return self.kind != NONE


def knuckles(table: TableSpec) -> tuple[Obstacle, ...]:
    """The cushion knuckles (pocket jaw points) as obstacles of reach R (Art. 9: *bicos de tabelas*)."""
    r = table.ball_radius
    return tuple(Obstacle(f"knuckle:{p.name}:{i}", jaw, r) for p in table.pockets for i, jaw in enumerate(p.jaws))


def ball_obstacles(positions: Mapping[str, Point], radius: float) -> tuple[Obstacle, ...]:
    return tuple(Obstacle(name, p, 2 * radius) for name, p in positions.items())


def _hit(c: Point, u: tuple[float, float], centre: Point, reach: float) -> float | None:
    """How far the cue ball centre travels along unit ``u`` before touching ``centre`` at ``reach``; None if never.

    A ball already touching the cue ball blocks every direction that moves towards it. A path that only grazes an
    obstacle (tangent) is clear."""
    wx, wy = centre[0] - c[0], centre[1] - c[1]
    b = u[0] * wx + u[1] * wy
    cc = wx * wx + wy * wy - reach * reach
    if cc <= EPS:
        return 0.0 if b > EPS else None
    if b <= 0:
        return None
    disc = b * b - cc
    if disc <= EPS:
        return None
    return b - math.sqrt(disc)


def _circle_intersections(a: Point, ra: float, b: Point, rb: float) -> list[Point]:
    dx, dy = b[0] - a[0], b[1] - a[1]
    d = math.hypot(dx, dy)
    if d < EPS or d > ra + rb or d < abs(ra - rb):
        return []
    x = (d * d + ra * ra - rb * rb) / (2 * d)
    h = math.sqrt(max(0.0, ra * ra - x * x))
    mx, my = a[0] + x * dx / d, a[1] + x * dy / d
    return [(mx - h * dy / d, my + h * dx / d), (mx + h * dy / d, my - h * dx / d)]


def _wrap(a: float) -> float:
    return (a + math.pi) % (2 * math.pi) - math.pi


def reach_target(cue: Point, target: Point, obstacles: Sequence[Obstacle], radius: float) -> SnookerCall:
    """Whether the cue ball at ``cue`` can hit the ball at ``target`` directly: at both extreme edges, some point, or
    no point (sinuca Art. 9.1), with ``obstacles`` (other balls not on, knuckles) in the way."""
    dx, dy = target[0] - cue[0], target[1] - cue[1]
    d = math.hypot(dx, dy)
    two_r = 2 * radius
    if d <= two_r + EPS:
        return SnookerCall(NONE)  # touching the cue ball (a *bola colada*, sinuca Art. 23): not a snooker
    phi = math.atan2(dy, dx)
    alpha = math.asin(two_r / d)
    edge_travel = math.sqrt(d * d - two_r * two_r)

    def blocker(rel: float) -> str | None:
        a = phi + rel
        u = (math.cos(a), math.sin(a))
        if abs(abs(rel) - alpha) < 1e-12:
            s_t = edge_travel  # the extreme edge: the path grazes the ball on
        else:
            s_t = _hit(cue, u, target, two_r)
            if s_t is None:
                return "?"  # outside the fan (cannot happen for angles inside it)
        best, name = s_t - 1e-7, None
        for ob in obstacles:
            s = _hit(cue, u, ob.at, ob.reach)
            if s is not None and s < best:
                best, name = s, ob.name
        return name

    critical = {-alpha, alpha}
    near: list[Obstacle] = []
    for ob in obstacles:
        ox, oy = ob.at[0] - cue[0], ob.at[1] - cue[1]
        do = math.hypot(ox, oy)
        rel = _wrap(math.atan2(oy, ox) - phi)
        half = math.pi / 2 if do <= ob.reach else math.asin(ob.reach / do)
        if do - ob.reach > edge_travel + 1.0 or abs(rel) - half > alpha + 1e-9:
            continue  # never met before the ball on, or outside the fan of directions that reach it
        near.append(ob)
        critical.update((_wrap(rel - half), _wrap(rel + half)))
        for p in _circle_intersections(target, two_r, ob.at, ob.reach):
            critical.add(_wrap(math.atan2(p[1] - cue[1], p[0] - cue[0]) - phi))
    obstacles = near  # the blocker() probes below look only at these
    angles = sorted(a for a in critical if -alpha <= a <= alpha)
    probes = list(angles) + [(x + y) / 2 for x, y in zip(angles, angles[1:])]
    left, right = blocker(-alpha), blocker(alpha)
    if left is None and right is None:
        return SnookerCall(NONE)
    first: set[str] = set()
    clear = False
    for a in probes:
        name = blocker(a)
        if name is None:
            clear = True
        elif name != "?":
            first.add(name)
    return SnookerCall(PARTIAL if clear else TOTAL, frozenset(first))


def snooker_call(cue: Point, targets: Mapping[str, Point], obstacles_for, radius: float) -> SnookerCall:
    """The snooker on a set of balls on (Art. 9): not snookered if any ball on has both edges clear; total when no
    ball on can be hit at any point. ``obstacles_for(name)`` gives the obstacles for each ball on."""
    if not targets:
        return SnookerCall(TOTAL)
    calls = []
    for name, p in targets.items():
        call = reach_target(cue, p, obstacles_for(name), radius)
        if call.kind == NONE:
            return call
        calls.append(call)
    kind = min((c.kind for c in calls), key=_RANK.__getitem__)
    first = frozenset().union(*(c.first_obstacles for c in calls)) if kind != NONE else frozenset()
    return SnookerCall(kind, first)


# --- the D --------------------------------------------------------------------------------------------------------

def in_d(table: TableSpec, p: Point, margin: float = 0.0) -> bool:
    """Inside the D or on its line (sinuca Art. 17.3): behind the baulk line, within the D radius of its centre."""
    baulk = table.lines["baulk_line_y"]
    radius = table.lines["d_radius"]
    return p[1] <= baulk + margin and math.hypot(p[0] - table.width / 2, p[1] - baulk) <= radius + margin


# --- re-spotting (sinuca Art. 27-30) ------------------------------------------------------------------------------

SPOT_ORDER = ("black", "pink", "blue", "brown", "green", "yellow")  # highest value first
VALUES = {"yellow": 2, "green": 3, "brown": 4, "blue": 5, "pink": 6, "black": 7}


def _free(p: Point, others: Iterable[Point], radius: float) -> bool:
    return all(math.hypot(p[0] - o[0], p[1] - o[1]) >= 2 * radius - 1e-6 for o in others)


def _along_line(x: float, y0: float, others: Sequence[Point], radius: float, up: bool, lo: float, hi: float
                ) -> float | None:
    """The nearest y from ``y0`` (upwards or downwards) on the line x where a ball touches no other ball."""
    two_r = 2 * radius
    spans = []
    for ox, oy in others:
        dx = abs(ox - x)
        if dx < two_r - 1e-6:
            h = math.sqrt(two_r * two_r - dx * dx)
            spans.append((oy - h, oy + h))
    y = y0
    moved = True
    while moved:
        moved = False
        for a, b in spans:
            if a + 1e-6 < y < b - 1e-6:
                y = b if up else a
                moved = True
    return y if lo - 1e-6 <= y <= hi + 1e-6 else None


def respot_point(ball: str, table: TableSpec, others: Sequence[Point], higher_only: bool = False) -> Point:
    """Where a colour returning to the table goes (sinuca Art. 27-29), given the balls already on it.

    Its own spot if free (Art. 27); else the free spot of the highest value (``higher_only``: of a higher value than
    its own); else the nearest free point from its own spot towards the top cushion on the long axis (4-7) or on the
    line through its spot parallel to it (2, 3) (Art. 28); else the same downwards (Art. 29)."""
    radius = table.ball_radius
    spot = table.spots[ball]
    if _free(spot, others, radius):
        return spot
    for other in SPOT_ORDER:
        if other == ball or (higher_only and VALUES[other] <= VALUES[ball]):
            continue
        if _free(table.spots[other], others, radius):
            return table.spots[other]
    x = spot[0]
    for up in (True, False):
        y = _along_line(x, spot[1], others, radius, up, radius, table.length - radius)
        if y is not None:
            return (x, y)
    return spot  # no room anywhere on its line (cannot happen with a real set of balls): its own spot
