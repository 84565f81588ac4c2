"""The referee of Spanish *Chapó* (rulebook 004, RFEB, cited ``chapo Art. N.M``).

Balls ``1`` (side A's, who opens the first game: Art. 9, 11), ``2`` (side B's) and ``mingo``; pins ``king``,
``lat_top``, ``lat_bottom``, ``lat_left``, ``lat_right`` on the centre cross of nine spots (Art. 4).

What it rules
- Turns (DESIGN.md section 7): one shot each, scoring or not (option ``continue_on_score``).
- Scoring (Art. 7): the pins knocked down by balls, valued exactly as listed (King alone 5, a lateral 2 each, King +
  1 lateral 5, + 2 laterals 7, + 3 laterals 9, all five *Chapó*: 30 and the game), plus 2 for ball 1 or 2 and 3 for
  the Mingo in a pocket; the play's value is the sum. Pins knocked by the shooter's ball before it touches a ball
  count once a ball is touched.
- Ball in hand (Art. 8, 11, 12, 14, 16): the game's opening shot (*salida*) from the *cabaña de salida*
  (y <= L/4); the answer (*rematada*) from the Mingo's cabaña (y >= 3L/4) against the balls outside it, or from the
  cabaña de salida when no ball is outside the Mingo's (Art. 11); later a ball potted or off the table comes back
  in hand, from the cabaña de salida against balls outside it. A ball on the line is inside (Art. 14). Placing it
  outside the cabaña, hitting first a ball inside it, and the centre-line rule (DESIGN.md section 7: by default the
  ball must cross the centre line, read from the shot's tracks) are 1-point fouls.
- Pockets (Art. 13): a ball that drops and comes back out is not potted; the second ball resting on the first in
  the pocket is; a ball hanging on the lip that drops while the other ball is played is put back and not counted
  (13.3); one that drops while it was the ball played at (the shooter's ball touched nothing, and its track, when
  given, heads for it) has the shot replayed (13.4).
- Fouls (Art. 16): 1 point (balls moving or pins not planted, ball in hand from outside the cabaña, the wrong ball
  played, a ball touched, a ball in the cabaña hit first, the centre-line rule, no ball touched, a push), 2 points
  (the shooter's ball potted without touching another), 3 points (a ball off the table), pins knocked by anything
  but a ball (``pin_down`` with ``by: other``) their value, all five of them down before a ball is touched: *Chapó*
  to the opponent. One foul per shot, the heaviest; the shooter scores nothing and the penalty goes to the opponent.
- Art. 17: a shot whose ``notes`` include ``third_party`` or ``cue_broke`` is not the player's fault: balls and
  pins back, no foul, the same player plays again.
- Layout (Art. 4-6): the verdict's ``pins`` gives where each pin is to stand before the next shot, and ``respot``
  where the Mingo (and any ball put back) goes: a knocked pin back on its spot, a lateral whose spot a ball occupies
  on the opposite auxiliary spot, the King on a free auxiliary spot, never four pins in line (the Mingo goes back to
  its spot), pins displaced by less than a pin's height left standing where they are, pins leaning on a ball
  counted as knocked; the Mingo on its spot, against the top cushion, or on the third spot.
- Games to 30 (``--distance`` changes it), the match of ``games`` games (Art. 19: 8 or 10; DESIGN default 1), the
  opening alternating (Art. 11), and a tied match extended by two games once (Art. 19).

Options and the gaps they settle (see docs/rules-notes-bilhar-chapo.md)
- ``games`` (default 1), ``continue_on_score`` (false), ``centre_line`` (``cross`` | ``no_cross``, default ``cross``),
  ``rematada_centre_line`` (false: the centre-line rule applies to balls in hand played from the cabaña de salida,
  not to the rematada from the Mingo's cabaña), ``lateral_aux`` (``opposite`` | ``same``, default ``opposite``),
  ``king_aux`` (``auto`` | ``top`` | ``bottom`` | ``left`` | ``right``: the spot the player names for the King,
  Art. 5c), ``chapo_before_ball`` (``other`` | ``any``, default ``other``: the five pins down before a ball is
  touched give *Chapó* to the opponent when at least one fell by cue or hand, or when no ball is touched at all;
  ``any`` also when the shooter's ball knocked them all and then touched a ball), ``off_table_per_ball`` (false:
  3 points once however many balls leave the table), ``extension`` (true: Art. 19's two extra games on a tie).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Mapping

from .balls import CHAPO_PINS
from .chapo_layout import (
    CHAPO_POINTS, POCKET_VALUE, PinPlace, in_cabana, is_chapo, layout_four_in_line, line_y, mingo_spot,
    near_cabana_line, normal_layout, pins_value, place_pins, spot_blocked,
)
from .controls import Control
from .errors import LogError
from .events import EventType
from .match import OptionError, option_value, reject_unknown_options
from .shot import Shot
from .tables import Point, TableSpec, distance
from .verdict import Foul, Respot, Verdict, other_side

BALL = {"A": "1", "B": "2"}
OPTIONS = ("games", "continue_on_score", "centre_line", "rematada_centre_line", "lateral_aux", "king_aux",
           "chapo_before_ball", "off_table_per_ball", "extension")
ART16 = "chapo Art. 16"
# Foul codes in the order the verdict prefers among equal penalties.
FOUL_ORDER = ("chapo_to_opponent", "off_table", "pins_by_other", "billa_no_contact", "wrong_ball", "touched",
              "balls_moving", "pins_not_planted", "outside_cabana", "inside_cabana", "centre_line", "push",
              "no_ball_touched")
REPLACE_ALL = {"wrong_ball", "touched"}  # Art. 16: the referee puts the three balls back where they were
# Art. 17: shot notes saying a foul is not the player's (a third person, a cue that broke): the shot is replayed.
NOT_IMPUTABLE = frozenset({"third_party", "cue_broke"})


@dataclass(frozen=True)
class ChapoState:
    game: int = 1
    opener: str = "A"
    turn: str = "A"
    shots_in_game: int = 0
    score_a: int = 0
    score_b: int = 0
    games_a: int = 0
    games_b: int = 0
    game_scores: tuple[tuple[int, int], ...] = ()
    in_hand: frozenset[str] = frozenset({"1", "2"})
    pins: tuple[PinPlace, ...] | None = None  # None: every pin on its spot
    mingo_alt: str | None = None  # the Mingo set on an alternative spot (Art. 6) and not played since
    bih_origin: Point | None = None  # from a ball_in_hand control, for the next shot
    game_over: bool = False  # the last shot ended a game
    match_over: bool = False
    extended: bool = False
    winner: str | None = None
    end_reason: str | None = None
    fouls_a: int = 0
    fouls_b: int = 0
    shots: int = 0

    def score(self, side: str) -> int:
        return self.score_a if side == "A" else self.score_b

    def scores(self) -> dict[str, int]:
        return {"A": self.score_a, "B": self.score_b}

    def games(self) -> dict[str, int]:
        return {"A": self.games_a, "B": self.games_b}

    def add(self, side: str, n: int) -> "ChapoState":
        return replace(self, score_a=self.score_a + n) if side == "A" else replace(self, score_b=self.score_b + n)


@dataclass(frozen=True)
class _Facts:
    ball: str
    struck: str
    strikes: int
    first: str | None  # the first ball the shooter's ball touched
    t_first: float | None
    touched_by: frozenset[str]  # balls that met another ball during the shot
    potted: tuple[str, ...]  # counted as in a pocket (Art. 13.1, 13.2)
    hanging: tuple[str, ...]  # hanging balls that dropped untouched (Art. 13.3, 13.4)
    off: tuple[str, ...]
    pins_ball: tuple[tuple[float, str], ...]
    pins_other: tuple[tuple[float, str], ...]
    touched: tuple[str, ...]


class ChapoReferee:
    def __init__(self, discipline: str = "chapo", table: TableSpec | None = None, distance: int | None = None,
                 options: Mapping[str, str] | None = None) -> None:
        from .tables import preset

        options = dict(options or {})
        reject_unknown_options(options, OPTIONS, discipline)
        self.discipline = discipline
        self.table = table if table is not None else preset("chapo")
        missing = [s for s in CHAPO_PINS + ("aux_top", "aux_bottom", "aux_left", "aux_right", "mingo",
                                            "mingo_cushion", "mingo_third") if s not in self.table.spots]
        if missing:
            raise OptionError(f"table {self.table.name!r} has no Chapó spot {missing[0]!r} (use --table chapo)")
        self.distance = CHAPO_POINTS if distance is None else int(distance)
        self.games = option_value(options, "games", 1, int)
        if self.games < 1:
            raise OptionError(f"--option games={self.games}: must be 1 or more")
        self.continue_on_score = option_value(options, "continue_on_score", False, bool)
        self.centre_line = option_value(options, "centre_line", "cross", str, ("cross", "no_cross"))
        self.rematada_centre_line = option_value(options, "rematada_centre_line", False, bool)
        self.lateral_aux = option_value(options, "lateral_aux", "opposite", str, ("opposite", "same"))
        self.king_aux = option_value(options, "king_aux", "auto", str, ("auto", "top", "bottom", "left", "right"))
        self.chapo_before_ball = option_value(options, "chapo_before_ball", "other", str, ("other", "any"))
        self.off_table_per_ball = option_value(options, "off_table_per_ball", False, bool)
        self.extension = option_value(options, "extension", True, bool)

    # --- the Referee protocol -------------------------------------------------------------------------------------

    def opening(self) -> ChapoState:
        return ChapoState()

    def next_shooter(self, state: ChapoState) -> str:
        return state.turn


    def cue_ball(self, state: Any) -> str:
        """The ball the side to play strikes: each side plays its own ball (1 for A, 2 for B)."""
        return BALL[self.next_shooter(state)]
    def judge(self, state: ChapoState, shot: Shot, index: int) -> tuple[Verdict, ChapoState]:
        return self._judge(state, shot, index, None)

    def amend(self, before: ChapoState, shot: Shot, verdict: Verdict, control: Control
              ) -> tuple[Verdict, ChapoState]:
        return self._judge(before, shot, verdict.shot, dict(control.fields))

    def apply_control(self, state: ChapoState, control: Control, record: str) -> ChapoState:
        kind = control.kind
        if state.match_over and kind != "first_player":
            raise LogError(record, "control", f"{kind}: the match is over")
        if kind == "ball_in_hand":
            s = self._new_game(state) if state.game_over else state
            ball = BALL[s.turn]
            if control.get("ball") not in (None, ball):
                raise LogError(record, "ball", f"ball_in_hand: {s.turn} plays ball {ball}, not "
                                               f"{control.get('ball')!r}")
            if ball not in s.in_hand:
                raise LogError(record, "control", f"ball_in_hand: ball {ball} is on the table, not in hand "
                                                  f"(chapo Art. 12)")
            return replace(state, bih_origin=control.get("at"))
        if kind == "concede":
            loser = control.get("side", state.turn)
            return replace(state, match_over=True, game_over=True, winner=other_side(loser), end_reason="concede")
        if kind == "first_player":
            if state.shots == 0 and control.get("side") == "A":
                return state  # side A opens the first game by definition; the opening then alternates (Art. 11)
            raise LogError(record, "side", "first_player: side A opens the first game and the opening alternates "
                                           "(chapo Art. 11)")
        raise LogError(record, "control", f"{kind}: not a control of chapo")

    def summary(self, state: ChapoState) -> dict[str, Any]:
        return {
            "score": state.scores(),
            "games": state.games(),
            "game": state.game,
            "game_scores": [{"A": a, "B": b} for a, b in state.game_scores],
            "games_to_play": self.games + (2 if state.extended else 0),
            "extended": state.extended,
            "fouls": {"A": state.fouls_a, "B": state.fouls_b},
            "shots": state.shots,
            "game_over": state.game_over,
            "match_over": state.match_over,
            "winner": state.winner,
            "reason": state.end_reason,
        }

    # --- helpers --------------------------------------------------------------------------------------------------

    def _new_game(self, s: ChapoState) -> ChapoState:
        game = s.game + 1
        opener = "A" if game % 2 == 1 else "B"  # Art. 11: the openings alternate
        return replace(s, game=game, opener=opener, turn=opener, shots_in_game=0, score_a=0, score_b=0,
                       in_hand=frozenset({"1", "2"}), pins=None, mingo_alt=None, game_over=False)

    def _layout(self, s: ChapoState) -> tuple[PinPlace, ...]:
        return s.pins if s.pins is not None else normal_layout(self.table)

    def _facts(self, shot: Shot, ball: str) -> _Facts:
        ev = shot.events
        strikes = [e for e in ev if e.type is EventType.STRIKE]
        # The struck ball: the first strike event, else the shot's cue_ball (a log may name the ball actually played).
        struck = strikes[0].ball if strikes else shot.cue_ball
        first = t_first = None
        met: set[str] = set()
        met_before: dict[str, float] = {}
        for e in ev:
            if e.type is EventType.BALL_BALL and e.balls is not None:
                met |= set(e.balls)
                for b in e.balls:
                    met_before.setdefault(b, e.t)
                if first is None and ball in e.balls:
                    first, t_first = e.other(ball), e.t
            if e.type is EventType.TOUCHED and e.ball is not None:
                met_before.setdefault(e.ball, e.t)
        potted: list[str] = []
        hanging: list[str] = []
        seen: set[str] = set()
        for e in ev:
            if e.type is not EventType.POCKET or e.ball in seen:
                continue
            seen.add(e.ball)
            b = e.ball
            moved = b == struck or (b in met_before and met_before[b] <= e.t)
            if not moved:
                hanging.append(b)  # Art. 13.3-13.4: it was hanging on the lip and dropped untouched
                continue
            if b in shot.end:
                # Art. 13.1-13.2: back out of the pocket, not potted; resting on the other ball in the pocket, potted.
                pocket = self.table.pocket(e.pocket)
                if distance(shot.end[b], pocket.drop) > pocket.mouth / 2:
                    continue
            potted.append(b)
        off = tuple(e.ball for e in ev if e.type is EventType.OFF_TABLE and e.ball not in seen)
        off = tuple(dict.fromkeys(off))
        pins_ball = tuple((e.t, e.pin) for e in ev if e.type is EventType.PIN_DOWN and e.by != "other")
        pins_other = tuple((e.t, e.pin) for e in ev if e.type is EventType.PIN_DOWN and e.by == "other")
        touched = tuple(dict.fromkeys(e.ball for e in ev if e.type is EventType.TOUCHED))
        return _Facts(ball=ball, struck=struck, strikes=sum(1 for e in strikes if e.ball == struck), first=first,
                      t_first=t_first, touched_by=frozenset(met), potted=tuple(potted), hanging=tuple(hanging),
                      off=off, pins_ball=pins_ball, pins_other=pins_other, touched=touched)

    def _cabana_for(self, s: ChapoState, shot: Shot, ball: str) -> tuple[str, bool]:
        """Where a ball in hand is played from, and whether this is the rematada (Art. 11, 12)."""
        targets = [p for b, p in shot.start.items() if b != ball]
        rematada = s.shots_in_game == 1 and s.turn != s.opener
        first, second = ("mingo", "salida") if rematada else ("salida", "mingo")
        outside = [p for p in targets if not in_cabana(self.table, first, p)]
        return (first if outside or not targets else second), rematada

    def _crossed(self, shot: Shot, ball: str) -> bool:
        """Whether the ball in hand passed the centre line, from its track, end, cushions, pockets and contacts."""
        c = line_y(self.table, "centre_line_y") + self.table.chalk_half_width
        ys = [y for _, _, y in shot.tracks.get(ball, ())]
        if ball in shot.end:
            ys.append(shot.end[ball][1])
        if any(y > c for y in ys):
            return True
        for e in shot.events:
            if e.ball == ball and e.type is EventType.CUSHION and e.cushion == "top":
                return True
            if e.ball == ball and e.type is EventType.POCKET and e.pocket in ("top_left", "top_right"):
                return True
            if e.type is EventType.BALL_BALL and e.balls is not None and ball in e.balls:
                o = e.other(ball)
                if o in shot.start and shot.start[o][1] > c + self.table.ball_diameter:
                    return True
        return False

    def _aimed_at_hanging(self, shot: Shot, ball: str, hanging: tuple[str, ...]) -> bool:
        """Art. 13.4 against 13.3 when the shooter's ball touched nothing: was it played at the hanging ball? From
        the track's first heading, the ball it pointed at most nearly; with no track, yes."""
        track = shot.tracks.get(ball, ())
        p0 = shot.start.get(ball, track[0][1:] if track else None)
        if p0 is None:
            return True
        heading = next(((x - p0[0], y - p0[1]) for _, x, y in track if distance((x, y), p0) >= 5.0), None)
        if heading is None:
            return True
        targets = {b: p for b, p in shot.start.items() if b != ball}

        def angle(p: Point) -> float:
            v = (p[0] - p0[0], p[1] - p0[1])
            return abs(math.atan2(heading[0] * v[1] - heading[1] * v[0], heading[0] * v[0] + heading[1] * v[1]))

        if not targets:
            return True
        aimed = min(targets, key=lambda b: angle(targets[b]))
        return aimed in hanging

    def _push(self, shot: Shot, f: _Facts) -> bool:
        """Art. 16 *retacar*: the cue on the ball twice; a ball frozen to a cushion played into it; a ball frozen to
        another played straight into that one (Art. 15 allows the cushion first or a massé that leaves it)."""
        if f.strikes > 1:
            return True
        ball = f.ball
        if ball not in shot.start:
            return False
        p = shot.start[ball]
        r = self.table.ball_radius
        tol = 1.0 + shot.sigma(ball)
        frozen = {c for c, d in (("left", p[0]), ("right", self.table.width - p[0]), ("bottom", p[1]),
                                 ("top", self.table.length - p[1])) if d <= r + tol}
        own = [e for e in shot.events if e.type in (EventType.CUSHION, EventType.BALL_BALL) and e.involves(ball)]
        if not own:
            return False
        e0 = own[0]
        if e0.type is EventType.CUSHION and e0.cushion in frozen:
            return True
        if e0.type is EventType.BALL_BALL:
            o = e0.other(ball)
            if o in shot.start and distance(shot.start[o], p) <= self.table.ball_diameter + tol + shot.sigma(o):
                return True
        return False

    # --- judging --------------------------------------------------------------------------------------------------

    def _judge(self, state: ChapoState, shot: Shot, index: int, forced: dict | None
               ) -> tuple[Verdict, ChapoState]:
        label = f"shot {index}"
        if state.match_over:
            raise LogError(label, None, f"the match is over ({state.end_reason}, winner {state.winner})")
        s = self._new_game(state) if state.game_over else state
        shooter = s.turn
        opp = other_side(shooter)
        ball = BALL[shooter]
        t = self.table
        f = self._facts(shot, ball)
        announce: list[str] = []
        fouls: list[Foul] = []
        start_layout = self._layout(s)

        def foul(code: str, article: str, penalty: int) -> None:
            fouls.append(Foul(code, article, penalty, opp))

        # --- before the stroke: balls still, pins planted (Art. 16) -------------------------------------------------
        if shot.moving_at_strike:
            foul("balls_moving", ART16, 1)
        if shot.pins_start:
            for q in start_layout:
                if q.at is not None and (q.pin not in shot.pins_start
                                         or distance(shot.pins_start[q.pin], q.at) > t.pin_base_diameter):
                    foul("pins_not_planted", ART16, 1)
                    break

        # --- ball in hand (Art. 8, 11, 12, 14, 16) ---------------------------------------------------------------
        bih = ball in s.in_hand
        cabana = None
        if bih:
            cabana, rematada = self._cabana_for(s, shot, ball)
            origin = shot.ball_in_hand_origin or s.bih_origin or shot.start.get(ball)
            if origin is None:
                raise LogError(label, "start", f"ball {ball} is in hand: its position (start or "
                                               f"ball_in_hand_origin) is needed")
            if not in_cabana(t, cabana, origin, shot.sigma(ball)):
                foul("outside_cabana", ART16, 1)
            if f.first is not None and f.first in shot.start and in_cabana(t, cabana, shot.start[f.first],
                                                                           shot.sigma(f.first)):
                foul("inside_cabana", "chapo Art. 12", 1)
            if cabana == "salida" or (rematada and self.rematada_centre_line):
                crossed = self._crossed(shot, ball)
                if crossed != (self.centre_line == "cross"):
                    foul("centre_line", ART16, 1)

        # --- the stroke ------------------------------------------------------------------------------------------
        if f.struck != ball:
            foul("wrong_ball", ART16, 1)
        if [b for b in f.touched if not (bih and b == ball)]:  # Art. 16: "excepto con Bola en Mano"
            foul("touched", ART16, 1)
        if f.first is None and f.struck == ball:
            if ball in f.potted:
                foul("billa_no_contact", ART16, 2)
            else:
                foul("no_ball_touched", ART16, 1)
        if self._push(shot, f):
            foul("push", ART16, 1)
        if f.off:
            foul("off_table", ART16, 3 * (len(f.off) if self.off_table_per_ball else 1))

        # --- pins (Art. 5e, 5g, 7, 16) -----------------------------------------------------------------------------
        t_first = f.t_first if f.t_first is not None else float("inf")
        down_other = {p for _, p in f.pins_other}
        down_ball = {p for _, p in f.pins_ball} - down_other
        standing_at_start = {q.pin: q for q in start_layout if q.at is not None}
        displaced = []
        for pin, q in standing_at_start.items():
            if pin in down_ball or pin in down_other:
                continue
            at = shot.pins_end.get(pin, shot.pins_start.get(pin, q.at))
            if distance(at, t.spots[q.home]) >= t.pin_height:
                displaced.append(pin)  # Art. 5e: moved a pin's length or more: knocked
        leaning = []
        for pin, q in standing_at_start.items():
            if pin in down_ball or pin in down_other or pin in displaced or pin not in shot.pins_end:
                continue
            if distance(shot.pins_end[pin], t.spots[q.home]) < 1.0:
                continue  # upright on its spot: a ball resting against it does not hold it up
            reach = t.ball_radius + t.pin_base_diameter / 2 + 2.0
            if any(distance(shot.pins_end[pin], p) <= reach for p in shot.end.values()):
                leaning.append(pin)  # Art. 5g: leaning on a ball: knocked, for the player who put it there
        if displaced:
            announce.append(f"{', '.join(displaced)} displaced a pin's length: knocked (chapo Art. 5e)")
        if leaning:
            announce.append(f"{', '.join(leaning)} leaning on a ball: knocked (chapo Art. 5g)")
        by_ball = down_ball | set(displaced) | set(leaning)
        before_ball = {p for tt, p in f.pins_ball + f.pins_other if tt < t_first}
        if is_chapo(down_other) or (is_chapo(before_ball) and (
                down_other & before_ball or f.t_first is None or self.chapo_before_ball == "any")):
            foul("chapo_to_opponent", ART16, CHAPO_POINTS)
        if down_other and not any(x.code == "chapo_to_opponent" for x in fouls):
            foul("pins_by_other", ART16, pins_value(down_other))
        replace_all = any(x.code in REPLACE_ALL for x in fouls) or bool(
            down_other and any(tt < t_first for tt, _ in f.pins_other))

        # --- Art. 13.4: the hanging ball dropped while it was played at: the shot is replayed ----------------------
        if (f.hanging and f.first is None and forced is None and all(x.code == "no_ball_touched" for x in fouls)
                and self._aimed_at_hanging(shot, ball, f.hanging)):
            announce.append(f"{', '.join(f.hanging)} dropped from the lip as it was played at: replay "
                            f"(chapo Art. 13.4)")
            return self._replay(s, shot, index, start_layout, announce, "replay")
        not_imputable = NOT_IMPUTABLE & set(shot.notes)
        if not_imputable and forced is None:
            announce.append(f"{', '.join(sorted(not_imputable))}: not the player's fault, balls back, replay "
                            f"(chapo Art. 17)")
            return self._replay(s, shot, index, start_layout, announce, "not_imputable")
        if f.hanging:
            announce.append(f"{', '.join(f.hanging)} dropped from the lip while the other ball was played: put "
                            f"back, not counted (chapo Art. 13.3)")

        # --- the override control -----------------------------------------------------------------------------------
        if forced is not None and "foul" in forced:
            fd = forced["foul"]
            if fd is None:
                fouls = []
                replace_all = False
            else:
                fouls = [Foul(str(fd["code"]), str(fd.get("article", "override")), int(fd.get("penalty", 1) or 0),
                              fd.get("to", opp) or opp)]

        fouls.sort(key=lambda x: (-x.penalty, FOUL_ORDER.index(x.code) if x.code in FOUL_ORDER else 99))
        the_foul = fouls[0] if fouls else None
        points = {"A": 0, "B": 0}
        knocked: list[str] = []
        pocketed_counted: list[str] = []
        chapo = False
        if the_foul is None:
            knocked = [p for p in CHAPO_PINS if p in by_ball]
            chapo = is_chapo(knocked)
            pocketed_counted = [b for b in f.potted]
            points[shooter] = pins_value(knocked) + sum(POCKET_VALUE[b] for b in pocketed_counted)
            if chapo:
                announce.append("Chapó! (chapo Art. 7)")
            elif points[shooter]:
                announce.append(f"{points[shooter]} points")
        else:
            points[the_foul.to or opp] = the_foul.penalty
            announce.append(f"foul: {the_foul.code}, {the_foul.penalty} to {the_foul.to} ({the_foul.article})")
        if forced is not None and forced.get("points") is not None:
            points.update(forced["points"])
        s = s.add("A", points["A"]).add("B", points["B"])
        if the_foul is not None:
            s = replace(s, fouls_a=s.fouls_a + (shooter == "A"), fouls_b=s.fouls_b + (shooter == "B"))

        # --- the balls for the next shot -------------------------------------------------------------------------
        positions: dict[str, Point] = {b: p for b, p in shot.end.items() if b not in f.potted}
        in_hand = set(s.in_hand) - {ball}  # a ball in hand is on the table once played
        if replace_all:
            positions = dict(shot.start)
            in_hand = set(s.in_hand)
            if bih:
                positions.pop(ball, None)
            announce.append("balls put back where they were (chapo Art. 16)")
        elif any(x.code == "inside_cabana" for x in fouls) and the_foul is not None:
            for b, p in shot.start.items():
                if b != ball:
                    positions[b] = p
        for b in f.hanging:
            if b in shot.start:
                positions[b] = shot.start[b]
        if not replace_all:
            for b in ("1", "2"):
                if b in f.potted or b in f.off:
                    positions.pop(b, None)
                    in_hand.add(b)
        mingo_alt = s.mingo_alt
        mingo_played = "mingo" in f.touched_by or "mingo" in f.potted or "mingo" in f.off or "mingo" in f.touched
        if mingo_played:
            mingo_alt = None
        if "mingo" not in positions:
            spot = mingo_spot(t, [p for b, p in positions.items() if b != "mingo"])
            positions["mingo"] = t.spots[spot]
            mingo_alt = None if spot == "mingo" else spot
            if spot != "mingo":
                announce.append(f"mingo on {spot}: its spot is taken (chapo Art. 6)")
        elif mingo_alt is not None and not mingo_played:
            if all(distance(t.spots["mingo"], p) >= t.ball_diameter for b, p in positions.items() if b != "mingo"):
                positions["mingo"] = t.spots["mingo"]
                mingo_alt = None
                announce.append("mingo back on its spot (chapo Art. 6)")

        # --- the pins for the next shot (Art. 4-5) ---------------------------------------------------------------
        if replace_all:
            layout, notes = start_layout, []
            knocked_now: set[str] = set()
        else:
            knocked_now = by_ball | down_other
            standing: dict[str, tuple[str, Point]] = {}
            for pin, q in standing_at_start.items():
                if pin in knocked_now:
                    continue
                standing[pin] = (q.home, shot.pins_end.get(pin, shot.pins_start.get(pin, q.at)))
            to_set = [p for p in CHAPO_PINS if p not in standing]
            layout, notes = self._place(standing, to_set, positions)
            if layout_four_in_line(t, layout) and spot_blocked_by(t, positions.get("mingo")):
                # Art. 5d: never four pins in line: the Mingo goes back to its spot.
                spot = mingo_spot(t, [p for b, p in positions.items() if b != "mingo"])
                positions["mingo"] = t.spots[spot]
                mingo_alt = None if spot == "mingo" else spot
                layout, notes = self._place(standing, to_set, positions)
                notes.append("four pins in line: the mingo goes back to its spot (chapo Art. 5d)")
        announce += notes

        respot = tuple(Respot(b, p) for b, p in positions.items() if shot.end.get(b) != p)
        s = replace(s, in_hand=frozenset(in_hand), pins=layout, mingo_alt=mingo_alt, bih_origin=None,
                    shots=s.shots + 1, shots_in_game=s.shots_in_game + 1)

        # --- the end of the game and of the match (Art. 7, 19) -----------------------------------------------------
        game_over = False
        reason = None if the_foul is None else the_foul.code
        if chapo or (the_foul is not None and the_foul.code == "chapo_to_opponent"):
            winner = shooter if chapo else opp
            game_over = True
            reason = "chapo" if chapo else reason
        elif max(s.score_a, s.score_b) >= self.distance:
            winner = "A" if s.score_a >= self.distance else "B"
            game_over = True
            reason = reason or "distance"
        if game_over:
            s = self._end_game(s, winner, announce)
            turn = "passes"
        else:
            keeps = self.continue_on_score and the_foul is None and points[shooter] > 0
            if forced is not None and forced.get("turn") is not None:
                keeps = forced["turn"] == "keeps"
            turn = "keeps" if keeps else "passes"
            s = replace(s, turn=shooter if keeps else opp)
            if reason is None and points[shooter] == 0:
                reason = "no_score"
        if forced is not None and forced.get("reason") is not None:
            reason = forced["reason"]
        if s.game_over:
            # The next game opens with both balls in hand and the Mingo on its spot (Art. 11).
            respot = () if shot.end.get("mingo") == t.spots["mingo"] else (Respot("mingo", t.spots["mingo"]),)
        else:
            nxt = s.turn
            if BALL[nxt] in s.in_hand:
                which = "mingo" if s.shots_in_game == 1 and nxt != s.opener else "salida"
                for b, p in positions.items():
                    if b != BALL[nxt] and near_cabana_line(t, which, p):
                        call = "dentro" if in_cabana(t, which, p, shot.sigma(b)) else "libre"
                        announce.append(f"{b}: {call} (chapo Art. 14)")
        extra = self._extra(s, layout, knocked if the_foul is None else [], sorted(knocked_now), fouls, s, cabana)
        extra["potted"] = list(f.potted)
        extra["mingo"] = _mingo_field(t, t.spots["mingo"] if s.game_over else positions["mingo"])
        verdict = Verdict(shot=index, shooter=shooter, points=points, foul=the_foul, turn=turn,
                          score=s.scores(), respot=respot,
                          announce=tuple(announce), game_over=s.game_over, reason=reason, extra=extra)
        return verdict, s

    def _replay(self, s: ChapoState, shot: Shot, index: int, layout, announce: list[str], reason: str
                ) -> tuple[Verdict, ChapoState]:
        """The shot does not count: balls and pins back where they were, the same player plays again."""
        respot = tuple(Respot(b, p) for b, p in shot.start.items() if shot.end.get(b) != p)
        extra = self._extra(s, layout, [], [], [], s, None)
        extra.update({"replay": True, "potted": [], "mingo": _mingo_field(self.table, shot.start.get("mingo"))})
        verdict = Verdict(shot=index, shooter=s.turn, points={"A": 0, "B": 0}, foul=None, turn="keeps",
                          score=s.scores(), respot=respot, announce=tuple(announce), game_over=False,
                          reason=reason, extra=extra)
        return verdict, replace(s, shots=s.shots + 1, bih_origin=None)

    def _place(self, standing, to_set, positions):
        return place_pins(self.table, standing, to_set, positions.values(), self.lateral_aux, self.king_aux)

    def _end_game(self, s: ChapoState, winner: str, announce: list[str]) -> ChapoState:
        s = replace(s, game_over=True, game_scores=s.game_scores + ((s.score_a, s.score_b),),
                    games_a=s.games_a + (winner == "A"), games_b=s.games_b + (winner == "B"))
        announce.append(f"game {s.game} to {winner} ({s.score_a}-{s.score_b})")
        target = self.games + (2 if s.extended else 0)
        nxt = "A" if (s.game + 1) % 2 == 1 else "B"
        s = replace(s, turn=nxt)
        if s.game >= target:
            if s.games_a == s.games_b and self.extension and not s.extended:
                announce.append("tied match: two more games (chapo Art. 19)")
                return replace(s, extended=True)
            w = "draw" if s.games_a == s.games_b else ("A" if s.games_a > s.games_b else "B")
            announce.append(f"match: {w} ({s.games_a}-{s.games_b})")
            return replace(s, match_over=True, winner=w, end_reason="games")
        return s

    def _extra(self, s: ChapoState, layout, knocked, pins_down, fouls, after: ChapoState, cabana) -> dict[str, Any]:
        nxt = after.turn
        bih = None
        if not after.match_over:
            nb = BALL[nxt]
            if after.game_over or nb in after.in_hand:
                bih = {"side": nxt, "ball": nb}
        return {
            "pins": {q.pin: q.to_dict() for q in (normal_layout(self.table) if after.game_over else layout)},
            "knocked": list(knocked),
            "pins_down": list(pins_down),
            "fouls": [x.code for x in fouls],
            "game": after.game,
            "games": after.games(),
            "ball_in_hand": bih,
            "cabana": cabana,
            "match_over": after.match_over,
            "winner": after.winner,
        }


def spot_blocked_by(table: TableSpec, mingo: Point | None) -> bool:
    """Whether the Mingo stands on one of the five normal pin spots (Art. 5d: then it may be what forces the line)."""
    if mingo is None:
        return False
    return any(spot_blocked(table, table.spots[p], [mingo]) for p in CHAPO_PINS)


def _mingo_field(table: TableSpec, at: Point | None) -> dict[str, Any]:
    """Where the Mingo is to be for the next shot, naming its Art. 6 spot when it is on one."""
    if at is None:
        return {"spot": None, "at": None}
    spot = next((n for n in ("mingo", "mingo_cushion", "mingo_third") if table.spots[n] == at), None)
    return {"spot": spot, "at": [round(at[0], 1), round(at[1], 1)]}
