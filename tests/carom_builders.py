"""Builders for carom shots in tests: a shot is described by its contacts, in order, as short strings."""

from __future__ import annotations

from typing import Iterable, Mapping

from rules.events import Event, ball_ball, cushion, off_table, strike, touched
from rules.shot import Shot

SPOT_START = {"spot": (892.5, 710.0), "white": (710.0, 710.0), "red": (710.0, 2130.0)}
OPEN_TABLE = {"spot": (300.0, 400.0), "white": (1100.0, 1500.0), "red": (700.0, 2400.0)}


class Clock:
    """Successive shots at increasing times, so every log is in time order."""

    def __init__(self) -> None:
        self.t = 0.0

    def span(self, duration: float = 5.0) -> tuple[float, float]:
        start = self.t
        self.t += duration + 1.0
        return start, start + duration


def shot(cue: str, contacts: Iterable[str], *, clock: Clock | None = None, start: Mapping | None = None,
         end: Mapping | None = None, struck: str | None = None, dt: float = 0.1, **extra) -> Shot:
    """``contacts`` items: a ball id ("red": the cue ball meets it), a cushion ("top", "left", ...),
    "a-b" for two other balls meeting, "off:ball", "touched:ball". Each comes ``dt`` after the previous one."""
    t0, t1 = (clock or Clock()).span()
    t = t0 + 0.01
    events: list[Event] = [strike(t, struck or cue)]
    for c in contacts:
        t += dt
        if c in ("top", "bottom", "left", "right"):
            events.append(cushion(t, cue, c))
        elif c.startswith("off:"):
            events.append(off_table(t, c[4:]))
        elif c.startswith("touched:"):
            events.append(touched(t, c[8:]))
        elif "-" in c:
            a, b = c.split("-")
            events.append(ball_ball(t, a, b))
        else:
            events.append(ball_ball(t, cue, c))
    start = dict(start or OPEN_TABLE)
    end = dict(end if end is not None else start)
    for e in events:
        if e.type.value == "off_table":
            end.pop(e.ball, None)
    return Shot(cue_ball=cue, t_start=t0, t_end=t1, start=start, events=tuple(events), end=end, **extra)


def timed_shot(cue: str, timeline: list[tuple[float, Event]], *, start: Mapping | None = None,
               end: Mapping | None = None, **extra) -> Shot:
    start = dict(start or OPEN_TABLE)
    events = tuple(e for _, e in sorted(timeline, key=lambda te: te[0]))
    t_end = max(e.t for e in events) + 1.0
    return Shot(cue_ball=cue, t_start=0.0, t_end=t_end, start=start, events=events,
                end=dict(end if end is not None else start), **extra)
