"""Events as a closed vocabulary: an enum of types, small frozen records, and filters the rules query with."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Iterable


class EventType(str, Enum):
    STRIKE = "strike"
    BALL_BALL = "ball_ball"
    CUSHION = "cushion"
    POCKET = "pocket"
    OFF_TABLE = "off_table"
    PIN_DOWN = "pin_down"
    TOUCHED = "touched"


@dataclass(frozen=True)
class Event:
    """One contact or happening of a shot. Only the fields of its type are set (DESIGN.md section 4)."""

    t: float
    type: EventType
    ball: str | None = None  # strike, cushion, pocket, off_table, touched
    balls: tuple[str, str] | None = None  # ball_ball
    cushion: str | None = None  # cushion
    pocket: str | None = None  # pocket
    pin: str | None = None  # pin_down
    by: str | None = None  # pin_down: "ball" or "other"

    def involves(self, ball: str) -> bool:
        return self.ball == ball or (self.balls is not None and ball in self.balls)

    def other(self, ball: str) -> str | None:
        """For a ball-ball contact involving ``ball``, the ball it met."""
        if self.balls is None or ball not in self.balls:
            return None
        a, b = self.balls
        return b if a == ball else a

    def to_dict(self) -> dict:
        d: dict = {"t": self.t, "type": self.type.value}
        for name in ("ball", "cushion", "pocket", "pin", "by"):
            value = getattr(self, name)
            if value is not None:
                d[name] = value
        if self.balls is not None:
            d["balls"] = list(self.balls)
        return d


# --- builders, for tests and for sim ----------------------------------------------------------------------------

def strike(t: float, ball: str) -> Event:
    return Event(t, EventType.STRIKE, ball=ball)


def ball_ball(t: float, a: str, b: str) -> Event:
    return Event(t, EventType.BALL_BALL, balls=(a, b))


def cushion(t: float, ball: str, which: str) -> Event:
    return Event(t, EventType.CUSHION, ball=ball, cushion=which)


def pocket(t: float, ball: str, which: str) -> Event:
    return Event(t, EventType.POCKET, ball=ball, pocket=which)


def off_table(t: float, ball: str) -> Event:
    return Event(t, EventType.OFF_TABLE, ball=ball)


def pin_down(t: float, pin: str, by: str = "ball") -> Event:
    return Event(t, EventType.PIN_DOWN, pin=pin, by=by)


def touched(t: float, ball: str) -> Event:
    return Event(t, EventType.TOUCHED, ball=ball)


# --- filters: the rules' query language -------------------------------------------------------------------------

def by_type(events: Iterable[Event], *types: EventType) -> list[Event]:
    return [e for e in events if e.type in types]


def by_ball(events: Iterable[Event], ball: str) -> list[Event]:
    return [e for e in events if e.involves(ball)]


def before(events: Iterable[Event], t: float) -> list[Event]:
    return [e for e in events if e.t < t]


def first(events: Iterable[Event]) -> Event | None:
    return next(iter(events), None)


def contacts_of(events: Iterable[Event], ball: str) -> list[Event]:
    """The ball-ball contacts of ``ball``, in time order."""
    return [e for e in events if e.type is EventType.BALL_BALL and e.balls is not None and ball in e.balls]
