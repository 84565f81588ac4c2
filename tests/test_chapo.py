"""The Chapó referee (rules/chapo.py) shot by shot, article by article of rulebook 004 (``chapo Art. N.M``)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rules.chapo import ChapoReferee, ChapoState
from rules.controls import Control
from rules.errors import LogError
from rules.match import Match, OptionError
from rules.registry import referee_for
from rules.shot import Shot
from rules.tables import preset

ROOT = Path(__file__).resolve().parents[1]
T = preset("chapo")
SP = T.spots
W, L, D = T.width, T.length, T.ball_diameter
LATS = ("lat_top", "lat_bottom", "lat_left", "lat_right")
BALL = {"A": "1", "B": "2"}
SALIDA = (635.0, 400.0)      # inside the cabaña de salida (y <= L/4 = 635)
REMATADA = (900.0, 2150.0)   # inside the Mingo's cabaña (y >= 3L/4 = 1905)
NEUTRAL = {"1": (300.0, 1500.0), "2": (1000.0, 1000.0), "mingo": (950.0, 1600.0)}


class Game:
    """A Chapó table in a test: ball positions, the pins as the last verdict set them, and the match."""

    def __init__(self, table=T, distance=None, **options: str) -> None:
        self.table = table
        self.ref = ChapoReferee(discipline="chapo", table=table, distance=distance, options=options)
        self.match = Match(self.ref)
        self.pos = {"mingo": table.spots["mingo"]}
        self.t = 0.0
        self.n = 0

    @property
    def state(self) -> ChapoState:
        return self.match.state

    @property
    def shooter(self) -> str:
        return self.state.turn

    def shot(self, hits=("mingo",), contacts=(), pots=(), off=(), pins=(), pins_other=(), early_other=False,
             struck=None, moves=None, origin=None, tracks=None, pins_start=None, pins_end=None, moving=(),
             touched=(), cushions=(), extra=(), start=None, strikes=1, with_origin=True) -> dict:
        side = self.shooter
        ball = BALL[side]
        t0 = self.t
        st = dict(self.pos) if start is None else dict(start)
        in_hand = ball in self.state.in_hand or self.state.game_over
        if in_hand and start is None:
            st[ball] = origin or (SALIDA if self._cabana() == "salida" else REMATADA)
        ev = [{"t": t0 + 0.01 * (i + 1), "type": "strike", "ball": struck or ball} for i in range(strikes)]
        for i, (b, c) in enumerate(cushions):
            ev.append({"t": t0 + 0.1 + 0.01 * i, "type": "cushion", "ball": b, "cushion": c})
        if early_other:
            for i, p in enumerate(pins_other):
                ev.append({"t": t0 + 0.05 + 0.001 * i, "type": "pin_down", "pin": p, "by": "other"})
        for i, b in enumerate(hits):
            ev.append({"t": t0 + 0.3 + 0.1 * i, "type": "ball_ball", "balls": [ball, b]})
        for i, (a, b) in enumerate(contacts):
            ev.append({"t": t0 + 0.7 + 0.01 * i, "type": "ball_ball", "balls": [a, b]})
        for i, p in enumerate(pins):
            ev.append({"t": t0 + 0.8 + 0.01 * i, "type": "pin_down", "pin": p, "by": "ball"})
        if not early_other:
            for i, p in enumerate(pins_other):
                ev.append({"t": t0 + 0.9 + 0.01 * i, "type": "pin_down", "pin": p, "by": "other"})
        for i, (b, pocket) in enumerate(pots):
            ev.append({"t": t0 + 1.5 + 0.01 * i, "type": "pocket", "ball": b, "pocket": pocket})
        for i, b in enumerate(off):
            ev.append({"t": t0 + 1.6 + 0.01 * i, "type": "off_table", "ball": b})
        for i, b in enumerate(touched):
            ev.append({"t": t0 + 1.7 + 0.01 * i, "type": "touched", "ball": b})
        ev += list(extra)
        ev.sort(key=lambda e: e["t"])
        end = dict(st)
        default_moves = {ball: NEUTRAL[ball]} if ball in st else {}
        for b in hits:
            if b in st and b not in (moves or {}):
                default_moves.setdefault(b, NEUTRAL[b])
        end.update(default_moves)
        end.update(moves or {})
        for b, _ in pots:
            end.pop(b, None)
        for b in off:
            end.pop(b, None)
        d = {"shooter": side, "cue_ball": ball, "t_start": t0, "t_end": t0 + 3.0,
             "start": {b: list(p) for b, p in st.items()}, "events": ev,
             "end": {b: list(p) for b, p in end.items()}, "moving_at_strike": list(moving)}
        if in_hand and with_origin:
            d["ball_in_hand_origin"] = list(st[ball])
        if tracks is not None:
            d["tracks"] = tracks
        if pins_start is not None:
            d["pins_start"] = {k: list(v) for k, v in pins_start.items()}
        if pins_end is not None:
            d["pins_end"] = {k: list(v) for k, v in pins_end.items()}
        self.t = t0 + 4.0
        return d

    def _cabana(self) -> str:
        s = self.state
        return "mingo" if (s.shots_in_game == 1 and s.turn != s.opener and not s.game_over) else "salida"

    def feed(self, d: dict):
        self.n += 1
        shot = Shot.from_dict(d, discipline="chapo", table=self.table, record=f"line {self.n}")
        v = self.match.feed(shot, f"line {self.n}")
        self.pos = dict(shot.end)
        for b in list(self.pos):
            if b in v.extra["potted"]:
                del self.pos[b]
        for r in v.respot:
            self.pos[r.ball] = r.at
        for b in ("1", "2"):
            if b in self.state.in_hand or self.state.game_over:
                self.pos.pop(b, None)
        if self.state.game_over:
            self.pos = {"mingo": SP["mingo"]}
        return v

    def play(self, **kw):
        return self.feed(self.shot(**kw))

    def control(self, **fields):
        return self.match.feed(Control.from_dict(fields, discipline="chapo", table=self.table, record="ctl"), "ctl")

    def open_game(self):
        """A's salida hits the Mingo (1 ends at (300, 1500), outside the Mingo's cabaña); B's rematada hits ball 1."""
        v1 = self.play(hits=("mingo",), moves={"mingo": (950.0, 2200.0)})
        v2 = self.play(hits=("1",))
        return v1, v2


def pins_at(v) -> dict:
    return {p: (None if q["at"] is None else tuple(q["at"])) for p, q in v.extra["pins"].items()}


# --- Art. 7: scoring --------------------------------------------------------------------------------------------

def test_art_7_king_with_two_laterals_scores_7_two_laterals_alone_4():
    g = Game()
    g.open_game()
    v = g.play(hits=("2",), pins=("king", "lat_left", "lat_right"))
    assert v.foul is None and v.points == {"A": 7, "B": 0} and v.extra["knocked"] == ["king", "lat_left",
                                                                                      "lat_right"]
    v = g.play(hits=("1",), pins=("lat_top", "lat_bottom"))
    assert v.shooter == "B" and v.points == {"A": 0, "B": 4} and v.score == {"A": 7, "B": 4}


def test_art_7_pockets_2_2_3_added_to_the_pins():
    g = Game()
    g.open_game()
    v = g.play(hits=("mingo",), contacts=(("mingo", "2"),), pins=("king",),
               pots=(("mingo", "top_left"), ("2", "top_right")))
    assert v.points["A"] == 5 + 3 + 2 and v.extra["potted"] == ["mingo", "2"]
    v = g.play(hits=("1",), pots=(("2", "bottom_left"),), origin=SALIDA,
               tracks={"2": [[g.t + 0.1, 635.0, 400.0], [g.t + 0.5, 600.0, 1400.0]]})
    assert v.points["B"] == 2 and v.foul is None  # the billa after touching a ball counts


def test_art_7_chapo_is_30_and_the_game():
    g = Game(games="2")
    g.open_game()
    v = g.play(hits=("2",), pins=("king",) + LATS, pots=(("2", "top_left"),))
    assert v.points["A"] == 30 + 2 and v.game_over and v.reason == "chapo"
    assert "Chapó" in " ".join(v.announce) and v.extra["games"] == {"A": 1, "B": 0}
    assert all(q["spot"] == p for p, q in v.extra["pins"].items())  # next game: the pins on their spots
    assert g.state.turn == "B"  # Art. 11: the ball-2 player opens the second game
    v = g.play(hits=("mingo",))
    assert v.shooter == "B" and v.extra["game"] == 2 and v.score == {"A": 0, "B": 0} and v.foul is None


def test_art_7_pins_by_the_own_ball_before_a_ball_count_once_a_ball_is_touched():
    g = Game()
    g.open_game()
    ev = [{"t": g.t + 0.2, "type": "pin_down", "pin": "lat_bottom", "by": "ball"}]
    v = g.play(hits=("2",), extra=ev)
    assert v.points["A"] == 2 and v.foul is None
    ev = [{"t": g.t + 0.2, "type": "pin_down", "pin": "lat_bottom", "by": "ball"}]
    v = g.play(hits=(), extra=ev)
    assert v.foul.code == "no_ball_touched" and v.points == {"A": 1, "B": 0}


# --- turns, continue_on_score (DESIGN.md section 7) --------------------------------------------------------------

def test_shots_alternate_scoring_or_not_unless_continue_on_score():
    g = Game()
    g.open_game()
    v = g.play(hits=("2",), pins=("king",))
    assert v.turn == "passes" and g.shooter == "B"
    g = Game(continue_on_score="true")
    g.open_game()
    v = g.play(hits=("2",), pins=("king",))
    assert v.turn == "keeps" and g.shooter == "A"
    v = g.play(hits=("2",))
    assert v.turn == "passes" and v.reason == "no_score"


# --- Art. 8, 11, 12, 14, 16: cabañas and ball in hand -------------------------------------------------------------

def test_art_11_the_salida_from_the_cabana_and_the_rematada_from_the_mingos_cabana():
    g = Game()
    v1, v2 = g.open_game()
    assert v1.foul is None and v1.extra["cabana"] == "salida" and v1.shooter == "A"
    assert v2.foul is None and v2.extra["cabana"] == "mingo" and v2.shooter == "B"


def test_art_12_ball_in_hand_from_outside_the_cabana_is_a_1_point_foul():
    g = Game()
    v = g.play(hits=("mingo",), origin=(635.0, 700.0))
    assert v.foul.code == "outside_cabana" and v.foul.penalty == 1 and v.points == {"A": 0, "B": 1}
    assert v.foul.article == "chapo Art. 16"


def test_art_14_a_ball_in_hand_on_the_cabana_line_is_inside():
    g = Game()
    v = g.play(hits=("mingo",), origin=(635.0, L / 4 + 1.0))
    assert v.foul is None


def test_art_11_rematada_from_outside_the_mingos_cabana_is_a_foul():
    g = Game()
    g.play(hits=("mingo",), moves={"mingo": (950.0, 2200.0)})
    v = g.play(hits=("1",), origin=(900.0, 1800.0))
    assert v.foul.code == "outside_cabana" and v.points["A"] == 1


def test_art_11_rematada_only_at_the_ball_outside_the_mingos_cabana():
    g = Game()
    g.play(hits=("mingo",), moves={"mingo": (950.0, 2200.0)})  # the Mingo stays in its cabaña
    v = g.play(hits=("mingo",))
    assert v.foul.code == "inside_cabana" and v.foul.penalty == 1
    assert dict((r.ball, r.at) for r in v.respot)["mingo"] == (950.0, 2200.0)  # put back; 2 stays


def test_art_11_rematada_from_the_normal_cabana_when_ball_1_is_potted_and_the_mingo_in_its_cabana():
    g = Game()
    v = g.play(hits=("mingo",), moves={"mingo": (950.0, 2200.0)}, pots=(("1", "top_left"),))
    assert v.points["A"] == 2  # a billa after touching the Mingo
    v = g.play(hits=("mingo",), origin=SALIDA)
    assert v.extra["cabana"] == "salida" and v.foul is None


def test_art_12_a_ball_potted_comes_back_in_hand_from_the_cabana_against_balls_outside_it():
    g = Game()
    g.open_game()
    v = g.play(hits=("2",), contacts=(("2", "mingo"),), pots=(("1", "bottom_left"),))
    assert v.extra["ball_in_hand"] is None  # B to play, ball 2 on the table
    g.play(hits=("mingo",))
    assert "1" in g.state.in_hand
    v = g.play(hits=("2",), origin=SALIDA, moves={"1": (600.0, 1400.0)})
    assert v.extra["cabana"] == "salida" and v.foul is None and "1" not in g.state.in_hand


def test_art_12_16_hitting_first_a_ball_inside_the_cabana_is_a_foul_and_the_ball_goes_back():
    g = Game()
    g.open_game()
    g.play(hits=("2",), pots=(("1", "bottom_left"),))
    g.play(hits=("mingo",), moves={"2": (400.0, 500.0)})  # ball 2 stops inside the cabaña de salida
    v = g.play(hits=("2",), origin=SALIDA, moves={"1": (500.0, 1400.0), "2": (100.0, 2000.0)})
    assert v.foul.code == "inside_cabana" and v.points["B"] == 1
    respot = {r.ball: r.at for r in v.respot}
    assert respot["2"] == (400.0, 500.0) and "1" not in respot  # the shooter's ball stays where it is


def test_art_14_touching_balls_across_the_line_playing_the_outside_one_is_good():
    g = Game()
    g.open_game()
    g.play(hits=("2",), pots=(("1", "bottom_left"),))
    # B's ball stops inside the cabaña, touching the Mingo just outside it.
    g.play(hits=("mingo",), moves={"2": (400.0, 600.0), "mingo": (400.0, 600.0 + D)})
    v = g.play(hits=("mingo",), contacts=(("mingo", "2"),), origin=SALIDA)
    assert v.foul is None


def test_art_16_ball_in_hand_that_does_not_leave_the_cabana_is_the_centre_line_foul():
    g = Game()
    v = g.play(hits=(), moves={"1": (635.0, 600.0)},
               tracks={"1": [[0.05, 635.0, 400.0], [1.0, 635.0, 600.0]]})
    assert v.foul.penalty == 1 and v.points == {"A": 0, "B": 1}
    assert set(v.extra["fouls"]) == {"centre_line", "no_ball_touched"}
    assert v.foul.code == "centre_line"


def test_art_16_centre_line_read_from_the_tracks():
    g = Game()
    # Crosses the centre line, back into the own half, then touches the Mingo (moved there earlier).
    start = {"mingo": (600.0, 1000.0)}
    tr = {"1": [[0.05, 635.0, 400.0], [0.5, 640.0, 1400.0], [1.0, 620.0, 1050.0]]}
    v = g.play(hits=("mingo",), start={**start, "1": SALIDA}, moves={"1": (620.0, 1100.0)}, tracks=tr)
    assert v.foul is None
    g = Game()
    tr = {"1": [[0.05, 635.0, 400.0], [1.0, 620.0, 950.0]]}
    v = g.play(hits=("mingo",), start={**start, "1": SALIDA}, moves={"1": (620.0, 950.0)}, tracks=tr)
    assert v.foul.code == "centre_line"


def test_art_16_centre_line_option_inverted():
    g = Game(centre_line="no_cross")
    v = g.play(hits=("mingo",))
    assert v.foul.code == "centre_line"
    g = Game(centre_line="no_cross")
    start = {"mingo": (600.0, 1000.0), "1": SALIDA}
    v = g.play(hits=("mingo",), start=start, moves={"1": (620.0, 950.0)},
               tracks={"1": [[0.05, 635.0, 400.0], [1.0, 620.0, 950.0]]})
    assert v.foul is None


def test_ball_in_hand_control_sets_the_origin_and_is_refused_when_the_ball_is_on_the_table():
    g = Game()
    g.control(control="ball_in_hand", at=[635.0, 700.0], ball="1")
    d = g.shot(hits=("mingo",), with_origin=False)
    d["start"]["1"] = [635.0, 500.0]
    v = g.feed(d)
    assert v.foul.code == "outside_cabana"  # the control's point is where it was placed
    with pytest.raises(LogError, match="ctl.*ball"):
        g.control(control="ball_in_hand", at=[635.0, 300.0], ball="1")
    g.play(hits=("1",))
    with pytest.raises(LogError, match="not in hand"):
        g.control(control="ball_in_hand", at=[635.0, 300.0])


# --- Art. 13: pockets -------------------------------------------------------------------------------------------

def test_art_13_1_a_ball_that_drops_and_comes_back_out_is_not_potted():
    g = Game()
    g.open_game()
    v = g.play(hits=("2",), extra=[{"t": g.t + 1.0, "type": "pocket", "ball": "1", "pocket": "top_left"}],
               moves={"1": (200.0, 2300.0)})
    assert v.extra["potted"] == [] and v.points["A"] == 0


def test_art_13_2_two_balls_in_one_pocket_one_out_counts_one_resting_on_it_counts_both():
    g = Game()
    g.open_game()
    ev = [{"t": g.t + 1.0, "type": "pocket", "ball": "2", "pocket": "top_left"},
          {"t": g.t + 1.1, "type": "pocket", "ball": "mingo", "pocket": "top_left"}]
    d = g.shot(hits=("2",), contacts=(("2", "mingo"),), extra=ev, moves={"mingo": (150.0, 2300.0)})
    del d["end"]["2"]  # 2 stays in the pocket, the Mingo comes back out
    v = g.feed(d)
    assert v.extra["potted"] == ["2"] and v.points["A"] == 2
    g = Game()
    g.open_game()
    ev = [{"t": g.t + 1.0, "type": "pocket", "ball": "2", "pocket": "top_left"},
          {"t": g.t + 1.1, "type": "pocket", "ball": "mingo", "pocket": "top_left"}]
    d = g.shot(hits=("2",), contacts=(("2", "mingo"),), extra=ev, moves={"mingo": (25.0, L - 25.0)})
    del d["end"]["2"]
    v = g.feed(d)
    assert v.extra["potted"] == ["2", "mingo"] and v.points["A"] == 5


def test_art_13_3_a_hanging_ball_that_falls_during_the_next_shot_is_put_back_and_not_counted():
    g2 = Game()
    g2.open_game()
    g2.play(hits=("2",), moves={"mingo": (50.0, L - 60.0)})  # the Mingo hangs on the lip
    v = g2.play(hits=("1",), pins=("lat_left",), pots=(("mingo", "top_left"),))
    assert v.foul is None and v.points["B"] == 2  # the play is good, the Mingo's 3 do not count
    assert v.extra["potted"] == [] and {r.ball: r.at for r in v.respot}["mingo"] == (50.0, L - 60.0)
    assert "Art. 13.3" in " ".join(v.announce)


def test_art_13_4_a_hanging_ball_that_falls_as_it_is_played_at_the_shot_is_replayed():
    g = Game()
    g.open_game()
    g.play(hits=("2",), moves={"mingo": (50.0, L - 60.0)})
    before = g.state
    v = g.play(hits=(), pots=(("mingo", "top_left"),), cushions=(("2", "top"),))
    assert v.reason == "replay" and v.turn == "keeps" and v.foul is None and v.points == {"A": 0, "B": 0}
    assert {r.ball: r.at for r in v.respot}["mingo"] == (50.0, L - 60.0)
    assert g.state.turn == "B" and g.state.score_b == before.score_b


# --- Art. 16: fouls -----------------------------------------------------------------------------------------------

def test_art_13_3_13_4_the_track_tells_which_ball_was_played_at_when_nothing_is_touched():
    """B's ball touches nothing while the hanging Mingo drops: aimed at ball 1 it is 13.3 (no replay, the miss is a
    foul), aimed at the Mingo it is 13.4 (replay)."""
    lip = (50.0, L - 60.0)
    for heading, replay in (((-70.0, 50.0), False), ((-950.0 / 20, 1480.0 / 20), True)):
        g = Game()
        g.open_game()
        g.play(hits=("2",), contacts=(("2", "mingo"),), moves={"mingo": lip})  # the Mingo stops on the lip
        p0 = g.pos["2"]
        track = [[g.t + 0.05, p0[0], p0[1]], [g.t + 0.2, p0[0] + heading[0], p0[1] + heading[1]]]
        v = g.play(hits=(), pots=(("mingo", "top_left"),), tracks={"2": track})
        assert (v.reason == "replay") is replay
        assert {r.ball: r.at for r in v.respot}["mingo"] == lip
        if not replay:
            assert v.foul.code == "no_ball_touched" and v.points == {"A": 1, "B": 0}


def test_art_16_no_ball_touched_is_1_point_to_the_opponent():
    g = Game()
    g.open_game()
    v = g.play(hits=(), cushions=(("1", "left"),))
    assert v.foul.code == "no_ball_touched" and v.foul.to == "B" and v.points == {"A": 0, "B": 1}


def test_art_16_playing_before_the_balls_stop_or_the_pins_stand():
    g = Game()
    g.open_game()
    v = g.play(hits=("2",), moving=("mingo",), pins=("king",))
    assert v.foul.code == "balls_moving" and v.points == {"A": 0, "B": 1}
    pins = {p: SP[p] for p in ("king",) + LATS[:3]}  # lat_right not set up again
    v = g.play(hits=("1",), pins_start=pins)
    assert v.foul.code == "pins_not_planted" and v.points["A"] == 1
    pins = {p: SP[p] for p in ("king",) + LATS}
    v = g.play(hits=("2",), pins_start=pins)
    assert v.foul is None


def test_art_16_the_wrong_ball_is_1_point_and_the_balls_go_back():
    g = Game()
    g.open_game()
    start = dict(g.pos)
    v = g.play(hits=(), struck="2", contacts=(("2", "mingo"),), moves={"2": (500.0, 500.0)}, pins=("king",))
    assert v.foul.code == "wrong_ball" and v.points == {"A": 0, "B": 1}
    assert {r.ball: r.at for r in v.respot} == {"2": start["2"]}  # 2 back; 1 and the Mingo did not move
    assert v.extra["pins"]["king"]["spot"] == "king"


def test_art_16_touching_a_ball_is_1_point():
    g = Game()
    g.open_game()
    v = g.play(hits=("2",), touched=("mingo",))
    assert v.foul.code == "touched" and v.points["B"] == 1


def test_art_16_push_double_strike_and_a_ball_frozen_to_the_cushion():
    g = Game()
    g.open_game()
    v = g.play(hits=("2",), strikes=2)
    assert v.foul.code == "push" and v.points["B"] == 1
    g.pos["2"] = (W - T.ball_radius, 1200.0)  # B's ball frozen to the right cushion
    v = g.play(hits=("1",), cushions=(("2", "right"),), start={**g.pos})
    assert v.foul.code == "push"
    g.pos["1"] = (T.ball_radius + 0.5, 1200.0)
    v = g.play(hits=("2",), cushions=(("1", "bottom"),), start={**g.pos})
    assert v.foul is None


def test_art_16_a_ball_frozen_to_another_bricol_first_is_fair_straight_into_it_is_a_push():
    g = Game()
    g.open_game()
    g.pos["1"] = (g.pos["2"][0] - D, g.pos["2"][1])
    v = g.play(hits=("2",), start={**g.pos})
    assert v.foul.code == "push"
    g.pos["2"] = (g.pos["1"][0] + D, g.pos["1"][1])
    v = g.play(hits=("1",), cushions=(("2", "left"),), start={**g.pos})
    assert v.foul is None


def test_art_16_potting_the_own_ball_without_touching_another_is_2_points_not_1_plus_2():
    g = Game()
    g.open_game()
    v = g.play(hits=(), pots=(("1", "top_right"),))
    assert v.foul.code == "billa_no_contact" and v.foul.penalty == 2 and v.points == {"A": 0, "B": 2}
    assert "no_ball_touched" not in v.extra["fouls"]


def test_art_16_a_ball_off_the_table_is_3_points():
    g = Game()
    g.open_game()
    v = g.play(hits=("2",), contacts=(("2", "mingo"),), off=("mingo",))
    assert v.foul.code == "off_table" and v.foul.penalty == 3 and v.points == {"A": 0, "B": 3}
    assert {r.ball: r.at for r in v.respot}["mingo"] == SP["mingo"]  # Art. 6: back on its spot
    v = g.play(hits=("1",), off=("1", "2"))
    assert v.foul.penalty == 3
    g = Game(off_table_per_ball="true")
    g.open_game()
    v = g.play(hits=("2",), off=("1", "2"))
    assert v.foul.penalty == 6


def test_art_16_a_foul_and_pins_in_the_same_shot_the_shooter_scores_nothing():
    g = Game()
    g.open_game()
    v = g.play(hits=("2",), pins=("king", "lat_top"), off=("2",))
    assert v.foul.code == "off_table" and v.points == {"A": 0, "B": 3}
    assert v.extra["knocked"] == [] and v.extra["pins_down"] == ["king", "lat_top"]
    assert pins_at(v)["king"] == SP["king"] and pins_at(v)["lat_top"] == SP["lat_top"]


def test_art_16_pins_knocked_by_anything_but_a_ball_are_worth_their_value_to_the_opponent():
    g = Game()
    g.open_game()
    v = g.play(hits=("2",), pins=("lat_top",), pins_other=("king", "lat_left", "lat_right"))
    assert v.foul.code == "pins_by_other" and v.foul.penalty == 7 and v.points == {"A": 0, "B": 7}
    assert v.extra["pins"]["king"]["spot"] == "king"
    v = g.play(hits=("1",), pins_other=("king",) + LATS)  # all five by hand, even after a ball: Chapó
    assert v.foul.code == "chapo_to_opponent" and v.game_over and v.extra["winner"] == "A"


def test_art_16_pins_knocked_by_hand_before_a_ball_is_touched_the_balls_go_back():
    g = Game()
    g.open_game()
    start = dict(g.pos)
    v = g.play(hits=("2",), pins_other=("lat_bottom",), early_other=True, moves={"2": (800.0, 800.0)})
    assert v.foul.code == "pins_by_other" and v.foul.penalty == 2
    assert {r.ball: r.at for r in v.respot}["2"] == start["2"]


def test_art_16_all_pins_knocked_before_a_ball_is_touched_give_chapo_to_the_opponent():
    g = Game()
    g.open_game()
    v = g.play(hits=("2",), pins_other=("king",) + LATS, early_other=True)
    assert v.foul.code == "chapo_to_opponent" and v.points == {"A": 0, "B": 30}
    assert v.game_over and v.extra["winner"] == "B" and g.match.summary()["games"] == {"A": 0, "B": 1}
    # With the shooter's own ball, a ball then touched: by default the shooter's Chapó; option any: the opponent's.
    for opt, winner in (("other", "A"), ("any", "B")):
        g = Game(chapo_before_ball=opt)
        g.open_game()
        ev = [{"t": g.t + 0.1 + 0.01 * i, "type": "pin_down", "pin": p, "by": "ball"}
              for i, p in enumerate(("king",) + LATS)]
        v = g.play(hits=("2",), extra=ev)
        assert v.game_over and g.match.summary()["winner"] == winner


def test_art_16_all_five_pins_knocked_by_the_own_ball_touching_no_ball_give_chapo_to_the_opponent():
    g = Game()
    g.open_game()
    v = g.play(hits=(), pins=("king",) + LATS)
    assert v.foul.code == "chapo_to_opponent" and v.points == {"A": 0, "B": 30} and v.extra["winner"] == "B"
    assert set(v.extra["fouls"]) == {"chapo_to_opponent", "no_ball_touched"}


def test_art_16_touching_the_own_ball_in_hand_is_no_foul_touching_another_ball_is():
    g = Game()
    v = g.play(hits=("mingo",), touched=("1",))
    assert v.foul is None
    v = g.play(hits=("1",), touched=("1",))  # B's rematada touching A's ball by hand
    assert v.foul.code == "touched" and v.points == {"A": 1, "B": 0}


def test_art_17_a_foul_not_imputable_to_the_player_is_replayed_without_penalty():
    g = Game()
    g.open_game()
    start = dict(g.pos)
    d = g.shot(hits=("2",), off=("mingo",), pins=("king",), moves={"2": (700.0, 700.0)})
    d["notes"] = ["third_party"]
    v = g.feed(d)
    assert v.foul is None and v.points == {"A": 0, "B": 0} and v.turn == "keeps" and v.reason == "not_imputable"
    assert {r.ball: r.at for r in v.respot} == {"2": start["2"], "mingo": start["mingo"]}  # 1 did not move
    assert v.extra["pins"]["king"]["spot"] == "king" and g.shooter == "A"


# --- Art. 4-6 through the referee: the layout for the next shot ------------------------------------------------------

def test_art_5a_a_ball_left_on_a_lateral_spot_the_pin_goes_to_the_opposite_auxiliary_spot():
    g = Game()
    g.open_game()
    v = g.play(hits=("2",), pins=("lat_top",), moves={"1": SP["lat_top"]})
    assert v.points["A"] == 2
    assert v.extra["pins"]["lat_top"]["spot"] == "aux_bottom" and pins_at(v)["lat_top"] == SP["aux_bottom"]
    # Once the ball leaves the spot, the pin goes back to it.
    v = g.play(hits=("1",), moves={"1": (300.0, 1700.0)})
    assert v.extra["pins"]["lat_top"]["spot"] == "lat_top"


def test_art_5c_the_kings_move_and_its_return():
    g = Game()
    g.open_game()
    v = g.play(hits=("2",), pins=("king",), moves={"1": SP["king"]})
    assert v.extra["pins"]["king"]["spot"] in ("aux_top", "aux_bottom", "aux_left", "aux_right")
    assert "Art. 5c" in " ".join(v.announce)
    v = g.play(hits=("1",), moves={"1": (300.0, 1700.0)})
    assert v.extra["pins"]["king"]["spot"] == "king"


def test_art_5e_a_pin_displaced_but_standing_stays_a_pins_length_or_more_is_knocked():
    g = Game()
    g.open_game()
    moved = (SP["lat_left"][0] - 30.0, SP["lat_left"][1])
    v = g.play(hits=("2",), pins_end={"lat_left": moved})
    assert v.points["A"] == 0 and pins_at(v)["lat_left"] == moved and v.extra["pins"]["lat_left"]["spot"] is None
    far = (SP["lat_right"][0] + T.pin_height, SP["lat_right"][1])
    v = g.play(hits=("1",), pins_start={**{p: SP[p] for p in ("king", "lat_top", "lat_bottom", "lat_right")},
                                        "lat_left": moved},
               pins_end={"lat_right": far, "lat_left": moved})
    assert v.foul is None and v.points["B"] == 2 and v.extra["knocked"] == ["lat_right"]
    assert pins_at(v)["lat_right"] == SP["lat_right"] and "Art. 5e" in " ".join(v.announce)


def test_art_5g_a_pin_leaning_on_a_ball_counts_as_knocked_for_the_shooter():
    g = Game()
    g.open_game()
    ball_at = (SP["lat_right"][0] + T.ball_radius + 6.0, SP["lat_right"][1])
    lean = (SP["lat_right"][0] + 2.0, SP["lat_right"][1])
    v = g.play(hits=("2",), moves={"1": ball_at}, pins_end={"lat_right": lean})
    assert v.points["A"] == 2 and v.extra["knocked"] == ["lat_right"] and "Art. 5g" in " ".join(v.announce)


def test_art_5d_never_four_pins_in_line_the_mingo_goes_back_to_its_spot():
    """On a table whose auxiliary spots were measured elsewhere (aux_right on the long axis beyond lat_top), a ball
    on lat_left would put four pins in line: when that ball is the Mingo, it goes back to its spot."""
    s = T.ball_diameter + T.pin_base_diameter
    cx, cy = W / 2, L / 2
    spots = dict(SP)
    spots["aux_right"] = (cx, cy + 2 * s)
    spots["aux_top"] = (cx + 2 * s, cy + 2 * s)
    table = T.with_overrides(spots=spots)
    g = Game(table=table)
    g.open_game()
    v = g.play(hits=("mingo",), pins=("lat_left",), moves={"mingo": spots["lat_left"]})
    assert {r.ball: r.at for r in v.respot}["mingo"] == spots["mingo"]
    assert v.extra["pins"]["lat_left"]["spot"] == "lat_left" and "Art. 5d" in " ".join(v.announce)
    g = Game(table=table)
    g.open_game()
    v = g.play(hits=("2",), pins=("lat_left",), moves={"2": spots["lat_left"]})
    assert v.extra["pins"]["lat_left"]["spot"] == "aux_right"  # not the Mingo: nothing to retire


def test_art_6_the_mingo_potted_goes_to_its_spot_or_the_cushion_or_the_third_spot_and_back():
    g = Game()
    g.open_game()
    v = g.play(hits=("mingo",), pots=(("mingo", "top_left"),), moves={"1": SP["mingo"]})
    assert v.points["A"] == 3 and {r.ball: r.at for r in v.respot}["mingo"] == SP["mingo_cushion"]
    assert v.extra["mingo"]["spot"] == "mingo_cushion"
    v = g.play(hits=("1",), moves={"1": (300.0, 1500.0), "2": (900.0, 1500.0)})
    assert {r.ball: r.at for r in v.respot}["mingo"] == SP["mingo"]  # its spot free, not played: back
    assert v.extra["mingo"] == {"spot": "mingo", "at": [SP["mingo"][0], SP["mingo"][1]]}
    assert "Art. 6" in " ".join(v.announce)
    g = Game()
    g.open_game()
    g.play(hits=("mingo",), contacts=(("mingo", "2"),), pots=(("mingo", "top_left"),),
           moves={"1": SP["mingo"], "2": SP["mingo_cushion"]})
    assert g.pos["mingo"] == SP["mingo_third"]


# --- Art. 19: games and the match -----------------------------------------------------------------------------------

def _win_game(g: Game, side: str):
    """``side`` wins the current game through the opponent's fouls (off the table, 3 points each)."""
    v = None
    while not g.state.game_over or v is None:
        if g.shooter == side:
            v = g.play(hits=("mingo",), pins=("king",))
        else:
            v = g.play(hits=("mingo",), off=("mingo",))
        if v.game_over:
            return v
    return v


def test_art_19_a_game_ends_at_30_and_the_opening_alternates():
    g = Game(games="2")
    v = _win_game(g, "A")
    assert v.game_over and v.score["A"] >= 30 and v.extra["games"] == {"A": 1, "B": 0}
    assert not v.extra["match_over"] and g.state.turn == "B"
    v = _win_game(g, "A")
    s = g.match.summary()
    assert s["games"] == {"A": 2, "B": 0} and s["match_over"] and s["winner"] == "A"
    assert len(s["game_scores"]) == 2 and s["game_scores"][0]["A"] >= 30
    with pytest.raises(LogError, match="match is over"):
        g.play(hits=("mingo",))


def test_art_19_a_tied_match_is_extended_by_two_games_once_and_may_end_drawn():
    g = Game(games="2")
    _win_game(g, "A")
    v = _win_game(g, "B")
    assert not v.extra["match_over"] and g.match.summary()["extended"]
    assert "Art. 19" in " ".join(v.announce)
    _win_game(g, "A")
    v = _win_game(g, "B")
    s = g.match.summary()
    assert s["match_over"] and s["winner"] == "draw" and s["games"] == {"A": 2, "B": 2}
    g = Game(games="2", extension="false")
    _win_game(g, "A")
    _win_game(g, "B")
    assert g.match.summary()["winner"] == "draw"


def test_distance_sets_the_games_points():
    g = Game(distance=5)
    g.open_game()
    v = g.play(hits=("2",), pins=("king",))
    assert v.game_over and g.match.summary()["winner"] == "A"


# --- controls, options, purity, override ------------------------------------------------------------------------------

def test_controls_not_of_chapo_are_log_errors_naming_the_record():
    g = Game()
    for c in ({"control": "choose_group", "side": "A", "group": "low"}, {"control": "time_up"},
              {"control": "first_player", "side": "B"}, {"control": "play_on"}):
        with pytest.raises(LogError, match="ctl"):
            g.control(**c)
    g.control(control="first_player", side="A")
    g.control(control="concede", side="A")
    assert g.match.summary()["winner"] == "B" and g.match.summary()["match_over"]


def test_options_are_checked():
    with pytest.raises(OptionError, match="minutes"):
        ChapoReferee(options={"minutes": "20"})
    with pytest.raises(OptionError, match="games"):
        ChapoReferee(options={"games": "0"})
    with pytest.raises(OptionError, match="centre_line"):
        ChapoReferee(options={"centre_line": "sometimes"})
    with pytest.raises(OptionError):
        referee_for("chapo", table="pool_9ft")
    assert referee_for("chapo", options={"games": "8"}).games == 8


def test_art_16_a_shot_naming_the_other_ball_as_cue_ball_is_the_wrong_ball():
    g = Game()
    g.open_game()
    d = g.shot(hits=(), contacts=(("2", "mingo"),))
    d["cue_ball"] = "2"
    d["events"] = [e for e in d["events"] if e["type"] != "strike"]  # no strike event: cue_ball is the ball played
    v = g.feed(d)
    assert v.foul.code == "wrong_ball" and v.points == {"A": 0, "B": 1}


def test_judge_is_pure_and_states_are_frozen():
    g = Game()
    shot = Shot.from_dict(g.shot(hits=("mingo",), pins=("king",)), discipline="chapo", table=T)
    s0 = g.ref.opening()
    v1, s1 = g.ref.judge(s0, shot, 1)
    v2, s2 = g.ref.judge(s0, shot, 1)
    assert v1 == v2 and s1 == s2 and s0 == ChapoState() and s1.score_a == 5
    with pytest.raises(dataclasses.FrozenInstanceError):
        s1.turn = "A"  # type: ignore[misc]


def test_override_clears_a_foul_and_the_shot_scores_as_fair():
    g = Game()
    g.open_game()
    v = g.play(hits=("2",), pins=("king",), moving=("mingo",))
    assert v.foul is not None and v.points == {"A": 0, "B": 1}
    g.match.feed(Control("override", {"foul": None, "reason": "referee"}), "ovr")
    v = g.match.verdicts[-1]
    assert v.foul is None and v.points == {"A": 5, "B": 0} and v.reason == "referee"
    assert g.state.scores() == {"A": 5, "B": 0}
    g.match.feed(Control("override", {"points": {"A": 2}, "turn": "keeps"}), "ovr2")
    assert g.state.score_a == 2 and g.state.turn == "A"


# --- the command line -------------------------------------------------------------------------------------------

def test_cli_referees_a_chapo_log(tmp_path):
    g = Game()
    recs = [g.shot(hits=("mingo",), moves={"mingo": (950.0, 2200.0)})]
    g.feed(recs[-1])
    recs.append(g.shot(hits=("1",)))
    g.feed(recs[-1])
    recs.append(g.shot(hits=("2",), pins=("king", "lat_top", "lat_bottom")))
    g.feed(recs[-1])
    recs.append(g.shot(hits=(), cushions=(("2", "left"),)))
    path = tmp_path / "chapo.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "device", "referee", "--discipline", "chapo",
                          "--option", "games=1", str(path)], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = [json.loads(x) for x in out.stdout.splitlines()]
    assert len(lines) == 5
    assert lines[2]["points"] == {"A": 7, "B": 0} and lines[2]["knocked"] == ["king", "lat_top", "lat_bottom"]
    assert lines[3]["foul"] == {"code": "no_ball_touched", "article": "chapo Art. 16", "penalty": 1, "to": "A"}
    for key in ("shot", "shooter", "points", "foul", "turn", "score", "respot", "announce", "game_over", "reason",
                "pins"):
        assert key in lines[3]
    final = lines[-1]["match"]
    assert final["score"] == {"A": 8, "B": 0} and final["games"] == {"A": 0, "B": 0}
    assert final["game_over"] is False and final["match_over"] is False and final["winner"] is None


def test_cli_bad_input_is_one_line_and_exit_2(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"cue_ball": "1", "t_start": 0, "t_end": 1, "start": {"1": [635, 400]},
                                "events": [{"t": 0.5, "type": "pin_down", "pin": "queen"}], "end": {}}) + "\n",
                    encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "device", "referee", "--discipline", "chapo", str(path)],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 2 and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and "queen" in out.stderr and "line 1" in out.stderr
    out = subprocess.run([sys.executable, "-m", "device", "referee", "--discipline", "chapo", "--option",
                          "games=many", str(path)], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1 and "games" in out.stderr


# --- properties over random play ---------------------------------------------------------------------------------

from hypothesis import HealthCheck, given, settings, strategies as hst  # noqa: E402

PIN_SETS = hst.sets(hst.sampled_from(("king",) + LATS), max_size=5)
SPOT_NAMES = ("king",) + LATS + ("aux_top", "aux_bottom", "aux_left", "aux_right")


@hst.composite
def random_shot(draw):
    return {
        "hit": draw(hst.sampled_from(["other", "mingo", None])),
        "pins": draw(PIN_SETS),
        "other_pins": draw(hst.sets(hst.sampled_from(("king",) + LATS), max_size=2)),
        "pot": draw(hst.sampled_from([None, "own", "other", "mingo"])),
        "off": draw(hst.sampled_from([None, "mingo", "own"])),
        "park": draw(hst.sampled_from([None] + list(SPOT_NAMES))),
        "moving": draw(hst.booleans()),
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hst.lists(random_shot(), min_size=1, max_size=30))
def test_property_random_play_keeps_the_books_and_the_layout_consistent(shots):
    g = Game(games="3")
    for r in shots:
        if g.state.match_over:
            break
        side = g.shooter
        own, other = BALL[side], BALL["B" if side == "A" else "A"]
        on_table = set(g.pos) | ({own} if (own in g.state.in_hand or g.state.game_over) else set())
        if g.state.game_over:
            on_table = {own, "mingo"}
        hit = {"other": other, "mingo": "mingo", None: None}[r["hit"]]
        hits = (hit,) if hit in on_table else ()
        pot = {"own": own, "other": other, "mingo": "mingo", None: None}[r["pot"]]
        off = {"own": own, "mingo": "mingo", None: None}[r["off"]]
        pots = ((pot, "top_left"),) if pot in on_table and pot != off else ()
        offs = (off,) if off in on_table else ()
        layout = g.state.pins
        standing = {q.pin for q in layout if q.at is not None} if layout else set(("king",) + LATS)
        moves = {}
        if r["park"] and own not in {b for b, _ in pots} and own not in offs:
            moves[own] = SP[r["park"]]
        before = g.state.scores() if not g.state.game_over else {"A": 0, "B": 0}
        v = g.play(hits=hits, pins=tuple(sorted(r["pins"] & standing - r["other_pins"])),
                   pins_other=tuple(sorted(r["other_pins"] & standing)), pots=pots, off=offs, moves=moves,
                   moving=("mingo",) if r["moving"] else ())
        assert v.points["A"] >= 0 and v.points["B"] >= 0 and min(v.points.values()) == 0
        assert v.score == {s: before[s] + v.points[s] for s in "AB"}
        if v.foul is not None:
            assert v.points[v.shooter] == 0 and v.points[v.foul.to] == v.foul.penalty >= 1
        assert v.game_over == (max(v.score.values()) >= 30 or v.reason in ("chapo", "chapo_to_opponent"))
        pins = [q for q in v.extra["pins"].values() if q["at"] is not None]
        assert set(v.extra["pins"]) == {"king", *LATS}
        ats = [tuple(q["at"]) for q in pins]
        assert len(set(ats)) == len(ats)  # never two pins on one spot
        if not v.game_over:
            # A pin set again after this shot never stands where a ball prevents it (Art. 5a-c, 5f).
            balls = list(g.pos.values())
            for pin, q in v.extra["pins"].items():
                if q["at"] is not None and pin in v.extra["pins_down"]:
                    assert all(((q["at"][0] - b[0]) ** 2 + (q["at"][1] - b[1]) ** 2) ** 0.5
                               >= T.ball_radius + T.pin_base_diameter / 2 for b in balls)
            mingo = g.pos.get("mingo")
            assert mingo is not None  # the Mingo is always on the table for the next shot
    s = g.match.summary()
    assert sum(s["games"].values()) == len(s["game_scores"])
