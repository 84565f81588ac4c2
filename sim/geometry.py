"""The table's boundary as the physics sees it: cushion segments, jaw points, pocket facings and drop rules.

Built from a ``TableSpec``: each cushion nose line is cut where a pocket's jaws open it. A pocket is either
- a *channel* (snooker, pool): the jaws (knuckles) are round points, facings run from each jaw along the pocket's
  axis to the drop line, and a ball falls when its centre crosses the line through the drop point across the axis;
- a *hole* (Chapó's troneras, whose jaws lie on the hole's rim): the cushions simply end at the jaws and a ball
  falls when its centre comes within the hole's radius of the drop point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rules.tables import TableSpec

_ON_LINE = 1e-6


@dataclass(frozen=True)
class Segment:
    a: tuple[float, float]
    b: tuple[float, float]
    normal: tuple[float, float]  # unit, pointing to the side the ball plays on
    cushion: str  # the cushion a contact is reported on (facings and jaws belong to their rail)


@dataclass(frozen=True)
class PocketShape:
    name: str
    drop: tuple[float, float]
    axis: tuple[float, float]  # unit, pointing out of the table through the pocket
    hole_radius: float  # > 0: a hole; 0: a channel with a drop line


@dataclass(frozen=True)
class TableGeometry:
    spec: TableSpec
    segments: tuple[Segment, ...]
    points: tuple[tuple[tuple[float, float], str], ...]  # round jaw points and their cushion
    pockets: tuple[PocketShape, ...]

    # Arrays for the vectorised contact search, built once.
    def arrays(self) -> dict[str, np.ndarray]:
        seg_a = np.array([s.a for s in self.segments], dtype=float).reshape(-1, 2)
        seg_b = np.array([s.b for s in self.segments], dtype=float).reshape(-1, 2)
        seg_n = np.array([s.normal for s in self.segments], dtype=float).reshape(-1, 2)
        d = seg_b - seg_a
        length = np.linalg.norm(d, axis=1)
        tangent = d / np.where(length > 0, length, 1.0)[:, None]
        return {
            "seg_a": seg_a, "seg_t": tangent, "seg_len": length, "seg_n": seg_n,
            "pts": np.array([p for p, _ in self.points], dtype=float).reshape(-1, 2),
            "pocket_drop": np.array([p.drop for p in self.pockets], dtype=float).reshape(-1, 2),
            "pocket_axis": np.array([p.axis for p in self.pockets], dtype=float).reshape(-1, 2),
            "pocket_hole": np.array([p.hole_radius for p in self.pockets], dtype=float),
        }


def _cushion_lines(w: float, l: float) -> dict[str, tuple[tuple[float, float], tuple[float, float], tuple[float, float]]]:
    """Each cushion nose line: start, end, inward normal."""
    return {
        "bottom": ((0.0, 0.0), (w, 0.0), (0.0, 1.0)),
        "top": ((0.0, l), (w, l), (0.0, -1.0)),
        "left": ((0.0, 0.0), (0.0, l), (1.0, 0.0)),
        "right": ((w, 0.0), (w, l), (-1.0, 0.0)),
    }


def _along(p: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float | None:
    """Position of ``p`` along the line a->b (mm from a) if it lies on the line, else None."""
    dx, dy = b[0] - a[0], b[1] - a[1]
    n = math.hypot(dx, dy)
    off = abs((p[0] - a[0]) * dy - (p[1] - a[1]) * dx) / n
    if off > _ON_LINE:
        return None
    return ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / n


def build_geometry(spec: TableSpec) -> TableGeometry:
    w, l = spec.width, spec.length
    segments: list[Segment] = []
    points: dict[tuple[float, float], str] = {}
    for name, (a, b, n) in _cushion_lines(w, l).items():
        total = math.dist(a, b)
        gaps: list[tuple[float, float]] = []
        for p in spec.pockets:
            on = [s for s in (_along(j, a, b) for j in p.jaws) if s is not None]
            if not on:
                continue
            drop_on = _along(p.drop, a, b)
            span = on + ([drop_on] if drop_on is not None else [])
            gaps.append((max(0.0, min(span)), min(total, max(span))))
            for j in p.jaws:
                if _along(j, a, b) is not None:
                    points[(round(j[0], 9), round(j[1], 9))] = name
        gaps.sort()
        start = 0.0
        ux, uy = (b[0] - a[0]) / total, (b[1] - a[1]) / total
        for g0, g1 in gaps + [(total, total)]:
            if g0 > start + 1e-9:
                segments.append(Segment((a[0] + ux * start, a[1] + uy * start), (a[0] + ux * g0, a[1] + uy * g0),
                                        n, name))
            start = max(start, g1)
    pockets: list[PocketShape] = []
    for p in spec.pockets:
        axis = p.axis(w, l)
        hole = p.is_hole
        pockets.append(PocketShape(p.name, p.drop, axis, p.mouth / 2 if hole else 0.0))
        if hole:
            continue
        mid = ((p.jaws[0][0] + p.jaws[1][0]) / 2, (p.jaws[0][1] + p.jaws[1][1]) / 2)
        for j in p.jaws:
            depth = (p.drop[0] - j[0]) * axis[0] + (p.drop[1] - j[1]) * axis[1]
            if depth <= 1e-6:
                continue
            end = (j[0] + axis[0] * depth, j[1] + axis[1] * depth)
            nx, ny = -axis[1], axis[0]
            if (mid[0] - j[0]) * nx + (mid[1] - j[1]) * ny < 0:
                nx, ny = -nx, -ny
            cushion = points.get((round(j[0], 9), round(j[1], 9)), "bottom")
            segments.append(Segment(j, end, (nx, ny), cushion))
    return TableGeometry(spec, tuple(segments), tuple(points.items()), tuple(pockets))
