"""The carom referee: free game, balkline 47/2, 47/1, 71/2, 71/1, one-cushion and three-cushion.

Citations are to the carom rulebook (``rulebooks/000_...txt``): "carom Art. N" for the rules and "refereeing Art. N"
for the international refereeing rules that follow them.

Readings taken where the text leaves a choice (each an option with this default):
- ``distance``: the federation sets it (Art. 6.3); defaults per game in ``DEFAULT_DISTANCE``.
- ``frozen_mm=1.0``: two resting balls are frozen (Art. 8) when their centres are within a ball diameter plus this
  gap plus the two positions' uncertainties.
- ``start_spot=right``: the starting spot (Art. 5.1.c) the incoming player's ball goes to when all three balls
  return to the starting position; the player chooses it at the table, the verdict must name one.
- The opening shot (Art. 5.2) that takes the white first is a foul (code ``opening``), not a plain miss: the text
  puts it among the conditions of the game, and the UMB calls it a foul.
- A carom's "before" (Art. 28, 29) is the order of the events: the cushion contacts that precede, in the shot's
  event list, the cue ball's first contact with its second object ball. Vision orders events by their sub-frame
  times, so a cushion 2 ms before the second ball counts and one 2 ms after does not.
- A confidence below ``confirm_below=0.8`` marks the verdict ``confirm: true`` (the referee is asked to confirm).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

from .balls import CAROM_BALLS
from .carom_zones import Zone, calls, left_zone, margin_for, zones_for, zones_holding_both
from .controls import Control
from .errors import LogError
from .events import EventType
from .match import OptionError, option_value, reject_unknown_options
from .shot import Shot
from .tables import Point, TableSpec, distance
from .verdict import Foul, Respot, Verdict, other_side

DEFAULT_DISTANCE = {
    "free_game": 300,
    "balkline_47_2": 200,
    "balkline_47_1": 150,
    "balkline_71_2": 200,
    "balkline_71_1": 150,
    "one_cushion": 100,
    "three_cushion": 40,
}
# Side A opens and plays the ball marked with dots (Art. 5.3); each player keeps his ball all game (Art. 6.4).
BALL_OF = {"A": "spot", "B": "white"}
CUSHIONS_NEEDED = {"one_cushion": 1, "three_cushion": 3}
OPTIONS = ("frozen_mm", "start_spot", "confirm_below", "mid_game")


@dataclass(frozen=True)
class CaromState:
    shooter: str = "A"
    score: Mapping[str, int] = field(default_factory=lambda: {"A": 0, "B": 0})
    innings: Mapping[str, int] = field(default_factory=lambda: {"A": 0, "B": 0})
    high_run: Mapping[str, int] = field(default_factory=lambda: {"A": 0, "B": 0})
    fouls: Mapping[str, int] = field(default_factory=lambda: {"A": 0, "B": 0})
    run: int = 0  # points of the current inning
    in_inning: bool = False  # the shooter has already played this inning (the next shot adds no inning)
    opening: bool = True  # the next shot is a game's opening shot (Art. 5.2)
    zone_counts: Mapping[str, int] = field(default_factory=dict)  # consecutive caroms per zone in this run
    frozen: tuple[str, ...] = ()  # balls frozen to the next shooter's ball, announced (Art. 8)
    positions: Mapping[str, Point] = field(default_factory=dict)  # where the balls rest for the next shot
    equalising: bool = False  # the opponent is playing the equalising inning (Art. 11.3)
    game_over: bool = False
    winner: str | None = None
    end_reason: str | None = None


@dataclass(frozen=True)
class Outcome:
    """What a shot earned, before it is applied to the match: the part ``override`` may replace."""

    points: Mapping[str, int]
    foul: Foul | None
    keeps: bool
    reason: str | None
    zone_counts: Mapping[str, int]


class CaromReferee:
    def __init__(self, discipline: str, table: TableSpec, distance: int | None, options: Mapping[str, str]) -> None:
        reject_unknown_options(options, OPTIONS, discipline)
        if table.pockets:
            raise OptionError(f"table {table.name!r} has pockets: carom is played on a carom table")
        self.discipline = discipline
        self.table = table
        self.distance = distance or DEFAULT_DISTANCE[discipline]
        self.frozen_mm = option_value(options, "frozen_mm", 1.0, float)
        self.start_spot = option_value(options, "start_spot", "right", str, ("right", "left"))
        self.confirm_below = option_value(options, "confirm_below", 0.8, float)
        # A match picked up in the middle (a replay of a clip that does not start at the opening): no opening-shot
        # rule, and a `first_player` control may say who is at the table.
        self.mid_game = option_value(options, "mid_game", False, bool)
        self.zones: tuple[Zone, ...] = zones_for(discipline, table)
        self.cushions_needed = CUSHIONS_NEEDED.get(discipline, 0)

    # --- the protocol -------------------------------------------------------------------------------------------

    def opening(self) -> CaromState:
        return CaromState(positions=self.starting_position("A"), opening=not self.mid_game)

    def next_shooter(self, state: CaromState) -> str:
        return state.shooter

    def cue_ball(self, state: CaromState) -> str:
        """The ball the side to play strikes: its own (Art. 5.3, 6.4)."""
        return BALL_OF[state.shooter]

    def judge(self, state: CaromState, shot: Shot, index: int) -> tuple[Verdict, CaromState]:
        record = f"shot {index}"
        if state.game_over:
            raise LogError(record, None, f"the game is over ({state.end_reason})")
        expected_ball = BALL_OF[state.shooter]
        if shot.cue_ball != expected_ball:
            raise LogError(record, "cue_ball", f"{shot.cue_ball!r} but {state.shooter} plays {expected_ball!r}")
        outcome = self.decide(state, shot)
        return self.apply(state, shot, index, outcome)

    def apply_control(self, state: CaromState, control: Control, record: str) -> CaromState:
        if control.kind == "respot_all":
            return self._respot_all(state, record)
        if control.kind == "first_player":
            if state.innings["A"] or state.innings["B"] or not self.mid_game:
                raise LogError(record, "control", "first_player only before the first shot of a match picked up "
                                                  "mid-game (--option mid_game=true); side A opens a game (Art. 5)")
            return replace(state, shooter=control.fields["side"])
        if control.kind == "concede":
            if state.game_over:
                raise LogError(record, "control", "the game is already over")
            side = control.get("side", state.shooter)
            return replace(state, game_over=True, winner=other_side(side), end_reason=f"{side}_conceded")
        raise LogError(record, "control", f"{control.kind!r} is not a control of {self.discipline}")

    def amend(self, before: CaromState, shot: Shot, verdict: Verdict, control: Control
              ) -> tuple[Verdict, CaromState]:
        original = self.decide(before, shot)
        points = {"A": 0, "B": 0, **control.get("points", original.points)}
        foul = original.foul
        if "foul" in control.fields:
            f = control.fields["foul"]
            foul = None if f is None else Foul.from_override(f, penalty=0, to=other_side(before.shooter))
        keeps = original.keeps if "turn" not in control.fields else control.fields["turn"] == "keeps"
        reason = control.get("reason", original.reason)
        amended = Outcome(points, foul, keeps, reason, original.zone_counts if keeps else {})
        return self.apply(before, shot, verdict.shot, amended)

    def summary(self, state: CaromState) -> dict[str, Any]:
        return {
            "discipline": self.discipline,
            "distance": self.distance,
            "score": dict(state.score),
            "innings": dict(state.innings),
            "high_run": dict(state.high_run),
            "average": {s: _average(state.score[s], state.innings[s]) for s in ("A", "B")},
            "fouls": dict(state.fouls),
            "run": state.run,
            "next": {"shooter": state.shooter, "ball": BALL_OF[state.shooter]},
            "equalising_inning": state.equalising,
            "game_over": state.game_over,
            "match_over": state.game_over,
            "winner": state.winner,
            "reason": state.end_reason,
        }

    # --- deciding a shot ----------------------------------------------------------------------------------------

    def decide(self, state: CaromState, shot: Shot) -> Outcome:
        """Points, foul and turn for one shot, from its events and positions alone (Art. 6, 12, 14, 20-23, 28-29)."""
        shooter = state.shooter
        cue = shot.cue_ball
        objects = tuple(b for b in CAROM_BALLS if b != cue)
        nothing = {"A": 0, "B": 0}

        def foul(code: str, article: str) -> Outcome:
            return Outcome(nothing, Foul(code, article, 0, other_side(shooter)), False, code, {})

        struck = shot.struck_ball
        if struck is not None and struck != cue:
            return foul("wrong_ball", "carom Art. 12.2.k")
        if shot.moving_at_strike:
            return foul("moving", "carom Art. 12.2.c")
        if any(e.type is EventType.TOUCHED for e in shot.events):
            return foul("touched", "carom Art. 12.2.d")
        if any(e.type is EventType.OFF_TABLE for e in shot.events):
            return foul("off_table", "carom Art. 12.2.b")

        first_ball, second_index = self._object_contacts(shot, cue)
        if state.opening and first_ball is not None and first_ball != "red":
            return foul("opening", "carom Art. 5.2")
        if second_index is None:
            return Outcome(nothing, None, False, "no_carom", {})
        if self.cushions_needed:
            cushions = sum(1 for e in shot.events[:second_index]
                           if e.type is EventType.CUSHION and e.ball == cue)
            if cushions < self.cushions_needed:
                return Outcome(nothing, None, False, "cushions", {})

        counts = self._zone_counts_after(state, shot, objects)
        if counts is None:
            return foul("zone", self._zone_article())
        return Outcome({shooter: 1, other_side(shooter): 0}, None, True, None, counts)

    @staticmethod
    def _object_contacts(shot: Shot, cue: str) -> tuple[str | None, int | None]:
        """The first object ball the cue ball met, and the event index of its first contact with the second.

        Any contact between the cue ball and an object ball counts, whichever ball was moving (a kiss back onto
        the cue ball completes a carom: Art. 6.2 asks only that the player's ball contacts both)."""
        met: list[str] = []
        for i, e in enumerate(shot.events):
            if e.type is not EventType.BALL_BALL:
                continue
            other = e.other(cue)
            if other is None or other in met:
                continue
            met.append(other)
            if len(met) == 2:
                return met[0], i
        return (met[0] if met else None), None

    def _zone_counts_after(self, state: CaromState, shot: Shot, objects: tuple[str, str]
                           ) -> Mapping[str, int] | None:
        """The run's zone counts after a carom, or None when the carom breaks a zone rule (Art. 14.2, 20, 21)."""
        if not self.zones:
            return {}
        a, b = objects
        if a not in shot.start or b not in shot.start:
            return {}
        margins = {ball: margin_for(self.table, shot.sigma(ball)) for ball in objects}
        counts: dict[str, int] = {}
        for zone in zones_holding_both(self.zones, shot.start[a], shot.start[b], margins[a], margins[b]):
            driven_out = any(left_zone(zone, self._path(shot, ball), margins[ball]) for ball in objects)
            made = state.zone_counts.get(zone.name, 0)
            if driven_out:
                counts[zone.name] = 0  # Art. 20.2: back in, a first carom is allowed again
            elif made >= zone.limit:
                return None
            else:
                counts[zone.name] = made + 1
        return counts

    @staticmethod
    def _path(shot: Shot, ball: str) -> list[Point]:
        """Where an object ball was during the shot: its track if any, and its resting point (absent: it left)."""
        path = [(x, y) for _, x, y in shot.tracks.get(ball, ())]
        if ball in shot.end:
            path.append(shot.end[ball])
        else:
            path.append((-math.inf, -math.inf))  # off the table: out of every zone
        return path

    def _zone_article(self) -> str:
        return {
            "free_game": "carom Art. 14.2",
            "balkline_47_2": "carom Art. 20.1",
            "balkline_47_1": "carom Art. 21.1",
            "balkline_71_2": "carom Art. 23",
            "balkline_71_1": "carom Art. 23",
        }[self.discipline]

    # --- applying a decision to the match -----------------------------------------------------------------------

    def apply(self, state: CaromState, shot: Shot, index: int, outcome: Outcome) -> tuple[Verdict, CaromState]:
        shooter, opponent = state.shooter, other_side(state.shooter)
        innings = dict(state.innings)
        if not state.in_inning:
            innings[shooter] += 1
        score = {s: state.score[s] + outcome.points.get(s, 0) for s in ("A", "B")}
        run = state.run + outcome.points.get(shooter, 0)
        high_run = dict(state.high_run)
        high_run[shooter] = max(high_run[shooter], run)
        fouls = dict(state.fouls)
        if outcome.foul is not None:
            fouls[shooter] += 1
        keeps = outcome.keeps
        announce: list[str] = []
        if outcome.points.get(shooter, 0):
            announce.append(str(run))  # refereeing Art. 3.a: the count
        reason = outcome.reason
        game_over, winner, end_reason, equalising = False, None, None, state.equalising
        respot: list[Respot] = []

        reached = score[shooter] >= self.distance
        if state.equalising:
            # Art. 11.3-11.4: the equalising inning ends the game, a draw if the distance is reached too.
            if reached:
                game_over, winner, end_reason, reason = True, "draw", "draw", "draw"
                keeps = False
            elif not keeps:
                game_over, winner, end_reason = True, opponent, "distance"
        elif reached:
            keeps = False
            if innings[shooter] > innings[opponent]:
                equalising, reason = True, "equalising_inning"
                respot = self._to_start(opponent)
                announce.append("igualar entradas")
            else:
                game_over, winner, end_reason, reason = True, shooter, "distance", "distance"

        next_shooter = shooter if keeps else opponent
        positions = dict(shot.end)
        if not game_over and not respot:
            respot = self._respots(shot, positions, next_shooter)
        for r in respot:
            positions[r.ball] = r.at
        zone_counts = outcome.zone_counts if keeps and not respot else {}
        frozen: tuple[str, ...] = ()
        if not game_over:
            frozen = self._frozen_with(positions, shot, BALL_OF[next_shooter])
            if frozen and self.discipline == "free_game":
                respot = self._to_start(next_shooter)  # Art. 15: frozen balls all go back to the start
                for r in respot:
                    positions[r.ball] = r.at
                zone_counts, frozen = {}, ()
                announce.append("coladas")
            announce += self._zone_calls(positions, shot, zone_counts, next_shooter)
            if frozen:
                announce.append("coladas")  # refereeing Art. 3.c, 4
            announce += self._countdown(score[next_shooter])
        if game_over:
            announce.append("fim da partida")

        new_state = replace(
            state,
            shooter=next_shooter, score=score, innings=innings, high_run=high_run, fouls=fouls,
            run=run if keeps else 0, in_inning=keeps,
            opening=equalising and not state.equalising,  # the equalising inning starts from the start position
            zone_counts=zone_counts, frozen=frozen, positions=positions, equalising=equalising,
            game_over=game_over, winner=winner, end_reason=end_reason,
        )
        extra: dict[str, Any] = {"run": run, "next_shooter": next_shooter}
        if shot.confidence < self.confirm_below:
            extra["confirm"] = True
        verdict = Verdict(
            shot=index, shooter=shooter, points={"A": outcome.points.get("A", 0), "B": outcome.points.get("B", 0)},
            foul=outcome.foul, turn="keeps" if keeps else "passes", score=score, respot=tuple(respot),
            announce=tuple(announce), game_over=game_over, reason=reason, extra=extra,
        )
        return verdict, new_state

    # --- positions: re-spotting, frozen balls, calls ------------------------------------------------------------

    def starting_position(self, player: str) -> dict[str, Point]:
        """Art. 5.1: red on the top spot, the opponent's ball on the bottom spot, the player's on a starting spot."""
        spots = self.table.spots
        return {
            "red": spots["top"],
            BALL_OF[other_side(player)]: spots["bottom"],
            BALL_OF[player]: spots[f"start_{self.start_spot}"],
        }

    def _to_start(self, player: str) -> list[Respot]:
        return [Respot(ball, at) for ball, at in self.starting_position(player).items()]

    def _respots(self, shot: Shot, positions: Mapping[str, Point], incoming: str) -> list[Respot]:
        """Balls that left the table (Art. 16, 25, 31): all three to the start, or in three-cushion only the
        jumped balls on their spots (Art. 31.2-31.4)."""
        gone = [b for b in CAROM_BALLS if b not in positions or
                any(e.type is EventType.OFF_TABLE and e.ball == b for e in shot.events)]
        if not gone:
            return []
        if self.discipline != "three_cushion":
            return self._to_start(incoming)
        return self._three_cushion_spots(gone, {b: p for b, p in positions.items() if b not in gone}, incoming)

    def _three_cushion_spots(self, balls: list[str], resting: Mapping[str, Point], incoming: str) -> list[Respot]:
        """Art. 31.2: red on the top spot, the incoming player's ball on the bottom spot, the other white on the
        centre spot; Art. 31.3: an occupied spot sends the ball to the spot of the ball occupying it."""
        spots = self.table.spots
        home = {"red": spots["top"], BALL_OF[incoming]: spots["bottom"], BALL_OF[other_side(incoming)]: spots["centre"]}
        placed = dict(resting)
        out: list[Respot] = []
        order = ["red", BALL_OF[incoming], BALL_OF[other_side(incoming)]]
        for ball in [b for b in order if b in balls]:
            target = home[ball]
            for _ in range(len(home)):
                occupant = next((b for b, p in placed.items() if distance(p, target) < self.table.ball_diameter), None)
                if occupant is None:
                    break
                target = home[occupant]
            placed[ball] = target
            out.append(Respot(ball, target))
        return out

    def _frozen_with(self, positions: Mapping[str, Point], shot: Shot, ball: str) -> tuple[str, ...]:
        if ball not in positions:
            return ()
        limit = self.table.ball_diameter + self.frozen_mm
        return tuple(
            other for other in CAROM_BALLS
            if other != ball and other in positions
            and distance(positions[ball], positions[other]) <= limit + shot.sigma(ball) + shot.sigma(other)
        )

    def _respot_all(self, state: CaromState, record: str) -> CaromState:
        """Art. 24.a, 30: the player whose ball is frozen may have the balls put back on their spots."""
        if self.discipline == "free_game":
            raise LogError(record, "control", "in the free game frozen balls are re-spotted at once (Art. 15)")
        if not state.frozen:
            raise LogError(record, "control", f"respot_all but {BALL_OF[state.shooter]!r} is not frozen (Art. 8)")
        if self.discipline == "three_cushion":
            balls = [BALL_OF[state.shooter], *state.frozen]  # Art. 30.2.b: only the balls in contact
            resting = {b: p for b, p in state.positions.items() if b not in balls}
            respot = self._three_cushion_spots(balls, resting, state.shooter)
        else:
            respot = self._to_start(state.shooter)  # Art. 24.a, 30.2.a: all three to the start position
        positions = dict(state.positions)
        for r in respot:
            positions[r.ball] = r.at
        return replace(state, positions=positions, frozen=(), zone_counts={})

    def _zone_calls(self, positions: Mapping[str, Point], shot: Shot, counts: Mapping[str, int], player: str
                    ) -> list[str]:
        objects = [b for b in CAROM_BALLS if b != BALL_OF[player]]
        if not self.zones or any(b not in positions for b in objects):
            return []
        a, b = objects
        return calls(self.zones, counts, positions[a], positions[b],
                     margin_for(self.table, shot.sigma(a)), margin_for(self.table, shot.sigma(b)))

    def _countdown(self, score: int) -> list[str]:
        """Refereeing Art. 11: "por 3 / por 2 / por 1" in three-cushion, the 5..1 countdown elsewhere."""
        left = self.distance - score
        if self.discipline == "three_cushion":
            return [f"por {left}"] if 1 <= left <= 3 else []
        return [f"faltam {left}"] if 1 <= left <= 5 else []


def _average(points: int, innings: int) -> float:
    return round(points / innings, 3) if innings else 0.0
