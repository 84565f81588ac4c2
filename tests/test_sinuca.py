"""The sinuca referee, article by article (citations: "sinuca Art. N.M" of the CBBS rulebook 001)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from rules.errors import LogError
from rules.events import ball_ball
from rules.match import OptionError
from rules.registry import referee_for
from rules.sinuca import SinucaReferee, SinucaState, rack
from rules.verdict import Verdict
from tests.sinuca_builders import BAULK, COLOURS, D_RADIUS, IN_D, SPOT, Game, L, R, T, W, colours_from

# --- layouts ------------------------------------------------------------------------------------------------------

OPEN_CUE = (400.0, 900.0)  # in open play, clear of every line of the rack


def one_red(cue=OPEN_CUE, red=(300.0, 1800.0)) -> dict:
    lay = {c: SPOT[c] for c in COLOURS}
    lay.update({"red1": red, "cue": cue})
    return lay


def state_with(score, balls, **kw) -> SinucaState:
    return SinucaState(score={"A": score[0], "B": score[1]}, balls={b: p for b, p in balls.items() if b != "cue"},
                       cue=balls.get("cue"), **kw)


# --- ball on and sequence (Art. 3, 12, 13) ------------------------------------------------------------------------

def test_art_12_1_a_red_then_any_colour_then_a_red():
    g = Game()
    v = g.shot("red3", "red3", cue_to=OPEN_CUE)
    assert (v["points"], v["turn"], v["ball_on"]) == ({"A": 1, "B": 0}, "keeps", "colour")
    v = g.shot("black", "black", nominated="black", cue_to=(700.0, 2300.0))
    assert v["points"] == {"A": 7, "B": 0} and v["score"] == {"A": 8, "B": 0} and v["turn"] == "keeps"
    assert v["ball_on"] == "red"
    # Art. 13.1: a colour potted after a red goes back to its spot.
    assert v["respot"] == [{"ball": "black", "at": [round(SPOT["black"][0], 1), round(SPOT["black"][1], 1)]}]
    assert v["announce"][0] == "8"  # the break


def test_art_15_several_reds_in_one_shot_score_one_each():
    v = Game().shot("red1", ["red1", "red5", "red9"], cue_to=OPEN_CUE)
    assert v["points"]["A"] == 3 and v["foul"] is None and v["ball_on"] == "colour" and v["respot"] == []


def test_art_3_the_ball_on_is_the_lowest_value_in_play_after_the_reds():
    g = Game(one_red())
    g.shot("red1", cue_to=(500.0, 1700.0))  # a miss of the pot: the turn passes, the red still on
    v = g.shot("red1", "red1", cue_to=(500.0, 1700.0))
    assert v["shooter"] == "B" and v["ball_on"] == "colour"


def test_art_13_4_the_last_red_then_the_yellow_is_a_colour_if_potted():
    g = Game(one_red())
    g.shot("red1", "red1", cue_to=(1100.0, 500.0))
    v = g.shot("yellow", "yellow", nominated="yellow", cue_to=(1000.0, 700.0))
    assert v["points"]["A"] == 2 and v["respot"][0]["ball"] == "yellow"  # Art. 13.4.a: as a colour
    assert v["ball_on"] == "yellow" and v["table"]["remaining"] == 27
    v = g.shot("yellow", "yellow", cue_to=(700.0, 700.0))
    assert v["points"]["A"] == 2 and v["respot"] == [] and v["ball_on"] == "green"  # Art. 13.2: stays down
    assert v["score"]["A"] == 5


def test_art_13_4_b_the_yellow_missed_after_the_last_red_is_the_ball_on():
    g = Game(one_red())
    g.shot("red1", "red1", cue_to=(1100.0, 500.0))
    v = g.shot("yellow", nominated="yellow", cue_to=(1000.0, 700.0))
    assert v["turn"] == "passes" and v["foul"] is None and v["ball_on"] == "yellow"
    v = g.shot("yellow", "yellow", cue_to=(900.0, 700.0))
    assert v["shooter"] == "B" and v["points"]["B"] == 2 and v["respot"] == [] and v["ball_on"] == "green"


def test_art_12_2_colours_in_order_potting_the_next_one_early_is_a_foul():
    g = Game(colours_from("yellow"))
    v = g.shot("yellow", "green", cue_to=(600.0, 700.0))
    assert v["foul"]["code"] == "pot_not_on" and v["foul"]["article"] == "sinuca Art. 41.12"
    assert v["points"] == {"A": 0, "B": 4}  # Art. 36: at least 4
    assert [r["ball"] for r in v["respot"]] == ["green"]  # Art. 13.3: potted with a foul, it returns
    assert v["ball_on"] == "yellow"


@pytest.mark.parametrize("reds, maximum", [(3, 51), (6, 75), (10, 107), (15, 147)])
def test_art_7_1_the_maximum_break(reds, maximum):
    """A clearance of red-black each time then the colours in order scores the maximum of Art. 7.1."""
    g = Game(reds=reds)
    v = g.shot("red1", "red1", cue_to=OPEN_CUE)
    assert v["table"]["remaining"] + 1 == maximum
    for i in range(1, reds + 1):
        if i > 1:
            v = g.shot(f"red{i}", f"red{i}", cue_to=OPEN_CUE)
        v = g.shot("black", "black", nominated="black", cue_to=OPEN_CUE)
        assert v["respot"][0]["ball"] == "black"
    stops = 0
    for c in COLOURS:
        v = g.shot(c, c, cue_to=OPEN_CUE)
        if v["game_over"] and v["play_on_allowed"]:
            stops += 1
            g.control("play_on")  # Art. 45.b: the frame is won, the break goes on
    assert stops == 1  # the first difference of Art. 44.2 reached; after play_on no further stop
    assert v["score"]["A"] == maximum and v["game_over"] and v["winner"] == "A"
    assert g.summary()["high_break"]["A"] == maximum


@pytest.mark.parametrize("first, remaining", [("pink", 13), ("blue", 18), ("brown", 22), ("green", 25),
                                              ("yellow", 27)])
def test_art_7_2_points_left_with_each_colour_on(first, remaining):
    g = Game(colours_from(first))
    v = g.shot(first, cue_to=(300.0, 700.0))
    assert v["table"]["remaining"] == remaining and v["ball_on"] == first


def test_art_7_2_g_each_extra_red_adds_8():
    g = Game(one_red())
    v = g.shot("red1", cue_to=(500.0, 1700.0))
    assert v["table"]["remaining"] == 35
    lay = one_red()
    lay["red2"] = (900.0, 1900.0)
    v = Game(lay).shot("red1", cue_to=(500.0, 1700.0))
    assert v["table"]["remaining"] == 43


# --- penalties (Art. 36, 37, 40) ----------------------------------------------------------------------------------

def test_art_41_1_potting_the_cue_ball_after_a_red_is_4_and_the_cue_ball_in_hand():
    g = Game()
    v = g.shot("red2", "cue")
    assert v["foul"] == {"code": "cue_potted", "article": "sinuca Art. 41.1", "penalty": 4, "to": "B"}
    assert v["points"] == {"A": 0, "B": 4} and v["turn"] == "passes" and v["cue_in_hand"]
    assert v["snooker"] is None


def test_art_40_the_highest_ball_involved_is_the_first_contact():
    lay = one_red()
    v = Game(lay).shot("black", "cue")
    assert v["foul"]["penalty"] == 7 and v["foul"]["code"] == "wrong_first_contact"
    assert {f["code"]: f["penalty"] for f in v["fouls"]} == {"wrong_first_contact": 7, "cue_potted": 7}
    # A fair first contact on the red: the in-off is 4 ...
    assert Game(lay).shot("red1", "cue")["foul"]["penalty"] == 4
    # ... unless a later contact makes another foul of a higher value (the black potted as well).
    v = Game(lay).shot("red1", ["black", "cue"])
    assert v["foul"]["penalty"] == 7 and v["foul"]["code"] == "pot_wrong_kind"


def test_art_36_a_the_value_of_the_ball_on():
    v = Game(colours_from("blue")).shot("blue", "cue")
    assert v["foul"]["code"] == "cue_potted" and v["foul"]["penalty"] == 5


def test_art_41_13_a_red_and_a_colour_potted_together():
    g = Game()
    v = g.shot("red1", ["red1", "pink"], cue_to=OPEN_CUE)
    assert v["foul"]["code"] == "pot_wrong_kind" and v["foul"]["article"] == "sinuca Art. 41.13"
    assert v["points"] == {"A": 0, "B": 6}  # Art. 36.b: the pink is the highest ball involved
    assert [r["ball"] for r in v["respot"]] == ["pink"]  # Art. 13.3; the red stays down (Art. 16)
    assert "red1" not in g.layout and g.layout["pink"] == SPOT["pink"]


def test_art_41_10_a_ball_off_the_table_returns_and_the_red_does_not():
    g = Game()
    v = g.shot("red1", off=["blue"], cue_to=OPEN_CUE)
    assert v["foul"]["article"] == "sinuca Art. 41.10" and v["foul"]["penalty"] == 5
    assert [r["ball"] for r in v["respot"]] == ["blue"]
    v = Game().shot("red1", off=["red1"], cue_to=OPEN_CUE)
    assert v["foul"]["code"] == "off_table" and v["respot"] == [] and v["foul"]["penalty"] == 4


def test_art_41_6_striking_while_a_ball_moves():
    v = Game().shot("red1", "red1", moving=["pink"], cue_to=OPEN_CUE)
    assert v["foul"]["code"] == "moving_ball" and v["foul"]["article"] == "sinuca Art. 41.6"
    assert v["foul"]["penalty"] == 6 and v["points"]["A"] == 0


def test_art_41_5_touching_a_ball():
    v = Game().shot("red1", touched=["brown"], cue_to=OPEN_CUE)
    assert v["foul"]["code"] == "touched" and v["foul"]["penalty"] == 4 and v["foul"]["to"] == "B"


def test_art_41_2_two_touches_of_the_cue():
    v = Game().shot("red1", strikes=2, cue_to=OPEN_CUE)
    assert v["foul"]["article"] == "sinuca Art. 41.2"


def test_art_41_9_the_cue_ball_in_hand_must_be_played_from_the_d():
    lay = rack(T, 15)
    lay["cue"] = (W / 2, BAULK + 100.0)
    v = Game(lay, state=SinucaState(balls=rack(T, 15))).shot("red1", cue_to=OPEN_CUE)  # the break-off
    assert v["foul"]["code"] == "outside_d"
    lay["cue"] = (W / 2 + D_RADIUS, BAULK)  # on the line of the D (Art. 17.3)
    assert Game(lay, state=SinucaState(balls=rack(T, 15))).shot("red1", cue_to=OPEN_CUE)["foul"] is None
    # After the cue ball was potted, the next player plays from the D too.
    g = Game()
    g.shot("red1", "cue")
    v = g.shot("red1", start={**g.layout, "cue": (200.0, 300.0)}, cue_to=OPEN_CUE)
    assert v["foul"]["code"] == "outside_d" and v["shooter"] == "B"


def test_art_41_14_not_hitting_the_ball_on_first():
    g = Game()
    v = g.shot("green", cue_to=(200.0, 1200.0))
    assert v["foul"]["code"] == "wrong_first_contact" and v["foul"]["article"] == "sinuca Art. 41.14"
    assert v["foul"]["penalty"] == 4
    assert v["snooker"] is None and not v["free_ball_offered"]  # not snookered, and the cue ball touched a ball


def test_art_26_3_hitting_nothing_is_a_foul_with_a_free_ball_whatever_the_position():
    v = Game().shot(None, cue_to=(200.0, 1200.0))
    assert v["foul"]["code"] == "miss" and v["snooker"] is None
    assert v["free_ball_offered"] and "free ball" in v["announce"]


def test_art_26_3_option_ball_on_offers_the_free_ball_when_the_ball_on_was_never_touched():
    v = Game(free_ball_on_miss="ball_on").shot("green", cue_to=(200.0, 1200.0))
    assert v["foul"] and v["snooker"] is None and v["free_ball_offered"]
    v = Game(free_ball_on_miss="ball_on").shot(["red1"], "cue")  # the red was hit: no free ball
    assert v["foul"]["code"] == "cue_potted" and not v["free_ball_offered"]


def test_art_41_15_hitting_two_balls_at_once_except_reds():
    v = Game().shot(["red1", "red2"], "red1", cue_to=OPEN_CUE)
    assert v["foul"] is None and v["points"]["A"] == 1
    v = Game().shot(["red1", "pink"], cue_to=OPEN_CUE)
    assert v["foul"]["code"] == "simultaneous" and v["foul"]["article"] == "sinuca Art. 41.15"
    assert v["foul"]["penalty"] == 6


def test_art_42_2_striking_a_ball_other_than_the_cue_ball_is_7():
    v = Game().shot("red1", strike="red1", cue_to=OPEN_CUE)
    assert v["foul"]["code"] == "wrong_ball" and v["foul"]["article"] == "sinuca Art. 42.2"
    assert v["foul"]["penalty"] == 7


def test_art_42_1_nominating_a_ball_out_of_the_sequence_is_7():
    v = Game(colours_from("yellow")).shot("green", "green", nominated="green", cue_to=(600.0, 700.0))
    assert v["foul"]["code"] == "out_of_sequence" and v["foul"]["article"] == "sinuca Art. 42.1"
    assert v["points"] == {"A": 0, "B": 7}


def test_art_41_12_the_colour_potted_must_be_the_one_nominated():
    g = Game()
    g.shot("red1", "red1", cue_to=OPEN_CUE)
    v = g.shot("blue", "pink", nominated="blue", cue_to=OPEN_CUE)
    assert v["foul"]["code"] == "pot_not_on" and v["foul"]["penalty"] == 6


def test_art_20_41_17_42_3_a_colour_neither_nominated_nor_evident_is_7():
    g = Game()
    g.shot("red1", "red1", cue_to=OPEN_CUE)
    v = g.shot("blue", "pink", cue_to=OPEN_CUE)  # hit the blue, potted the pink, nothing called
    assert v["foul"]["article"] == "sinuca Art. 42.3" and v["foul"]["penalty"] == 7
    assert any(f["code"] == "not_nominated" and f["article"] == "sinuca Art. 41.17" for f in v["fouls"])


def test_art_20_an_evident_colour_needs_no_call():
    g = Game()
    g.shot("red1", "red1", cue_to=OPEN_CUE)
    v = g.shot("blue", "blue", cue_to=OPEN_CUE)
    assert v["foul"] is None and v["points"]["A"] == 5 and v["nominated"] == "blue"


def test_art_20_strict_option_every_colour_after_a_red_is_called():
    g = Game(nominate="strict")
    g.shot("red1", "red1", cue_to=OPEN_CUE)
    v = g.shot("blue", "blue", cue_to=OPEN_CUE)
    assert v["foul"]["code"] == "not_nominated" and v["foul"]["penalty"] == 7
    assert v["foul"]["article"] == "sinuca Art. 42.3" and v["points"] == {"A": 0, "B": 7}
    g = Game(nominate="strict")
    g.shot("red1", "red1", cue_to=OPEN_CUE)
    g.control("nominate", ball="blue")  # the control sets the next shot's nomination
    v = g.shot("blue", "blue", cue_to=OPEN_CUE)
    assert v["foul"] is None and v["points"]["A"] == 5


def test_art_42_3_a_foul_after_a_red_before_the_colour_is_called_is_7():
    g = Game()
    g.shot("red1", "red1", cue_to=OPEN_CUE)
    v = g.shot(None, cue_to=(200.0, 1200.0))
    assert v["points"]["B"] == 7 and v["foul"]["article"] == "sinuca Art. 42.3"


def test_art_36_a_called_colour_fouled_is_its_value():
    g = Game()
    g.shot("red1", "red1", cue_to=OPEN_CUE)
    v = g.shot("yellow", "cue", nominated="yellow")
    assert v["foul"]["code"] == "cue_potted" and v["foul"]["penalty"] == 4


# --- after a foul (Art. 26, 31, 32) -------------------------------------------------------------------------------

def test_art_31_the_turn_passes_and_pass_back_makes_the_offender_play_again():
    g = Game()
    v = g.shot("red1", "cue")
    assert v["turn"] == "passes" and g.match.referee.next_shooter(g.state) == "B"
    g.control("pass_back")
    assert g.match.referee.next_shooter(g.state) == "A"
    v = g.shot("red1", "red1", cue_to=OPEN_CUE)
    assert v["shooter"] == "A" and v["score"] == {"A": 1, "B": 4}


def test_art_31_4_pass_back_without_a_foul_is_an_error_naming_the_record():
    g = Game()
    g.shot("red1", "red1", cue_to=OPEN_CUE)
    with pytest.raises(LogError) as exc:
        g.control("pass_back")
    assert exc.value.record == f"test line {g.n}"


def test_art_26_a_free_ball_nobody_was_offered_is_an_error():
    g = Game()
    with pytest.raises(LogError) as exc:
        g.control("free_ball", ball="green")
    assert "free ball" in exc.value.problem
    with pytest.raises(LogError):
        g.shot("green", "green", free_ball="green", cue_to=OPEN_CUE)


def snooker_after_foul_layout() -> dict:
    """Red on; the cue ball will stop right behind the blue, a red far beyond it on the long axis."""
    lay = {c: SPOT[c] for c in COLOURS}
    lay["red1"] = (W / 2, SPOT["blue"][1] + 400.0)
    lay["cue"] = (W / 2 + 300.0, 600.0)
    return lay


CUE_BEHIND_BLUE = (W / 2, SPOT["blue"][1] - 2 * R - 1.0)


def test_art_26_a_foul_leaving_a_snooker_gives_the_free_ball():
    g = Game(snooker_after_foul_layout())
    v = g.shot("green", cue_to=CUE_BEHIND_BLUE)
    assert v["foul"] and v["snooker"] == "total" and v["free_ball_offered"]
    assert v["announce"][-1] == "free ball"


def test_art_33_1_a_free_ball_potted_with_a_red_on_scores_1_and_a_colour_follows():
    g = Game(snooker_after_foul_layout())
    g.shot("green", cue_to=CUE_BEHIND_BLUE)
    g.control("free_ball", ball="blue")
    v = g.shot("blue", "blue", cue_to=(W / 2, 1200.0))
    assert v["shooter"] == "B" and v["foul"] is None and v["points"]["B"] == 1
    assert v["respot"][0]["ball"] == "blue"  # Art. 16: the free ball returns
    assert v["ball_on"] == "colour" and v["free_ball"] == "blue"
    # Art. 33.1: the colour after it may be the same ball.
    v = g.shot("blue", "blue", nominated="blue", cue_to=(W / 2, 1200.0))
    assert v["points"]["B"] == 5 and v["score"]["B"] == 4 + 1 + 5


def test_art_15_a_free_ball_and_a_red_together_score_one_each():
    lay = snooker_after_foul_layout()
    lay["red2"] = (W / 2 + 100.0, SPOT["blue"][1] + 400.0)
    g = Game(lay)
    g.shot("green", cue_to=CUE_BEHIND_BLUE)
    v = g.shot("blue", ["blue", "red1"], free_ball="blue", cue_to=(W / 2, 1200.0))
    assert v["foul"] is None and v["points"]["B"] == 2


def test_art_15_33_2_a_free_ball_potted_with_the_ball_on_scores_only_the_ball_on():
    lay = colours_from("yellow", cue=(W / 2 + 300.0, 600.0))
    g = Game(lay)
    v = g.shot(None, cue_to=(SPOT["yellow"][0], SPOT["yellow"][1] - 300.0))  # a miss: Art. 26.3
    assert v["foul"]["penalty"] == 4 and v["free_ball_offered"]
    v = g.shot(["blue", "yellow"], ["blue", "yellow"], free_ball="blue", cue_to=(700.0, 1000.0))
    assert v["foul"] is None and v["points"]["B"] == 2  # the yellow's value only
    assert [r["ball"] for r in v["respot"]] == ["blue"] and v["ball_on"] == "green"


def test_art_33_2_a_free_ball_alone_scores_the_ball_on_and_the_ball_on_stays_on():
    g = Game(colours_from("yellow", cue=(W / 2 + 300.0, 600.0)))
    g.shot(None, cue_to=(SPOT["yellow"][0], SPOT["yellow"][1] - 300.0))
    v = g.shot("pink", "pink", free_ball="pink", cue_to=(700.0, 1000.0))
    assert v["points"]["B"] == 2 and v["respot"][0]["ball"] == "pink" and v["ball_on"] == "yellow"


def test_art_41_15_with_a_free_ball_the_free_ball_must_be_hit_first():
    g = Game(colours_from("yellow", cue=(W / 2 + 300.0, 600.0)))
    g.shot(None, cue_to=(SPOT["yellow"][0], SPOT["yellow"][1] - 300.0))
    v = g.shot("yellow", "yellow", free_ball="pink", cue_to=(700.0, 1000.0))
    assert v["foul"]["code"] == "wrong_first_contact"


def test_art_9_3_34_41_16_the_free_ball_may_not_snooker_the_opponent():
    g = Game(snooker_after_foul_layout())
    g.shot("green", cue_to=CUE_BEHIND_BLUE)
    # B plays the blue as free ball and leaves the cue ball behind it again: the blue is the first obstacle.
    v = g.shot("blue", free_ball="blue", cue_to=CUE_BEHIND_BLUE)
    assert v["foul"]["code"] == "free_ball_snooker" and v["foul"]["article"] == "sinuca Art. 41.16"
    assert v["foul"]["penalty"] == 4


def test_art_34_with_only_the_6_and_7_left_the_free_ball_may_snooker():
    lay = {"pink": SPOT["pink"], "black": (W / 2, SPOT["pink"][1] + 300.0), "cue": (W / 2 + 300.0, 1500.0)}
    g = Game(lay)
    g.shot("black", cue_to=(W / 2, SPOT["black"][1] + 2 * R + 1.0))  # a foul, B snookered behind the black
    v = g.shot("black", free_ball="black", cue_to=(W / 2, SPOT["pink"][1] + 300.0 + 2 * R + 1.0),
               moved={"black": (W / 2, SPOT["pink"][1] + 300.0)})
    assert v["foul"] is None


def test_art_42_4_the_foul_after_a_total_snooker_is_7():
    lay = snooker_after_foul_layout()
    g = Game(lay)
    # A fair safety: A hits the red and leaves the cue ball behind the blue.
    v = g.shot("red1", cue_to=CUE_BEHIND_BLUE)
    assert v["foul"] is None and v["snooker"] == "total" and not v["free_ball_offered"]
    v = g.shot("green", cue_to=(W / 2 + 300.0, 600.0))
    assert v["foul"]["code"] == "compulsory_foul" and v["foul"]["article"] == "sinuca Art. 42.4"
    assert v["points"]["A"] == 7
    g = Game(lay, compulsory_foul="off")
    g.shot("red1", cue_to=CUE_BEHIND_BLUE)
    assert g.shot("green", cue_to=(W / 2 + 300.0, 600.0))["foul"]["penalty"] == 4


def test_art_9_2_a_partial_snooker_after_a_fair_shot_is_announced_without_a_free_ball():
    lay = snooker_after_foul_layout()
    g = Game(lay)
    v = g.shot("red1", cue_to=(W / 2 + 80.0, SPOT["blue"][1] - 300.0))
    assert v["snooker"] == "partial" and not v["free_ball_offered"]


def test_art_10_other_reds_never_snooker_the_red_on():
    lay = {c: SPOT[c] for c in COLOURS}
    lay["red1"] = (W / 2, 2000.0)
    lay["red2"] = (W / 2, 1900.0)
    lay["cue"] = (W / 2 + 300.0, 600.0)
    v = Game(lay).shot("red1", cue_to=(W / 2, 1800.0))
    assert v["snooker"] is None


# --- re-spotting (Art. 27-30) -------------------------------------------------------------------------------------

def pot_black_after_red(layout: dict, **opts) -> dict:
    g = Game(layout, **opts)
    g.shot("red1", "red1", cue_to=layout["cue"])
    return g.shot("black", "black", nominated="black", cue_to=layout["cue"])


def test_art_27_an_occupied_spot_gives_the_highest_free_spot():
    lay = one_red()
    lay["pink"] = (300.0, 2000.0)  # the pink away from its spot
    lay["red2"] = (SPOT["black"][0] + 30.0, SPOT["black"][1])  # on the black's spot, partly
    v = pot_black_after_red(lay)
    assert v["respot"] == [{"ball": "black", "at": [round(SPOT["pink"][0], 1), round(SPOT["pink"][1], 1)]}]


def test_art_27_own_and_all_higher_spots_taken_gives_the_highest_free_lower_spot():
    """The pink's spot and the black's are taken: the pink goes on the blue's spot, the highest free one."""
    lay = one_red()
    lay["red2"] = (SPOT["pink"][0] + 10.0, SPOT["pink"][1] + 5.0)
    lay["red3"] = (SPOT["black"][0] - 20.0, SPOT["black"][1])
    del lay["blue"]  # the blue already down: its spot is free
    g = Game(lay)
    g.shot("red1", "red1", cue_to=OPEN_CUE)
    v = g.shot("pink", "pink", nominated="pink", cue_to=OPEN_CUE)
    assert v["respot"][0]["at"] == [round(SPOT["blue"][0], 1), round(SPOT["blue"][1], 1)]


def test_art_27_option_higher_only_goes_to_the_line_when_higher_spots_are_taken():
    lay = one_red()
    lay["red2"] = (SPOT["pink"][0], SPOT["pink"][1])
    lay["red3"] = (SPOT["black"][0] - 20.0, SPOT["black"][1])
    del lay["blue"]
    g = Game(lay, respot_spots="higher")
    g.shot("red1", "red1", cue_to=OPEN_CUE)
    v = g.shot("pink", "pink", nominated="pink", cue_to=OPEN_CUE)
    # Art. 28.1: on the long axis, the nearest point above the spot that touches no ball: just above red2.
    assert v["respot"][0]["at"] == [round(W / 2, 1), round(SPOT["pink"][1] + 2 * R, 1)]


def all_spots_taken(layout: dict) -> dict:
    """Put a red touching-close to every free spot (each offset along x so it partly covers the spot)."""
    lay = dict(layout)
    n = 2
    for c in COLOURS:
        if c not in lay:
            lay[f"red{n}"] = (SPOT[c][0] + 20.0, SPOT[c][1])
            n += 1
    return lay


def test_art_28_1_all_spots_taken_the_black_goes_up_the_long_axis():
    lay = one_red()
    lay["red9"] = (SPOT["black"][0] + 20.0, SPOT["black"][1])
    lay = {b: p for b, p in lay.items() if b not in ("yellow", "green", "brown", "blue", "pink")}
    lay = all_spots_taken(lay)
    v = pot_black_after_red(lay)
    # red9 at dx = 20 from the axis: the black touches it at dy = sqrt((2R)^2 - 20^2) above its centre.
    expected = SPOT["black"][1] + math.sqrt((2 * R) ** 2 - 20.0 ** 2)
    assert v["respot"][0]["ball"] == "black"
    assert v["respot"][0]["at"][0] == round(W / 2, 1)
    assert v["respot"][0]["at"][1] == pytest.approx(expected, abs=0.06)


def test_art_28_2_the_yellow_goes_along_the_line_through_its_spot():
    lay = one_red()
    lay = all_spots_taken({b: p for b, p in lay.items() if b not in ("green", "brown", "blue", "pink", "black")})
    lay["red9"] = (SPOT["yellow"][0] - 10.0, SPOT["yellow"][1] + 10.0)
    del lay["yellow"]
    lay["yellow"] = (500.0, 1500.0)
    g = Game(lay)
    g.shot("red1", "red1", cue_to=OPEN_CUE)
    v = g.shot("yellow", "yellow", nominated="yellow", cue_to=OPEN_CUE)
    at = v["respot"][0]["at"]
    assert at[0] == round(SPOT["yellow"][0], 1) and at[1] > SPOT["yellow"][1]
    assert math.dist(at, lay["red9"]) == pytest.approx(2 * R, abs=0.1)


def test_art_29_no_room_towards_the_top_cushion_goes_the_other_way():
    lay = one_red()
    lay = all_spots_taken({b: p for b, p in lay.items() if b not in ("yellow", "green", "brown", "blue", "pink")})
    lay["red9"] = (SPOT["black"][0], SPOT["black"][1] + 30.0)  # on the spot, blocking the way up
    lay["red10"] = (SPOT["black"][0], SPOT["black"][1] + 30.0 + 2 * R)
    lay["red11"] = (SPOT["black"][0], SPOT["black"][1] + 30.0 + 4 * R)
    lay["red12"] = (SPOT["black"][0], L - R)  # against the top cushion: no room anywhere above
    v = pot_black_after_red(lay)
    at = v["respot"][0]["at"]
    assert at[0] == round(W / 2, 1) and at[1] == pytest.approx(SPOT["black"][1] + 30.0 - 2 * R, abs=0.06)


def test_art_30_two_colours_returning_the_higher_value_first():
    lay = one_red()
    lay["red2"] = (SPOT["black"][0] + 15.0, SPOT["black"][1])
    g = Game(lay)
    v = g.shot("red1", ["pink", "black"], cue_to=OPEN_CUE)  # a foul potting both colours
    assert v["foul"]["penalty"] == 7
    # The black first: its spot taken by red2, it takes the highest free one, the pink's. The pink then finds its
    # own spot and every other taken, and goes up the long axis to just above the black (Art. 28.1).
    by_ball = {r["ball"]: r["at"] for r in v["respot"]}
    assert [r["ball"] for r in v["respot"]] == ["black", "pink"]
    assert by_ball["black"] == [round(SPOT["pink"][0], 1), round(SPOT["pink"][1], 1)]
    assert by_ball["pink"] == [round(W / 2, 1), round(SPOT["pink"][1] + 2 * R, 1)]


# --- frame end (Art. 44-47) ---------------------------------------------------------------------------------------

def test_art_44_1_the_black_potted_with_a_lead_ends_the_frame():
    g = Game(colours_from("black"), state=state_with((50, 47), colours_from("black")))
    v = g.shot("black", "black", cue_to=(700.0, 2000.0))
    assert v["game_over"] and v["winner"] == "A" and v["turn"] == "passes" and v["reason"] == "black"
    s = g.summary()
    assert s["frames"] == {"A": 1, "B": 0} and s["match_over"] and s["winner"] == "A"


def test_art_44_1_the_pink_potted_more_than_7_ahead_ends_unless_play_on():
    lay = colours_from("pink")
    g = Game(lay, state=state_with((60, 50), lay))
    v = g.shot("pink", "pink", cue_to=(700.0, 2000.0))
    assert v["game_over"] and v["winner"] == "A" and v["play_on_allowed"]
    g.control("play_on")  # Art. 45.b: the leader goes on for his break
    v = g.shot("black", "black", cue_to=(700.0, 2000.0))
    assert v["shooter"] == "A" and v["score"]["A"] == 73 and v["game_over"]


def test_art_44_1_the_trailing_side_potting_the_pink_still_more_than_7_behind_ends_it():
    lay = colours_from("pink")
    g = Game(lay, state=state_with((10, 50), lay))
    v = g.shot("pink", "pink", cue_to=(700.0, 2000.0))
    assert v["game_over"] and v["winner"] == "B" and not v["play_on_allowed"]


@pytest.mark.parametrize("on, behind, ends", [("blue", 26, True), ("blue", 25, False), ("pink", 21, True),
                                             ("pink", 20, False), ("black", 8, True), ("black", 7, False)])
def test_art_44_2_differences_greater_than_25_20_7(on, behind, ends):
    """The trailing side misses: at the end of his turn the difference of Art. 44.2 ends the frame (Art. 45)."""
    lay = colours_from(on)
    g = Game(lay, state=state_with((30, 30 + behind), lay))
    v = g.shot(on, cue_to=(700.0, 1000.0))
    assert v["foul"] is None and v["game_over"] is ends
    if ends:
        assert v["winner"] == "B" and v["reason"] == "difference"


def test_art_45_a_foul_credit_reaching_the_difference_ends_the_frame():
    lay = colours_from("blue")
    g = Game(lay, state=state_with((30, 51), lay))
    v = g.shot("blue", "cue")
    assert v["points"]["B"] == 5 and v["game_over"] and v["winner"] == "B"


def test_art_45_b_the_leader_reaching_the_difference_with_his_own_pot_may_stop():
    lay = colours_from("brown")
    g = Game(lay, state=state_with((44, 20), lay))
    v = g.shot("brown", "brown", cue_to=(700.0, 1000.0))
    assert v["score"]["A"] == 48 and v["game_over"] and v["winner"] == "A" and v["play_on_allowed"]
    assert g.summary()["frames"]["A"] == 1


def test_art_45_b_after_play_on_a_foul_that_closes_the_gap_lets_the_frame_go_on():
    lay = colours_from("brown")
    g = Game(lay, state=state_with((44, 20), lay))
    g.shot("brown", "brown", cue_to=(700.0, 1000.0))
    g.control("play_on")
    v = g.shot("blue", "blue", cue_to=(700.0, 1000.0))
    assert not v["game_over"] and v["score"]["A"] == 53  # playing on: no new stop
    v = g.shot("pink", "cue")
    assert v["points"]["B"] == 6 and v["score"] == {"A": 53, "B": 26}
    assert v["game_over"] and v["winner"] == "A"  # 27 > 20 with the pink on
    lay = colours_from("brown")
    g = Game(lay, state=state_with((44, 20), lay))
    g.shot("brown", "brown", cue_to=(700.0, 1000.0))
    g.control("play_on")
    v = g.shot("blue", "cue")
    assert v["score"] == {"A": 48, "B": 25} and not v["game_over"]  # 23 is not more than 25


def test_art_45_play_on_without_a_stop_is_an_error():
    with pytest.raises(LogError):
        Game().control("play_on")


def test_art_46_2_only_the_black_left_any_foul_loses_the_frame():
    lay = colours_from("black")
    g = Game(lay, state=state_with((60, 57), lay))
    v = g.shot("black", "cue")
    assert v["game_over"] and v["winner"] == "B" and v["reason"] == "foul_on_black"
    assert v["score"] == {"A": 60, "B": 64}


def test_art_46_2_a_foul_on_the_black_loses_even_for_the_side_ahead_by_less_than_7():
    lay = colours_from("black")
    g = Game(lay, state=state_with((63, 57), lay))
    v = g.shot(None, cue_to=(300.0, 700.0))
    assert v["game_over"] and v["winner"] == "B"


def test_art_46_1_the_side_7_ahead_fouling_the_black_ties_and_the_black_is_respotted():
    lay = colours_from("black")
    g = Game(lay, state=state_with((64, 57), lay))
    v = g.shot("black", "cue")
    assert not v["game_over"] and v["score"] == {"A": 64, "B": 64}
    assert v["respot"] == [{"ball": "black", "at": [round(SPOT["black"][0], 1), round(SPOT["black"][1], 1)]}]
    assert v["cue_in_hand"] and v["ball_on"] == "black"


def test_art_47_a_tie_on_the_black_goes_to_the_respotted_black_in_hand_in_the_d():
    lay = colours_from("black")
    g = Game(lay, state=state_with((50, 57), lay))
    v = g.shot("black", "black", cue_to=(700.0, 2000.0))
    assert v["score"] == {"A": 57, "B": 57} and not v["game_over"] and "re-spotted black" in v["announce"]
    assert v["respot"][0]["ball"] == "black" and v["cue_in_hand"]
    g.control("first_player", side="B")  # Art. 19: the lot
    lay = {"black": SPOT["black"], "cue": (W / 2, BAULK + 200.0)}  # outside the D: Art. 41.9
    v = g.shot("black", start=lay, cue_to=(700.0, 1500.0))
    assert v["shooter"] == "B" and v["foul"]["code"] == "outside_d" and v["foul"]["penalty"] == 7
    assert v["game_over"] and v["winner"] == "A" and v["reason"] == "foul_on_respotted_black"


def test_art_47_the_respotted_black_potted_wins():
    lay = colours_from("black")
    g = Game(lay, state=state_with((50, 57), lay))
    g.shot("black", "black", cue_to=(700.0, 2000.0))
    assert g.match.referee.next_shooter(g.state) == "A"  # default: the frame's breaker
    v = g.shot(None, cue_to=(700.0, 1500.0), start={"black": SPOT["black"], "cue": IN_D})
    assert v["foul"]["code"] == "miss" and v["game_over"] and v["winner"] == "B"
    g = Game(lay, state=state_with((50, 57), lay))
    g.shot("black", "black", cue_to=(700.0, 2000.0))
    g.shot("black", cue_to=(700.0, 1500.0))
    v = g.shot("black", "black", cue_to=(700.0, 1500.0))
    assert v["shooter"] == "B" and v["game_over"] and v["winner"] == "B"


def test_art_47_option_respot_black_false_records_a_drawn_frame():
    lay = colours_from("black")
    g = Game(lay, state=state_with((50, 57), lay), respot_black=False)
    v = g.shot("black", "black", cue_to=(700.0, 2000.0))
    assert v["game_over"] and v["winner"] == "draw"
    s = g.summary()
    assert s["match_over"] and s["winner"] == "draw" and s["frames"] == {"A": 0, "B": 0}


def test_art_44_3_a_concession_ends_the_frame():
    g = Game(frames=2)
    g.shot("red1", "red1", cue_to=OPEN_CUE)
    g.control("concede", side="B")
    s = g.summary()
    assert s["game_over"] and s["frame_winner"] == "A" and s["frames"] == {"A": 1, "B": 0} and not s["match_over"]


def test_art_18_49_frames_alternate_the_break_and_the_match_goes_to_n_wins():
    g = Game(frames=2)
    g.control("concede", side="B")
    assert g.match.referee.next_shooter(g.state) == "B"  # B breaks the second frame
    v = g.shot("red1", "red1", cue_to=OPEN_CUE)
    assert v["shooter"] == "B" and v["frame"] == 2 and v["score"] == {"A": 0, "B": 1}
    g.control("concede", side="B")
    s = g.summary()
    assert s["frames"] == {"A": 2, "B": 0} and s["match_over"] and s["winner"] == "A"
    with pytest.raises(LogError):
        g.shot("red2", cue_to=OPEN_CUE)


# --- stalemate (Art. 48) ------------------------------------------------------------------------------------------

def test_art_48_the_second_unchanged_shot_warns_and_the_third_annuls_the_frame():
    lay = one_red(cue=(W / 2, 1700.0), red=(W / 2, 1800.0))
    g = Game(lay, frames=2)
    v1 = g.shot("red1", cue_to=(W / 2 + 5.0, 1702.0))
    assert v1["stalemate"] == 1 and not any("stalemate" in a for a in v1["announce"])
    v2 = g.shot("red1", cue_to=(W / 2, 1700.0))
    assert v2["stalemate"] == 2 and "stalemate warning (impasse)" in v2["announce"]
    v3 = g.shot("red1", cue_to=(W / 2 + 5.0, 1702.0))
    assert v3["game_over"] and v3["reason"] == "stalemate" and v3["winner"] is None
    s = g.summary()
    assert s["frames"] == {"A": 0, "B": 0} and s["results"][-1]["reason"] == "stalemate"
    assert g.match.referee.next_shooter(g.state) == "A"  # the frame is replayed, same breaker
    v = g.shot("red1", "red1", cue_to=OPEN_CUE)
    assert v["frame"] == 2 and v["shooter"] == "A" and v["score"] == {"A": 1, "B": 0}


def test_art_48_option_the_replayed_frame_alternates_the_break():
    lay = one_red(cue=(W / 2, 1700.0), red=(W / 2, 1800.0))
    g = Game(lay, frames=2, stalemate_breaker="alternate")
    for _ in range(3):
        v = g.shot("red1", cue_to=(W / 2, 1700.0))
    assert v["game_over"] and g.match.referee.next_shooter(g.state) == "B"


def test_art_48_a_shot_that_changes_the_position_resets_the_count():
    lay = one_red(cue=(W / 2, 1700.0), red=(W / 2, 1800.0))
    g = Game(lay)
    g.shot("red1", cue_to=(W / 2 + 5.0, 1702.0))
    g.shot("red1", cue_to=(W / 2, 1700.0))
    v = g.shot("red1", cue_to=(W / 2, 1200.0))
    assert v["stalemate"] == 0 and not v["game_over"]


# --- scoreboard, summary, override, options, purity ---------------------------------------------------------------

def test_the_scoreboard_lead_and_snookers_required():
    lay = colours_from("pink")
    g = Game(lay, state=state_with((20, 40), lay))
    v = g.shot("pink", cue_to=(700.0, 1000.0))
    # B leads by 20 with 13 on the table: A needs ceil(7 / 6) = 2 snookers.
    assert v["table"] == {"remaining": 13, "lead": 20, "leader": "B", "snookers_required": 2, "reds": 0}


def test_summary_counts_fouls_and_high_breaks_per_side():
    g = Game()
    g.shot("red1", "red1", cue_to=OPEN_CUE)
    g.shot("black", "black", nominated="black", cue_to=OPEN_CUE)
    g.shot("red2", "cue")
    g.shot("red3", "red3", cue_to=OPEN_CUE)
    s = g.summary()
    assert s["fouls"] == {"A": 1, "B": 0} and s["high_break"] == {"A": 8, "B": 1}
    assert s["score"] == {"A": 8, "B": 5} and not s["game_over"] and s["winner"] is None


def test_override_replaces_the_verdict_and_recomputes_the_score():
    g = Game()
    g.shot("red1", "red1", cue_to=OPEN_CUE)
    g.control("override", foul={"code": "push", "article": "sinuca Art. 41.3", "penalty": 4}, turn="passes")
    v = g.match.verdicts[-1].to_dict()
    assert v["foul"]["code"] == "push" and v["points"] == {"A": 0, "B": 4} and v["score"] == {"A": 0, "B": 4}
    assert g.match.referee.next_shooter(g.state) == "B"
    g.control("undo")
    assert g.summary()["score"] == {"A": 0, "B": 0}


def test_options_unknown_or_bad_are_rejected():
    with pytest.raises(OptionError):
        referee_for("sinuca", options={"colours": "6"})
    with pytest.raises(OptionError):
        referee_for("sinuca", options={"reds": "7"})
    with pytest.raises(OptionError):
        referee_for("sinuca", distance=100)
    ref = referee_for("sinuca", options={"reds": "6", "frames": "3"})
    assert isinstance(ref, SinucaReferee) and ref.reds == 6 and ref.frames_to_win == 3
    assert len([b for b in ref.opening().balls if b.startswith("red")]) == 6


def test_a_red_beyond_the_reds_option_is_an_error():
    g = Game(reds=6)
    with pytest.raises(LogError) as exc:
        g.shot("red9", cue_to=OPEN_CUE)
    assert "6 reds" in exc.value.problem


def test_judge_is_pure():
    ref = SinucaReferee(table=T)
    g = Game()
    s = g.make("red1", "red1", cue_to=OPEN_CUE)
    state = ref.opening()
    v1, n1 = ref.judge(state, s, 1)
    v2, n2 = ref.judge(state, s, 1)
    assert state == ref.opening() and v1 == v2 and n1 == n2 and isinstance(v1, Verdict)
    with pytest.raises(Exception):
        state.score = {}  # type: ignore[misc]


def test_the_opening_rack_art_17():
    balls = rack(T, 15)
    reds = [p for b, p in balls.items() if b.startswith("red")]
    assert len(reds) == 15
    apex = min(reds, key=lambda p: p[1])
    assert apex[0] == pytest.approx(W / 2) and 2 * R < apex[1] - SPOT["pink"][1] < 2 * R + 5  # not touching
    assert max(p[1] for p in reds) + R < SPOT["black"][1] - R
    assert all(math.dist(p, q) >= 2 * R - 1e-6 for i, p in enumerate(reds) for q in reds[i + 1:])


def test_art_8_a_free_ball_adds_up_to_8_points_to_what_is_on_the_table():
    g = Game(snooker_after_foul_layout())
    v = g.shot("green", cue_to=CUE_BEHIND_BLUE)
    assert v["table"]["remaining"] == 35 and v["table"]["remaining_with_free_ball"] == 43
    g = Game(colours_from("yellow", cue=(W / 2 + 300.0, 600.0)))
    v = g.shot(None, cue_to=(SPOT["yellow"][0], SPOT["yellow"][1] - 300.0))
    assert v["table"]["remaining_with_free_ball"] == 27 + 2


def test_art_42_2_option_variable_reads_a_strike_on_another_ball_as_touching_it():
    v = Game(strike_other_ball="variable").shot("red1", strike="red1", cue_to=OPEN_CUE)
    assert v["foul"]["article"] == "sinuca Art. 41.5" and v["foul"]["penalty"] == 4


def test_art_41_9_a_log_opening_in_the_middle_of_a_frame_is_not_a_break_off_foul():
    lay = one_red(cue=(300.0, 2000.0))
    g = Game(lay, state=SinucaState(balls=rack(T, 15)))  # the opening state, cue ball in hand
    v = g.shot("red1", "red1", cue_to=OPEN_CUE)
    assert v["foul"] is None and v["points"]["A"] == 1
    lay = rack(T, 15)
    lay["cue"] = (W / 2, BAULK + 100.0)
    v = Game(lay, state=SinucaState(balls=rack(T, 15)), d_check=False).shot("red1", cue_to=OPEN_CUE)
    assert v["foul"] is None


def test_art_14_a_red_potted_through_another_ball_counts():
    g = Game()
    s = g.make("red1", "red2", cue_to=OPEN_CUE)  # the cue ball hits red1, red1 sends red2 in
    s = replace(s, events=tuple(sorted(s.events + (ball_ball(s.t_start + 0.3, "red1", "red2"),), key=lambda e: e.t)))
    v = g.play(s)
    assert v["foul"] is None and v["points"]["A"] == 1 and v["turn"] == "keeps"


@pytest.mark.parametrize("pocket", ["bottom_left", "left_middle", "top_right"])
def test_art_22_the_ball_on_may_go_in_any_pocket(pocket):
    v = Game().shot("red1", "red1", pocket=pocket, cue_to=OPEN_CUE)
    assert v["points"]["A"] == 1


def test_art_23_25_the_verdict_names_a_ball_touching_the_cue_ball():
    lay = one_red(cue=(300.0, 700.0), red=(500.0, 1500.0))
    v = Game(lay).shot("red1", cue_to=(500.0, 1500.0 - 2 * R - 0.3))
    assert v["touching"] == ["red1"] and v["snooker"] is None
    v = Game(lay).shot("red1", cue_to=(500.0, 1400.0))
    assert v["touching"] == []


def test_art_49_2_conceding_between_frames_concedes_the_match():
    g = Game(frames=3)
    g.control("concede", side="A")
    assert not g.summary()["match_over"] and g.summary()["frames"] == {"A": 0, "B": 1}
    g.control("concede", side="A")
    s = g.summary()
    assert s["match_over"] and s["winner"] == "B" and s["frames"] == {"A": 0, "B": 1}


def test_art_44_3_a_concession_without_a_side_is_the_side_to_play():
    g = Game()
    g.shot("red1", cue_to=OPEN_CUE)  # B to play
    g.control("concede")
    assert g.summary()["frame_winner"] == "A"


def test_art_18_first_player_between_frames_names_the_next_breaker():
    g = Game(frames=2)
    g.control("concede", side="B")
    g.control("first_player", side="A")
    v = g.shot("red1", cue_to=OPEN_CUE)
    assert v["shooter"] == "A" and v["frame"] == 2
    with pytest.raises(LogError):
        g.control("first_player", side="B")  # in the middle of a frame: nothing to choose


def test_controls_that_the_state_forbids_name_the_record():
    g = Game(snooker_after_foul_layout())
    g.shot("green", cue_to=CUE_BEHIND_BLUE)
    with pytest.raises(LogError) as exc:
        g.control("free_ball", ball="red1")  # a red cannot be the free ball (Art. 4: a colour)
    assert exc.value.record == f"test line {g.n}"
    with pytest.raises(LogError):
        Game(colours_from("blue")).control("nominate", ball="yellow")  # not on the table
    with pytest.raises(LogError):
        Game().control("ball_in_hand", at=(700.0, 500.0))  # not a sinuca control
    with pytest.raises(LogError):
        Game().control("choose_group", side="A", group="low")


def test_the_full_size_table_preset_uses_its_own_spots_and_pockets():
    from rules.tables import preset

    big = preset("snooker_full")
    lay = rack(big, 15)
    lay["cue"] = (big.width / 2, big.lines["baulk_line_y"] - 50.0)
    g = Game(lay, table=big, state=SinucaState(balls=rack(big, 15)))
    g.shot("red1", "red1", cue_to=(500.0, 1500.0))
    v = g.shot("black", "black", nominated="black", cue_to=(500.0, 1500.0))
    assert v["respot"][0]["at"] == [round(big.spots["black"][0], 1), round(big.spots["black"][1], 1)]
    assert big.spots["black"] != T.spots["black"]


def test_art_23_2_a_a_ball_on_touching_the_cue_ball_counts_as_hit_when_playing_away():
    lay = one_red(cue=(500.0, 1500.0 - 2 * R - 0.2), red=(500.0, 1500.0))
    v = Game(lay).shot(None, cue_to=(500.0, 900.0))
    assert v["foul"] is None and v["turn"] == "passes"
    lay = one_red(cue=(500.0, 1500.0 - 2 * R - 20.0), red=(500.0, 1500.0))  # not touching: a miss
    assert Game(lay).shot(None, cue_to=(500.0, 900.0))["foul"]["code"] == "miss"
    lay = {**one_red(cue=(SPOT["brown"][0], SPOT["brown"][1] - 2 * R - 0.2)), "red1": (300.0, 1800.0)}
    v = Game(lay).shot(None, cue_to=(500.0, 900.0))  # touching the brown, not a ball on
    assert v["foul"]["code"] == "miss"


def test_a_shot_seen_with_low_confidence_asks_for_confirmation():
    g = Game()
    v = g.play(replace(g.make("red1", "red1", cue_to=OPEN_CUE), confidence=0.5))
    assert v["confirm"] is True and v["points"]["A"] == 1
    assert "confirm" not in Game().shot("red1", "red1", cue_to=OPEN_CUE)


def test_art_45_b_option_play_on_shot_stops_at_every_shot_that_keeps_the_difference():
    lay = colours_from("brown")
    g = Game(lay, state=state_with((44, 20), lay), play_on="shot")
    g.shot("brown", "brown", cue_to=(700.0, 1000.0))
    g.control("play_on")
    v = g.shot("blue", "blue", cue_to=(700.0, 1000.0))
    assert v["game_over"] and v["play_on_allowed"] and v["score"]["A"] == 53


def test_art_41_15_option_simultaneous_ms_sets_what_counts_as_at_once():
    g = Game()
    s = g.make(None, cue_to=OPEN_CUE)
    s = replace(s, events=s.events + (ball_ball(s.t_start + 0.1, "cue", "red1"),
                                      ball_ball(s.t_start + 0.104, "cue", "pink")))
    assert g.play(s)["foul"] is None  # 4 ms apart: the red first
    g = Game(simultaneous_ms=5)
    assert g.play(s)["foul"]["code"] == "simultaneous"


def test_art_46_1_the_tie_by_a_miss_on_the_black_offers_no_free_ball_on_the_respotted_black():
    lay = colours_from("black")
    g = Game(lay, state=state_with((64, 57), lay))
    v = g.shot(None, cue_to=(300.0, 700.0))  # the side 7 ahead misses everything: 7 to B, a tie
    assert v["score"] == {"A": 64, "B": 64} and "re-spotted black" in v["announce"]
    assert not v["free_ball_offered"] and not v["game_over"]
    with pytest.raises(LogError):
        g.control("pass_back")


def test_override_of_the_points_alone_changes_the_score_that_follows():
    g = Game()
    g.shot("red1", ["red1", "red2"], cue_to=OPEN_CUE)
    g.control("override", points={"A": 1}, reason="one red only")
    v = g.match.verdicts[-1].to_dict()
    assert v["points"] == {"A": 1, "B": 0} and v["score"] == {"A": 1, "B": 0} and v["reason"] == "one red only"
    v = g.shot("black", "black", nominated="black", cue_to=OPEN_CUE)
    assert v["score"] == {"A": 8, "B": 0}


def test_override_turn_keeps_after_a_plain_miss_leaves_a_red_on():
    g = Game()
    g.shot("red1", cue_to=OPEN_CUE)
    g.control("override", turn="keeps")
    assert g.match.referee.next_shooter(g.state) == "A" and g.match.verdicts[-1].extra["ball_on"] == "red"


def test_art_16_a_start_copied_from_before_cannot_bring_a_potted_red_back():
    lay = one_red()
    g = Game(lay)
    g.shot("red1", "red1", start=lay, cue_to=OPEN_CUE)
    g.shot("black", "black", nominated="black", start={**lay, "cue": OPEN_CUE}, cue_to=OPEN_CUE)
    v = g.shot("yellow", "yellow", start={**lay, "cue": OPEN_CUE}, cue_to=OPEN_CUE)  # red1 still listed
    assert v["foul"] is None and v["points"]["A"] == 2 and v["respot"] == [] and v["ball_on"] == "green"
    v = g.shot("green", ["green", "red1"], start={**lay, "cue": OPEN_CUE}, cue_to=OPEN_CUE)  # a stale event
    assert v["points"]["A"] == 3 and v["score"]["A"] == 13
