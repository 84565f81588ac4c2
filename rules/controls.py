"""Control records (DESIGN.md sections 5 and 7): what a person decides, as typed records with validation.

The shape of each control's fields is checked here; whether the match state allows it is the referee's call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from .balls import ball_ids
from .errors import LogError
from .tables import TableSpec

SIDES = ("A", "B")

# control name -> {field: kind}; a kind ending in "?" is optional.
CONTROL_FIELDS: Mapping[str, Mapping[str, str]] = {
    "undo": {},
    "respot_all": {},
    "pass_back": {},
    "play_on": {},
    "free_ball": {"ball": "ball"},
    "nominate": {"ball": "ball"},
    "choose_group": {"side": "side", "group": "group"},
    "ball_in_hand": {"at": "point", "ball": "ball?"},
    "concede": {"side": "side?"},
    "time_up": {"t": "number?"},
    "first_player": {"side": "side"},
    "override": {"points": "points?", "foul": "foul?", "turn": "turn?", "reason": "string?"},
}


@dataclass(frozen=True)
class Control:
    kind: str
    fields: Mapping[str, Any] = field(default_factory=dict)

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)

    def to_dict(self) -> dict[str, Any]:
        return {"control": self.kind, **self.fields}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, discipline: str, table: TableSpec, record: str = "control"
                  ) -> "Control":
        kind = d.get("control")
        if kind not in CONTROL_FIELDS:
            raise LogError(record, "control", f"unknown control {kind!r} (known: {', '.join(CONTROL_FIELDS)})")
        spec = CONTROL_FIELDS[kind]
        unknown = sorted(set(d) - {"control"} - set(spec))
        if unknown:
            raise LogError(record, unknown[0], f"not a field of the {kind} control")
        fields: dict[str, Any] = {}
        for name, k in spec.items():
            optional = k.endswith("?")
            k = k.rstrip("?")
            if name not in d:
                if not optional:
                    raise LogError(record, name, f"missing for the {kind} control")
                continue
            fields[name] = _read(record, name, k, d[name], discipline, table)
        return cls(kind, fields)


def _read(record: str, name: str, kind: str, v: Any, discipline: str, table: TableSpec) -> Any:
    def fail(problem: str) -> LogError:
        return LogError(record, name, problem)

    def number(x: Any) -> float:
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            raise fail(f"{x!r} is not a finite number")
        return x

    if kind == "ball":
        if v not in ball_ids(discipline):
            raise fail(f"unknown ball id {v!r} for {discipline}")
        return v
    if kind == "side":
        if v not in SIDES:
            raise fail(f"{v!r} is not a side (A or B)")
        return v
    if kind == "group":
        if v not in ("low", "high"):
            raise fail(f"{v!r} is neither 'low' (1-7) nor 'high' (9-15)")
        return v
    if kind == "point":
        if not isinstance(v, (list, tuple)) or len(v) != 2:
            raise fail(f"{v!r} is not an [x, y] pair")
        p = (float(number(v[0])), float(number(v[1])))
        if not table.contains(p):
            raise fail(f"{list(p)} is off the table")
        return p
    if kind == "number":
        return float(number(v))
    if kind == "string":
        if not isinstance(v, str):
            raise fail("must be a string")
        return v
    if kind == "turn":
        if v not in ("keeps", "passes"):
            raise fail(f"{v!r} is neither 'keeps' nor 'passes'")
        return v
    if kind == "points":
        if not isinstance(v, Mapping) or not set(v) <= set(SIDES):
            raise fail('must be an object like {"A": 1, "B": 0}')
        out = {}
        for side, n in v.items():
            if isinstance(n, bool) or not isinstance(n, int):
                raise fail(f"points for {side} must be a whole number")
            out[side] = n
        return out
    if kind == "foul":
        if v is None:
            return None
        if not isinstance(v, Mapping) or "code" not in v:
            raise fail('must be null or an object with at least "code"')
        return dict(v)
    raise AssertionError(kind)
