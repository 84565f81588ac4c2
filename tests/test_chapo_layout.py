"""Chapó's values and layout rules as pure functions (rules/chapo_layout.py), cited ``chapo Art. N.M``."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, strategies as st

from rules.chapo_layout import (
    four_in_line, in_cabana, mingo_spot, normal_layout, pins_value, place_pins, spot_blocked,
)
from rules.tables import preset

T = preset("chapo")
SP = T.spots
LATS = ["lat_top", "lat_bottom", "lat_left", "lat_right"]


# --- Art. 7: the pin combinations exactly as listed ---------------------------------------------------------------

@pytest.mark.parametrize("pins, value", [
    (["king"], 5),                                   # Rey sólo
    (["lat_top"], 2),                                # Lateral
    (["king", "lat_left"], 5),                       # Rey + Lateral
    (["king", "lat_left", "lat_right"], 7),          # Rey + 2 Laterales
    (["king", "lat_left", "lat_right", "lat_top"], 9),  # Rey + 3 Laterales
    (["king"] + LATS, 30),                           # todos: Chapó
    (["lat_left", "lat_right"], 4),                  # two laterals alone: 2 each
    (["lat_left", "lat_right", "lat_top"], 6),
    (LATS, 8),
    ([], 0),
])
def test_art_7_pin_values(pins, value):
    assert pins_value(pins) == value


def test_art_7_king_with_two_laterals_is_worth_more_than_two_laterals_alone():
    assert pins_value(["king", "lat_top", "lat_bottom"]) == 7 > pins_value(["lat_top", "lat_bottom"]) == 4


@given(st.sets(st.sampled_from(["king"] + LATS)))
def test_art_7_value_depends_only_on_the_king_and_the_number_of_laterals(pins):
    n = len(pins - {"king"})
    expected = ({0: 5, 1: 5, 2: 7, 3: 9, 4: 30}[n]) if "king" in pins else 2 * n
    assert pins_value(pins) == expected


# --- Art. 8, 14: cabañas, the line counting as inside ---------------------------------------------------------------

def test_art_8_14_cabanas_and_the_line():
    L = T.length
    assert in_cabana(T, "salida", (600, L / 4 - 50)) and not in_cabana(T, "salida", (600, L / 4 + 50))
    assert in_cabana(T, "salida", (600, L / 4 + 1.0))  # on the chalk line: inside (Art. 14)
    assert not in_cabana(T, "salida", (600, L / 4 + 2.0))
    assert in_cabana(T, "salida", (600, L / 4 + 2.0), sigma=1.0)  # within the stated uncertainty: inside
    assert in_cabana(T, "mingo", (600, 3 * L / 4 - 1.0)) and not in_cabana(T, "mingo", (600, 3 * L / 4 - 5))


# --- Art. 4-5: pins -----------------------------------------------------------------------------------------------

def test_art_4_nine_spots_a_ball_passes_between_two_pins_grazing_both():
    s = T.ball_diameter + T.pin_base_diameter
    assert SP["lat_top"][1] - SP["king"][1] == pytest.approx(s)
    gap = s - T.pin_base_diameter  # between the two bases
    assert gap == pytest.approx(T.ball_diameter)
    layout = normal_layout(T)
    assert [q.spot for q in layout] == ["king", "lat_top", "lat_bottom", "lat_left", "lat_right"]


def _place(balls, to_set=("king", *LATS), standing=None, **kw):
    layout, notes = place_pins(T, standing or {}, to_set, balls, **kw)
    return {q.pin: q for q in layout}, notes


def test_art_5_knocked_pins_go_back_to_their_spots():
    lay, _ = _place([(100.0, 100.0)])
    assert all(lay[p].at == SP[p] and lay[p].spot == p for p in lay)


def test_art_5a_a_lateral_whose_spot_a_ball_occupies_goes_to_the_opposite_auxiliary_spot():
    lay, notes = _place([SP["lat_top"]])
    assert lay["lat_top"].spot == "aux_bottom" and lay["lat_top"].at == SP["aux_bottom"]
    assert any("Art. 5a" in n for n in notes)
    lay, _ = _place([SP["lat_top"]], lateral_aux="same")
    assert lay["lat_top"].spot == "aux_top"


def test_art_5a_a_ball_near_the_spot_that_prevents_setting_the_pin_counts_as_occupying_it():
    p = (SP["lat_left"][0] - (T.ball_radius + 3), SP["lat_left"][1])
    assert spot_blocked(T, SP["lat_left"], [p])
    lay, _ = _place([p])
    assert lay["lat_left"].spot == "aux_right"


def test_art_5b_two_balls_on_two_laterals_both_pins_go_opposite():
    lay, _ = _place([SP["lat_top"], SP["lat_left"]])
    assert lay["lat_top"].spot == "aux_bottom" and lay["lat_left"].spot == "aux_right"
    assert lay["lat_bottom"].spot == "lat_bottom" and lay["king"].spot == "king"


def test_art_5c_the_king_goes_to_an_auxiliary_spot_the_player_names():
    lay, notes = _place([SP["king"]], king_aux="left")
    assert lay["king"].spot == "aux_left" and any("Art. 5c" in n for n in notes)
    lay, _ = _place([SP["king"], (SP["aux_left"][0], SP["aux_left"][1])], king_aux="left")
    assert lay["king"].spot in ("aux_top", "aux_bottom", "aux_right")  # the named spot is blocked
    lay, _ = _place([SP["king"], (635.0, 2000.0)])  # auto: the free spot farthest from the balls
    assert lay["king"].spot == "aux_bottom"


def test_art_5e_a_displaced_standing_pin_stays_where_it_is():
    at = (SP["lat_right"][0] + 20.0, SP["lat_right"][1])
    lay, _ = _place([], to_set=(), standing={"lat_right": ("lat_right", at), "king": ("king", SP["king"])})
    assert lay["lat_right"].at == at and lay["lat_right"].spot is None and lay["lat_right"].home == "lat_right"
    assert lay["lat_top"].at is None  # not asked to set and not standing: none of this function's business


def test_art_5f_a_pin_waits_when_balls_block_every_spot_it_may_take():
    lay, notes = _place([SP["lat_top"], SP["aux_bottom"]])
    assert lay["lat_top"].at is None and lay["lat_top"].spot is None
    assert any("Art. 5f" in n for n in notes)


def test_art_5_a_pin_on_an_auxiliary_spot_returns_when_its_spot_is_free():
    standing = {"lat_top": ("aux_bottom", SP["aux_bottom"])}
    lay, _ = _place([(100.0, 100.0)], to_set=(), standing=standing)
    assert lay["lat_top"].spot == "lat_top"
    lay, _ = _place([SP["lat_top"]], to_set=(), standing=standing)
    assert lay["lat_top"].spot == "aux_bottom"


def test_art_5d_four_in_line_geometry():
    assert four_in_line([(0, 0), (1, 0), (2, 0), (5, 0.1)], tol=0.5)
    assert not four_in_line([(0, 0), (1, 0), (2, 0), (2, 3)], tol=0.5)
    assert not four_in_line([(0, 0), (1, 0), (2, 0)], tol=0.5)
    # In the cross of nine, no ball placement on the five spots makes four in line (Art. 5a-c never force it).
    spots = [SP[p] for p in ("king", *LATS)]
    for k in range(1, 4):
        for balls in itertools.combinations(spots, k):
            lay, _ = _place(list(balls))
            assert not four_in_line([q.at for q in lay.values() if q.at is not None], T.pin_base_diameter / 2)


# --- Art. 6: the Mingo's three spots --------------------------------------------------------------------------------

def test_art_6_mingo_spots_in_order():
    assert mingo_spot(T, []) == "mingo"
    assert SP["mingo"] == (T.width / 2, T.length - 2.5 * T.ball_diameter)
    assert mingo_spot(T, [SP["mingo"]]) == "mingo_cushion"
    assert mingo_spot(T, [SP["mingo"], SP["mingo_cushion"]]) == "mingo_third"
    assert mingo_spot(T, [SP["mingo_cushion"]]) == "mingo"
