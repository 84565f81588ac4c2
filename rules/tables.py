"""Table presets (DESIGN.md section 3) as data: play area, ball size, spots, diamonds, pockets, zones, pin spots.

Coordinates are table millimetres on the cloth inside the cushion noses: x across from the left cushion (0) to the
right (W), y along from the bottom cushion (0) to the top (L). Every value here is a default that a calibration file
may override (``TableSpec.with_overrides``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping

Point = tuple[float, float]

CUSHIONS = ("bottom", "top", "left", "right")
CORNER_POCKETS = ("bottom_left", "bottom_right", "top_left", "top_right")
MIDDLE_POCKETS = ("left_middle", "right_middle")


@dataclass(frozen=True)
class Polygon:
    """A named closed region of the cloth (a zone, a field, an anchor box, a cabaña)."""

    name: str
    points: tuple[Point, ...]

    def contains(self, p: Point, margin: float = 0.0) -> bool:
        """True when ``p`` is inside, or within ``margin`` mm of the boundary (a ball on the line is inside)."""
        if _point_in_polygon(p, self.points):
            return True
        if margin <= 0.0:
            return False
        return self.distance_to_boundary(p) <= margin

    def strictly_inside(self, p: Point, margin: float = 0.0) -> bool:
        """True when ``p`` is inside and more than ``margin`` mm away from every edge."""
        return _point_in_polygon(p, self.points) and self.distance_to_boundary(p) > margin

    def distance_to_boundary(self, p: Point) -> float:
        pts = self.points
        return min(_segment_distance(p, pts[i], pts[(i + 1) % len(pts)]) for i in range(len(pts)))


def rect(name: str, x0: float, y0: float, x1: float, y1: float) -> Polygon:
    return Polygon(name, ((x0, y0), (x1, y0), (x1, y1), (x0, y1)))


@dataclass(frozen=True)
class Pocket:
    """A pocket: the point past which a ball drops, its mouth, and the two cushion knuckles (jaw points)."""

    name: str
    drop: Point
    mouth: float
    jaws: tuple[Point, Point]

    @property
    def is_hole(self) -> bool:
        """A hole in the cloth (Chapó's troneras): both jaws on the rim of a circle of the mouth's diameter round
        the drop point. (A middle pocket's jaws are also mouth/2 from its drop point, but that point is on the jaw
        line: a channel, as snooker's and pool's pockets are.)"""
        mid = ((self.jaws[0][0] + self.jaws[1][0]) / 2, (self.jaws[0][1] + self.jaws[1][1]) / 2)
        on_rim = all(abs(math.dist(j, self.drop) - self.mouth / 2) < 1e-6 for j in self.jaws)
        return on_rim and math.dist(mid, self.drop) > 1e-6

    def axis(self, width: float, length: float) -> Point:
        """The unit direction out of the table through the pocket (a channel's facings run along it from the jaws
        to the drop point's depth): from the jaws' midpoint to the drop point, or, for a middle pocket (its drop
        point on the cushion line), away from the table's centre."""
        ax = self.drop[0] - (self.jaws[0][0] + self.jaws[1][0]) / 2
        ay = self.drop[1] - (self.jaws[0][1] + self.jaws[1][1]) / 2
        if math.hypot(ax, ay) < 1e-9:
            ax, ay = self.drop[0] - width / 2, 0.0 if abs(self.drop[0] - width / 2) > 1e-9 else self.drop[1] - length / 2
        n = math.hypot(ax, ay)
        return (ax / n, ay / n)


@dataclass(frozen=True)
class TableSpec:
    name: str
    width: float
    length: float
    ball_diameter: float
    spots: Mapping[str, Point] = field(default_factory=dict)
    lines: Mapping[str, float] = field(default_factory=dict)  # named lengths: baulk line y, D radius, cabaña lines
    diamonds: tuple[Point, ...] = ()
    pockets: tuple[Pocket, ...] = ()
    chalk_half_width: float = 1.5  # DESIGN.md section 7: a line's half-width for "on the line" calls
    pin_base_diameter: float = 11.5
    pin_height: float = 45.0

    @property
    def ball_radius(self) -> float:
        return self.ball_diameter / 2.0

    def contains(self, p: Point) -> bool:
        """Whether a cloth point lies on the playing surface (inside the cushion noses)."""
        return 0.0 <= p[0] <= self.width and 0.0 <= p[1] <= self.length

    def in_pocket_mouth(self, p: Point) -> bool:
        """Whether a ball centred at ``p`` hangs in a pocket's channel: past the line of its jaws, short of the
        line it drops at, between the facings (a pool ball stopped on the lip of a corner pocket has its centre a
        few mm beyond both cushion lines, and is still on the table)."""
        for pocket in self.pockets:
            if pocket.is_hole:
                continue  # a hole is inside the cloth's rectangle
            ux, uy = pocket.axis(self.width, self.length)
            mx = (pocket.jaws[0][0] + pocket.jaws[1][0]) / 2
            my = (pocket.jaws[0][1] + pocket.jaws[1][1]) / 2
            beyond_jaws = (p[0] - mx) * ux + (p[1] - my) * uy
            short_of_drop = (p[0] - pocket.drop[0]) * ux + (p[1] - pocket.drop[1]) * uy
            lateral = abs((p[0] - mx) * uy - (p[1] - my) * ux)
            if beyond_jaws >= 0.0 and short_of_drop <= 0.0 and lateral <= pocket.mouth / 2:
                return True
        return False

    def pocket(self, name: str) -> Pocket:
        for pocket in self.pockets:
            if pocket.name == name:
                return pocket
        raise KeyError(name)

    @property
    def pocket_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.pockets)

    def with_overrides(self, **changes: object) -> "TableSpec":
        return replace(self, **changes)  # type: ignore[arg-type]


# --- geometry helpers -------------------------------------------------------------------------------------------

def _point_in_polygon(p: Point, pts: tuple[Point, ...]) -> bool:
    x, y = p
    inside = False
    n = len(pts)
    for i in range(n):
        x1, y1 = pts[i]
        x2, y2 = pts[(i + 1) % n]
        if (y1 > y) != (y2 > y):
            x_cross = x1 + (y - y1) * (x2 - x1) / (y2 - y1)
            if x < x_cross:
                inside = not inside
    if not inside:
        # Points exactly on an edge count as inside (a ball on the line is judged inside).
        return any(_segment_distance(p, pts[i], pts[(i + 1) % n]) == 0.0 for i in range(n))
    return True


def _segment_distance(p: Point, a: Point, b: Point) -> float:
    ax, ay = a
    bx, by = b
    dx, dy = bx - ax, by - ay
    seg2 = dx * dx + dy * dy
    t = 0.0 if seg2 == 0 else max(0.0, min(1.0, ((p[0] - ax) * dx + (p[1] - ay) * dy) / seg2))
    return math.hypot(p[0] - (ax + t * dx), p[1] - (ay + t * dy))


def distance(a: Point, b: Point) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])


# --- carom ------------------------------------------------------------------------------------------------------

def _carom_spots(w: float, l: float) -> dict[str, Point]:
    """Carom Art. 3: three spots on the long axis at L/4, L/2, 3L/4, and the two starting spots 182.5 mm either
    side of the bottom spot on the starting line."""
    return {
        "bottom": (w / 2, l / 4),
        "centre": (w / 2, l / 2),
        "top": (w / 2, 3 * l / 4),
        "start_left": (w / 2 - 182.5, l / 4),
        "start_right": (w / 2 + 182.5, l / 4),
    }


def _diamonds(w: float, l: float, long_div: int, short_div: int) -> tuple[Point, ...]:
    pts: list[Point] = []
    for k in range(1, long_div):
        pts += [(0.0, k * l / long_div), (w, k * l / long_div)]
    for k in range(1, short_div):
        pts += [(k * w / short_div, 0.0), (k * w / short_div, l)]
    return tuple(pts)


def balkline_fields(spec: TableSpec, line: float) -> tuple[Polygon, ...]:
    """The balkline fields (Art. 19 for 473 mm: nine; Art. 22 for 710 mm: six, the long axis split in two)."""
    w, l = spec.width, spec.length
    if line == 710.0:
        xs = [0.0, w / 2, w]
        ys = [0.0, 710.0, l - 710.0, l]
    else:
        xs = [0.0, line, w - line, w]
        ys = [0.0, line, l - line, l]
    fields: list[Polygon] = []
    for j in range(len(ys) - 1):
        for i in range(len(xs) - 1):
            fields.append(rect(f"field_{j}{i}", xs[i], ys[j], xs[i + 1], ys[j + 1]))
    return tuple(fields)


def anchor_boxes(spec: TableSpec, line: float, side: float = 178.0) -> tuple[Polygon, ...]:
    """Anchor boxes (Art. 19.2, 22.2): a side x side square straddling each line end, one side on the cushion."""
    w, l = spec.width, spec.length
    h = side / 2
    boxes: list[Polygon] = []
    if line == 710.0:
        x_lines = [w / 2]
        y_lines = [710.0, l - 710.0]
    else:
        x_lines = [line, w - line]
        y_lines = [line, l - line]
    for x in x_lines:
        boxes.append(rect(f"anchor_x{x:g}_bottom", x - h, 0.0, x + h, side))
        boxes.append(rect(f"anchor_x{x:g}_top", x - h, l - side, x + h, l))
    for y in y_lines:
        boxes.append(rect(f"anchor_y{y:g}_left", 0.0, y - h, side, y + h))
        boxes.append(rect(f"anchor_y{y:g}_right", w - side, y - h, w, y + h))
    return tuple(boxes)


def free_game_corner_zones(spec: TableSpec) -> tuple[Polygon, ...]:
    """DESIGN.md section 3 default for Art. 14: each corner triangle cut by the line joining the first diamond
    from the corner on the two adjoining cushions (W/4 on the short cushion, L/8 on the long one)."""
    w, l = spec.width, spec.length
    a, b = w / 4, l / 8
    return (
        Polygon("corner_bottom_left", ((0.0, 0.0), (a, 0.0), (0.0, b))),
        Polygon("corner_bottom_right", ((w, 0.0), (w, b), (w - a, 0.0))),
        Polygon("corner_top_left", ((0.0, l), (0.0, l - b), (a, l))),
        Polygon("corner_top_right", ((w, l), (w - a, l), (w, l - b))),
    )


# --- pocketed tables --------------------------------------------------------------------------------------------

def _six_pockets(w: float, l: float, corner_mouth: float, middle_mouth: float) -> tuple[Pocket, ...]:
    """Six pockets. A corner pocket's knuckles sit on the two cushion lines at mouth/sqrt(2) from the corner (the
    mouth measured between them across the 45-degree line); a middle pocket's at +-mouth/2 along the long cushion."""
    a = corner_mouth / math.sqrt(2.0)
    m = middle_mouth / 2
    return (
        Pocket("bottom_left", (0.0, 0.0), corner_mouth, ((a, 0.0), (0.0, a))),
        Pocket("bottom_right", (w, 0.0), corner_mouth, ((w - a, 0.0), (w, a))),
        Pocket("top_left", (0.0, l), corner_mouth, ((0.0, l - a), (a, l))),
        Pocket("top_right", (w, l), corner_mouth, ((w, l - a), (w - a, l))),
        Pocket("left_middle", (0.0, l / 2), middle_mouth, ((0.0, l / 2 - m), (0.0, l / 2 + m))),
        Pocket("right_middle", (w, l / 2), middle_mouth, ((w, l / 2 - m), (w, l / 2 + m))),
    )


def _snooker_lines(w: float, l: float) -> dict[str, float]:
    return {"baulk_line_y": 0.2065 * l, "d_radius": 0.1642 * w}


def _snooker_spots(w: float, l: float) -> dict[str, Point]:
    baulk = _snooker_lines(w, l)["baulk_line_y"]
    d_radius = _snooker_lines(w, l)["d_radius"]
    return {
        "brown": (w / 2, baulk),
        "yellow": (w / 2 + d_radius, baulk),
        "green": (w / 2 - d_radius, baulk),
        "blue": (w / 2, l / 2),
        "pink": (w / 2, 3 * l / 4),
        "black": (w / 2, l - 0.0908 * l),
    }


def _snooker(name: str, w: float, l: float) -> TableSpec:
    return TableSpec(
        name=name, width=w, length=l, ball_diameter=52.5,
        spots=_snooker_spots(w, l), lines=_snooker_lines(w, l), diamonds=_diamonds(w, l, 8, 4),
        pockets=_six_pockets(w, l, corner_mouth=86.0, middle_mouth=95.0),
    )


def chapo_pin_spots(spec: TableSpec) -> dict[str, Point]:
    """Chapó Art. 4: a cross of nine spots around the centre with spacing s = ball Ø + pin base Ø (a ball passes
    between two pins grazing both). The five pins stand on the inner five; the outer four are auxiliary."""
    s = spec.ball_diameter + spec.pin_base_diameter
    cx, cy = spec.width / 2, spec.length / 2
    return {
        "king": (cx, cy),
        "lat_top": (cx, cy + s),
        "lat_bottom": (cx, cy - s),
        "lat_left": (cx - s, cy),
        "lat_right": (cx + s, cy),
        "aux_top": (cx, cy + 2 * s),
        "aux_bottom": (cx, cy - 2 * s),
        "aux_left": (cx - 2 * s, cy),
        "aux_right": (cx + 2 * s, cy),
    }


def _chapo() -> TableSpec:
    w, l, d = 1270.0, 2540.0, 79.0
    r = 105.0 / 2
    corner = tuple(
        Pocket(name, drop, 105.0, jaws)
        for name, drop, jaws in (
            ("bottom_left", (0.0, 0.0), ((r, 0.0), (0.0, r))),
            ("bottom_right", (w, 0.0), ((w - r, 0.0), (w, r))),
            ("top_left", (0.0, l), ((0.0, l - r), (r, l))),
            ("top_right", (w, l), ((w, l - r), (w - r, l))),
        )
    )
    spec = TableSpec(
        name="chapo", width=w, length=l, ball_diameter=d,
        diamonds=((0.0, l / 4), (0.0, l / 2), (0.0, 3 * l / 4), (w, l / 4), (w, l / 2), (w, 3 * l / 4),
                  (w / 2, 0.0), (w / 2, l)),
        pockets=corner,
    )
    spots = {
        "mingo": (w / 2, l - 2.5 * d),
        "mingo_cushion": (w / 2, l - d / 2),
        "mingo_third": (w / 2, 3 * l / 4),
    }
    spots.update(chapo_pin_spots(spec))
    # DESIGN.md section 3: cabaña de salida y <= L/4, cabaña del Mingo y >= 3L/4; the line counts as inside.
    lines = {"cabana_salida_y": l / 4, "cabana_mingo_y": 3 * l / 4, "centre_line_y": l / 2}
    return replace(spec, spots=spots, lines=lines)


def _build_presets() -> dict[str, TableSpec]:
    carom = TableSpec(
        name="carom_match", width=1420.0, length=2840.0, ball_diameter=61.5,
        spots=_carom_spots(1420.0, 2840.0), diamonds=_diamonds(1420.0, 2840.0, 8, 4),
    )
    pool = TableSpec(
        name="pool_9ft", width=1270.0, length=2540.0, ball_diameter=57.15,
        spots={"head": (635.0, 635.0), "foot": (635.0, 1905.0)},
        diamonds=_diamonds(1270.0, 2540.0, 8, 4),
        pockets=_six_pockets(1270.0, 2540.0, corner_mouth=123.0, middle_mouth=135.0),
    )
    return {
        carom.name: carom,
        "sinuca_br": _snooker("sinuca_br", 1420.0, 2840.0),
        "snooker_full": _snooker("snooker_full", 1778.0, 3569.0),
        pool.name: pool,
        "chapo": _chapo(),
    }


PRESETS: Mapping[str, TableSpec] = _build_presets()

DEFAULT_PRESET = {
    "free_game": "carom_match",
    "balkline_47_2": "carom_match",
    "balkline_47_1": "carom_match",
    "balkline_71_2": "carom_match",
    "balkline_71_1": "carom_match",
    "one_cushion": "carom_match",
    "three_cushion": "carom_match",
    "sinuca": "sinuca_br",
    "bilhar": "pool_9ft",
    "chapo": "chapo",
}


def preset(name: str) -> TableSpec:
    try:
        return PRESETS[name]
    except KeyError:
        raise KeyError(f"unknown table preset {name!r} (known: {', '.join(sorted(PRESETS))})") from None


def zones_containing(zones: Iterable[Polygon], p: Point, margin: float) -> tuple[Polygon, ...]:
    """Every zone the point touches, a ball on a line counting as inside each field it touches."""
    return tuple(z for z in zones if z.contains(p, margin))
