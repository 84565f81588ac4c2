"""The Brazilian snooker (*sinuca mista*) referee.

Citations are to the CBBS rulebook (``rulebooks/001_...txt``) as "sinuca Art. N.M". Ball ids (DESIGN.md section 2):
``cue``, ``red1``..``redN``, ``yellow`` 2, ``green`` 3, ``brown`` 4, ``blue`` 5, ``pink`` 6, ``black`` 7.

What the referee decides, shot by shot: the ball on and the sequence (Art. 3, 12, 13.4), points (Art. 14, 15, 33),
fouls and penalties (Art. 36-42), re-spots as table coordinates (Art. 13, 16, 27-30), snookers from the end positions
(Art. 9, 10; geometry in ``snooker_geometry``), the free ball and the beneficiary's choices after a foul (Art. 26,
31, 32), the end of a frame (Art. 44-47), the stalemate (Art. 48), and the match to a number of frames (Art. 49).

Options (``--option KEY=VALUE``), each a reading of the text with its default:

- ``reds=15``: 3, 6, 10 or 15 reds (Art. 1.2.a, 7.1; DESIGN.md section 7).
- ``frames=1``: frame wins that win the match (Art. 49.1: "o mínimo predeterminado de vitórias em partidas").
- ``nominate=evident``: Art. 20 asks a colour after a red to be nominated "salvo quando evidente". ``evident``: a
  colour shot with no nomination is evident, and the aimed colour is the one the cue ball hits first, when that first
  contact is a single colour and no other colour is potted; otherwise not nominating is the foul of Art. 41.17.
  ``strict``: every colour after a red must be nominated (``nominated`` shot field or ``nominate`` control). A foul
  in a colour shot before the colour is nominated or evident has the maximum penalty (Art. 42.3).
- ``respot_spots=any``: Art. 27 "retorna na marca livre de outra de maior valor": ``any`` reads it as the free
  spot of the highest value (WPBSA usage; the issue's wording); ``higher`` only the free spots worth more than the
  ball, before the line placement of Art. 28.
- ``free_ball_on_miss=nothing``: Art. 26.3 offers the free ball whatever the position when the foul comes from "a
  falta de contato da tacadeira com a bola visada". ``nothing`` (the issue's reading): the cue ball touched no ball
  at all; ``ball_on``: the cue ball touched no ball it was aiming at during the shot (a wrong ball hit instead).
- ``compulsory_foul=miss``: Art. 42.4, a foul on the shot after a confirmed total snooker "tornando compulsória a
  falta", has the maximum penalty. ``miss``: when the foul is not hitting the ball on first (Art. 41.14, 41.15) and
  the shooter had no free ball to play; ``any``: any foul on that shot; ``off``: never.
- ``stalemate_mm``: a shot leaves the situation unchanged (Art. 48) when nothing is potted, nobody scores and every
  ball rests within this distance of where it was at the start; default one ball diameter.
- ``respot_black=true``: a frame tied on the black goes to the *partida complementar* (Art. 47); ``false`` records
  the frame as drawn.
- ``respot_black_first=breaker``: who plays the re-spotted black unless a ``first_player`` control names the winner
  of the lot (Art. 19): the frame's ``breaker`` or the ``other`` side.
- ``strike_other_ball=max``: the cue striking a ball other than the cue ball is "jogar com bola errada" (Art. 42.2,
  7 points); ``variable`` reads it as touching a ball (Art. 41.5, the variable penalty).
- ``simultaneous_ms=1``: two contacts of the cue ball this close in time hit two balls at once (Art. 41.15).
- ``touching_mm=1``: a gap up to this between the cue ball and another ball is a touching ball (Art. 23-25): named
  in the verdict's ``touching``; a ball on touching counts as hit when the cue ball plays away (Art. 23.2.a).
- ``play_on=break``: after a ``play_on`` control (Art. 45.b) the leader's break goes on without further stops;
  ``shot``: every later shot that keeps the difference of Art. 44.2 stops the frame again until the next
  ``play_on``.
- ``confirm_below=0.8``: a shot seen with a lower ``confidence`` marks the verdict ``confirm: true``.
- ``d_check=true``: the cue ball in hand must be played from the D or its line (Art. 17.3, 41.9), within the chalk
  half-width plus the position's uncertainty. At a frame's break-off it is checked only when the start holds the
  whole rack of reds (a log that opens in the middle of a frame is taken as it is).

Other readings, fixed:

- The push into a touching ball (Art. 23.2.b, 41.4) is left to the referee (``override``).
- The balls in play are those of the shot's ``start`` (what the camera sees) that the frame still has (the previous
  shot's end and its re-spots: a potted red listed again is ignored), plus any such ball its events name; a start
  that lists no object ball means the balls left by the previous shot and its re-spots.
- A strike on a ball other than ``cue`` is playing with the wrong ball (Art. 42.2, 7 points). A first contact with a
  ball not on is Art. 41.14, the variable penalty (DESIGN.md section 7); a nominated ball out of the sequence is
  Art. 42.1 (7 points).
- The free ball has the value and conditions of the ball on (Art. 4), also in penalties. With a free ball the cue
  ball must hit it first, alone or together with the ball on (Art. 41.15).
- The free ball is offered after a foul when the next player is snookered, totally or partially (Art. 9.1, 26), or
  on the miss of Art. 26.3 whatever the position, the cue ball in hand included ("independentemente da situação
  resultante"). A snooker is not judged while the cue ball is in hand (the verdict's ``snooker`` is null).
- The frame ends at the end of the shot that reaches a difference of Art. 44.2 (or 44.1 for the pink) unless a
  ``play_on`` control follows (Art. 45.a, 45.b; DESIGN.md section 7); when the leader's turn ends the difference is
  judged again (Art. 45.b).
- With only the black left (Art. 46): a foul with a difference under 7 loses the frame (46.2); a foul by the side 7
  ahead ties it (46.1) and a tie goes to the re-spotted black (Art. 47) with the cue ball in hand in the D.
- ``concede`` in a frame concedes the frame (Art. 44.3); between frames (a frame just ended) it concedes the match
  (Art. 49.2). Without a ``side`` it is the side to play.
- The third unchanged shot annuls the frame (Art. 48.3: "a partida é considerada nula ... e outra é reiniciada"):
  its points do not count and it is replayed, broken off by the same side (``stalemate_breaker=same``; ``alternate``
  treats the replay as the next frame). The verdict after the second warns (Art. 48.1).
- ``snookers_required``: the trailing side's snookers to at least tie, each worth the least penalty with the ball on
  (``max(4, value)``): ``ceil((deficit - remaining) / penalty)``, 0 when the points on the table suffice.

The verdict's discipline fields (beyond DESIGN.md section 5): ``ball_on`` (``"red"``, ``"colour"`` after a red, or
the colour of the sequence; null when the frame is over), ``snooker`` (``"total"``, ``"partial"`` or null, for the
player to play next, from the end positions), ``free_ball_offered``, ``cue_in_hand``, ``touching`` (balls the cue
ball rests against, Art. 23-25: within ``touching_mm``), ``table`` (``remaining`` points on the table, ``lead``,
``leader``, ``snookers_required``, ``reds``, and ``remaining_with_free_ball`` when one is offered, Art. 8),
``frame``, ``frames``, ``break``, ``fouls`` (every foul of the shot; ``foul`` is the one that sets the penalty),
``nominated`` (the colour aimed after a red), ``free_ball``, ``stalemate`` (the count of Art. 48), ``match_over``,
and on a frame's last shot ``winner`` and ``play_on_allowed``. ``announce`` holds the break (``"8"``), ``"foul N"``,
``"free ball"``, ``"stalemate warning (impasse)"``, ``"re-spotted black"``, ``"frame A"``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping

from .balls import SNOOKER_COLOURS, SNOOKER_VALUES, snooker_reds
from .controls import Control
from .errors import LogError
from .events import EventType, contacts_of
from .match import OptionError, option_value, reject_unknown_options
from .shot import Shot
from .snooker_geometry import (
    NONE, TOTAL, Obstacle, ball_obstacles, in_d, knuckles, respot_point, snooker_call,
)
from .tables import Point, TableSpec, preset
from .verdict import Foul, Respot, Verdict, other_side

OPTIONS = ("reds", "frames", "nominate", "respot_spots", "free_ball_on_miss", "compulsory_foul", "stalemate_mm",
           "respot_black", "respot_black_first", "strike_other_ball", "d_check", "stalemate_breaker", "confirm_below",
           "simultaneous_ms", "touching_mm", "play_on")
REDS_ALLOWED = (3, 6, 10, 15)
COLOURS = SNOOKER_COLOURS  # yellow .. black, in value order
VALUES = SNOOKER_VALUES
VAR, MAX = "variable", "maximum"
# Two contacts of the cue ball this close in time are one simultaneous contact (sinuca Art. 41.15).
SIMULTANEOUS_S = 1e-3
# sinuca Art. 44.2: with the 5, 6 or 7 on, the frame ends when the difference is greater than these.
THRESHOLDS = {"blue": 25, "pink": 20, "black": 7}
RED = "red"
TOUCHING_MM = 1.0  # a gap this small between the cue ball and another is a touching ball (sinuca Art. 23), announced
ANY_COLOUR = "colour"


def art(n: str) -> str:
    return f"sinuca Art. {n}"


def is_red(ball: str) -> bool:
    return ball.startswith("red")


def _pair(a: int = 0, b: int = 0) -> dict[str, int]:
    return {"A": a, "B": b}


def _plus(m: Mapping[str, int], side: str, n: int) -> dict[str, int]:
    out = dict(m)
    out[side] = out.get(side, 0) + n
    return out


@dataclass(frozen=True)
class SinucaState:
    frame: int = 1
    breaker: str = "A"
    to_play: str = "A"
    score: Mapping[str, int] = field(default_factory=_pair)  # the current frame's points
    frames: Mapping[str, int] = field(default_factory=_pair)  # frames won
    balls: Mapping[str, Point] = field(default_factory=dict)  # object balls on the table, last known positions
    cue: Point | None = None  # None: the cue ball is in hand (break-off, after it was potted or left the table)
    break_off: bool = True  # the next shot opens the frame (sinuca Art. 17)
    colour_next: bool = False  # a red (or a free ball as a red) was just potted: any colour is on (sinuca Art. 12.1)
    free_ball_offered: bool = False  # sinuca Art. 26, 32
    pending_free_ball: str | None = None  # from a free_ball control
    pending_nominated: str | None = None  # from a nominate control
    pass_back_to: str | None = None  # the offender a pass_back would hand the turn to (sinuca Art. 31.4)
    snooker: str | None = None  # the snooker the side to play is in (sinuca Art. 9), for sinuca Art. 42.4
    frame_over: bool = False
    frame_winner: str | None = None  # "A", "B", "draw"
    end_reason: str | None = None
    resume: "SinucaState | None" = None  # the frame going on, if a play_on control follows (sinuca Art. 45.b)
    playing_on: bool = False
    respotted_black: bool = False  # the *partida complementar* (sinuca Art. 47)
    first_player_open: bool = False  # a first_player control may name who plays the re-spotted black (sinuca Art. 19)
    next_breaker: str | None = None  # a first_player control between frames
    stalemate: int = 0  # consecutive shots that left the situation unchanged (sinuca Art. 48)
    run: int = 0  # the current break of the side to play
    high_break: Mapping[str, int] = field(default_factory=_pair)
    fouls: Mapping[str, int] = field(default_factory=_pair)  # fouls committed, whole match
    match_over: bool = False
    winner: str | None = None
    results: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True)
class FoulCall:
    code: str
    article: str
    kind: str  # VAR (sinuca Art. 36) or MAX (sinuca Art. 37)
    penalty: int

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "article": self.article, "penalty": self.penalty}


@dataclass(frozen=True)
class Context:
    """What the judged shot was: the ball on, the aim, what went where."""

    kind: str  # RED, ANY_COLOUR, or "sequence"
    on: str | None  # the colour on in the sequence
    aimed: str | None  # the colour played after a red (nominated or evident)
    free_ball: str | None
    nominated: str | None
    positions: Mapping[str, Point]  # the object balls in play at the start
    potted: tuple[str, ...]
    off: tuple[str, ...]
    missed_aim: bool  # sinuca Art. 26.3
    unchanged: bool  # sinuca Art. 48
    cue_start: Point | None


@dataclass(frozen=True)
class Outcome:
    points: Mapping[str, int]
    foul: Foul | None
    fouls: tuple[FoulCall, ...]
    keeps: bool
    reason: str | None
    ctx: Context


def rack(table: TableSpec, reds: int) -> dict[str, Point]:
    """The opening position (Art. 17): colours on their spots, the reds in a triangle whose apex is just behind the
    pink on the long axis, without touching it."""
    r = table.ball_radius
    cx, pink_y = table.spots["pink"]
    apex = pink_y + 2 * r + 1.0
    out: dict[str, Point] = {c: table.spots[c] for c in COLOURS}
    ids = iter(snooker_reds(reds))
    row = 0
    placed = 0
    while placed < reds:
        for j in range(row + 1):
            if placed == reds:
                break
            out[next(ids)] = (cx + (j - row / 2) * 2 * r, apex + row * math.sqrt(3) * r)
            placed += 1
        row += 1
    return out


class SinucaReferee:
    def __init__(self, discipline: str = "sinuca", table: TableSpec | None = None, distance: int | None = None,
                 options: Mapping[str, str] | None = None) -> None:
        options = dict(options or {})
        reject_unknown_options(options, OPTIONS, discipline)
        if distance is not None:
            raise OptionError("--distance: sinuca is played to a number of frames (use --option frames=N)")
        self.discipline = discipline
        self.table = table if table is not None else preset("sinuca_br")
        missing = [c for c in COLOURS if c not in self.table.spots]
        if missing or "baulk_line_y" not in self.table.lines or "d_radius" not in self.table.lines:
            raise OptionError(f"table {self.table.name!r} has no snooker spots and D")
        self.reds = option_value(options, "reds", 15, int, REDS_ALLOWED)
        self.frames_to_win = option_value(options, "frames", 1, int)
        if self.frames_to_win < 1:
            raise OptionError("--option frames: must be at least 1")
        self.nominate = option_value(options, "nominate", "evident", str, ("evident", "strict"))
        self.higher_only = option_value(options, "respot_spots", "any", str, ("any", "higher")) == "higher"
        self.miss_rule = option_value(options, "free_ball_on_miss", "nothing", str, ("nothing", "ball_on"))
        self.compulsory = option_value(options, "compulsory_foul", "miss", str, ("miss", "any", "off"))
        self.stalemate_mm = option_value(options, "stalemate_mm", self.table.ball_diameter, float)
        self.respot_black = option_value(options, "respot_black", True, bool)
        self.black_first = option_value(options, "respot_black_first", "breaker", str, ("breaker", "other"))
        self.strike_other = option_value(options, "strike_other_ball", "max", str, ("max", "variable"))
        self.d_check = option_value(options, "d_check", True, bool)
        self.stalemate_breaker = option_value(options, "stalemate_breaker", "same", str, ("same", "alternate"))
        self.confirm_below = option_value(options, "confirm_below", 0.8, float)
        self.simultaneous_s = option_value(options, "simultaneous_ms", SIMULTANEOUS_S * 1000, float) / 1000
        self.touching_mm = option_value(options, "touching_mm", TOUCHING_MM, float)
        self.play_on_once = option_value(options, "play_on", "break", str, ("break", "shot")) == "break"
        self.radius = self.table.ball_radius
        self._knuckles = knuckles(self.table)

    # --- the Referee protocol -------------------------------------------------------------------------------------

    def opening(self) -> SinucaState:
        return SinucaState(balls=rack(self.table, self.reds))

    def next_shooter(self, state: SinucaState) -> str:
        if state.frame_over and not state.match_over:
            return self._next_breaker(state)
        return state.to_play

    def judge(self, state: SinucaState, shot: Shot, index: int) -> tuple[Verdict, SinucaState]:
        record = f"shot {index}"
        if state.match_over:
            raise LogError(record, None, "the match is over")
        if state.frame_over:
            state = self._new_frame(state)
        return self.apply(state, shot, index, self.decide(state, shot, record))

    def apply_control(self, state: SinucaState, control: Control, record: str) -> SinucaState:
        kind = control.kind
        if state.match_over and state.resume is None:
            raise LogError(record, "control", "the match is over")
        if kind == "free_ball":
            return self._free_ball_control(state, control.get("ball"), record)
        if kind == "nominate":
            ball = control.get("ball")
            if state.frame_over:
                raise LogError(record, "control", "nominate between frames")
            if ball != "cue" and ball not in state.balls:
                raise LogError(record, "ball", f"the {ball} is not on the table")
            if ball == "cue":
                raise LogError(record, "ball", "the cue ball cannot be nominated")
            return replace(state, pending_nominated=ball)
        if kind == "pass_back":
            if state.frame_over or state.pass_back_to is None:
                raise LogError(record, "control", "pass_back needs a foul just committed (sinuca Art. 31.4)")
            return replace(state, to_play=state.pass_back_to, pass_back_to=None, free_ball_offered=False,
                           pending_free_ball=None, pending_nominated=None, run=0)
        if kind == "play_on":
            if state.resume is None:
                raise LogError(record, "control",
                               "play_on needs a frame just won by the shooter's own break (sinuca Art. 45.b)")
            return replace(state.resume, playing_on=True)
        if kind == "first_player":
            side = control.get("side")
            if state.first_player_open:
                return replace(state, to_play=side)
            if state.frame_over and not state.match_over:
                return replace(state, next_breaker=side, resume=None)
            raise LogError(record, "control",
                           "first_player only before a re-spotted black or between frames (sinuca Art. 18, 19)")
        if kind == "concede":
            side = control.get("side", self.next_shooter(state))
            if state.frame_over:
                return replace(state, resume=None, match_over=True, winner=other_side(side),
                               end_reason=f"{side}_conceded_match")
            return self._end_frame(state, other_side(side), f"{side}_conceded")
        raise LogError(record, "control", f"{kind!r} is not a control of {self.discipline}")

    def amend(self, before: SinucaState, shot: Shot, verdict: Verdict, control: Control
              ) -> tuple[Verdict, SinucaState]:
        state = self._new_frame(before) if before.frame_over else before
        original = self.decide(state, shot, f"shot {verdict.shot}")
        shooter = state.to_play
        foul = original.foul
        fouls = original.fouls
        if "foul" in control.fields:
            f = control.fields["foul"]
            if f is None:
                foul, fouls = None, ()
            else:
                foul = Foul.from_override(f, penalty=4, to=other_side(shooter))
                fouls = (FoulCall(foul.code, foul.article, MAX, foul.penalty),)
        if "points" in control.fields:
            given = control.fields["points"]
            points = _pair(given.get("A", 0), given.get("B", 0))
        elif "foul" in control.fields:
            points = _pair() if foul is None else _plus(_pair(), foul.to or other_side(shooter), foul.penalty)
        else:
            points = dict(original.points)
        if "turn" in control.fields:
            keeps = control.fields["turn"] == "keeps"
        else:
            keeps = original.keeps and foul is None
        reason = control.get("reason", original.reason if foul is original.foul else (foul.code if foul else None))
        amended = Outcome(points, foul, fouls, keeps, reason, original.ctx)
        return self.apply(state, shot, verdict.shot, amended)

    def summary(self, state: SinucaState) -> dict[str, Any]:
        return {
            "discipline": self.discipline,
            "reds": self.reds,
            "frames_to_win": self.frames_to_win,
            "frame": state.frame,
            "score": dict(state.score),
            "frames": dict(state.frames),
            "game_over": state.frame_over,
            "frame_winner": state.frame_winner,
            "match_over": state.match_over,
            "winner": state.winner if state.match_over else None,
            "reason": state.end_reason,
            "fouls": dict(state.fouls),
            "high_break": dict(_plus(state.high_break, state.to_play, 0)),
            "break": state.run,
            "to_play": self.next_shooter(state),
            "results": [dict(r) for r in state.results],
        }

    # --- the ball on --------------------------------------------------------------------------------------------

    @staticmethod
    def _ball_on(state: SinucaState, balls: Iterable[str]) -> tuple[str, str | None]:
        """(kind, colour): a red, any colour after a red, or the lowest colour (Art. 3, 12, 13.4)."""
        balls = set(balls)
        if state.respotted_black:
            return "sequence", "black"
        if state.colour_next:
            return ANY_COLOUR, None
        if any(is_red(b) for b in balls):
            return RED, None
        colours = [c for c in COLOURS if c in balls]
        if not colours:
            return "sequence", None
        return "sequence", colours[0]

    # --- deciding a shot ------------------------------------------------------------------------------------------

    def _check_ids(self, shot: Shot, record: str) -> None:
        allowed = set(snooker_reds(self.reds))
        names: list[tuple[str, str]] = [(f"start.{b}", b) for b in shot.start] + [(f"end.{b}", b) for b in shot.end]
        for i, e in enumerate(shot.events):
            for b in ([e.ball] if e.ball else []) + (list(e.balls) if e.balls else []):
                names.append((f"events[{i}]", b))
        for fld, b in names:
            if is_red(b) and b not in allowed:
                raise LogError(record, fld, f"{b!r}: this match is played with {self.reds} reds")

    def decide(self, state: SinucaState, shot: Shot, record: str) -> Outcome:
        """Points, fouls and turn for one shot, from the state and the shot's events and positions."""
        self._check_ids(shot, record)
        shooter = state.to_play
        opponent = other_side(shooter)
        # The balls in play: those of the start that the frame still has (the previous shot's end and its re-spots),
        # so a start copied from an earlier position cannot bring back a ball already potted.
        known = state.balls
        start_obj = {b: p for b, p in shot.start.items() if b != "cue"}
        positions: dict[str, Point] = {b: p for b, p in start_obj.items() if b in known} or dict(start_obj)
        if not start_obj:
            positions = dict(known)
        for e in shot.events:
            for b in ([e.ball] if e.ball else []) + (list(e.balls) if e.balls else []):
                if b != "cue" and b not in positions and (b in known or not known):
                    positions[b] = known.get(b) or shot.end.get(b) or self.table.spots.get(
                        b, (self.table.width / 2, self.table.length / 2))
        kind, on = self._ball_on(state, positions)
        if kind == "sequence" and on is None:
            raise LogError(record, "start", "no object ball on the table")
        reds = {b for b in positions if is_red(b)}

        fb = shot.free_ball or state.pending_free_ball
        if fb is not None:
            if not state.free_ball_offered:
                raise LogError(record, "free_ball", f"no free ball was offered to {shooter} (sinuca Art. 26)")
            if fb not in COLOURS or fb not in positions:
                raise LogError(record, "free_ball", f"the {fb} is not a colour on the table (sinuca Art. 4)")
            if fb == on:
                raise LogError(record, "free_ball", f"the {fb} is the ball on")
        nominated = shot.nominated or state.pending_nominated
        if nominated == fb:
            nominated = None
        if nominated is not None and nominated not in positions:
            raise LogError(record, "nominated", f"the {nominated} is not on the table")

        events = shot.events
        cue_contacts = contacts_of(events, "cue")
        first_group: set[str] = set()
        if cue_contacts:
            t0 = cue_contacts[0].t
            first_group = {e.other("cue") for e in cue_contacts if e.t - t0 <= self.simultaneous_s}  # type: ignore
        touched_by_cue = {e.other("cue") for e in cue_contacts}
        # sinuca Art. 23.2.a: a ball on resting against the cue ball counts as already hit when the cue ball plays away.
        cue_at = shot.start.get("cue")
        resting = set() if cue_at is None else {
            b for b, p in shot.start.items() if b != "cue" and math.dist(p, cue_at) <= 2 * self.radius + self.touching_mm}
        in_play = set(positions) | {"cue"}
        potted = tuple(dict.fromkeys(e.ball for e in events if e.type is EventType.POCKET and e.ball in in_play))
        off = tuple(dict.fromkeys(e.ball for e in events
                                  if e.type is EventType.OFF_TABLE and e.ball not in potted and e.ball in in_play))
        obj_potted = [b for b in potted if b != "cue"]

        # The aim: what the cue ball must hit first and what it may pot.
        aimed: str | None = None
        if kind == RED:
            allowed_first = reds | ({fb} if fb else set())
            allowed_pots = set(allowed_first)
        elif kind == ANY_COLOUR:
            if nominated is not None and nominated in COLOURS:
                aimed = nominated
            elif nominated is None and self.nominate == "evident" and len(first_group) == 1:
                only = next(iter(first_group))
                if only in COLOURS and all(b == only or is_red(b) for b in obj_potted):
                    aimed = only
            allowed_first = {aimed} if aimed else set()
            allowed_pots = set(allowed_first)
        else:
            allowed_first = {on} | ({fb} if fb else set())  # type: ignore[arg-type]
            allowed_pots = set(allowed_first)

        def value(b: str | None) -> int:
            if b is None or b == "cue":
                return 0
            if b == fb:
                return on_value_free  # sinuca Art. 4: the free ball has the ball on's value
            return 1 if is_red(b) else VALUES[b]

        if kind == RED:
            on_value = 1
        elif kind == ANY_COLOUR:
            on_value = VALUES[aimed] if aimed else 0
        else:
            on_value = VALUES[on]  # type: ignore[index]
        on_value_free = on_value
        first_value = max((value(b) for b in first_group), default=0)

        calls: list[tuple[str, str, str, int]] = []  # (code, article, kind, involved value)

        def add(code: str, article: str, kind_: str, involved: int = 0) -> None:
            calls.append((code, art(article), kind_, involved))

        # sinuca Art. 42.2: the cue struck a ball other than the cue ball.
        strikes = [e for e in events if e.type is EventType.STRIKE]
        wrong = [e.ball for e in strikes if e.ball != "cue"]
        if wrong:
            if self.strike_other == "max":
                add("wrong_ball", "42.2", MAX, max(value(b) for b in wrong))
            else:
                add("wrong_ball", "41.5", VAR, max(value(b) for b in wrong))
        if sum(1 for e in strikes if e.ball == "cue") > 1:
            add("double_hit", "41.2", VAR)
        if shot.moving_at_strike:
            add("moving_ball", "41.6", VAR, max(value(b) for b in shot.moving_at_strike))
        for e in events:
            if e.type is EventType.TOUCHED:
                add("touched", "41.5", VAR, value(e.ball))
        cue_start = shot.start.get("cue")
        # sinuca Art. 17.3, 41.9: in hand the cue ball is played from the D. At a frame's break-off the check needs the
        # start to hold the whole rack: a log that opens on a position in the middle of a frame is taken as it is.
        in_hand = state.cue is None and (not state.break_off or len(reds) >= self.reds)
        if self.d_check and in_hand and cue_start is not None:
            margin = self.table.chalk_half_width + shot.sigma("cue")
            if not in_d(self.table, cue_start, margin):
                add("outside_d", "41.9", VAR)
        if not first_group and resting & allowed_first and (kind != ANY_COLOUR or aimed):
            first_group = set(resting & allowed_first)
            first_value = max(value(b) for b in first_group)
        # sinuca Art. 41.14, 41.15: the first contact.
        if not first_group:
            add("miss", "41.14", VAR)
        elif kind == ANY_COLOUR and aimed is None:
            if len(first_group) > 1:
                add("simultaneous", "41.15", VAR, first_value)
            elif not (first_group <= set(COLOURS)):
                add("wrong_first_contact", "41.14", VAR, first_value)
        else:
            legal = first_group <= allowed_first and (fb is None or fb in first_group)
            if not legal:
                if len(first_group) > 1 and first_group & allowed_first:
                    add("simultaneous", "41.15", VAR, first_value)
                else:
                    add("wrong_first_contact", "41.14", VAR, first_value)
        if "cue" in potted:
            add("cue_potted", "41.1", VAR)
        for b in off:
            add("off_table", "41.10", VAR, value(b))
        for b in obj_potted:
            if kind == ANY_COLOUR and aimed is None:
                ok = b in COLOURS and first_group == {b}
            else:
                ok = b in allowed_pots
            if not ok:
                wrong_kind = (kind == RED and b in COLOURS) or (kind == ANY_COLOUR and is_red(b))
                if wrong_kind:
                    add("pot_wrong_kind", "41.13", VAR, value(b))
                else:
                    add("pot_not_on", "41.12", VAR, value(b))
        # sinuca Art. 42.1: a nominated ball out of the sequence.
        if nominated is not None:
            out_of_sequence = (
                (kind == RED and not is_red(nominated))
                or (kind == ANY_COLOUR and is_red(nominated))
                or (kind == "sequence" and nominated != on)
            )
            if out_of_sequence:
                add("out_of_sequence", "42.1", MAX, value(nominated))
        # sinuca Art. 20, 41.17, 42.3: a colour after a red, neither nominated nor evident.
        before_nomination = kind == ANY_COLOUR and aimed is None and not any(c[0] == "out_of_sequence"
                                                                                for c in calls)
        if before_nomination:
            add("not_nominated", "41.17", VAR)
        # sinuca Art. 42.4: the compulsory foul after a confirmed total snooker.
        if calls and self.compulsory != "off" and state.snooker == TOTAL and not state.free_ball_offered:
            if self.compulsory == "any" or any(c[0] in ("miss", "wrong_first_contact", "simultaneous")
                                              for c in calls):
                add("compulsory_foul", "42.4", MAX)

        if kind == RED:
            aim_set = reds | ({fb} if fb else set())
        elif kind == ANY_COLOUR:
            aim_set = {aimed} if aimed else set(COLOURS)
        else:
            aim_set = {on} | ({fb} if fb else set())
        if self.miss_rule == "nothing":
            missed_aim = not cue_contacts and not (resting & aim_set)
        else:
            missed_aim = not ((touched_by_cue | resting) & aim_set)

        # Points of a fair shot (sinuca Art. 14, 15, 33).
        points = _pair()
        scored = 0
        if not calls:
            if kind == RED:
                scored = sum(1 for b in obj_potted if is_red(b) or b == fb)
            elif kind == ANY_COLOUR:
                scored = VALUES[aimed] if aimed in obj_potted else 0  # type: ignore[index]
            else:
                scored = on_value if (on in obj_potted or (fb is not None and fb in obj_potted)) else 0
            # sinuca Art. 9.3, 34, 41.16: the free ball may not be the first obstacle of a snooker left to the opponent.
            if fb is not None and scored == 0 and "cue" in shot.end:
                if self._free_ball_snookers(shot, positions, potted, off, fb):
                    add("free_ball_snooker", "41.16", VAR, on_value)

        fouls: tuple[FoulCall, ...] = ()
        foul = None
        if calls:
            def penalty(c: tuple[str, str, str, int]) -> int:
                if c[2] == MAX or before_nomination:
                    return 7  # sinuca Art. 37; sinuca Art. 42.3: a foul before the colour is nominated or evident
                return max(4, on_value, first_value, c[3])  # sinuca Art. 36, 40
            fouls = tuple(FoulCall(c[0], c[1], c[2], penalty(c)) for c in calls)
            # The reported foul: the highest penalty, a maximum-penalty article first, then the first detected.
            main = sorted(enumerate(fouls), key=lambda x: (-x[1].penalty, x[1].kind != MAX, x[0]))[0][1]
            article = art("42.3") if before_nomination and main.kind == VAR else main.article
            foul = Foul(main.code, article, main.penalty, opponent)
            points = _plus(points, opponent, main.penalty)
            scored = 0
        else:
            points = _plus(points, shooter, scored)
        keeps = foul is None and scored > 0
        reason = foul.code if foul else ("pot" if keeps else "no_pot")

        unchanged = False
        if not potted and not off and "cue" in shot.start and "cue" in shot.end:
            common = [b for b in shot.start if b in shot.end]
            unchanged = len(common) >= 2 and all(
                math.dist(shot.start[b], shot.end[b]) <= self.stalemate_mm for b in common)
        ctx = Context(kind, on, aimed, fb, nominated, positions, potted, off, missed_aim, unchanged, cue_start)
        return Outcome(points, foul, fouls, keeps, reason, ctx)

    def _free_ball_snookers(self, shot: Shot, positions: Mapping[str, Point], potted: tuple[str, ...],
                            off: tuple[str, ...], fb: str) -> bool:
        after = {b: shot.end.get(b, p) for b, p in positions.items() if b not in potted and b not in off}
        if fb not in after or set(after) <= {"pink", "black"}:
            return False  # sinuca Art. 9.3, 34: except with only the 6 and the 7 left
        kind, on = self._ball_on(SinucaState(), after)
        call = self._snooker(shot.end["cue"], after, kind, on)
        return call.snookered and fb in call.first_obstacles

    def _snooker(self, cue: Point, balls: Mapping[str, Point], kind: str, on: str | None):
        """The snooker (Art. 9, 10) for a player with the cue ball at ``cue`` and ``kind``/``on`` as ball on."""
        if kind == RED:
            targets = {b: p for b, p in balls.items() if is_red(b)}
        elif kind == ANY_COLOUR:
            targets = {b: p for b, p in balls.items() if b in COLOURS}
        else:
            targets = {on: balls[on]} if on in balls else {}

        def obstacles(name: str) -> tuple[Obstacle, ...]:
            # sinuca Art. 10: a red ball on is never an obstacle; the cushions are not, their knuckles are.
            others = {b: p for b, p in balls.items() if b != name and not (kind == RED and is_red(b))}
            return ball_obstacles(others, self.radius) + self._knuckles

        return snooker_call(cue, targets, obstacles, self.radius)

    # --- applying a decision ------------------------------------------------------------------------------------

    def apply(self, state: SinucaState, shot: Shot, index: int, outcome: Outcome) -> tuple[Verdict, SinucaState]:
        ctx = outcome.ctx
        shooter = state.to_play
        opponent = other_side(shooter)
        foul = outcome.foul
        score = {s: state.score.get(s, 0) + outcome.points.get(s, 0) for s in ("A", "B")}
        fouls_count = _plus(state.fouls, shooter, 1) if foul else dict(state.fouls)
        gained = outcome.points.get(shooter, 0) if foul is None else 0
        run = state.run + gained
        high = _plus(state.high_break, shooter, 0)
        high[shooter] = max(high[shooter], run)
        keeps = outcome.keeps

        # The table after the shot: end positions, balls not seen at the end where they were.
        gone = set(ctx.potted) | set(ctx.off)
        balls = {b: shot.end.get(b, p) for b, p in ctx.positions.items() if b not in gone}
        cue: Point | None = None if "cue" in gone else (shot.end.get("cue") or ctx.cue_start or state.cue)
        # Re-spots (sinuca Art. 13, 16, 27-30): every colour potted or off the table returns, except the colour on
        # of the sequence potted fairly (Art. 13.2); reds never return (Art. 16); the higher value first (Art. 30).
        back = [c for c in COLOURS if c in gone]
        if foul is None and ctx.kind == "sequence" and ctx.on in ctx.potted:
            back.remove(ctx.on)  # type: ignore[arg-type]
        respots: list[Respot] = []
        for c in sorted(back, key=lambda b: -VALUES[b]):
            others = list(balls.values()) + ([cue] if cue is not None else [])
            at = respot_point(c, self.table, others, self.higher_only)
            balls[c] = at
            respots.append(Respot(c, at))

        announce: list[str] = []
        new = replace(state, score=score, fouls=fouls_count, high_break=high, balls=balls, cue=cue, break_off=False,
                      pending_free_ball=None, pending_nominated=None, free_ball_offered=False, pass_back_to=None,
                      resume=None, first_player_open=False, snooker=None)
        if keeps:
            colour_next = ctx.kind == RED and any(is_red(b) or b == ctx.free_ball for b in ctx.potted)
            new = replace(new, to_play=shooter, run=run, colour_next=colour_next)
            announce.append(str(run))
        else:
            new = replace(new, to_play=opponent, run=0, colour_next=False, playing_on=False)
        if foul:
            announce.append(f"foul {foul.penalty}")
            new = replace(new, pass_back_to=shooter)

        # Stalemate (sinuca Art. 48).
        unchanged = ctx.unchanged and not any(outcome.points.values())
        stalemate = state.stalemate + 1 if unchanged else 0
        new = replace(new, stalemate=stalemate)

        end = self._frame_end(state, new, shooter, ctx, foul, keeps)
        extra: dict[str, Any] = {}
        game_over = False
        turn = "keeps" if keeps else "passes"
        if end is None and stalemate >= 3:
            end = ("annul", "stalemate")
        if end is not None:
            what, reason = end
            if what == "pending":
                resume = new
                new = self._end_frame(new, shooter, reason)
                new = replace(new, resume=resume)
                game_over, turn = True, "passes"
                announce.append(f"frame {shooter}")
            elif what == "tie":
                new = self._tie(new, shooter)
                respots = [Respot("black", self.table.spots["black"])] if new.respotted_black else []
                if new.frame_over:
                    game_over, turn = True, "passes"
                    announce.append("frame drawn")
                else:
                    turn = "keeps" if new.to_play == shooter else "passes"
                    announce.append("re-spotted black")
            elif what == "annul":
                new = self._annul(new)
                game_over, turn = True, "passes"
                announce.append("frame annulled")
                respots = []
            else:
                new = self._end_frame(new, what, reason)
                game_over, turn = True, "passes"
                announce.append(f"frame {what}")
                respots = []
            reason_out = reason
        else:
            reason_out = outcome.reason
            if stalemate == 2:
                announce.append("stalemate warning (impasse)")  # sinuca Art. 48.1, 48.2

        # What the next player faces.
        next_kind, next_on = self._ball_on(new, new.balls)
        snooker = None
        if not new.frame_over and new.cue is not None and (next_on is not None or next_kind != "sequence"):
            call = self._snooker(new.cue, new.balls, next_kind, next_on)  # type: ignore[arg-type]
            snooker = None if call.kind == NONE else call.kind
        tie = end is not None and end[0] == "tie"  # the re-spotted black starts afresh, nothing carried over
        offered = bool(foul) and not new.frame_over and not tie and (snooker is not None or ctx.missed_aim)
        new = replace(new, snooker=snooker, free_ball_offered=offered)
        if offered:
            announce.append("free ball")  # sinuca Art. 26.1, 32.1
        if new.frame_over:
            ball_on = None
        else:
            ball_on = next_on if next_kind == "sequence" else next_kind
        # sinuca Art. 23-25: the balls the cue ball rests against (the referee tells the players).
        touching = [] if new.cue is None else sorted(
            b for b, p in new.balls.items() if math.dist(p, new.cue) <= 2 * self.radius + self.touching_mm)
        extra.update({
            "ball_on": ball_on,
            "touching": touching,
            "snooker": snooker,
            "free_ball_offered": offered,
            "cue_in_hand": new.cue is None and not new.frame_over,
            "table": self._table_info(new, next_kind),
            "frame": state.frame,
            "frames": dict(new.frames),
            "break": run if keeps else 0,
            "fouls": [f.to_dict() for f in outcome.fouls],
            "nominated": ctx.aimed or ctx.nominated,
            "free_ball": ctx.free_ball,
            "stalemate": stalemate if not game_over else 0,
            "match_over": new.match_over,
        })
        if shot.confidence < self.confirm_below:
            extra["confirm"] = True  # a partly seen shot: the referee is asked to confirm the verdict
        if game_over:
            extra["winner"] = new.frame_winner
            extra["play_on_allowed"] = new.resume is not None
        verdict = Verdict(
            shot=index, shooter=shooter, points=_pair(outcome.points.get("A", 0), outcome.points.get("B", 0)),
            foul=foul, turn=turn, score=dict(score), respot=tuple(respots), announce=tuple(announce),
            game_over=game_over, reason=reason_out, extra=extra,
        )
        return verdict, new

    def _table_info(self, state: SinucaState, next_kind: str) -> dict[str, Any]:
        reds = sum(1 for b in state.balls if is_red(b))
        colours = [c for c in COLOURS if c in state.balls]
        if state.respotted_black:
            remaining = 7
        elif next_kind == ANY_COLOUR:
            remaining = 7 + 8 * reds + 27  # sinuca Art. 7.2: a colour, then 8 a red, then 27
        elif reds:
            remaining = 8 * reds + 27
        else:
            remaining = sum(VALUES[c] for c in colours)
        a, b = state.score.get("A", 0), state.score.get("B", 0)
        lead = abs(a - b)
        leader = None if a == b else ("A" if a > b else "B")
        lowest = 1 if reds or next_kind == ANY_COLOUR else (VALUES[colours[0]] if colours else 7)
        per = max(4, lowest)
        required = 0 if lead <= remaining else math.ceil((lead - remaining) / per)
        info = {"remaining": remaining, "lead": lead, "leader": leader, "snookers_required": required, "reds": reds}
        if state.free_ball_offered:
            # sinuca Art. 8: a free ball adds up to 8 points (with a red on: the free ball as a red, then a colour).
            info["remaining_with_free_ball"] = remaining + (8 if reds else lowest)
        return info

    def _frame_end(self, before: SinucaState, new: SinucaState, shooter: str, ctx: Context, foul: Foul | None,
                   keeps: bool) -> tuple[str, str] | None:
        """Whether the frame ends after this shot (Art. 44-47): (winner side | "pending" | "tie", reason)."""
        opponent = other_side(shooter)
        d_before = before.score.get(shooter, 0) - before.score.get(opponent, 0)
        a, b = new.score["A"], new.score["B"]
        lead = abs(a - b)
        leader = None if a == b else ("A" if a > b else "B")
        last_black = ctx.kind == "sequence" and ctx.on == "black"
        black_down = foul is None and "black" in ctx.potted
        if before.respotted_black:
            if foul:
                return opponent, "foul_on_respotted_black"  # sinuca Art. 46.2 with the difference nil
            if black_down:
                return shooter, "black"
            return None
        if last_black:
            if foul:
                if abs(d_before) < 7:
                    return opponent, "foul_on_black"  # sinuca Art. 46.2
                if lead == 0:
                    return "tie", "tie"  # sinuca Art. 46.1, 47
                if lead > 7:
                    return leader, "difference"  # sinuca Art. 44.2.c
                return None
            if black_down:
                if leader is None:
                    return "tie", "tie"  # sinuca Art. 47
                return leader, "black"  # sinuca Art. 44.1
        kind, on = self._ball_on(new, new.balls)
        threshold = THRESHOLDS.get(on) if kind == "sequence" and on else None
        if threshold is not None and lead > threshold:
            if not keeps:
                return leader, "difference"  # sinuca Art. 44.2, 45
            if shooter == leader:
                return None if before.playing_on and self.play_on_once else ("pending", "difference")  # sinuca Art. 45.a, 45.b
            if ctx.kind == "sequence" and ctx.on == "pink" and "pink" in ctx.potted:
                return leader, "difference"  # sinuca Art. 44.1: the pink potted with more than 7 between them
        return None

    # --- frames -------------------------------------------------------------------------------------------------

    def _next_breaker(self, state: SinucaState) -> str:
        if state.next_breaker is not None:
            return state.next_breaker
        if state.end_reason == "stalemate" and self.stalemate_breaker == "same":
            return state.breaker  # sinuca Art. 48.3: the annulled frame is played again
        return other_side(state.breaker)  # sinuca Art. 18: the break alternates

    def _new_frame(self, state: SinucaState) -> SinucaState:
        breaker = self._next_breaker(state)
        return replace(
            SinucaState(balls=rack(self.table, self.reds)),
            frame=state.frame + 1, breaker=breaker, to_play=breaker, frames=state.frames,
            high_break=state.high_break, fouls=state.fouls, results=state.results,
        )

    def _record(self, state: SinucaState, winner: str | None, reason: str) -> tuple[Mapping[str, Any], ...]:
        return state.results + ({"frame": state.frame, "score": dict(state.score), "winner": winner,
                                 "reason": reason},)

    def _end_frame(self, state: SinucaState, winner: str, reason: str) -> SinucaState:
        high = _plus(state.high_break, state.to_play, 0)
        frames = dict(state.frames)
        if winner in ("A", "B"):
            frames[winner] += 1
        played = sum(1 for r in self._record(state, winner, reason) if r["winner"] is not None)
        match_over = any(frames[s] >= self.frames_to_win for s in ("A", "B")) or played >= 2 * self.frames_to_win - 1
        match_winner = None
        if match_over:
            match_winner = "draw" if frames["A"] == frames["B"] else ("A" if frames["A"] > frames["B"] else "B")
        return replace(state, frame_over=True, frame_winner=winner, end_reason=reason, frames=frames,
                       high_break=high, results=self._record(state, winner, reason), match_over=match_over,
                       winner=match_winner, free_ball_offered=False, pass_back_to=None, resume=None)

    def _annul(self, state: SinucaState) -> SinucaState:
        return replace(state, frame_over=True, frame_winner=None, end_reason="stalemate",
                       results=self._record(state, None, "stalemate"), free_ball_offered=False, pass_back_to=None)

    def _tie(self, state: SinucaState, shooter: str) -> SinucaState:
        """Art. 46.1, 47: a tie on the black. The black back on its spot, the cue ball in hand in the D."""
        if not self.respot_black:
            return self._end_frame(state, "draw", "tie")
        first = state.breaker if self.black_first == "breaker" else other_side(state.breaker)
        return replace(state, balls={"black": self.table.spots["black"]}, cue=None, respotted_black=True,
                       first_player_open=True, to_play=first, colour_next=False, run=0, pass_back_to=None,
                       playing_on=False)

    def _free_ball_control(self, state: SinucaState, ball: str, record: str) -> SinucaState:
        if state.frame_over or not state.free_ball_offered:
            raise LogError(record, "control", "no free ball was offered (sinuca Art. 26, 32)")
        kind, on = self._ball_on(state, state.balls)
        if ball not in COLOURS or ball not in state.balls:
            raise LogError(record, "ball", f"the {ball} is not a colour on the table (sinuca Art. 4)")
        if ball == on:
            raise LogError(record, "ball", f"the {ball} is the ball on")
        return replace(state, pending_free_ball=ball, pass_back_to=None)
