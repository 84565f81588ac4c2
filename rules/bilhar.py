"""The referee of the Brazilian 15-ball game *bilhar* (rulebook 003, cited ``bilhar Art. N``).

Balls ``cue`` and ``1``..``7`` (the *low* group), ``9``..``15`` (the *high* group), racked without the 8 (Art. 1, 3).

What it rules
- The break (Art. 4): the first pot gives the breaker its group (4.1 high, 4.2 low); a pot from both groups lets the
  breaker choose with a ``choose_group`` control and play on (4.3); the cue ball potted or off the table on the
  break, with or without pots, gives the opponent a new break on a fresh rack (4.4, 4.5). A break without a pot
  leaves the table open (DESIGN.md section 7): the next pot sets the groups the same way.
- Play (Art. 5-8): an own-group ball potted keeps the turn (Art. 5); a ball that leaves the cloth, runs along the
  rail and drops into a pocket (an ``off_table`` event followed by a ``pocket`` event) is potted (Art. 6); the cue
  ball potted or off the table goes back to its mark (the head spot) and the turn passes (Art. 7: a foul with no
  penalty beyond the turn); an object ball off the table goes back on the cue ball's starting point (Art. 8, not a
  foul).
- Penalties (Art. 9, 10): first contact with a ball of the other group, or no ball hit at all: the offender's
  opponent removes the lowest-numbered ball of its own group still on the table. The verdict names it
  (``remove: [id]``); the next shot's ``start`` must show it gone, else that shot's verdict says so
  (``not_removed``) and the penalty stands.
- The end (Art. 11-13): a group all off the table wins for its owner; at the time limit (default 20 minutes, on the
  shots' clock, zero at the first shot's start: a shot under way at the limit is played out and time is called at
  its end; a shot that starts after the limit finds time called before it, and is not counted if that decided the
  game; or by a ``time_up`` control) the side with fewer balls left wins; on a tie play goes on and the first
  shot that leaves the sides with different counts ends the game (sudden death).

Score (DESIGN.md section 7): a side's score is the number of its group's balls off the table (potted by anyone, or
removed as a penalty in its favour); a shot's ``points`` are the change of the score.

Resolved gaps (each an option where a value could differ; see docs/rules-notes-bilhar-chapo.md)
- ``minutes`` (default 20; 0 = no limit): Art. 12's time limit.
- ``clock`` (``shots`` | ``display``, default ``shots``): whether the shots' times call time, or only a ``time_up``
  control (the display's clock is the authority).
- ``off_table_spot`` (``head`` | ``cue_start``, default ``head``): Art. 8's "ponto inicial da bola de jogo" read as
  the cue ball's mark of Art. 7 (the head spot); ``cue_start`` puts it where the cue ball stood at this shot's start.
  An occupied point gives the nearest free point behind it on the long axis.
- ``clear_on_foul`` (``wins`` | ``loses``, default ``wins``): a shooter who clears its own group on a foul shot. The
  text has no exception to Art. 11, so by default the cleared group still wins; when both groups are cleared on one
  shot the shooter wins a fair shot and loses a foul one.
- A no-contact foul while the table is open: nobody has a group, so nothing is removed; the turn passes.
- A simultaneous first contact with an own and an other-group ball is fair (the own ball was hit first).
- The cue striking an object ball (a ``strike`` on a ball other than ``cue``) is the no-contact foul of Art. 10.
- The groups' choice (Art. 4.3) with no ``choose_group`` control before the next shot: the group of the first ball
  the cue ball hits on that shot is the shooter's (announced); if it hits none, the table is open.
- Sudden death (Art. 13, "até o primeiro jogador encaçapar uma bola"): the first shot after which the counts of
  balls left differ ends the game, fewest left winning: an own pot wins, an opponent's ball potted or a penalty
  removal gives the game to the opponent.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from .balls import BILHAR_HIGH, BILHAR_LOW
from .controls import Control
from .errors import LogError
from .events import EventType
from .match import OptionError, option_value, reject_unknown_options
from .shot import Shot
from .tables import Point, TableSpec, distance
from .verdict import Foul, Respot, Verdict, other_side

GROUPS: Mapping[str, tuple[str, ...]] = {"low": BILHAR_LOW, "high": BILHAR_HIGH}
OBJECT_BALLS = BILHAR_LOW + BILHAR_HIGH
SIMULTANEOUS = 1e-6  # contacts this close in time are one contact
OPTIONS = ("minutes", "clock", "off_table_spot", "clear_on_foul")

ART = {
    "4.1": "bilhar Art. 4.1", "4.2": "bilhar Art. 4.2", "4.3": "bilhar Art. 4.3", "4.4": "bilhar Art. 4.4",
    "4.5": "bilhar Art. 4.5", "5": "bilhar Art. 5", "6": "bilhar Art. 6", "7": "bilhar Art. 7",
    "8": "bilhar Art. 8", "9": "bilhar Art. 9", "10": "bilhar Art. 10", "11": "bilhar Art. 11",
    "12": "bilhar Art. 12", "13": "bilhar Art. 13",
}


def other_group(group: str) -> str:
    return "high" if group == "low" else "low"


def group_of(ball: str) -> str | None:
    if ball in BILHAR_LOW:
        return "low"
    if ball in BILHAR_HIGH:
        return "high"
    return None


@dataclass(frozen=True)
class BilharState:
    turn: str = "A"
    phase: str = "break"  # break | open | choice | groups
    breaker: str = "A"
    group_a: str | None = None  # "low" | "high" once set; B has the other
    choice: str | None = None  # the side that chooses its group (Art. 4.3), in phase "choice"
    off: frozenset[str] = frozenset()  # object balls off the table for good (potted or removed)
    pending_remove: tuple[str, ...] = ()  # named by the last verdict, to be gone at the next shot's start
    t0: float | None = None  # the first shot's start: the game clock's zero
    time_up: bool = False
    sudden_death: bool = False
    over: bool = False
    winner: str | None = None
    end_reason: str | None = None
    adjust_a: int = 0  # referee overrides of points
    adjust_b: int = 0
    fouls_a: int = 0
    fouls_b: int = 0
    shots: int = 0

    def group(self, side: str) -> str | None:
        if self.group_a is None:
            return None
        return self.group_a if side == "A" else other_group(self.group_a)

    def score(self, side: str) -> int:
        g = self.group(side)
        n = 0 if g is None else sum(1 for b in GROUPS[g] if b in self.off)
        return n + (self.adjust_a if side == "A" else self.adjust_b)

    def balls_left(self, side: str) -> int:
        g = self.group(side)
        return 7 if g is None else sum(1 for b in GROUPS[g] if b not in self.off)

    def scores(self) -> dict[str, int]:
        return {"A": self.score("A"), "B": self.score("B")}


@dataclass(frozen=True)
class _Facts:
    struck: str | None
    first: frozenset[str]  # the balls of the cue ball's first contact (several when simultaneous)
    potted: tuple[str, ...]  # object balls newly potted, in event order
    off_table: tuple[str, ...]  # object balls off the table and not potted (Art. 8)
    cue_potted: bool
    cue_off: bool
    art6: tuple[str, ...]  # balls that left the cloth and dropped into a pocket (Art. 6)


class BilharReferee:
    def __init__(self, discipline: str = "bilhar", table: TableSpec | None = None, distance: int | None = None,
                 options: Mapping[str, str] | None = None) -> None:
        from .tables import preset

        options = dict(options or {})
        reject_unknown_options(options, OPTIONS, discipline)
        if distance is not None:
            raise OptionError("--distance: bilhar is played to a cleared group or the clock (Art. 11-12), "
                              "not to a distance; use --option minutes=N for the clock")
        self.discipline = discipline
        self.table = table if table is not None else preset("pool_9ft")
        self.minutes = option_value(options, "minutes", 20, int)
        if self.minutes < 0:
            raise OptionError(f"--option minutes={self.minutes}: must be 0 (no limit) or more")
        self.clock = option_value(options, "clock", "shots", str, ("shots", "display"))
        self.off_table_spot = option_value(options, "off_table_spot", "head", str, ("head", "cue_start"))
        self.clear_on_foul = option_value(options, "clear_on_foul", "wins", str, ("wins", "loses"))
        spots = self.table.spots
        self.head: Point = spots.get("head", (self.table.width / 2, self.table.length / 4))

    # --- the Referee protocol -------------------------------------------------------------------------------------

    def opening(self) -> BilharState:
        return BilharState()

    def next_shooter(self, state: BilharState) -> str:
        return state.turn

    def judge(self, state: BilharState, shot: Shot, index: int) -> tuple[Verdict, BilharState]:
        return self._judge(state, shot, index, None)

    def amend(self, before: BilharState, shot: Shot, verdict: Verdict, control: Control
              ) -> tuple[Verdict, BilharState]:
        return self._judge(before, shot, verdict.shot, dict(control.fields))

    def apply_control(self, state: BilharState, control: Control, record: str) -> BilharState:
        kind = control.kind
        if kind == "choose_group":
            side, group = control.get("side"), control.get("group")
            if state.over:
                raise LogError(record, "control", "choose_group: the game is over")
            if state.phase != "choice":
                raise LogError(record, "control", "choose_group: no choice of group is open (bilhar Art. 4.3 "
                                                  "gives it after a break that pots balls of both groups)")
            if side != state.choice:
                raise LogError(record, "side", f"choose_group: the choice is {state.choice}'s (bilhar Art. 4.3)")
            group_a = group if side == "A" else other_group(group)
            return replace(state, phase="groups", group_a=group_a, choice=None)
        if kind == "time_up":
            if state.over:
                raise LogError(record, "control", "time_up: the game is over")
            if state.time_up:
                raise LogError(record, "control", "time_up: time is already up (sudden death, bilhar Art. 13)")
            if self.minutes == 0:
                raise LogError(record, "control", "time_up: this match has no time limit (--option minutes=0)")
            return self._call_time(state)[0]
        if kind == "concede":
            if state.over:
                raise LogError(record, "control", "concede: the game is over")
            loser = control.get("side", state.turn)
            return replace(state, over=True, winner=other_side(loser), end_reason="concede")
        if kind == "first_player":
            if state.shots == 0 and control.get("side") == "A":
                return state  # side A is by definition the breaker (bilhar Art. 2: the draw)
            raise LogError(record, "side", "first_player: side A breaks by definition (bilhar Art. 2) and the "
                                           "rules name every later breaker (Art. 4.4)")
        raise LogError(record, "control", f"{kind}: not a control of bilhar")

    def summary(self, state: BilharState) -> dict[str, Any]:
        return {
            "score": state.scores(),
            "balls_left": {"A": state.balls_left("A"), "B": state.balls_left("B")},
            "groups": {"A": state.group("A"), "B": state.group("B")},
            "fouls": {"A": state.fouls_a, "B": state.fouls_b},
            "shots": state.shots,
            "time_up": state.time_up,
            "sudden_death": state.sudden_death,
            "game_over": state.over,
            "match_over": state.over,
            "winner": state.winner,
            "reason": state.end_reason,
        }

    # --- judging --------------------------------------------------------------------------------------------------

    def _facts(self, state: BilharState, shot: Shot) -> _Facts:
        struck = shot.struck_ball
        first: frozenset[str] = frozenset()
        t_first = None
        for e in shot.events:
            if e.type is EventType.BALL_BALL and e.balls is not None and "cue" in e.balls:
                if t_first is None:
                    t_first = e.t
                if e.t - t_first <= SIMULTANEOUS:
                    first |= {e.other("cue")}
                else:
                    break
        pocketed: list[str] = []
        left: list[str] = []
        for e in shot.events:
            if e.type is EventType.POCKET and e.ball not in pocketed:
                pocketed.append(e.ball)
            elif e.type is EventType.OFF_TABLE and e.ball not in left:
                left.append(e.ball)
        art6 = tuple(b for b in left if b in pocketed and b != "cue")
        potted = tuple(b for b in pocketed if b != "cue" and b not in state.off)
        off = tuple(b for b in left if b not in pocketed and b != "cue" and b not in state.off)
        return _Facts(
            struck=struck, first=first, potted=potted, off_table=off,
            cue_potted="cue" in pocketed, cue_off="cue" in left and "cue" not in pocketed, art6=art6,
        )

    def _judge(self, state: BilharState, shot: Shot, index: int, forced: dict | None
               ) -> tuple[Verdict, BilharState]:
        label = f"shot {index}"
        if state.over:
            raise LogError(label, None, f"the game is over ({state.end_reason}, winner {state.winner})")
        if shot.cue_ball != "cue":
            raise LogError(label, "cue_ball", f"{shot.cue_ball!r}: in bilhar the cue ball is 'cue'")
        shooter = state.turn
        opp = other_side(shooter)
        before = state.scores()
        announce: list[str] = []
        extra: dict[str, Any] = {}

        # The penalty ball named by the last verdict must be gone (bilhar Art. 9-10).
        not_removed = [b for b in state.pending_remove if b in shot.start]
        if not_removed:
            extra["not_removed"] = not_removed
            announce += [f"remove {b}: still on the table (bilhar Art. 9-10)" for b in not_removed]

        s = replace(state, pending_remove=(), shots=state.shots + 1,
                    t0=shot.t_start if state.t0 is None else state.t0)
        if self._clock_runs(s) and shot.t_start - s.t0 >= 60 * self.minutes:
            # Time ran out between the last shot and this one (Art. 12): decided there, or sudden death (Art. 13).
            s, line = self._call_time(s)
            announce.append(line)
            if s.over:
                announce.append("this shot started after the time limit: not counted (bilhar Art. 12)")
                s = replace(s, turn=opp)
                extra.update({"remove": [], "fouls": [], "potted": [], "after_time": True,
                              "groups": {"A": s.group("A"), "B": s.group("B")},
                              "balls_left": {"A": s.balls_left("A"), "B": s.balls_left("B")},
                              "choice": s.choice, "sudden_death": False, "winner": s.winner})
                return Verdict(shot=index, shooter=shooter, points={"A": 0, "B": 0}, foul=None, turn="passes",
                               score=s.scores(), announce=tuple(announce), game_over=True, reason="time",
                               extra=extra), s
        f = self._facts(s, shot)
        if f.art6:
            announce.append(f"{', '.join(f.art6)}: over the rail into the pocket, potted (bilhar Art. 6)")

        # Art. 4.3 without a choose_group control: the first ball hit is the choice.
        if s.phase == "choice":
            chosen = {group_of(b) for b in f.first} - {None}
            if len(chosen) == 1:
                g = chosen.pop()
                s = replace(s, phase="groups", group_a=g if shooter == "A" else other_group(g), choice=None)
                announce.append(f"{shooter} plays the {g} group (first ball hit, bilhar Art. 4.3)")
            else:
                s = replace(s, phase="open", choice=None)
                announce.append("no group chosen: the table is open (bilhar Art. 4.3)")

        fouls: list[Foul] = []
        removal = False
        respot: list[Respot] = []
        turn = "passes"
        reason: str | None = None
        was_break = s.phase == "break"
        rebreak = False

        if was_break and (f.cue_potted or f.cue_off):
            # Art. 4.4 / 4.5: a new break, by the opponent, on a fresh rack.
            art = ART["4.5"] if f.potted else ART["4.4"]
            fouls.append(Foul("break_scratch" if f.cue_potted else "break_cue_off_table", art, 0, opp))
            rebreak = True
            reason = "new_break"
            announce.append(f"new break by {opp} (re-rack)")
        else:
            struck_other = f.struck is not None and f.struck != "cue"
            own = s.group(shooter)
            if struck_other or not f.first:
                fouls.append(Foul("no_contact", ART["10"], 1 if own is not None else 0, opp))
                removal = own is not None
            elif own is not None and not any(group_of(b) == own for b in f.first):
                fouls.append(Foul("wrong_ball", ART["9"], 1, opp))
                removal = True
            if f.cue_potted:
                fouls.append(Foul("cue_ball_potted", ART["7"], 0, opp))
            elif f.cue_off:
                fouls.append(Foul("cue_ball_off_table", ART["7"], 0, opp))
            if f.cue_potted or f.cue_off:
                respot.append(Respot("cue", self._free_point(self.head, shot, respot)))

        if not rebreak:
            s = replace(s, off=s.off | frozenset(f.potted))
            # The first pot sets the groups (Art. 4.1-4.3; DESIGN.md section 7 for the open table).
            if s.phase in ("break", "open"):
                pots = {group_of(b) for b in f.potted}
                if len(pots) == 2:
                    s = replace(s, phase="choice", choice=shooter)
                    announce.append(f"{shooter} chooses the group (bilhar Art. 4.3)")
                elif len(pots) == 1:
                    g = pots.pop()
                    s = replace(s, phase="groups", group_a=g if shooter == "A" else other_group(g))
                    announce.append(f"{shooter}: {g} group ({ART['4.1' if g == 'high' else '4.2']})")
                else:
                    s = replace(s, phase="open")
            for b in f.off_table:
                at = self.head if self.off_table_spot == "head" else shot.start.get("cue", self.head)
                respot.append(Respot(b, self._free_point(at, shot, respot)))
                announce.append(f"{b} off the table: back on the cue ball's spot (bilhar Art. 8)")

        # The override control replaces the foul (and with it the penalty), the turn, the points, the reason.
        if forced is not None and "foul" in forced:
            fd = forced["foul"]
            if fd is None:
                fouls, removal = [], False
            else:
                pen = int(fd.get("penalty", 0) or 0)
                fouls = [Foul(str(fd["code"]), str(fd.get("article", "override")), pen, fd.get("to", opp))]
                removal = pen >= 1 and s.group(opp) is not None

        remove: list[str] = []
        if removal:
            og = s.group(opp)
            left = [b for b in GROUPS[og] if b not in s.off] if og else []
            if left:
                remove = [min(left, key=int)]
                s = replace(s, off=s.off | {remove[0]}, pending_remove=(remove[0],))
                announce.append(f"{opp} removes {remove[0]} ({fouls[0].article})")
            else:
                announce.append(f"{opp}'s group is already cleared: no ball to remove ({fouls[0].article})")

        foul = fouls[0] if fouls else None
        if foul is not None:
            s = replace(s, fouls_a=s.fouls_a + (shooter == "A"), fouls_b=s.fouls_b + (shooter == "B"))
        own = s.group(shooter)
        own_pots = [b for b in f.potted if own is not None and group_of(b) == own]
        if rebreak:
            s = replace(s, phase="break", breaker=opp, off=frozenset(), group_a=None, choice=None)
        elif foul is None and (own_pots or (s.phase == "choice" and f.potted)):
            turn, reason = "keeps", None
        elif foul is None:
            reason = "no_pot" if not f.potted else "no_own_pot"
        else:
            reason = foul.code
        if forced is not None and forced.get("turn") is not None:
            turn = forced["turn"]
        s = self._end_checks(s, shooter, foul is not None, shot, announce)
        if s.over:
            turn = "passes"
        s = replace(s, turn=shooter if turn == "keeps" else opp)

        points = {side: s.score(side) - before[side] for side in ("A", "B")}
        if forced is not None and forced.get("points") is not None:
            for side, n in forced["points"].items():
                delta = n - points[side]
                s = replace(s, adjust_a=s.adjust_a + delta) if side == "A" else replace(s, adjust_b=s.adjust_b + delta)
                points[side] = n
        if forced is not None and forced.get("reason") is not None:
            reason = forced["reason"]
        if s.over:
            reason = s.end_reason if foul is None else reason
        extra.update({
            "remove": remove,
            "fouls": [x.code for x in fouls],
            "potted": list(f.potted),
            "groups": {"A": s.group("A"), "B": s.group("B")},
            "balls_left": {"A": s.balls_left("A"), "B": s.balls_left("B")},
            "choice": s.choice,
            "sudden_death": s.sudden_death,
            "winner": s.winner,
        })
        if self.minutes and s.t0 is not None and not s.time_up:
            extra["time_left"] = round(max(0.0, s.t0 + 60 * self.minutes - shot.t_end), 3)
        verdict = Verdict(
            shot=index, shooter=shooter, points=points, foul=foul, turn=turn, score=s.scores(),
            respot=tuple(respot), announce=tuple(announce), game_over=s.over, reason=reason, extra=extra,
        )
        return verdict, s

    def _end_checks(self, s: BilharState, shooter: str, fouled: bool, shot: Shot, announce: list[str]
                    ) -> BilharState:
        opp = other_side(shooter)
        cleared = [side for side in ("A", "B") if s.group(side) is not None and s.balls_left(side) == 0]
        if cleared:
            if len(cleared) == 2:
                winner = opp if fouled else shooter
            elif cleared[0] == shooter and fouled and self.clear_on_foul == "loses":
                winner = opp
            else:
                winner = cleared[0]
            announce.append(f"{winner} wins: group cleared (bilhar Art. 11)")
            return replace(s, over=True, winner=winner, end_reason="cleared")
        if s.sudden_death:
            a, b = s.balls_left("A"), s.balls_left("B")
            if a != b:
                winner = "A" if a < b else "B"
                announce.append(f"{winner} wins the sudden death (bilhar Art. 13)")
                return replace(s, over=True, winner=winner, end_reason="sudden_death")
            return s
        if self._clock_runs(s) and shot.t_end - s.t0 >= 60 * self.minutes:
            s, line = self._call_time(s)
            announce.append(line)
        return s

    def _clock_runs(self, s: BilharState) -> bool:
        return not s.time_up and self.clock == "shots" and self.minutes > 0 and s.t0 is not None

    def _call_time(self, s: BilharState) -> tuple[BilharState, str]:
        a, b = s.balls_left("A"), s.balls_left("B")
        if a == b:
            return replace(s, time_up=True, sudden_death=True), \
                f"time up, {a} balls left each: sudden death, the first pot decides (bilhar Art. 13)"
        winner = "A" if a < b else "B"
        return replace(s, time_up=True, over=True, winner=winner, end_reason="time"), \
            f"time up: {winner} wins with fewer balls left ({min(a, b)} to {max(a, b)}, bilhar Art. 12)"

    def _free_point(self, at: Point, shot: Shot, placed: list[Respot]) -> Point:
        """``at``, or the nearest point behind it on the long axis (then in front) clear of every ball."""
        d = self.table.ball_diameter
        taken = [p for b, p in shot.end.items()] + [r.at for r in placed]
        x = at[0]
        candidates = [at]
        for k in range(1, 60):
            candidates += [(x, at[1] - k * d / 4), (x, at[1] + k * d / 4)]
        r = self.table.ball_radius
        for p in candidates:
            if r <= p[1] <= self.table.length - r and all(distance(p, q) >= d - 1e-6 for q in taken):
                return p
        return at
