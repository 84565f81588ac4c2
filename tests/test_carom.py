"""The carom referee, article by article (carom rulebook 000_14e4088992522002.txt)."""

from __future__ import annotations

import pytest

from rules.controls import Control
from rules.errors import LogError
from rules.events import ball_ball, cushion, strike
from rules.match import Match
from rules.registry import referee_for
from rules.tables import preset
from tests.carom_builders import OPEN_TABLE, SPOT_START, Clock, shot, timed_shot

CAROM = preset("carom_match")
W, L = CAROM.width, CAROM.length
R = CAROM.ball_radius


def play(discipline: str, records, distance: int | None = None, **options):
    match = Match(referee_for(discipline, distance=distance, options={k: str(v) for k, v in options.items()}))
    verdicts = []
    for r in records:
        v = match.feed(r)
        if v is not None:
            verdicts.append(v)
    return verdicts, match.summary()


def opening_carom(clock: Clock, cue: str = "spot"):
    """A legal opening: red first (Art. 5.2), three cushions, then the white; the red is driven up out of the
    central balkline field (both object balls start in it, so a /1 game demands it: Art. 21.1)."""
    return shot(cue, ["red", "top", "left", "bottom", "white"], clock=clock, start=SPOT_START,
                end=dict(SPOT_START, red=(710.0, 2600.0)))


# --- Art. 6: the carom ------------------------------------------------------------------------------------------

def test_art6_carom_scores_one_and_keeps_the_turn():
    c = Clock()
    (v1, v2), m = play("free_game", [opening_carom(c), shot("spot", ["white", "red"], clock=c)])
    assert v1.points == {"A": 1, "B": 0} and v1.turn == "keeps" and v1.foul is None
    assert v2.points == {"A": 1, "B": 0} and v2.score == {"A": 2, "B": 0}
    assert m["score"] == {"A": 2, "B": 0} and m["innings"] == {"A": 1, "B": 0}


def test_art6_one_object_ball_is_no_carom_and_passes_without_foul():
    c = Clock()
    (v1, v2), m = play("free_game", [opening_carom(c), shot("spot", ["red", "top"], clock=c)])
    assert v2.points == {"A": 0, "B": 0} and v2.turn == "passes"
    assert v2.foul is None and v2.reason == "no_carom"
    assert m["next"] == {"shooter": "B", "ball": "white"}


def test_art6_kiss_of_an_object_ball_onto_the_cue_ball_completes_the_carom():
    """The red, hit first, kisses the white which then rolls into the cue ball: the player's ball has met both."""
    c = Clock()
    (_, v), _ = play("free_game", [opening_carom(c), shot("spot", ["red", "red-white", "white-spot"], clock=c)])
    assert v.points["A"] == 1


def test_art6_object_balls_meeting_each_other_do_not_count_for_the_cue_ball():
    c = Clock()
    (_, v), _ = play("free_game", [opening_carom(c), shot("spot", ["red", "red-white"], clock=c)])
    assert v.points["A"] == 0 and v.reason == "no_carom"


def test_art6_4_and_5_3_each_side_keeps_its_ball():
    """A opens with the spotted white (Art. 5.3); B plays the plain white all game (Art. 6.4)."""
    c = Clock()
    miss = shot("spot", ["red"], clock=c, start=SPOT_START)
    (v1, v2), _ = play("free_game", [miss, shot("white", ["red", "spot"], clock=c)])
    assert v1.turn == "passes" and v2.shooter == "B" and v2.points == {"A": 0, "B": 1}
    with pytest.raises(LogError, match="cue_ball"):
        play("free_game", [miss, shot("spot", ["red", "white"], clock=c)])


# --- Art. 5.2: the opening shot --------------------------------------------------------------------------------

def test_art5_2_opening_must_take_the_red_first():
    c = Clock()
    white_first = shot("spot", ["white", "top", "left", "bottom", "red"], clock=c, start=SPOT_START)
    (v,), _ = play("three_cushion", [white_first])
    assert v.points == {"A": 0, "B": 0} and v.turn == "passes"
    assert v.foul is not None and v.foul.article == "carom Art. 5.2"


def test_art5_2_red_via_a_cushion_first_is_a_legal_opening():
    c = Clock()
    (v,), _ = play("three_cushion", [shot("spot", ["top", "red", "left", "bottom", "white"], clock=c,
                                          start=SPOT_START)])
    assert v.points["A"] == 1


def test_art5_2_only_the_opening_shot_must_take_the_red_first():
    c = Clock()
    (_, v), _ = play("free_game", [opening_carom(c), shot("spot", ["white", "red"], clock=c)])
    assert v.points["A"] == 1


# --- Art. 28, 29: the cushion games -----------------------------------------------------------------------------

@pytest.mark.parametrize("contacts, scores", [
    (["red", "top", "left", "bottom", "white"], True),
    (["top", "left", "bottom", "red", "white"], True),  # cushions first, then both balls
    (["top", "red", "left", "right", "white"], True),
    (["red", "top", "left", "white"], False),  # two cushions only
    (["red", "top", "left", "white", "bottom"], False),  # the third cushion comes after the second ball
    (["red", "top", "top", "top", "white"], True),  # three contacts with one cushion count three (Art. 29)
])
def test_art29_three_cushions_before_the_second_object_ball(contacts, scores):
    c = Clock()
    (_, v), _ = play("three_cushion", [opening_carom(c), shot("spot", contacts, clock=c)])
    assert (v.points["A"] == 1) is scores
    if not scores:
        assert v.reason == "cushions" and v.foul is None and v.turn == "passes"


@pytest.mark.parametrize("cushion_dt, scores", [(-0.002, True), (+0.002, False)])
def test_art29_third_cushion_and_second_ball_milliseconds_apart(cushion_dt, scores):
    """Sub-frame timing decides: the third cushion 2 ms before the white scores, 2 ms after it does not."""
    t_white = 3.000
    timeline = [
        (0.01, strike(0.01, "spot")),
        (1.0, ball_ball(1.0, "spot", "red")),
        (1.5, cushion(1.5, "spot", "top")),
        (2.0, cushion(2.0, "spot", "left")),
        (t_white + cushion_dt, cushion(t_white + cushion_dt, "spot", "bottom")),
        (t_white, ball_ball(t_white, "white", "spot")),
    ]
    (v,), _ = play("three_cushion", [timed_shot("spot", timeline, start=SPOT_START)])
    assert (v.points["A"] == 1) is scores


def test_art28_one_cushion_needs_a_cushion_before_the_second_ball():
    c = Clock()
    (_, v_no, v_yes), _ = play("one_cushion", [
        opening_carom(c),
        shot("spot", ["red", "white", "top"], clock=c),
        shot("white", ["left", "red", "spot"], clock=c),
    ])
    assert v_no.points["A"] == 0 and v_no.reason == "cushions"
    assert v_yes.points["B"] == 1


# --- Art. 12: fouls --------------------------------------------------------------------------------------------

def test_art12_2_b_ball_off_the_table_is_a_foul_even_with_the_carom():
    c = Clock()
    (_, v), _ = play("three_cushion", [opening_carom(c), shot("spot", ["red", "top", "left", "bottom", "white",
                                                                       "off:red"], clock=c)])
    assert v.points["A"] == 0 and v.turn == "passes"
    assert v.foul.code == "off_table" and v.foul.article == "carom Art. 12.2.b" and v.foul.to == "B"


def test_art12_2_c_striking_while_a_ball_moves():
    c = Clock()
    (_, v), _ = play("free_game", [opening_carom(c), shot("spot", ["red", "white"], clock=c,
                                                           moving_at_strike=("red",))])
    assert v.points["A"] == 0 and v.foul.article == "carom Art. 12.2.c"


def test_art12_2_d_ball_touched_by_hand_stays_where_it_stops():
    c = Clock()
    moved = dict(OPEN_TABLE, white=(1000.0, 1000.0))
    (_, v), m = play("free_game", [opening_carom(c), shot("spot", ["red", "touched:white"], clock=c, end=moved)])
    assert v.foul.article == "carom Art. 12.2.d" and v.turn == "passes" and v.respot == ()


def test_art12_2_k_wrong_ball_mid_run_passes_at_once_and_keeps_the_run():
    """Playing the opponent's ball in the middle of a run: the turn passes at once, the balls stay where they are
    and the caroms made before stand (Art. 12.2.k)."""
    c = Clock()
    verdicts, m = play("free_game", [opening_carom(c), shot("spot", ["white", "red"], clock=c),
                                     shot("spot", ["red", "spot"], clock=c, struck="white")])
    v = verdicts[-1]
    assert v.points == {"A": 0, "B": 0} and v.turn == "passes" and v.respot == ()
    assert v.foul.code == "wrong_ball" and v.foul.article == "carom Art. 12.2.k"
    assert m["score"] == {"A": 2, "B": 0} and m["high_run"]["A"] == 2
    assert m["next"]["shooter"] == "B"


# --- Art. 14-17: free game --------------------------------------------------------------------------------------

CORNER = {"spot": (700.0, 1400.0), "white": (120.0, 80.0), "red": (60.0, 150.0)}  # both object balls in a corner


def test_art14_2_two_consecutive_caroms_in_a_corner_zone_need_an_object_ball_out():
    c = Clock()
    (_, v1, v2), _ = play("free_game", [opening_carom(c), shot("spot", ["white", "red"], clock=c, start=CORNER),
                                       shot("spot", ["white", "red"], clock=c, start=CORNER)])
    assert v1.points["A"] == 1
    assert "dentro" in v1.announce
    assert v2.points["A"] == 0 and v2.foul.code == "zone" and v2.foul.article == "carom Art. 14.2"


def test_art14_3_an_object_ball_that_leaves_and_comes_back_earns_a_new_first_carom():
    c = Clock()
    out_and_back = {"red": ((0.0, 60.0, 150.0), (0.5, 400.0, 600.0), (1.0, 70.0, 140.0))}
    verdicts, _ = play("free_game", [
        opening_carom(c),
        shot("spot", ["white", "red"], clock=c, start=CORNER),
        shot("spot", ["white", "red"], clock=c, start=CORNER, tracks=out_and_back),
        shot("spot", ["white", "red"], clock=c, start=CORNER),
    ])
    assert [v.points["A"] for v in verdicts] == [1, 1, 1, 1]


def test_art17_a_ball_on_the_corner_line_is_inside():
    """The corner triangle's hypotenuse runs from (W/4, 0) to (0, L/8); a red sitting on it counts as inside."""
    on_line = (W / 8, L / 16)  # the midpoint of the hypotenuse
    layout = {"spot": (700.0, 1400.0), "white": (60.0, 60.0), "red": on_line}
    c = Clock()
    verdicts, _ = play("free_game", [opening_carom(c), shot("spot", ["white", "red"], clock=c, start=layout),
                                    shot("spot", ["white", "red"], clock=c, start=layout)])
    assert verdicts[-1].foul is not None and verdicts[-1].foul.code == "zone"
    assert "a cavalo" in verdicts[1].announce


def test_art17_a_ball_just_clear_of_the_line_is_outside():
    clear = (W / 8 + 10.0, L / 16 + 10.0)
    layout = {"spot": (700.0, 1400.0), "white": (60.0, 60.0), "red": clear}
    c = Clock()
    verdicts, _ = play("free_game", [opening_carom(c), shot("spot", ["white", "red"], clock=c, start=layout),
                                    shot("spot", ["white", "red"], clock=c, start=layout)])
    assert verdicts[-1].points["A"] == 1


def test_art17_uncertainty_widens_the_line_against_the_player():
    near = (W / 8 + 3.0, L / 16 + 3.0)  # ~4.2 mm clear of the line: outside with 1.5 mm chalk, inside with +5 mm
    layout = {"spot": (700.0, 1400.0), "white": (60.0, 60.0), "red": near}
    c = Clock()
    records = [opening_carom(c)] + [shot("spot", ["white", "red"], clock=c, start=layout,
                                         uncertainty={"red": 5.0}) for _ in range(2)]
    verdicts, _ = play("free_game", records)
    assert verdicts[-1].foul is not None and verdicts[-1].foul.code == "zone"


def test_art15_frozen_balls_go_back_to_the_start_in_the_free_game():
    c = Clock()
    frozen_end = {"spot": (500.0, 1000.0), "white": (500.0 + 61.5, 1000.0), "red": (900.0, 2000.0)}
    (_, v), m = play("free_game", [opening_carom(c), shot("spot", ["white", "red"], clock=c, end=frozen_end)])
    assert v.turn == "keeps" and "coladas" in v.announce
    assert {r.ball: r.at for r in v.respot} == {"red": CAROM.spots["top"], "white": CAROM.spots["bottom"],
                                                 "spot": CAROM.spots["start_right"]}


def test_art16_ball_off_the_table_in_the_free_game_puts_all_three_on_the_start():
    c = Clock()
    (_, v), _ = play("free_game", [opening_carom(c), shot("spot", ["red", "off:white"], clock=c)])
    # The incoming player is B: his ball (white) on a starting spot, A's ball on the bottom spot.
    assert {r.ball: r.at for r in v.respot} == {"red": CAROM.spots["top"], "spot": CAROM.spots["bottom"],
                                                 "white": CAROM.spots["start_right"]}


# --- Art. 18-26: balkline ---------------------------------------------------------------------------------------

# A field of the 47 balkline: the bottom-left square x < 473, y < 473 (clear of the anchor boxes).
FIELD_47 = {"spot": (700.0, 1400.0), "white": (250.0, 250.0), "red": (300.0, 330.0)}


def test_art20_1_balkline_47_2_allows_one_carom_then_an_object_ball_must_leave():
    c = Clock()
    verdicts, _ = play("balkline_47_2", [opening_carom(c)] + [shot("spot", ["white", "red"], clock=c,
                                                                    start=FIELD_47) for _ in range(2)])
    assert verdicts[1].points["A"] == 1 and "dentro" in verdicts[1].announce
    assert verdicts[2].points["A"] == 0 and verdicts[2].foul.article == "carom Art. 20.1"
    assert verdicts[2].turn == "passes"


def test_art20_2_object_ball_leaves_the_field_and_rolls_back_in():
    c = Clock()
    back_in = {"white": ((0.0, 250.0, 250.0), (0.3, 250.0, 560.0), (0.8, 240.0, 260.0))}
    verdicts, _ = play("balkline_47_2", [
        opening_carom(c),
        shot("spot", ["white", "red"], clock=c, start=FIELD_47),
        shot("spot", ["white", "red"], clock=c, start=FIELD_47, tracks=back_in),
        shot("spot", ["white", "red"], clock=c, start=FIELD_47),  # a first carom again (Art. 20.2)
        shot("spot", ["white", "red"], clock=c, start=FIELD_47),
    ])
    assert [v.points["A"] for v in verdicts] == [1, 1, 1, 1, 0]


def test_art20_2_reaching_the_line_is_not_leaving():
    """The white rolls up to the balkline (its point on the chalk) and back: it never left (Art. 26)."""
    c = Clock()
    to_the_line = {"white": ((0.0, 250.0, 250.0), (0.3, 250.0, 473.5), (0.8, 240.0, 260.0))}
    verdicts, _ = play("balkline_47_2", [
        opening_carom(c),
        shot("spot", ["white", "red"], clock=c, start=FIELD_47),
        shot("spot", ["white", "red"], clock=c, start=FIELD_47, tracks=to_the_line),
    ])
    assert verdicts[-1].foul is not None and verdicts[-1].foul.code == "zone"


def test_art21_1_the_opening_carom_in_47_1_must_drive_an_object_ball_out_of_the_central_field():
    c = Clock()
    (v,), _ = play("balkline_47_1", [shot("spot", ["red", "white"], clock=c, start=SPOT_START)])
    assert v.points["A"] == 0 and v.foul is not None and v.foul.code == "zone"


def test_art21_1_balkline_47_1_every_carom_in_a_field_must_drive_a_ball_out():
    c = Clock()
    verdicts, _ = play("balkline_47_1", [opening_carom(c), shot("spot", ["white", "red"], clock=c, start=FIELD_47)])
    assert verdicts[1].points["A"] == 0 and verdicts[1].foul.article == "carom Art. 21.1"
    out = {"red": ((0.0, 300.0, 330.0), (0.5, 600.0, 330.0))}
    end = dict(FIELD_47, red=(600.0, 330.0))
    verdicts, _ = play("balkline_47_1", [opening_carom(c), shot("spot", ["white", "red"], clock=c, start=FIELD_47,
                                                                 tracks=out, end=end)])
    assert verdicts[1].points["A"] == 1


def test_art20_3_the_anchor_box_restricts_like_a_field():
    """Both object balls in the anchor box straddling the x=473 line at the bottom cushion: the fields differ
    (one each side of the line) but the box holds both, so the second carom must drive one out."""
    box = {"spot": (700.0, 1400.0), "white": (430.0, 100.0), "red": (520.0, 120.0)}
    c = Clock()
    verdicts, _ = play("balkline_47_2", [opening_carom(c)] + [shot("spot", ["white", "red"], clock=c, start=box)
                                                              for _ in range(2)])
    assert verdicts[1].points["A"] == 1 and "dentro (quadro adicional)" in verdicts[1].announce
    assert verdicts[2].foul is not None and verdicts[2].foul.code == "zone"


def test_art26_a_ball_straddling_two_fields_counts_in_both():
    """The red on the x=473 line, the white left of it: both are in the left field (Art. 26)."""
    straddle = {"spot": (700.0, 1400.0), "white": (250.0, 300.0), "red": (473.0, 300.0)}
    c = Clock()
    verdicts, _ = play("balkline_47_2", [opening_carom(c)] + [shot("spot", ["white", "red"], clock=c,
                                                                    start=straddle) for _ in range(2)])
    assert verdicts[2].foul is not None and verdicts[2].foul.code == "zone"
    assert "a cavalo" in verdicts[1].announce


def test_art22_23_balkline_71_has_six_fields_split_on_the_long_axis():
    """In 71/2 the long axis x = W/2 divides the table: balls either side of it are in different fields."""
    apart = {"spot": (700.0, 2000.0), "white": (500.0, 300.0), "red": (900.0, 300.0)}
    together = {"spot": (700.0, 2000.0), "white": (400.0, 300.0), "red": (500.0, 400.0)}
    c = Clock()
    v_apart, _ = play("balkline_71_2", [opening_carom(c)] + [shot("spot", ["white", "red"], clock=c, start=apart)
                                                             for _ in range(2)])
    v_together, _ = play("balkline_71_2", [opening_carom(c)] + [shot("spot", ["white", "red"], clock=c,
                                                                      start=together) for _ in range(2)])
    assert v_apart[2].points["A"] == 1
    assert v_together[2].foul is not None and v_together[2].foul.article == "carom Art. 23"


def test_zone_counts_restart_with_a_new_inning():
    c = Clock()
    verdicts, _ = play("balkline_47_2", [
        opening_carom(c),
        shot("spot", ["white", "red"], clock=c, start=FIELD_47),
        shot("spot", ["red"], clock=c, start=FIELD_47),  # a miss: B's turn
        shot("white", ["red"], clock=c, start=FIELD_47),  # B misses too
        shot("spot", ["white", "red"], clock=c, start=FIELD_47),  # A's new run: a first carom again
    ])
    assert verdicts[-1].points["A"] == 1


# --- Art. 24, 25, 30, 31: frozen balls and balls off the table --------------------------------------------------

FROZEN_END = {"spot": (500.0, 1000.0), "white": (561.5, 1000.0), "red": (900.0, 2000.0)}


def test_art24_frozen_balls_in_balkline_the_player_may_have_all_three_respotted():
    c = Clock()
    m = Match(referee_for("balkline_47_2"))
    m.feed(opening_carom(c))
    v = m.feed(shot("spot", ["white", "red"], clock=c, end=FROZEN_END))
    assert "coladas" in v.announce and v.respot == ()
    m.feed(Control("respot_all"))
    assert m.state.positions == {"red": CAROM.spots["top"], "white": CAROM.spots["bottom"],
                                 "spot": CAROM.spots["start_right"]}


def test_art30_2_b_three_cushion_respots_only_the_frozen_balls():
    c = Clock()
    m = Match(referee_for("three_cushion"))
    m.feed(opening_carom(c))
    m.feed(shot("spot", ["white", "top", "left", "right", "red"], clock=c, end=FROZEN_END))
    m.feed(Control("respot_all"))
    assert m.state.positions["red"] == FROZEN_END["red"]  # not frozen: stays
    assert m.state.positions["spot"] == CAROM.spots["bottom"]  # the incoming player's ball (Art. 31.2.b)
    assert m.state.positions["white"] == CAROM.spots["centre"]  # the other white (Art. 31.2.c)


def test_respot_all_is_refused_when_no_ball_is_frozen():
    c = Clock()
    m = Match(referee_for("three_cushion"))
    m.feed(opening_carom(c))
    with pytest.raises(LogError, match="not frozen"):
        m.feed(Control("respot_all"), "log line 2")


def test_art31_1_one_cushion_ball_off_the_table_all_three_to_the_start():
    c = Clock()
    (_, v), _ = play("one_cushion", [opening_carom(c), shot("spot", ["top", "red", "off:red"], clock=c)])
    assert len(v.respot) == 3


def test_art31_2_three_cushion_only_the_jumped_ball_is_spotted():
    c = Clock()
    (_, v), _ = play("three_cushion", [opening_carom(c), shot("spot", ["red", "off:red"], clock=c)])
    assert [(r.ball, r.at) for r in v.respot] == [("red", CAROM.spots["top"])]


def test_art31_2_the_incoming_players_ball_goes_on_the_bottom_spot():
    c = Clock()
    (_, v), _ = play("three_cushion", [opening_carom(c), shot("spot", ["off:spot"], clock=c)])
    # B comes in; A's ball (spot) is the other white: centre spot (Art. 31.2.c).
    assert [(r.ball, r.at) for r in v.respot] == [("spot", CAROM.spots["centre"])]
    (_, v), _ = play("three_cushion", [opening_carom(c), shot("spot", ["red", "off:white"], clock=c)])
    assert [(r.ball, r.at) for r in v.respot] == [("white", CAROM.spots["bottom"])]  # B's own ball


def test_art31_3_an_occupied_spot_sends_the_ball_to_the_occupants_spot():
    """The red leaves the table while the spot white rests on the top spot: the red takes the spot white's spot,
    the centre (B comes in, so A's ball is the other white)."""
    c = Clock()
    end = {"spot": CAROM.spots["top"], "white": (300.0, 300.0)}
    (_, v), _ = play("three_cushion", [opening_carom(c), shot("spot", ["red", "off:red"], clock=c, end=end)])
    assert [(r.ball, r.at) for r in v.respot] == [("red", CAROM.spots["centre"])]


def test_art31_4_all_three_off_go_to_their_three_cushion_spots():
    c = Clock()
    (_, v), _ = play("three_cushion", [opening_carom(c), shot("spot", ["off:red", "off:white", "off:spot"],
                                                               clock=c, end={})])
    assert {r.ball: r.at for r in v.respot} == {"red": CAROM.spots["top"], "white": CAROM.spots["bottom"],
                                                 "spot": CAROM.spots["centre"]}


# --- Art. 11: the end of the game -------------------------------------------------------------------------------

def run_of(clock: Clock, cue: str, n: int):
    return [shot(cue, ["red", "top", "left", "bottom", "white" if cue == "spot" else "spot"], clock=clock)
            for _ in range(n)]


def miss(clock: Clock, cue: str):
    return shot(cue, ["red"], clock=clock)


def test_art11_3_the_opener_reaching_the_distance_gives_the_equalising_inning():
    c = Clock()
    verdicts, m = play("three_cushion", [opening_carom(c)] + run_of(c, "spot", 2), distance=3)
    last = verdicts[-1]
    assert last.score == {"A": 3, "B": 0} and last.turn == "passes" and not last.game_over
    assert last.reason == "equalising_inning" and len(last.respot) == 3
    assert m["next"]["shooter"] == "B" and not m["game_over"]


def test_art11_3_equalising_inning_falls_short_the_opener_wins():
    c = Clock()
    verdicts, m = play("three_cushion", [opening_carom(c)] + run_of(c, "spot", 2) +
                       [shot("white", ["red", "top", "left", "bottom", "spot"], clock=c, start=SPOT_START),
                        miss(c, "white")], distance=3)
    assert verdicts[-1].game_over and m["winner"] == "A" and m["innings"] == {"A": 1, "B": 1}


def test_art11_4_equalising_inning_reaching_the_distance_is_a_draw():
    c = Clock()
    records = [opening_carom(c)] + run_of(c, "spot", 2) + \
              [shot("white", ["red", "top", "left", "bottom", "spot"], clock=c, start=SPOT_START)] + \
              run_of(c, "white", 2)
    verdicts, m = play("three_cushion", records, distance=3)
    assert verdicts[-1].game_over and verdicts[-1].reason == "draw"
    assert m["winner"] == "draw" and m["score"] == {"A": 3, "B": 3}


def test_art11_the_second_player_reaching_the_distance_wins_at_once():
    c = Clock()
    records = [miss(c, "spot")] + run_of(c, "white", 2)
    verdicts, m = play("three_cushion", records, distance=2)
    assert verdicts[-1].game_over and m["winner"] == "B" and verdicts[-1].turn == "passes"
    with pytest.raises(LogError, match="over"):
        play("three_cushion", records + [miss(c, "spot")], distance=2)


def test_the_equalising_inning_starts_with_an_opening_shot():
    """The balls go back to the start position (Art. 11.3), so B must take the red first (Art. 5.2)."""
    c = Clock()
    verdicts, _ = play("three_cushion", [opening_carom(c)] + run_of(c, "spot", 2) +
                       [shot("white", ["spot", "top", "left", "bottom", "red"], clock=c, start=SPOT_START)],
                       distance=3)
    assert verdicts[-1].foul is not None and verdicts[-1].foul.article == "carom Art. 5.2"


# --- the match statistics ---------------------------------------------------------------------------------------

def test_innings_runs_high_run_and_general_average():
    c = Clock()
    records = [opening_carom(c)] + run_of(c, "spot", 2) + [miss(c, "spot")] + run_of(c, "white", 1) + \
              [miss(c, "white"), miss(c, "spot"), miss(c, "white")]
    _, m = play("three_cushion", records, distance=40)
    assert m["score"] == {"A": 3, "B": 1}
    assert m["innings"] == {"A": 2, "B": 2}
    assert m["high_run"] == {"A": 3, "B": 1}
    assert m["average"] == {"A": 1.5, "B": 0.5}


# --- refereeing Art. 3 and 11: announcements --------------------------------------------------------------------

def test_refereeing_art3_the_count_is_announced():
    c = Clock()
    verdicts, _ = play("free_game", [opening_carom(c)] + run_of(c, "spot", 2))
    assert [v.announce[0] for v in verdicts] == ["1", "2", "3"]


def test_refereeing_art11_por_3_2_1_in_three_cushion():
    c = Clock()
    verdicts, _ = play("three_cushion", [opening_carom(c)] + run_of(c, "spot", 2), distance=4)
    assert [[a for a in v.announce if a.startswith("por")] for v in verdicts] == [["por 3"], ["por 2"], ["por 1"]]


def test_refereeing_art11_the_countdown_from_5_elsewhere():
    c = Clock()
    verdicts, _ = play("free_game", [opening_carom(c)] + run_of(c, "spot", 1), distance=6)
    assert "faltam 5" in verdicts[0].announce and "faltam 4" in verdicts[1].announce


# --- undo, override, concede ------------------------------------------------------------------------------------

def test_override_replaces_the_last_verdict_and_the_score_follows():
    c = Clock()
    m = Match(referee_for("three_cushion"))
    m.feed(opening_carom(c))
    m.feed(shot("spot", ["red", "top", "white"], clock=c))  # 2 cushions: no point
    m.feed(Control("override", {"points": {"A": 1}, "turn": "keeps", "reason": "referee saw a third cushion"}))
    assert m.verdicts[-1].points == {"A": 1, "B": 0} and m.verdicts[-1].turn == "keeps"
    assert m.summary()["score"] == {"A": 2, "B": 0} and m.summary()["next"]["shooter"] == "A"


def test_undo_removes_the_last_shot():
    c = Clock()
    m = Match(referee_for("three_cushion"))
    m.feed(opening_carom(c))
    before = m.summary()
    m.feed(shot("spot", ["red", "top", "left", "bottom", "white"], clock=c))
    m.feed(Control("undo"))
    assert m.summary() == before and len(m.verdicts) == 1


def test_undo_with_nothing_to_undo_is_an_error():
    with pytest.raises(LogError, match="undo"):
        Match(referee_for("three_cushion")).feed(Control("undo"), "log line 1")


def test_concede_ends_the_game_for_the_other_side():
    m = Match(referee_for("three_cushion"))
    m.feed(Control("concede", {"side": "A"}))
    assert m.summary()["winner"] == "B" and m.summary()["game_over"]


def test_controls_of_other_disciplines_are_refused():
    with pytest.raises(LogError, match="not a control of three_cushion"):
        Match(referee_for("three_cushion")).feed(Control("nominate", {"ball": "red"}), "log line 1")


def test_unknown_options_are_refused():
    from rules.match import OptionError
    with pytest.raises(OptionError, match="reds"):
        referee_for("three_cushion", options={"reds": "15"})
    with pytest.raises(OptionError, match="pockets"):
        referee_for("three_cushion", table="sinuca_br")


def test_a_match_picked_up_mid_game_has_no_opening_rule_and_may_start_with_b():
    c = Clock()
    m = Match(referee_for("three_cushion", options={"mid_game": "true"}))
    m.feed(Control("first_player", {"side": "B"}))
    v = m.feed(shot("white", ["spot", "top", "left", "bottom", "red"], clock=c))
    assert v.shooter == "B" and v.points == {"A": 0, "B": 1}
    with pytest.raises(LogError, match="first_player"):
        Match(referee_for("three_cushion")).feed(Control("first_player", {"side": "B"}), "log line 1")
