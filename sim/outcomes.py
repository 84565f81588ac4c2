"""What happened in a shot, read off its exact events: used to search for scenarios that show a given play."""

from __future__ import annotations

from rules.events import Event, EventType
from rules.tables import Polygon


def cue_contacts(events: list[Event], cue: str) -> list[tuple[float, str]]:
    """The balls the cue ball met, in order, first contact with each only."""
    seen: list[tuple[float, str]] = []
    for e in events:
        if e.type is EventType.BALL_BALL and e.balls is not None and cue in e.balls:
            other = e.other(cue)
            if other is not None and other not in [b for _, b in seen]:
                seen.append((e.t, other))
    return seen


def carom_point(events: list[Event], cue: str, cushions_needed: int = 0) -> bool:
    """The cue ball met both object balls, with ``cushions_needed`` cushions of its own before the second."""
    contacts = cue_contacts(events, cue)
    if len(contacts) < 2:
        return False
    t_second = contacts[1][0]
    cushions = [e for e in events if e.type is EventType.CUSHION and e.ball == cue and e.t < t_second]
    return len(cushions) >= cushions_needed


def potted(events: list[Event]) -> dict[str, str]:
    return {e.ball: e.pocket for e in events if e.type is EventType.POCKET and e.ball and e.pocket}


def pins_down(events: list[Event]) -> list[str]:
    return [e.pin for e in events if e.type is EventType.PIN_DOWN and e.pin]


def left_and_came_back(track: tuple[tuple[float, float, float], ...], field: Polygon) -> bool:
    """A ball that started in ``field``, left it (wholly: its cloth point outside), and ended inside it."""
    if not track or not field.contains(track[0][1:]) or not field.contains(track[-1][1:]):
        return False
    return any(not field.contains(p[1:]) for p in track)
