"""What a scenario does to the balls at given times: cue strikes and the scripted extras.

Plain frozen records; ``sim.physics.Simulator`` carries them out. Directions are degrees in the table frame,
counter-clockwise from +x (0 = towards the right cushion, 90 = towards the top cushion).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


def unit(direction_deg: float) -> tuple[float, float]:
    a = math.radians(direction_deg)
    return (math.cos(a), math.sin(a))


@dataclass(frozen=True)
class Strike:
    """The cue strikes ``ball`` at ``t``: the ball leaves at ``speed`` mm/s along ``direction_deg``.

    ``tip`` is where the tip met the ball, in ball radii from the centre as the player sees it: (side, height),
    side > 0 right english, height > 0 follow, < 0 draw; 0.4 is natural roll; a miscue starts beyond ~0.5.
    ``push_s`` > 0 makes it a push: the tip stays on the ball, driving it at ``speed``, for that long.
    """

    t: float
    ball: str
    speed: float
    direction_deg: float
    tip: tuple[float, float] = (0.0, 0.0)
    push_s: float = 0.0
    shooter: str | None = None


@dataclass(frozen=True)
class Touch:
    """Something other than the cue (a hand, a sleeve) sets ``ball`` moving at ``t`` with ``velocity`` mm/s."""

    t: float
    ball: str
    velocity: tuple[float, float]


@dataclass(frozen=True)
class HandMove:
    """A hand slides ``ball`` from where it is to ``to`` over ``duration`` s, starting at ``t``, and lets go."""

    t: float
    ball: str
    to: tuple[float, float]
    duration: float = 0.6


@dataclass(frozen=True)
class LeaveTable:
    """From ``t`` on, ``ball`` jumps the next cushion it meets instead of rebounding (it leaves the table)."""

    t: float
    ball: str


@dataclass(frozen=True)
class KnockPin:
    """Something other than a ball (a hand, the cue's butt) knocks ``pin`` over at ``t``."""

    t: float
    pin: str
    direction_deg: float = 0.0


Action = Strike | Touch | HandMove | LeaveTable | KnockPin
