"""Chapó's layout and values (rulebook 004, cited ``chapo Art. N.M``): pin values (Art. 7), cabañas (Art. 8, 14),
where the pins go before the next shot (Art. 4-5) and where the Mingo goes (Art. 6).

Pure functions over a ``TableSpec`` (the ``chapo`` preset: pin spots ``king``, ``lat_*``, ``aux_*``; Mingo spots
``mingo``, ``mingo_cushion``, ``mingo_third``; lines ``cabana_salida_y``, ``cabana_mingo_y``, ``centre_line_y``).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Iterable, Mapping

from .balls import CHAPO_PINS
from .tables import Point, TableSpec, distance

LATERALS = ("lat_top", "lat_bottom", "lat_left", "lat_right")
AUX = ("aux_top", "aux_bottom", "aux_left", "aux_right")
# Art. 5a: a lateral whose spot a ball occupies goes to "el punto auxiliar del lado opuesto": the auxiliary spot on
# the other side of the King (default), or, with the option, the auxiliary spot just beyond its own.
LATERAL_AUX = {
    "opposite": {"lat_top": "aux_bottom", "lat_bottom": "aux_top", "lat_left": "aux_right", "lat_right": "aux_left"},
    "same": {"lat_top": "aux_top", "lat_bottom": "aux_bottom", "lat_left": "aux_left", "lat_right": "aux_right"},
}
CHAPO_POINTS = 30
POCKET_VALUE = {"1": 2, "2": 2, "mingo": 3}  # Art. 7
KING_COMBO = {0: 5, 1: 5, 2: 7, 3: 9}  # Art. 7: King alone 5, + 1 lateral 5, + 2 laterals 7, + 3 laterals 9


def pins_value(pins: Iterable[str]) -> int:
    """Art. 7, exactly as listed: the King alone 5; each lateral 2; King + 1 lateral 5, + 2 laterals 7, + 3 laterals
    9; all five pins: *Chapó*, 30 (and the game). Laterals without the King are 2 each."""
    s = set(pins)
    laterals = len(s & set(LATERALS))
    if "king" in s:
        return CHAPO_POINTS if laterals == 4 else KING_COMBO[laterals]
    return 2 * laterals


def is_chapo(pins: Iterable[str]) -> bool:
    return set(pins) >= set(CHAPO_PINS)


# --- cabañas (Art. 8, 14) -----------------------------------------------------------------------------------------

def line_y(table: TableSpec, name: str) -> float:
    default = {"cabana_salida_y": table.length / 4, "cabana_mingo_y": 3 * table.length / 4,
               "centre_line_y": table.length / 2}[name]
    return float(table.lines.get(name, default))


def in_cabana(table: TableSpec, cabana: str, p: Point, sigma: float = 0.0) -> bool:
    """Whether a ball's cloth point is inside the cabaña ``salida`` or ``mingo``: a ball on the line (within the
    chalk's half-width plus the position's uncertainty) is inside (Art. 14)."""
    margin = table.chalk_half_width + sigma
    if cabana == "salida":
        return p[1] <= line_y(table, "cabana_salida_y") + margin
    return p[1] >= line_y(table, "cabana_mingo_y") - margin


def near_cabana_line(table: TableSpec, cabana: str, p: Point) -> bool:
    """Close enough to the line for the referee to call it (Art. 14: *Dentro* or *Libre*)."""
    y = line_y(table, "cabana_salida_y" if cabana == "salida" else "cabana_mingo_y")
    return abs(p[1] - y) <= table.ball_radius


# --- pins (Art. 4-5) ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PinPlace:
    """Where a pin must stand before the next shot. ``home`` is its reference spot (its normal spot, or the
    auxiliary spot it was moved to); ``spot`` the spot it stands on (None when left displaced, Art. 5e); ``at`` None
    when it cannot be set yet because balls block every spot it may take (Art. 5f)."""

    pin: str
    home: str
    at: Point | None
    spot: str | None

    def to_dict(self) -> dict:
        return {"spot": self.spot, "home": self.home,
                "at": None if self.at is None else [round(self.at[0], 1), round(self.at[1], 1)]}


def normal_layout(table: TableSpec) -> tuple[PinPlace, ...]:
    return tuple(PinPlace(p, p, table.spots[p], p) for p in CHAPO_PINS)


def spot_blocked(table: TableSpec, at: Point, balls: Iterable[Point]) -> bool:
    """A ball prevents setting a pin here (Art. 5a-c, 5f): the pin's base would touch the ball's footprint."""
    reach = table.ball_radius + table.pin_base_diameter / 2
    return any(distance(at, b) < reach for b in balls)


def four_in_line(points: Iterable[Point], tol: float) -> bool:
    """Art. 5d: whether any four of the points lie on one straight line (within ``tol`` mm)."""
    pts = list(points)
    for quad in itertools.combinations(pts, 4):
        a, b = max(itertools.combinations(quad, 2), key=lambda ab: distance(*ab))
        length = distance(a, b)
        if length == 0:
            return True
        if all(abs((b[0] - a[0]) * (a[1] - p[1]) - (a[0] - p[0]) * (b[1] - a[1])) / length <= tol for p in quad):
            return True
    return False


def place_pins(table: TableSpec, standing: Mapping[str, tuple[str, Point]], to_set: Iterable[str],
               balls: Iterable[Point], lateral_aux: str = "opposite", king_aux: str = "auto"
               ) -> tuple[tuple[PinPlace, ...], list[str]]:
    """The pins' layout for the next shot, and announcements.

    ``standing``: pins left standing, pin -> (home spot, where it stands); ``to_set``: pins to plant (knocked, or
    not yet planted). A standing pin on an auxiliary spot goes back to its own spot once it is free (Art. 5a-c). A
    pin to plant takes its own spot; if a ball blocks it, a lateral takes its auxiliary spot (Art. 5a, 5b) and the
    King an auxiliary spot the player names (Art. 5c; the option ``king_aux``, or by default the free one farthest
    from the balls that does not put four pins in line); with every allowed spot blocked it waits (Art. 5f).
    """
    balls = list(balls)
    spots = table.spots
    tol = table.pin_base_diameter
    placed: dict[str, PinPlace] = {}
    notes: list[str] = []

    def free(at: Point) -> bool:
        return not spot_blocked(table, at, balls) and all(
            q.at is None or distance(q.at, at) >= tol for q in placed.values())

    for pin, (home, at) in standing.items():
        placed[pin] = PinPlace(pin, home, at, home if distance(at, spots[home]) <= tol / 2 else None)
    for pin in [p for p in CHAPO_PINS if p in standing and standing[p][0] != p]:
        del placed[pin]  # off its own spot: back there if it is free, else it stays where it is
        if free(spots[pin]):
            placed[pin] = PinPlace(pin, pin, spots[pin], pin)
            notes.append(f"{pin} back on its spot (chapo Art. 5)")
        else:
            home, at = standing[pin]
            placed[pin] = PinPlace(pin, home, at, home if distance(at, spots[home]) <= tol / 2 else None)
    pending = [p for p in CHAPO_PINS if p in set(to_set) and p not in placed]
    for pin in [p for p in pending if p != "king"]:
        if free(spots[pin]):
            placed[pin] = PinPlace(pin, pin, spots[pin], pin)
            continue
        aux = LATERAL_AUX[lateral_aux][pin]
        if free(spots[aux]):
            placed[pin] = PinPlace(pin, aux, spots[aux], aux)
            notes.append(f"{pin} on {aux}: a ball on its spot (chapo Art. 5a-b)")
        else:
            placed[pin] = PinPlace(pin, pin, None, None)
            notes.append(f"{pin} waits: a ball prevents setting it (chapo Art. 5f)")
    if "king" in pending:
        if free(spots["king"]):
            placed["king"] = PinPlace("king", "king", spots["king"], "king")
        else:
            options = [a for a in AUX if free(spots[a])]
            others = [q.at for q in placed.values() if q.at is not None]
            named = f"aux_{king_aux}"
            if named in options:
                choice = named
            else:
                def clearance(a: str) -> tuple[float, ...]:
                    # Farthest from the nearest ball, then from the next one, and so on.
                    return tuple(sorted(distance(spots[a], b) for b in balls)) or (math.inf,)

                fine = [a for a in options if not four_in_line(others + [spots[a]], tol / 2)] or options
                choice = max(fine, key=clearance) if fine else None
            if choice is None:
                placed["king"] = PinPlace("king", "king", None, None)
                notes.append("king waits: a ball prevents setting it (chapo Art. 5f)")
            else:
                placed["king"] = PinPlace("king", choice, spots[choice], choice)
                notes.append(f"king on {choice}: a ball on its spot; the player may name another free "
                             f"auxiliary spot (chapo Art. 5c)")
    return tuple(placed.get(p, PinPlace(p, p, None, None)) for p in CHAPO_PINS), notes


def layout_four_in_line(table: TableSpec, layout: Iterable[PinPlace]) -> bool:
    return four_in_line([q.at for q in layout if q.at is not None], table.pin_base_diameter / 2)


# --- the Mingo (Art. 6) ---------------------------------------------------------------------------------------------

MINGO_SPOTS = ("mingo", "mingo_cushion", "mingo_third")


def mingo_spot(table: TableSpec, others: Iterable[Point]) -> str:
    """Art. 6: its normal spot; if a ball occupies it, against the top cushion; if that is occupied too, the third
    spot (on the line of the third diamonds)."""
    others = list(others)
    d = table.ball_diameter
    for name in MINGO_SPOTS[:2]:
        if all(distance(table.spots[name], p) >= d for p in others):
            return name
    return MINGO_SPOTS[2]
