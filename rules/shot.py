"""The Shot record (DESIGN.md section 4): what vision hands to the referee, as a typed object with JSON I/O.

``Shot.from_dict`` validates everything a referee relies on and raises ``LogError`` naming the record and field.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from .balls import ball_ids, pin_ids, DISCIPLINES
from .errors import LogError
from .events import Event, EventType
from .tables import CUSHIONS, Point, TableSpec

# A shot's events and its end may lag t_end by the frame period; times are only compared with this slack.
TIME_SLACK = 1e-6
SIDES = ("A", "B")


@dataclass(frozen=True)
class Shot:
    cue_ball: str
    t_start: float
    t_end: float
    start: Mapping[str, Point]
    events: tuple[Event, ...]
    end: Mapping[str, Point]
    discipline: str | None = None
    shooter: str | None = None
    tracks: Mapping[str, tuple[tuple[float, float, float], ...]] = field(default_factory=dict)
    moving_at_strike: tuple[str, ...] = ()
    confidence: float = 1.0
    notes: tuple[str, ...] = ()
    uncertainty: Mapping[str, float] = field(default_factory=dict)
    nominated: str | None = None
    free_ball: str | None = None
    ball_in_hand_origin: Point | None = None
    # Chapó: where each standing pin is at the start and the end (a displaced pin that stays up). Optional; absent
    # means on its spot at the start and, at the end, standing where it was unless a pin_down event says otherwise.
    pins_start: Mapping[str, Point] = field(default_factory=dict)
    pins_end: Mapping[str, Point] = field(default_factory=dict)

    # --- queries the referees use ---------------------------------------------------------------------------------

    @property
    def strikes(self) -> list[Event]:
        return [e for e in self.events if e.type is EventType.STRIKE]

    @property
    def struck_ball(self) -> str | None:
        """The ball the cue struck first: normally ``cue_ball``; another id is playing the wrong ball."""
        s = self.strikes
        return s[0].ball if s else None

    def sigma(self, ball: str) -> float:
        return float(self.uncertainty.get(ball, 0.0))

    # --- JSON -----------------------------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.discipline is not None:
            d["discipline"] = self.discipline
        if self.shooter is not None:
            d["shooter"] = self.shooter
        d.update({
            "cue_ball": self.cue_ball,
            "t_start": self.t_start,
            "t_end": self.t_end,
            "start": {k: list(v) for k, v in self.start.items()},
            "events": [e.to_dict() for e in self.events],
            "end": {k: list(v) for k, v in self.end.items()},
        })
        if self.tracks:
            d["tracks"] = {k: [list(s) for s in v] for k, v in self.tracks.items()}
        d["moving_at_strike"] = list(self.moving_at_strike)
        d["confidence"] = self.confidence
        d["notes"] = list(self.notes)
        if self.uncertainty:
            d["uncertainty"] = dict(self.uncertainty)
        for name in ("nominated", "free_ball"):
            if getattr(self, name) is not None:
                d[name] = getattr(self, name)
        if self.ball_in_hand_origin is not None:
            d["ball_in_hand_origin"] = list(self.ball_in_hand_origin)
        if self.pins_start:
            d["pins_start"] = {k: list(v) for k, v in self.pins_start.items()}
        if self.pins_end:
            d["pins_end"] = {k: list(v) for k, v in self.pins_end.items()}
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, discipline: str, table: TableSpec, record: str = "shot") -> "Shot":
        return _ShotReader(d, discipline, table, record).read()


class _ShotReader:
    """Validates one shot record field by field; every failure is one LogError naming the field."""

    REQUIRED = ("cue_ball", "t_start", "t_end", "start", "events", "end")
    KNOWN = set(REQUIRED) | {
        "discipline", "shooter", "tracks", "moving_at_strike", "confidence", "notes", "uncertainty", "nominated",
        "free_ball", "ball_in_hand_origin", "pins_start", "pins_end", "verdict",
    }

    def __init__(self, d: Mapping[str, Any], discipline: str, table: TableSpec, record: str) -> None:
        self.d = d
        self.discipline = discipline
        self.table = table
        self.record = record
        self.balls = ball_ids(discipline)
        self.pins = pin_ids(discipline)

    def fail(self, fld: str, problem: str) -> LogError:
        return LogError(self.record, fld, problem)

    def read(self) -> Shot:
        d = self.d
        if not isinstance(d, Mapping):
            raise LogError(self.record, None, "a shot must be a JSON object")
        for name in self.REQUIRED:
            if name not in d:
                raise self.fail(name, "missing")
        unknown = sorted(set(d) - self.KNOWN)
        if unknown:
            raise self.fail(unknown[0], "unknown field")
        disc = d.get("discipline")
        if disc is not None:
            if disc not in DISCIPLINES:
                raise self.fail("discipline", f"unknown discipline {disc!r}")
            if disc != self.discipline:
                raise self.fail("discipline", f"{disc!r} but the match is {self.discipline!r}")
        shooter = d.get("shooter")
        if shooter is not None and shooter not in SIDES:
            raise self.fail("shooter", f"{shooter!r} is not a side (A or B)")
        cue_ball = self.ball("cue_ball", d["cue_ball"])
        t_start = self.time("t_start", d["t_start"])
        t_end = self.time("t_end", d["t_end"])
        if t_end < t_start:
            raise self.fail("t_end", f"{t_end} is before t_start {t_start}")
        start = self.positions("start", d["start"])
        end = self.positions("end", d["end"])
        events = self.events(d["events"], t_start, t_end)
        tracks = self.tracks(d.get("tracks", {}))
        moving = d.get("moving_at_strike", [])
        if not isinstance(moving, list):
            raise self.fail("moving_at_strike", "must be a list of ball ids")
        moving_t = tuple(self.ball(f"moving_at_strike[{i}]", b) for i, b in enumerate(moving))
        confidence = self.number("confidence", d.get("confidence", 1.0))
        if not 0.0 <= confidence <= 1.0:
            raise self.fail("confidence", f"{confidence} is not between 0 and 1")
        notes = d.get("notes", [])
        if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
            raise self.fail("notes", "must be a list of strings")
        unc = d.get("uncertainty", {})
        if not isinstance(unc, Mapping):
            raise self.fail("uncertainty", "must be an object of ball id to mm")
        uncertainty = {}
        for b, v in unc.items():
            self.ball(f"uncertainty.{b}", b)
            v = self.number(f"uncertainty.{b}", v)
            if v < 0:
                raise self.fail(f"uncertainty.{b}", "must not be negative")
            uncertainty[b] = v
        nominated = None if d.get("nominated") is None else self.ball("nominated", d["nominated"])
        free_ball = None if d.get("free_ball") is None else self.ball("free_ball", d["free_ball"])
        origin = None
        if d.get("ball_in_hand_origin") is not None:
            origin = self.point("ball_in_hand_origin", d["ball_in_hand_origin"])
        pins_start = self.pin_positions("pins_start", d.get("pins_start", {}))
        pins_end = self.pin_positions("pins_end", d.get("pins_end", {}))
        return Shot(
            cue_ball=cue_ball, t_start=t_start, t_end=t_end, start=start, events=events, end=end,
            discipline=disc, shooter=shooter, tracks=tracks, moving_at_strike=moving_t, confidence=confidence,
            notes=tuple(notes), uncertainty=uncertainty, nominated=nominated, free_ball=free_ball,
            ball_in_hand_origin=origin, pins_start=pins_start, pins_end=pins_end,
        )

    # --- field readers ------------------------------------------------------------------------------------------

    def number(self, fld: str, v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.fail(fld, f"{v!r} is not a number")
        v = float(v)
        if not math.isfinite(v):
            raise self.fail(fld, f"{v} is not a finite number")
        return v

    def time(self, fld: str, v: Any) -> float:
        return self.number(fld, v)

    def ball(self, fld: str, v: Any) -> str:
        if not isinstance(v, str) or v not in self.balls:
            raise self.fail(fld, f"unknown ball id {v!r} for {self.discipline}")
        return v

    def point(self, fld: str, v: Any) -> Point:
        if not isinstance(v, (list, tuple)) or len(v) != 2:
            raise self.fail(fld, f"{v!r} is not an [x, y] pair")
        x, y = self.number(fld, v[0]), self.number(fld, v[1])
        if not (self.table.contains((x, y)) or self.table.in_pocket_mouth((x, y))):
            raise self.fail(fld, f"[{x}, {y}] is off the {self.table.name} table "
                                 f"({self.table.width:g} x {self.table.length:g} mm)")
        return (x, y)

    def positions(self, fld: str, v: Any) -> dict[str, Point]:
        if not isinstance(v, Mapping):
            raise self.fail(fld, "must be an object of ball id to [x, y]")
        return {self.ball(f"{fld}.{b}", b): self.point(f"{fld}.{b}", p) for b, p in v.items()}

    def pin_positions(self, fld: str, v: Any) -> dict[str, Point]:
        if not isinstance(v, Mapping):
            raise self.fail(fld, "must be an object of pin id to [x, y]")
        out = {}
        for pin, p in v.items():
            if pin not in self.pins:
                raise self.fail(f"{fld}.{pin}", f"unknown pin id {pin!r} for {self.discipline}")
            out[pin] = self.point(f"{fld}.{pin}", p)
        return out

    def events(self, v: Any, t_start: float, t_end: float) -> tuple[Event, ...]:
        if not isinstance(v, list):
            raise self.fail("events", "must be a list")
        out: list[Event] = []
        last_t = t_start
        for i, e in enumerate(v):
            fld = f"events[{i}]"
            if not isinstance(e, Mapping):
                raise self.fail(fld, "an event must be an object")
            if "t" not in e:
                raise self.fail(f"{fld}.t", "missing")
            if "type" not in e:
                raise self.fail(f"{fld}.type", "missing")
            t = self.time(f"{fld}.t", e["t"])
            if t < last_t - TIME_SLACK:
                what = "t_start" if not out else f"events[{i - 1}]"
                raise self.fail(f"{fld}.t", f"time goes backwards ({t} before {what} at {last_t})")
            if t > t_end + TIME_SLACK:
                raise self.fail(f"{fld}.t", f"{t} is after t_end {t_end}")
            last_t = t
            try:
                kind = EventType(e["type"])
            except ValueError:
                raise self.fail(f"{fld}.type", f"unknown event type {e['type']!r}") from None
            out.append(self.event(fld, e, t, kind))
        return tuple(out)

    def event(self, fld: str, e: Mapping[str, Any], t: float, kind: EventType) -> Event:
        def need(name: str) -> Any:
            if name not in e:
                raise self.fail(f"{fld}.{name}", f"missing for a {kind.value} event")
            return e[name]

        if kind is EventType.BALL_BALL:
            pair = need("balls")
            if not isinstance(pair, list) or len(pair) != 2:
                raise self.fail(f"{fld}.balls", "must be a list of two ball ids")
            a = self.ball(f"{fld}.balls[0]", pair[0])
            b = self.ball(f"{fld}.balls[1]", pair[1])
            if a == b:
                raise self.fail(f"{fld}.balls", f"a ball cannot meet itself ({a!r})")
            return Event(t, kind, balls=(a, b))
        if kind is EventType.PIN_DOWN:
            pin = need("pin")
            if pin not in self.pins:
                raise self.fail(f"{fld}.pin", f"unknown pin id {pin!r} for {self.discipline}")
            by = e.get("by", "ball")
            if by not in ("ball", "other"):
                raise self.fail(f"{fld}.by", f"{by!r} is neither 'ball' nor 'other'")
            return Event(t, kind, pin=pin, by=by)
        ball = self.ball(f"{fld}.ball", need("ball"))
        if kind is EventType.CUSHION:
            which = need("cushion")
            if which not in CUSHIONS:
                raise self.fail(f"{fld}.cushion", f"unknown cushion {which!r}")
            return Event(t, kind, ball=ball, cushion=which)
        if kind is EventType.POCKET:
            which = need("pocket")
            if which not in self.table.pocket_names:
                raise self.fail(f"{fld}.pocket", f"no pocket {which!r} on the {self.table.name} table")
            return Event(t, kind, ball=ball, pocket=which)
        return Event(t, kind, ball=ball)

    def tracks(self, v: Any) -> dict[str, tuple[tuple[float, float, float], ...]]:
        if not isinstance(v, Mapping):
            raise self.fail("tracks", "must be an object of ball id to [[t, x, y], ...]")
        out = {}
        for b, samples in v.items():
            fld = f"tracks.{b}"
            self.ball(fld, b)
            if not isinstance(samples, list):
                raise self.fail(fld, "must be a list of [t, x, y]")
            seq = []
            last = -math.inf
            for i, s in enumerate(samples):
                if not isinstance(s, (list, tuple)) or len(s) != 3:
                    raise self.fail(f"{fld}[{i}]", "must be [t, x, y]")
                t = self.number(f"{fld}[{i}]", s[0])
                if t < last - TIME_SLACK:
                    raise self.fail(f"{fld}[{i}]", f"time goes backwards ({t} before {last})")
                last = t
                x, y = self.point(f"{fld}[{i}]", s[1:])
                seq.append((t, x, y))
            out[b] = tuple(seq)
        return out
