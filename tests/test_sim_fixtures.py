"""The committed clips in fixtures/clips show the plays they are named for, and their files agree."""

from __future__ import annotations

import json
import os

import cv2
import pytest

from rules.events import EventType
from rules.match import Match
from rules.registry import referee_for
from rules.shot import Shot
from rules.tables import balkline_fields, preset
from sim.outcomes import carom_point, cue_contacts, left_and_came_back, pins_down, potted

CLIPS = os.path.join(os.path.dirname(__file__), "..", "fixtures", "clips")
NAMES = sorted(f[: -len(".truth.json")] for f in os.listdir(CLIPS) if f.endswith(".truth.json")) \
    if os.path.isdir(CLIPS) else []


def _load(name: str):
    truth = json.load(open(os.path.join(CLIPS, name + ".truth.json")))
    disc = truth["scenario"]["discipline"]
    table = preset(truth["table"])
    shots = [Shot.from_dict(json.loads(line), discipline=disc, table=table)
             for line in open(os.path.join(CLIPS, name + ".shots.jsonl"))]
    return truth, shots


def test_the_fixture_set_is_complete_and_small():
    assert set(NAMES) >= {"three_cushion_point_and_miss", "balkline_run_leaving_a_field",
                          "snooker_red_then_colour_foul", "bilhar_break", "chapo_king_two_laterals_and_mingo",
                          "ball_off_the_table", "arm_over_the_table"}
    total = sum(os.path.getsize(os.path.join(CLIPS, f)) for f in os.listdir(CLIPS))
    assert total < 6e6


@pytest.mark.parametrize("name", NAMES)
def test_video_truth_and_shots_agree(name):
    truth, shots = _load(name)
    cap = cv2.VideoCapture(os.path.join(CLIPS, name + ".mp4"))
    assert cap.isOpened()
    assert int(cap.get(cv2.CAP_PROP_FRAME_COUNT)) == len(truth["frames"])
    assert cap.get(cv2.CAP_PROP_FPS) == pytest.approx(truth["fps"])
    ok, img = cap.read()
    assert ok and img.shape[1::-1] == tuple(truth["image_size"])
    assert shots and all(s.t_start < s.t_end for s in shots)
    events = [e for s in shots for e in s.events]
    assert [e.to_dict() for e in events] == truth["events"]


def test_three_cushion_point_then_a_miss():
    """A scores, so A plays on (carom Art. 6) and misses: the demo replays this clip through the referee."""
    _, (point, miss) = _load("three_cushion_point_and_miss")
    assert point.shooter == "A" and point.cue_ball == "spot" and carom_point(list(point.events), "spot", 3)
    assert miss.shooter == "A" and miss.cue_ball == "spot" and not carom_point(list(miss.events), "spot", 3)


def test_balkline_red_leaves_its_field_and_comes_back_on_a_scoring_run():
    _, shots = _load("balkline_run_leaving_a_field")
    table = preset("carom_match")
    field = next(f for f in balkline_fields(table, 473.0) if f.contains(shots[0].start["red"]))
    assert left_and_came_back(shots[0].tracks["red"], field)
    assert all(carom_point(list(s.events), "spot") for s in shots) and len(shots) == 2


def test_snooker_red_potted_then_a_foul_on_the_colour():
    _, (red, colour) = _load("snooker_red_then_colour_foul")
    assert potted(list(red.events)) == {"red1": "top_left"}
    assert colour.nominated == "black"
    assert cue_contacts(list(colour.events), "cue")[0][1].startswith("red")


def test_bilhar_break_scatters_the_rack():
    _, (brk,) = _load("bilhar_break")
    assert len(brk.start) == 15 and len(brk.tracks) >= 10


def test_chapo_king_two_laterals_and_the_mingo():
    _, (shot,) = _load("chapo_king_two_laterals_and_mingo")
    assert set(pins_down(list(shot.events))) == {"king", "lat_top", "lat_bottom"}
    assert potted(list(shot.events)) == {"mingo": "top_left"} and "mingo" not in shot.end


def test_a_ball_leaves_the_table():
    truth, (shot,) = _load("ball_off_the_table")
    assert [e.ball for e in shot.events if e.type is EventType.OFF_TABLE] == ["red"]
    assert "red" not in shot.end and truth["frames"][-1]["gone"] == {"red": "off_table"}


def test_an_arm_covers_a_ball_and_the_camera_is_nudged():
    truth, _ = _load("arm_over_the_table")
    covered = {b for f in truth["frames"] for b, v in f["balls"].items() if v[4]}
    assert "white" in covered
    assert len(truth["cameras"]) == 2 and truth["frames"][-1]["camera"] == 1


def test_a_strike_while_a_ball_rolls_and_a_hand_move():
    truth, shots = _load("strike_while_rolling_and_a_hand")
    assert shots[1].moving_at_strike == ("spot",)
    assert [e.type for e in shots[2].events] == [EventType.TOUCHED]
    # B's shot scored nothing, so the hand moved the red with A at the table: the record names A and A's ball,
    # and the whole log is one the referee accepts in order.
    match = Match(referee_for("three_cushion", table=preset(truth["table"])))
    for shot in shots[:2]:
        match.feed(shot)
    assert (shots[2].shooter, shots[2].cue_ball) == (match.referee.next_shooter(match.state), match.cue_ball())
    assert match.feed(shots[2]) is not None
