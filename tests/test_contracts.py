"""The data contracts: table presets (DESIGN.md section 3) and validated reading of shots and controls."""

from __future__ import annotations

import json
import math

import pytest

from rules.controls import Control
from rules.errors import LogError
from rules.log import parse_record, read_log
from rules.match import Match
from rules.registry import referee_for
from rules.shot import Shot
from rules.tables import (PRESETS, anchor_boxes, balkline_fields, chapo_pin_spots, free_game_corner_zones, preset,
                          rect)
from tests.carom_builders import Clock, shot

CAROM = preset("carom_match")
GOOD = {"cue_ball": "spot", "t_start": 1.0, "t_end": 4.0,
        "start": {"spot": [892.5, 710.0], "white": [710.0, 710.0], "red": [710.0, 2130.0]},
        "events": [{"t": 1.01, "type": "strike", "ball": "spot"},
                   {"t": 1.5, "type": "ball_ball", "balls": ["spot", "red"]},
                   {"t": 2.0, "type": "cushion", "ball": "spot", "cushion": "top"}],
        "end": {"spot": [300.0, 300.0], "white": [710.0, 710.0], "red": [700.0, 2000.0]}}


def read(d, discipline="three_cushion", table=CAROM):
    return parse_record(json.dumps(d), "log line 7", discipline, table)


# --- presets ----------------------------------------------------------------------------------------------------

def test_carom_art3_spots_divide_the_long_axis_in_four_and_the_starting_spots_are_182_5_mm_off_it():
    s = CAROM.spots
    assert s["bottom"] == (710.0, 710.0) and s["centre"] == (710.0, 1420.0) and s["top"] == (710.0, 2130.0)
    assert s["start_left"] == (527.5, 710.0) and s["start_right"] == (892.5, 710.0)
    assert len(CAROM.diamonds) == 2 * 7 + 2 * 3  # every L/8 on the long cushions, W/4 on the short


def test_balkline_47_nine_fields_and_eight_anchor_boxes_astride_the_line_ends():
    fields = balkline_fields(CAROM, 473.0)
    boxes = anchor_boxes(CAROM, 473.0)
    assert len(fields) == 9 and len(boxes) == 8
    assert sum(1 for f in fields if f.contains((710.0, 1420.0))) == 1
    box = next(b for b in boxes if b.contains((473.0, 10.0)))
    xs = [p[0] for p in box.points]
    ys = [p[1] for p in box.points]
    assert (min(xs), max(xs), min(ys), max(ys)) == (384.0, 562.0, 0.0, 178.0)


def test_balkline_71_six_fields_and_six_anchor_boxes():
    assert len(balkline_fields(CAROM, 710.0)) == 6 and len(anchor_boxes(CAROM, 710.0)) == 6


def test_free_game_corner_zones_cut_at_the_first_diamonds():
    bl = free_game_corner_zones(CAROM)[0]
    assert bl.contains((10.0, 10.0)) and not bl.contains((CAROM.width / 4 + 1, 1.0))
    assert bl.contains((CAROM.width / 8, CAROM.length / 16))  # on the line: inside


def test_polygon_line_margin_and_strict_inside():
    r = rect("r", 0, 0, 100, 100)
    assert r.contains((101.0, 50.0), margin=1.5) and not r.contains((102.0, 50.0), margin=1.5)
    assert not r.strictly_inside((99.0, 50.0), margin=1.5) and r.strictly_inside((50.0, 50.0), margin=1.5)


def test_every_preset_of_design_section_3():
    dims = {name: (p.width, p.length, p.ball_diameter, len(p.pockets)) for name, p in PRESETS.items()}
    assert dims == {"carom_match": (1420, 2840, 61.5, 0), "sinuca_br": (1420, 2840, 52.5, 6),
                    "snooker_full": (1778, 3569, 52.5, 6), "pool_9ft": (1270, 2540, 57.15, 6),
                    "chapo": (1270, 2540, 79, 4)}


def test_snooker_spots():
    t = preset("sinuca_br")
    baulk, r = t.lines["baulk_line_y"], t.lines["d_radius"]
    assert baulk == pytest.approx(0.2065 * 2840) and r == pytest.approx(0.1642 * 1420)
    assert t.spots["yellow"] == (710.0 + r, baulk) and t.spots["green"] == (710.0 - r, baulk)
    assert t.spots["black"][1] == pytest.approx(2840 * (1 - 0.0908))


def test_chapo_pin_spots_let_a_ball_pass_between_two_pins_grazing_both():
    t = preset("chapo")
    spots = chapo_pin_spots(t)
    s = spots["lat_right"][0] - spots["king"][0]
    assert s == pytest.approx(t.ball_diameter + t.pin_base_diameter)
    assert spots["aux_top"][1] - spots["king"][1] == pytest.approx(2 * s)
    assert math.isclose(spots["king"][0], t.width / 2) and math.isclose(spots["king"][1], t.length / 2)


# --- reading records --------------------------------------------------------------------------------------------

def test_a_good_shot_round_trips_through_json():
    s = read(GOOD)
    assert isinstance(s, Shot) and s.struck_ball == "spot"
    assert read(s.to_dict()) == s


@pytest.mark.parametrize("change, field, words", [
    (lambda d: d.pop("end"), "end", "missing"),
    (lambda d: d.update(discipline="pool"), "discipline", "unknown discipline"),
    (lambda d: d.update(discipline="free_game"), "discipline", "but the match is"),
    (lambda d: d["start"].update(yellow=[10.0, 10.0]), "start.yellow", "unknown ball id"),
    (lambda d: d["events"].append({"t": 2.5, "type": "bounce", "ball": "spot"}), "events[3].type",
     "unknown event type"),
    (lambda d: d["events"].append({"t": 1.2, "type": "cushion", "ball": "spot", "cushion": "top"}),
     "events[3].t", "backwards"),
    (lambda d: d["events"].append({"t": 2.5, "type": "cushion", "ball": "spot", "cushion": "middle"}),
     "events[3].cushion", "unknown cushion"),
    (lambda d: d["events"].append({"t": 2.5, "type": "pocket", "ball": "spot", "pocket": "top_left"}),
     "events[3].pocket", "no pocket"),
    (lambda d: d["events"].append({"t": 2.5, "type": "ball_ball", "balls": ["spot"]}), "events[3].balls",
     "two ball ids"),
    (lambda d: d["end"].update(red=[700.0, 3000.0]), "end.red", "off the carom_match table"),
    (lambda d: d["end"].update(red=[-1.0, 30.0]), "end.red", "off the"),
    (lambda d: d.update(t_end=0.5), "t_end", "before t_start"),
    (lambda d: d.update(cue_ball=7), "cue_ball", "unknown ball id"),
    (lambda d: d.update(shooter="C"), "shooter", "not a side"),
    (lambda d: d.update(confidence=1.5), "confidence", "between 0 and 1"),
    (lambda d: d.update(spin=3), "spin", "unknown field"),
    (lambda d: d.update(tracks={"red": [[1.2, 700.0, 2000.0], [1.1, 700.0, 2001.0]]}), "tracks.red[1]",
     "backwards"),
])
def test_bad_shot_fields_give_one_line_naming_record_and_field(change, field, words):
    d = json.loads(json.dumps(GOOD))
    change(d)
    with pytest.raises(LogError) as err:
        read(d)
    assert err.value.record == "log line 7" and err.value.field == field
    assert words in str(err.value) and "\n" not in str(err.value)


def test_a_pool_ball_hanging_in_a_corner_pocket_is_on_the_table_and_one_past_the_drop_is_not():
    """Bilhar seed 200 of the virtual table: the cue ball stopped on the lip of the bottom-left corner, its centre
    (-3.9, 11.6) beyond the left cushion line, short of the line it drops at: the log refused the truth's shot."""
    pool = preset("pool_9ft")
    balls = {"cue": [600.0, 600.0], "1": [600.0, 1800.0]}
    d = {"cue_ball": "cue", "t_start": 1.0, "t_end": 4.0, "start": balls,
         "events": [{"t": 1.01, "type": "strike", "ball": "cue"}], "end": dict(balls, cue=[-3.9, 11.6])}
    assert read(d, "bilhar", pool).end["cue"] == (-3.9, 11.6)
    assert pool.in_pocket_mouth((-3.9, 11.6)) and not pool.contains((-3.9, 11.6))
    for past in ([-10.0, -10.0], [-30.0, 11.6], [-1.0, 1270.0]):  # past the corner's drop, a rail, a middle's drop
        assert not pool.in_pocket_mouth(tuple(past))
        with pytest.raises(LogError, match="off the pool_9ft table"):
            read(dict(d, end=dict(balls, cue=past)), "bilhar", pool)


def test_nan_and_infinity_are_refused():
    line = json.dumps(GOOD).replace("892.5", "NaN")
    with pytest.raises(LogError, match="NaN"):
        parse_record(line, "log line 1", "three_cushion", CAROM)
    with pytest.raises(LogError, match="Infinity"):
        parse_record(line.replace("NaN", "Infinity"), "log line 1", "three_cushion", CAROM)


def test_controls_are_validated():
    assert read({"control": "undo"}) == Control("undo")
    with pytest.raises(LogError, match="unknown control"):
        read({"control": "rewind"})
    with pytest.raises(LogError, match="missing"):
        read({"control": "nominate"}, "sinuca", preset("sinuca_br"))
    with pytest.raises(LogError, match="unknown ball id"):
        read({"control": "nominate", "ball": "purple"}, "sinuca", preset("sinuca_br"))
    with pytest.raises(LogError, match="not a field"):
        read({"control": "undo", "times": 2})
    o = read({"control": "override", "points": {"A": 1}, "turn": "keeps", "reason": "seen"})
    assert o.fields == {"points": {"A": 1}, "turn": "keeps", "reason": "seen"}


def test_read_log_labels_lines_and_skips_blank_ones():
    lines = ["", json.dumps(GOOD), "   ", '{"control": "undo"}']
    labels = [label for label, _ in read_log(lines, "three_cushion", CAROM, "m.jsonl")]
    assert labels == ["m.jsonl line 2", "m.jsonl line 4"]


def test_a_shot_before_the_previous_one_ended_is_refused():
    c = Clock()
    first = shot("spot", ["red"], clock=c)
    m = Match(referee_for("three_cushion"))
    m.feed(first)
    with pytest.raises(LogError, match="backwards"):
        m.feed(shot("white", ["red"], clock=Clock()), "log line 2")


def test_a_shooter_out_of_turn_is_refused():
    m = Match(referee_for("three_cushion"))
    with pytest.raises(LogError, match="shooter"):
        m.feed(shot("spot", ["red"], shooter="B"), "log line 1")
