"""The match as a fold of its log over the opening state: undo, replay and crash recovery are one operation.

A discipline's referee is any object with the ``Referee`` protocol; ``Match`` feeds it shots and controls in
order, keeps the history that ``undo`` and ``override`` need, and checks what is common to every discipline (the
shooter named by a shot is the side whose turn it is, shots follow each other in time).
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Mapping, Protocol

from .controls import Control
from .errors import LogError
from .shot import TIME_SLACK, Shot
from .tables import TableSpec
from .verdict import Verdict


class OptionError(ValueError):
    """A bad ``--option``, distance or table for a discipline."""


class Referee(Protocol):
    discipline: str
    table: TableSpec

    def opening(self) -> Any:
        """The state before the first shot."""

    def next_shooter(self, state: Any) -> str:
        """The side whose turn it is."""

    def judge(self, state: Any, shot: Shot, index: int) -> tuple[Verdict, Any]:
        """The verdict of one shot and the state after it. Pure: ``state`` is not changed."""

    def apply_control(self, state: Any, control: Control, record: str) -> Any:
        """A person's decision (every control but ``undo`` and ``override``); LogError when the state forbids it."""

    def amend(self, before: Any, shot: Shot, verdict: Verdict, control: Control) -> tuple[Verdict, Any]:
        """The ``override`` control: the last shot re-judged with the given verdict fields replaced."""

    def summary(self, state: Any) -> dict[str, Any]:
        """The final match object (without the outer ``{"match": ...}``)."""


Record = Shot | Control


class Match:
    def __init__(self, referee: Referee) -> None:
        self.referee = referee
        self.state: Any = referee.opening()
        # One entry per effective shot: the state before it, the shot, its verdict, the state after its controls.
        self._history: list[tuple[Any, Shot, Verdict]] = []

    @property
    def verdicts(self) -> list[Verdict]:
        return [v for _, _, v in self._history]

    @property
    def shots(self) -> list[Shot]:
        return [s for _, s, _ in self._history]

    def feed(self, record: Record, label: str = "record") -> Verdict | None:
        if isinstance(record, Shot):
            return self._shot(record, label)
        if record.kind == "undo":
            if not self._history:
                raise LogError(label, "control", "undo with no shot to undo")
            # Back to the state before the last shot: the controls given after it go with it.
            self.state = self._history.pop()[0]
            return None
        if record.kind == "override":
            if not self._history:
                raise LogError(label, "control", "override with no verdict to correct")
            before, shot, verdict = self._history[-1]
            amended, self.state = self.referee.amend(before, shot, verdict, record)
            self._history[-1] = (before, shot, amended)
            return None
        self.state = self.referee.apply_control(self.state, record, label)
        return None

    def _shot(self, shot: Shot, label: str) -> Verdict:
        expected = self.referee.next_shooter(self.state)
        if shot.shooter is not None and shot.shooter != expected:
            raise LogError(label, "shooter", f"{shot.shooter!r} but it is {expected}'s turn")
        if self._history:
            last = self._history[-1][1]
            if shot.t_start < last.t_end - TIME_SLACK:
                raise LogError(label, "t_start",
                               f"time goes backwards ({shot.t_start} before the previous shot's t_end {last.t_end})")
        index = len(self._history) + 1
        try:
            verdict, new_state = self.referee.judge(self.state, shot, index)
        except LogError as exc:
            # Referees know the shot's number, not where it came from: name the record as the log does.
            raise LogError(f"{label} (shot {index})", exc.field, exc.problem) from None
        self._history.append((self.state, shot, verdict))
        self.state = new_state
        return verdict

    def summary(self) -> dict[str, Any]:
        return self.referee.summary(self.state)

    def cue_ball(self) -> str:
        """The ball the side to play must strike: the referee's to say where the sides play their own balls
        (carom, Chapó), else the cue ball."""
        ask = getattr(self.referee, "cue_ball", None)
        return ask(self.state) if callable(ask) else "cue"


def fold(referee: Referee, records: Iterable[tuple[str, Record]]) -> Iterator[Verdict]:
    """Feed labelled records in order, yielding each shot's verdict as it is judged."""
    match = Match(referee)
    for label, record in records:
        verdict = match.feed(record, label)
        if verdict is not None:
            yield verdict


def parse_options(pairs: Iterable[str]) -> dict[str, str]:
    """``KEY=VALUE`` strings from the command line into a dict (values stay strings; referees convert)."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise OptionError(f"--option {pair!r} is not KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


def option_value(options: Mapping[str, str], key: str, default: Any, kind: type, allowed: Iterable[Any] | None = None
                 ) -> Any:
    """One typed option with its default; OptionError names the key on a bad value."""
    if key not in options:
        return default
    raw = options[key]
    try:
        if kind is bool:
            if raw.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError
            value: Any = raw.lower() in ("true", "1", "yes")
        else:
            value = kind(raw)
    except ValueError:
        raise OptionError(f"--option {key}={raw}: not a {kind.__name__}") from None
    if allowed is not None and value not in set(allowed):
        raise OptionError(f"--option {key}={raw}: must be one of {', '.join(map(str, allowed))}")
    return value


def reject_unknown_options(options: Mapping[str, str], known: Iterable[str], discipline: str) -> None:
    unknown = sorted(set(options) - set(known))
    if unknown:
        known_s = ", ".join(sorted(known)) or "none"
        raise OptionError(f"--option {unknown[0]}: not an option of {discipline} (known: {known_s})")
