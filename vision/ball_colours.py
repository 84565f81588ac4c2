"""The balls' true colours and patterns per discipline, and the ball kinds the colour model tells apart.

A *kind* is what colour can see: the fifteen snooker reds are one kind (``red``), whose ids ``red1``..``redN``
only the tracker can keep apart; every pool ball is its own kind. Colours are BGR under white light, as the balls
are sold (the same values the virtual table paints them with); the camera's own rendering of them is learned at
the opening layout (``ColourModel.fit``), where each ball's id is known from its spot.
"""

from __future__ import annotations

from dataclasses import dataclass

from rules.balls import BILHAR_HIGH, BILHAR_LOW, CAROM_DISCIPLINES, MAX_REDS, SNOOKER_COLOURS, snooker_reds

WHITE = (236, 240, 242)
RED = (40, 30, 200)
YELLOW = (40, 200, 235)

SNOOKER = {"cue": WHITE, "red": RED, "yellow": (30, 210, 240), "green": (60, 140, 20), "brown": (30, 70, 120),
           "blue": (200, 90, 20), "pink": (180, 140, 250), "black": (25, 25, 25)}
POOL = {1: (30, 200, 245), 2: (200, 80, 20), 3: (40, 40, 220), 4: (130, 40, 110), 5: (20, 130, 250),
        6: (60, 130, 30), 7: (30, 40, 120)}


@dataclass(frozen=True)
class Kind:
    """A ball kind: its colour, its pattern (plain, solid = coloured with a white number circle, stripe = white with
    a coloured band, dots = white with small red dots), and the ball ids it stands for."""

    name: str
    bgr: tuple[int, int, int]
    pattern: str
    ids: tuple[str, ...]


def kinds_for(discipline: str, reds: int = MAX_REDS, spot: str = "dots") -> tuple[Kind, ...]:
    """The kinds of a discipline. ``spot`` is how the carom spot ball is marked: ``dots`` or ``yellow``."""
    if discipline in CAROM_DISCIPLINES:
        if spot not in ("dots", "yellow"):
            raise ValueError(f"spot must be 'dots' or 'yellow', got {spot!r}")
        spot_kind = Kind("spot", WHITE, "dots", ("spot",)) if spot == "dots" else Kind("spot", YELLOW, "plain",
                                                                                        ("spot",))
        return (Kind("white", WHITE, "plain", ("white",)), spot_kind, Kind("red", RED, "plain", ("red",)))
    if discipline == "sinuca":
        out = [Kind("cue", WHITE, "plain", ("cue",)), Kind("red", RED, "plain", snooker_reds(reds))]
        out += [Kind(c, SNOOKER[c], "plain", (c,)) for c in SNOOKER_COLOURS]
        return tuple(out)
    if discipline == "bilhar":
        out = [Kind("cue", WHITE, "plain", ("cue",))]
        out += [Kind(n, POOL[int(n)], "solid", (n,)) for n in BILHAR_LOW]
        out += [Kind(n, POOL[int(n) - 8], "stripe", (n,)) for n in BILHAR_HIGH]
        return tuple(out)
    if discipline == "chapo":
        return (Kind("1", WHITE, "plain", ("1",)), Kind("2", YELLOW, "plain", ("2",)),
                Kind("mingo", RED, "plain", ("mingo",)))
    raise KeyError(f"unknown discipline {discipline!r}")
