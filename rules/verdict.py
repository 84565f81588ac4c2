"""The Verdict of one shot (DESIGN.md section 5), as a frozen record with its JSON form."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from .tables import Point


@dataclass(frozen=True)
class Foul:
    code: str
    article: str
    penalty: int = 0
    to: str | None = None  # the side the penalty goes to

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "article": self.article, "penalty": self.penalty, "to": self.to}

    @classmethod
    def from_override(cls, given: Mapping[str, Any], *, penalty: int, to: str) -> "Foul":
        """The foul an ``override`` control names: its code, and the article, penalty and beneficiary it gives,
        else the discipline's defaults."""
        return cls(str(given["code"]), str(given.get("article", "referee")), int(given.get("penalty", penalty)),
                   given.get("to", to))


@dataclass(frozen=True)
class Respot:
    ball: str
    at: Point

    def to_dict(self) -> dict[str, Any]:
        return {"ball": self.ball, "at": [round(self.at[0], 1), round(self.at[1], 1)]}


@dataclass(frozen=True)
class Verdict:
    shot: int
    shooter: str
    points: Mapping[str, int]
    foul: Foul | None
    turn: str  # "keeps" | "passes"
    score: Mapping[str, int]
    respot: tuple[Respot, ...] = ()
    announce: tuple[str, ...] = ()
    game_over: bool = False
    reason: str | None = None
    # Discipline-specific fields, written at the top level of the JSON (e.g. "remove", "pins", "snooker").
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "shot": self.shot,
            "shooter": self.shooter,
            "points": dict(self.points),
            "foul": None if self.foul is None else self.foul.to_dict(),
            "turn": self.turn,
            "score": dict(self.score),
            "respot": [r.to_dict() for r in self.respot],
            "announce": list(self.announce),
            "game_over": self.game_over,
            "reason": self.reason,
        }
        d.update(self.extra)
        return d


def other_side(side: str) -> str:
    return "B" if side == "A" else "A"
