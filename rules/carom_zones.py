"""Restricted zones of the carom games: free-game corners (Art. 14), balkline fields and anchor boxes (Art. 19-23).

A zone restricts a run when both object balls lie in it at the start of a shot: the player may make only
``limit`` consecutive caroms there (1 in the free game and the /2 games, 0 in the /1 games) unless the shot drives
at least one object ball out of it (Art. 14.2, 20.1, 21.1). A ball that leaves may come straight back and the
player earns a first carom again (Art. 14.3, 20.2). Lines are judged to the player's disadvantage (Art. 17, 26): a
ball within the chalk's half-width plus its position uncertainty of a line is inside every zone it touches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from .tables import Point, Polygon, TableSpec, anchor_boxes, balkline_fields, free_game_corner_zones


@dataclass(frozen=True)
class Zone:
    polygon: Polygon
    limit: int  # consecutive caroms allowed with both object balls inside
    kind: str  # "field", "anchor" or "corner": the order of the referee's calls (field before anchor box)

    @property
    def name(self) -> str:
        return self.polygon.name


BALKLINES = {
    "balkline_47_2": (473.0, 1),
    "balkline_47_1": (473.0, 0),
    "balkline_71_2": (710.0, 1),
    "balkline_71_1": (710.0, 0),
}


def zones_for(discipline: str, table: TableSpec) -> tuple[Zone, ...]:
    if discipline == "free_game":
        return tuple(Zone(p, 1, "corner") for p in free_game_corner_zones(table))
    if discipline in BALKLINES:
        line, limit = BALKLINES[discipline]
        fields = tuple(Zone(p, limit, "field") for p in balkline_fields(table, line))
        anchors = tuple(Zone(p, limit, "anchor") for p in anchor_boxes(table, line))
        return fields + anchors
    return ()


def margin_for(table: TableSpec, sigma: float) -> float:
    return table.chalk_half_width + sigma


def zones_holding_both(zones: Sequence[Zone], a: Point, b: Point, margin_a: float, margin_b: float
                       ) -> tuple[Zone, ...]:
    """The zones in which both object balls lie (a ball on a line counting as inside each zone it touches)."""
    return tuple(z for z in zones if z.polygon.contains(a, margin_a) and z.polygon.contains(b, margin_b))


def left_zone(zone: Zone, path: Iterable[Point], margin: float) -> bool:
    """Whether a ball following ``path`` was ever wholly out of the zone (on the line still counts as inside)."""
    return any(not zone.polygon.contains(p, margin) for p in path)


def on_a_line(zone: Zone, p: Point, margin: float) -> bool:
    """A ball straddling one of the zone's chalk lines (not a cushion: a ball's point never reaches a cushion)."""
    return zone.polygon.distance_to_boundary(p) <= margin


def calls(zones: Sequence[Zone], counts: Mapping[str, int], a: Point, b: Point, margin_a: float, margin_b: float
          ) -> list[str]:
    """The referee's zone calls for the coming shot (refereeing Art. 3): "entrou" when both object balls have
    come into a zone where a first carom is allowed, "dentro" when the next carom there must drive one out,
    "a cavalo" when one straddles its line; the big field before the anchor box."""
    out: list[str] = []
    for kind in ("corner", "field", "anchor"):
        for zone in zones_holding_both([z for z in zones if z.kind == kind], a, b, margin_a, margin_b):
            word = "dentro" if counts.get(zone.name, 0) >= zone.limit else "entrou"
            if on_a_line(zone, a, margin_a) or on_a_line(zone, b, margin_b):
                word = "a cavalo"
            call = word if kind != "anchor" else f"{word} (quadro adicional)"
            if call not in out:
                out.append(call)
    return out
