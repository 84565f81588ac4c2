"""The bilhar referee (rules/bilhar.py), article by article of rulebook 003 (cited ``bilhar Art. N``)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from rules.bilhar import BilharReferee, BilharState
from rules.controls import Control
from rules.errors import LogError
from rules.match import Match, OptionError
from rules.registry import referee_for
from rules.shot import Shot
from rules.tables import preset

ROOT = Path(__file__).resolve().parents[1]
TABLE = preset("pool_9ft")
HEAD = TABLE.spots["head"]
LOW = [str(n) for n in range(1, 8)]
HIGH = [str(n) for n in range(9, 16)]
OBJECT = LOW + HIGH


def rack_positions() -> dict[str, tuple[float, float]]:
    pos = {"cue": HEAD}
    for i, b in enumerate(OBJECT):
        pos[b] = (150.0 + 140.0 * (i % 7), 1700.0 + 150.0 * (i // 7))
    return pos


class Game:
    """A physical table in a test: which balls stand where, and the match the shots are fed to."""

    def __init__(self, **options: str) -> None:
        self.ref = BilharReferee(discipline="bilhar", table=TABLE, options=options)
        self.match = Match(self.ref)
        self.pos = rack_positions()
        self.t = 0.0
        self.n = 0

    def shot(self, hit=("1",), pots=(), off=(), cue_pot=False, cue_off=False, art6=(), struck="cue",
             keep=(), t=None, dur=5.0, respect_removal=True) -> dict:
        """One shot: the cue ball hits ``hit`` (simultaneously), then ``pots`` drop, ``off`` leave the table."""
        t0 = self.t if t is None else t
        ev = [{"t": t0 + 0.01, "type": "strike", "ball": struck}]
        for b in hit:
            ev.append({"t": t0 + 0.2, "type": "ball_ball", "balls": ["cue", b]})
        tt = t0 + 1.0
        for b in art6:
            ev.append({"t": tt, "type": "off_table", "ball": b})
            ev.append({"t": tt + 0.1, "type": "pocket", "ball": b, "pocket": "top_left"})
            tt += 0.2
        for b in pots:
            ev.append({"t": tt, "type": "pocket", "ball": b, "pocket": "top_right"})
            tt += 0.1
        for b in off:
            ev.append({"t": tt, "type": "off_table", "ball": b})
            tt += 0.1
        if cue_pot:
            ev.append({"t": tt, "type": "pocket", "ball": "cue", "pocket": "bottom_left"})
        if cue_off:
            ev.append({"t": tt, "type": "off_table", "ball": "cue"})
        start = {b: list(p) for b, p in self.pos.items()}
        gone = set(pots) | set(off) | set(art6) | ({"cue"} if cue_pot or cue_off else set())
        end = {b: list(p) for b, p in self.pos.items() if b not in gone}
        self.n += 1
        self.t = t0 + dur + 1.0
        return {"shooter": None, "cue_ball": "cue", "t_start": t0, "t_end": t0 + dur, "start": start,
                "events": ev, "end": end}

    def feed(self, d: dict):
        d = {k: v for k, v in d.items() if v is not None}
        shot = Shot.from_dict(d, discipline="bilhar", table=TABLE, record=f"line {self.n}")
        v = self.match.feed(shot, f"line {self.n}")
        # The table after the shot: pots gone; respotted balls back; removed balls taken off.
        for b in shot.start:
            if b not in shot.end:
                self.pos.pop(b, None)
        for r in v.respot:
            self.pos[r.ball] = r.at
        for b in v.extra.get("remove", []):
            self.pos.pop(b, None)
        if v.reason == "new_break":
            self.pos = rack_positions()
        return v

    def play(self, **kw):
        return self.feed(self.shot(**kw))

    def control(self, **fields):
        c = Control.from_dict(fields, discipline="bilhar", table=TABLE, record="ctl")
        return self.match.feed(c, "ctl")

    @property
    def state(self) -> BilharState:
        return self.match.state


def to_groups(g: Game, a_group: str = "high") -> None:
    """A breaks and pots one ball of ``a_group`` (bilhar Art. 4.1/4.2), then misses: B to play."""
    ball = "9" if a_group == "high" else "1"
    v = g.play(hit=(ball,), pots=(ball,))
    assert v.turn == "keeps" and v.extra["groups"]["A"] == a_group
    v = g.play(hit=("10" if a_group == "high" else "2",))
    assert v.turn == "passes"


# --- the break (Art. 2-4) ----------------------------------------------------------------------------------------

def test_art_4_1_break_potting_a_high_ball_gives_the_high_group():
    g = Game()
    v = g.play(hit=("1",), pots=("12",))
    assert v.shooter == "A" and v.foul is None and v.turn == "keeps"
    assert v.extra["groups"] == {"A": "high", "B": "low"}
    assert v.score == {"A": 1, "B": 0} and v.points == {"A": 1, "B": 0}
    assert "bilhar Art. 4.1" in " ".join(v.announce)


def test_art_4_2_break_potting_a_low_ball_gives_the_low_group():
    g = Game()
    v = g.play(hit=("1",), pots=("3", "5"))
    assert v.extra["groups"] == {"A": "low", "B": "high"}
    assert v.score == {"A": 2, "B": 0} and v.turn == "keeps"


def test_art_4_3_break_potting_one_of_each_group_lets_the_breaker_choose_and_play_on():
    g = Game()
    v = g.play(hit=("1",), pots=("3", "12"))
    assert v.turn == "keeps" and v.foul is None
    assert v.extra["choice"] == "A" and v.extra["groups"] == {"A": None, "B": None}
    with pytest.raises(LogError, match="A's"):
        g.control(control="choose_group", side="B", group="low")
    g.control(control="choose_group", side="A", group="low")
    assert g.state.group("A") == "low" and g.state.group("B") == "high"
    v = g.play(hit=("1",), pots=("1",))
    assert v.shooter == "A" and v.turn == "keeps"
    # 3 (break) and 1 are A's; 12 counts for B, whose group it is.
    assert v.score == {"A": 2, "B": 1}
    with pytest.raises(LogError, match="Art. 4.3"):
        g.control(control="choose_group", side="A", group="high")


def test_art_4_3_choice_without_a_control_is_the_first_ball_hit():
    g = Game()
    g.play(hit=("1",), pots=("3", "12"))
    v = g.play(hit=("13",), pots=("13",))
    assert v.extra["groups"] == {"A": "high", "B": "low"}
    assert v.foul is None and v.turn == "keeps"


def test_art_4_4_cue_ball_potted_on_the_break_gives_the_opponent_a_new_break():
    g = Game()
    v = g.play(hit=("1",), cue_pot=True)
    assert v.foul.code == "break_scratch" and v.foul.article == "bilhar Art. 4.4" and v.foul.to == "B"
    assert v.turn == "passes" and v.reason == "new_break" and v.score == {"A": 0, "B": 0}
    v = g.play(hit=("1",), pots=("2",))
    assert v.shooter == "B" and v.extra["groups"] == {"A": "high", "B": "low"} and v.turn == "keeps"


def test_art_4_5_pots_and_the_cue_ball_off_the_table_on_the_break_give_a_new_break():
    g = Game()
    v = g.play(hit=("1",), pots=("9", "3"), cue_off=True)
    assert v.foul.code == "break_cue_off_table" and v.foul.article == "bilhar Art. 4.5"
    assert v.score == {"A": 0, "B": 0} and v.extra["groups"] == {"A": None, "B": None}
    assert g.state.phase == "break" and g.state.turn == "B" and not g.state.off


def test_break_without_a_pot_leaves_the_table_open_and_the_first_pot_sets_the_groups():
    g = Game()
    v = g.play(hit=("1",))
    assert v.turn == "passes" and v.foul is None and v.extra["groups"] == {"A": None, "B": None}
    v = g.play(hit=("11",), pots=("11",))  # B, open table: any ball may be hit first
    assert v.shooter == "B" and v.foul is None and v.turn == "keeps"
    assert v.extra["groups"] == {"A": "low", "B": "high"}


def test_art_10_no_contact_on_an_open_table_removes_nothing():
    g = Game()
    g.play(hit=("1",))
    v = g.play(hit=())
    assert v.foul.code == "no_contact" and v.foul.penalty == 0 and v.extra["remove"] == []
    assert v.turn == "passes"


# --- play (Art. 5-8) ---------------------------------------------------------------------------------------------

def test_art_5_own_ball_potted_keeps_the_turn_a_miss_passes_it():
    g = Game()
    to_groups(g, "high")  # A high; B to play, low
    v = g.play(hit=("2",), pots=("2",))
    assert v.shooter == "B" and v.turn == "keeps" and v.points == {"A": 0, "B": 1}
    v = g.play(hit=("4",))
    assert v.turn == "passes" and v.reason == "no_pot" and v.foul is None


def test_art_5_only_an_opponents_ball_potted_passes_the_turn_and_counts_for_the_opponent():
    g = Game()
    to_groups(g, "high")
    v = g.play(hit=("2",), pots=("14",))
    assert v.foul is None and v.turn == "passes" and v.reason == "no_own_pot"
    assert v.points == {"A": 1, "B": 0}


def test_art_6_ball_over_the_rail_and_into_the_pocket_counts():
    g = Game()
    to_groups(g, "high")
    v = g.play(hit=("5",), art6=("5",))
    assert v.extra["potted"] == ["5"] and v.respot == () and v.turn == "keeps"
    assert "bilhar Art. 6" in " ".join(v.announce) and v.points["B"] == 1


def test_art_7_cue_ball_potted_returns_to_its_mark_and_the_turn_passes():
    g = Game()
    to_groups(g, "high")
    v = g.play(hit=("2",), pots=("2",), cue_pot=True)
    assert v.foul.code == "cue_ball_potted" and v.foul.article == "bilhar Art. 7" and v.foul.penalty == 0
    assert v.turn == "passes" and v.extra["remove"] == []
    assert v.points == {"A": 0, "B": 1}  # the pot stands; no penalty beyond the turn
    assert [(r.ball, r.at) for r in v.respot] == [("cue", HEAD)]


def test_art_7_cue_ball_off_the_table_goes_behind_its_mark_when_a_ball_covers_it():
    g = Game()
    to_groups(g, "high")
    g.pos["4"] = HEAD  # an object ball sits on the mark
    v = g.play(hit=("2",), cue_off=True)
    assert v.foul.code == "cue_ball_off_table"
    (r,) = v.respot
    assert r.ball == "cue" and r.at[0] == HEAD[0] and r.at[1] <= HEAD[1] - TABLE.ball_diameter


def test_art_8_object_ball_off_the_table_returns_on_the_cue_balls_spot_and_is_no_foul():
    g = Game()
    to_groups(g, "high")
    g.pos["cue"] = (300.0, 1000.0)
    v = g.play(hit=("2",), off=("6",))
    assert v.foul is None and v.turn == "passes"
    assert [(r.ball, r.at) for r in v.respot] == [("6", HEAD)]
    assert "6" not in g.state.off and v.score == {"A": 1, "B": 0}


def test_art_8_option_cue_start_returns_the_ball_where_the_cue_ball_started():
    g = Game(off_table_spot="cue_start")
    to_groups(g, "high")
    g.pos["cue"] = (300.0, 1000.0)
    v = g.play(hit=("2",), off=("6",))
    (r,) = v.respot
    # The cue ball rests on its starting point at the end of the shot, so the ball goes just behind it.
    assert r.at[0] == 300.0 and r.at[1] <= 1000.0 - TABLE.ball_diameter


# --- penalties (Art. 9-10) ---------------------------------------------------------------------------------------

def test_art_9_first_contact_with_the_other_group_the_opponent_removes_its_lowest_ball():
    g = Game()
    to_groups(g, "high")  # B low to play; A high, 9 potted
    v = g.play(hit=("12",))
    assert v.foul.code == "wrong_ball" and v.foul.article == "bilhar Art. 9" and v.foul.to == "A"
    assert v.foul.penalty == 1 and v.extra["remove"] == ["10"]
    assert v.points == {"A": 1, "B": 0} and v.score == {"A": 2, "B": 0} and v.turn == "passes"
    # The next shot's start confirms it is gone.
    v = g.play(hit=("11",))
    assert "not_removed" not in v.extra


def test_art_9_the_next_verdict_says_when_the_removed_ball_is_still_on_the_table():
    g = Game()
    to_groups(g, "high")
    v = g.play(hit=("12",))
    assert v.extra["remove"] == ["10"]
    g.pos["10"] = (1000.0, 2200.0)  # nobody took it off
    v = g.play(hit=("11",))
    assert v.extra["not_removed"] == ["10"]
    assert any("remove 10" in a for a in v.announce)
    assert v.score["A"] == 2  # the penalty stands


def test_art_9_simultaneous_contact_with_an_own_ball_is_fair():
    g = Game()
    to_groups(g, "high")
    v = g.play(hit=("3", "12"))
    assert v.foul is None


def test_art_10_no_ball_hit_the_opponent_removes_its_lowest_ball():
    g = Game()
    to_groups(g, "low")  # A low (1 potted); B high to play
    v = g.play(hit=())
    assert v.foul.code == "no_contact" and v.foul.article == "bilhar Art. 10"
    assert v.extra["remove"] == ["2"] and v.points == {"A": 1, "B": 0}


def test_art_10_the_cue_striking_an_object_ball_is_no_contact():
    g = Game()
    to_groups(g, "low")
    v = g.play(hit=("9",), struck="9")
    assert v.foul.code == "no_contact" and v.extra["remove"] == ["2"]


def test_art_9_penalty_when_the_opponents_group_is_already_cleared():
    """B fouls by hitting A's ball first and pots A's last ball: nothing is left to remove and A has won."""
    g = Game()
    to_groups(g, "high")  # A high: 9 off; B to play
    # Take 10..14 off as if potted earlier: B pots them by mistake (counting for A) over several misses.
    for b in ("10", "11", "12", "13", "14"):
        v = g.play(hit=("2",), pots=(b,))
        assert v.turn == "passes"
        v = g.play(hit=("15",))  # A misses
    v = g.play(hit=("15",), pots=("15",))  # B: wrong ball first, and it drops: A's group is cleared
    assert v.foul.code == "wrong_ball" and v.extra["remove"] == []
    assert any("already cleared" in a for a in v.announce)
    assert v.game_over and v.extra["winner"] == "A" and g.match.summary()["winner"] == "A"


def test_art_9_penalty_removal_of_the_opponents_last_ball_wins_it_the_game():
    g = Game()
    to_groups(g, "high")
    for b in ("10", "11", "12", "13", "14"):
        g.play(hit=("2",), pots=(b,))
        g.play(hit=("15",))
    v = g.play(hit=())  # B misses everything: A removes 15, its last ball
    assert v.extra["remove"] == ["15"] and v.game_over and v.extra["winner"] == "A"
    assert v.score["A"] == 7 and v.turn == "passes"


# --- the end (Art. 11-13) ----------------------------------------------------------------------------------------

def test_art_11_clearing_the_own_group_wins():
    g = Game()
    v = g.play(hit=("9",), pots=("9", "10", "11"))
    v = g.play(hit=("12",), pots=("12", "13", "14"))
    assert not v.game_over
    v = g.play(hit=("15",), pots=("15",))
    assert v.game_over and v.turn == "passes" and v.reason == "cleared"
    s = g.match.summary()
    assert s["winner"] == "A" and s["game_over"] and s["match_over"] and s["score"] == {"A": 7, "B": 0}
    with pytest.raises(LogError, match="game is over"):
        g.play(hit=("1",))


def test_art_11_clearing_the_own_group_on_a_foul_shot_with_option_loses():
    g = Game(clear_on_foul="loses")
    g.play(hit=("9",), pots=("9", "10", "11", "12", "13", "14"))
    v = g.play(hit=("15",), pots=("15",), cue_pot=True)
    assert v.game_over and v.extra["winner"] == "B"
    g2 = Game()
    g2.play(hit=("9",), pots=("9", "10", "11", "12", "13", "14"))
    v = g2.play(hit=("15",), pots=("15",), cue_pot=True)
    assert v.game_over and v.extra["winner"] == "A"


def test_art_12_at_the_time_limit_the_side_with_fewer_balls_left_wins():
    g = Game(minutes="1")
    v = g.play(hit=("9",), pots=("9",), t=0.0)  # A high: 6 left
    assert v.extra["time_left"] == pytest.approx(55.0)
    v = g.play(hit=("10",), t=10.0)
    assert not v.game_over
    v = g.play(hit=("2",), pots=("2", "3"), t=56.0)  # ends at 61 s: time is up; B has 5 left, A 6
    assert v.game_over and v.reason == "time" and v.extra["winner"] == "B"
    assert "bilhar Art. 12" in " ".join(v.announce)


def test_art_12_default_limit_is_twenty_minutes():
    g = Game()
    g.play(hit=("9",), pots=("9",), t=0.0)
    v = g.play(hit=("10",), t=1190.0, dur=5.0)
    assert not v.game_over
    v = g.play(hit=("2",), t=1196.0, dur=5.0)  # ends at 1201 s
    assert v.game_over and v.extra["winner"] == "A"


def test_art_12_display_clock_only_a_time_up_control_ends_the_game():
    g = Game(minutes="1", clock="display")
    g.play(hit=("9",), pots=("9",), t=0.0)
    v = g.play(hit=("10",), t=100.0)
    assert not v.game_over
    g.control(control="time_up", t=105.0)
    s = g.match.summary()
    assert s["game_over"] and s["winner"] == "A" and s["reason"] == "time"
    with pytest.raises(LogError):
        g.control(control="time_up")


def test_art_13_sudden_death_after_a_tie_first_pot_wins():
    g = Game(minutes="1")
    g.play(hit=("9",), pots=("9",), t=0.0)   # A: 6 left
    g.play(hit=("10",), t=10.0)               # miss
    v = g.play(hit=("2",), pots=("2",), t=20.0)  # B: 6 left, keeps
    v = g.play(hit=("3",), t=56.0)            # ends at 61 s, 6 - 6: sudden death
    assert v.extra["sudden_death"] and not v.game_over
    assert "bilhar Art. 13" in " ".join(v.announce)
    v = g.play(hit=("11",), t=70.0)  # A misses: still level
    assert not v.game_over
    v = g.play(hit=("4",), pots=("4",), t=80.0)  # B pots first
    assert v.game_over and v.reason == "sudden_death" and v.extra["winner"] == "B"


def test_art_13_sudden_death_potting_an_opponents_ball_gives_it_the_game():
    g = Game(minutes="1")
    g.play(hit=("9",), pots=("9",), t=0.0)
    g.play(hit=("10",), t=10.0)
    g.play(hit=("2",), pots=("2",), t=20.0)
    g.control(control="time_up")
    assert g.state.sudden_death and not g.state.over
    v = g.play(hit=("3",), pots=("12",), t=56.0)  # B pots A's 12: A now has fewer left
    assert v.game_over and v.extra["winner"] == "A"


def test_time_up_on_an_open_table_is_a_tie():
    g = Game()
    g.play(hit=("1",))
    g.control(control="time_up")
    assert g.state.sudden_death and not g.state.over


# --- controls, options, purity, override --------------------------------------------------------------------------

def test_controls_the_state_does_not_allow_are_log_errors_naming_the_record():
    """bilhar Art. 2: side A (drawn by lot) breaks; first_player can only confirm it."""
    g = Game()
    with pytest.raises(LogError, match="ctl"):
        g.control(control="ball_in_hand", at=[100, 100])
    with pytest.raises(LogError, match="ctl"):
        g.control(control="choose_group", side="A", group="low")
    with pytest.raises(LogError, match="ctl"):
        g.control(control="first_player", side="B")
    g.control(control="first_player", side="A")
    g.control(control="concede", side="B")
    assert g.match.summary()["winner"] == "A"
    with pytest.raises(LogError):
        g.control(control="concede")


def test_options_unknown_bad_and_distance_rejected():
    with pytest.raises(OptionError, match="colour"):
        BilharReferee(options={"colour": "red"})
    with pytest.raises(OptionError, match="minutes"):
        BilharReferee(options={"minutes": "soon"})
    with pytest.raises(OptionError, match="clock"):
        BilharReferee(options={"clock": "sundial"})
    with pytest.raises(OptionError, match="distance"):
        referee_for("bilhar", distance=5)
    assert isinstance(referee_for("bilhar", options={"minutes": "0"}), BilharReferee)


def test_judge_is_pure_and_states_are_frozen():
    g = Game()
    shot = Shot.from_dict(g.shot(hit=("1",), pots=("3", "12")), discipline="bilhar", table=TABLE)
    s0 = g.ref.opening()
    v1, s1 = g.ref.judge(s0, shot, 1)
    v2, s2 = g.ref.judge(s0, shot, 1)
    assert s0 == BilharState() and v1 == v2 and s1 == s2 and s1 != s0
    with pytest.raises(dataclasses.FrozenInstanceError):
        s1.turn = "B"  # type: ignore[misc]


def test_override_replaces_the_foul_and_undoes_the_penalty_removal():
    g = Game()
    to_groups(g, "high")
    v = g.play(hit=("12",))
    assert v.extra["remove"] == ["10"]
    g.match.feed(Control("override", {"foul": None, "turn": "keeps", "reason": "referee"}), "ovr")
    v = g.match.verdicts[-1]
    assert v.foul is None and v.extra["remove"] == [] and v.turn == "keeps" and v.reason == "referee"
    assert g.state.turn == "B" and "10" not in g.state.off and g.state.score("A") == 1
    g.match.feed(Control("override", {"points": {"B": 2}}), "ovr2")
    assert g.match.verdicts[-1].points["B"] == 2 and g.state.score("B") == 2


def test_undo_returns_to_the_state_before_the_last_shot():
    g = Game()
    g.play(hit=("1",), pots=("3",))
    before = g.state
    g.play(hit=("2",), pots=("2",))
    g.match.feed(Control("undo"), "undo")
    assert g.state == before


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(OBJECT + [None]), st.lists(st.sampled_from(OBJECT), max_size=3),
                          st.booleans()), min_size=1, max_size=25))
def test_property_score_is_the_balls_of_the_group_off_the_table(plays):
    """Whatever happens, a side's score is its group's balls off the table, points sum to the score."""
    g = Game()
    totals = {"A": 0, "B": 0}
    for hit, pots, scratch in plays:
        if g.state.over:
            break
        pots = tuple(b for b in dict.fromkeys(pots) if b in g.pos)
        v = g.play(hit=(hit,) if hit in g.pos else (), pots=pots, cue_pot=scratch)
        for side in "AB":
            totals[side] += v.points[side]
        if v.reason == "new_break":
            totals = {"A": 0, "B": 0}
        st_ = g.state
        for side in "AB":
            grp = st_.group(side)
            off = 0 if grp is None else sum(1 for b in (LOW if grp == "low" else HIGH) if b in st_.off)
            assert v.score[side] == off == st_.score(side)
            if grp is not None:
                assert v.score[side] + st_.balls_left(side) == 7
        if g.state.phase != "choice":
            assert totals == v.score


# --- the command line -----------------------------------------------------------------------------------------------

def _write_log(tmp_path: Path, records: list[dict]) -> Path:
    path = tmp_path / "match.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_cli_referees_a_bilhar_log(tmp_path):
    g = Game()
    recs = [g.shot(hit=("1",), pots=("3", "12")), {"control": "choose_group", "side": "A", "group": "high"},
            g.shot(hit=("13",), pots=("13",)), g.shot(hit=("14",)), g.shot(hit=("9",))]
    recs = [{k: v for k, v in r.items() if v is not None} for r in recs]
    path = _write_log(tmp_path, recs)
    out = subprocess.run([sys.executable, "-m", "device", "referee", "--discipline", "bilhar", str(path)],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = [json.loads(x) for x in out.stdout.splitlines()]
    assert len(lines) == 5
    v1, v2, v3, v4, final = lines
    assert v1["turn"] == "keeps" and v1["choice"] == "A" and v1["foul"] is None
    assert v2["groups"] == {"A": "high", "B": "low"} and v2["score"] == {"A": 2, "B": 1}
    assert v3["turn"] == "passes" and v4["shooter"] == "B"
    assert v4["foul"] == {"code": "wrong_ball", "article": "bilhar Art. 9", "penalty": 1, "to": "A"}
    assert v4["remove"] == ["9"]
    for key in ("shot", "shooter", "points", "foul", "turn", "score", "respot", "announce", "game_over", "reason"):
        assert key in v4
    assert final["match"]["score"] == {"A": 3, "B": 1} and final["match"]["winner"] is None


def test_cli_bad_input_is_one_line_and_exit_2(tmp_path):
    """bilhar Art. 1, 3: there is no ball 8; a log naming it is refused in one line, exit 2."""
    path = tmp_path / "bad.jsonl"
    path.write_text('{"cue_ball": "cue", "t_start": 0, "t_end": 1, "start": {"8": [1, 1]}, '
                    '"events": [], "end": {}}\n', encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "device", "referee", "--discipline", "bilhar", str(path)],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 2 and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and "line 1" in out.stderr and "'8'" in out.stderr


def test_art_4_3_a_pending_choice_resolved_by_the_opponents_first_ball_is_the_opponents_group():
    """An open-table shot pots one of each group and the cue ball: the choice is the shooter's, the turn passes;
    with no choose_group control the opponent's first ball hit is its own group."""
    g = Game()
    g.play(hit=("1",))  # A breaks, no pot: open
    v = g.play(hit=("1",), pots=("2", "10"), cue_pot=True)  # B
    assert v.foul.code == "cue_ball_potted" and v.turn == "passes" and v.extra["choice"] == "B"
    v = g.play(hit=("4",))  # A hits a low ball first: A takes low
    assert v.shooter == "A" and v.extra["groups"] == {"A": "low", "B": "high"} and v.foul is None


def test_art_12_a_shot_started_after_the_limit_finds_the_game_already_decided():
    g = Game(minutes="1")
    g.play(hit=("9",), pots=("9",), t=0.0)  # A high, 6 left; keeps
    v = g.play(hit=("10",), pots=("10",), t=70.0)  # starts after 60 s: A had already won 6 to 7
    assert v.game_over and v.reason == "time" and v.extra["after_time"] and v.points == {"A": 0, "B": 0}
    assert v.score == {"A": 1, "B": 0} and g.match.summary()["winner"] == "A"


def test_art_13_a_shot_started_after_the_limit_on_a_tie_is_the_first_of_the_sudden_death():
    g = Game(minutes="1")
    g.play(hit=("1",), t=0.0)  # open table, 7-7
    v = g.play(hit=("3",), pots=("3",), t=70.0)  # B pots first in the sudden death
    assert v.game_over and v.reason == "sudden_death" and v.extra["winner"] == "B"
