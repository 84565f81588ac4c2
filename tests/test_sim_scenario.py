"""Scenarios (the JSON language, aiming, random legal layouts) and clips (video, truth, shot records)."""

from __future__ import annotations

import json
import math

import cv2
import numpy as np
import pytest

from rules.balls import ball_ids
from rules.events import EventType
from rules.shot import Shot
from sim.clip import write_clip
from sim.layouts import opening_layout, random_layout, table_for
from sim.outcomes import cue_contacts
from sim.scenario import Scenario, ShotSpec, aim_direction, random_scenario

DISCIPLINES = ("three_cushion", "balkline_47_2", "sinuca", "bilhar", "chapo")


def test_scenario_json_round_trips():
    d = {
        "name": "demo", "discipline": "three_cushion", "seed": 3, "layout": {"white": [700, 700], "spot": [500, 700],
                                                                           "red": [710, 2130]},
        "shots": [{"ball": "spot", "speed": 2500, "aim": "red", "cut": 0.2, "tip": [0.1, 0.3], "t": 1.0,
                   "shooter": "A"},
                  {"ball": "white", "speed": 1500, "direction": 30.0, "after_rest": 1.0, "shooter": "B"}],
        "extras": [{"type": "touch", "t": 20.0, "ball": "red", "velocity": [0, 100]},
                   {"type": "leave_table", "t": 0.0, "ball": "red"}],
        "camera": {"sensor": "pi_gs", "size": [320, 240]}, "effects": {"noise_sigma": 0}, "tail_s": 0.2,
    }
    s = Scenario.from_dict(d)
    assert Scenario.from_dict(json.loads(json.dumps(s.to_dict()))) == s
    with pytest.raises(ValueError, match="unknown field"):
        Scenario.from_dict({**d, "colour": "red"})
    with pytest.raises(ValueError, match="unknown type"):
        Scenario.from_dict({**d, "extras": [{"type": "explode"}]})


def test_a_full_ball_aim_hits_the_object_ball_first_and_square():
    s = Scenario("three_cushion", layout={"spot": (300.0, 300.0), "red": (900.0, 1500.0), "white": (1200.0, 300.0)},
                 shots=(ShotSpec("spot", 2000.0, aim="red", t=0.1),))
    traj = s.simulate()
    hit = next(e for e in traj.events if e.type is EventType.BALL_BALL)
    assert hit.balls == ("spot", "red")
    pos = traj.state_at(hit.t)[0]
    contact = pos[traj.index("red")] - pos[traj.index("spot")]
    path = np.array([900.0 - 300.0, 1500.0 - 300.0])
    cos = contact @ path / np.linalg.norm(contact) / np.linalg.norm(path)
    assert cos == pytest.approx(1.0, abs=1e-6)


def test_a_cut_to_the_right_sends_the_cue_ball_right_of_the_object_ball():
    positions = {"spot": (700.0, 500.0), "red": (700.0, 1500.0)}
    straight = aim_direction(positions, ShotSpec("spot", 1.0, aim="red"), table_for("three_cushion"))
    right = aim_direction(positions, ShotSpec("spot", 1.0, aim="red", cut=0.5), table_for("three_cushion"))
    assert straight == pytest.approx(90.0)
    assert right < straight  # clockwise: towards +x, the player's right looking up the table
    d = 61.5 * 0.5
    assert math.radians(straight - right) == pytest.approx(math.asin(d / 1000.0))


def test_a_ghost_ball_aim_pots_a_straight_ball():
    layout = {"cue": (300.0, 300.0), "red1": (500.0, 500.0)}
    s = Scenario("sinuca", layout=layout, shots=(ShotSpec("cue", 1500.0, pot=("red1", "top_right"), t=0.1),))
    # Along the diagonal to the top-right corner (not square to it, so aim at that pocket's mouth line).
    traj = s.simulate()
    assert cue_contacts(traj.events, "cue")[0][1] == "red1"
    s2 = Scenario("sinuca", layout={"cue": (1100.0, 400.0), "red1": (1100.0, 1400.0)},
                  shots=(ShotSpec("cue", 2000.0, pot=("red1", "right_middle"), t=0.1),))
    assert cue_contacts(s2.simulate().events, "cue")[0][1] == "red1"


@pytest.mark.parametrize("discipline", DISCIPLINES)
def test_random_layouts_are_legal(discipline):
    import random
    table = table_for(discipline)
    for seed in range(5):
        lay = random_layout(discipline, random.Random(seed), table)
        assert set(lay) == set(opening_layout(discipline))
        assert set(lay) <= ball_ids(discipline)
        pts = np.array(list(lay.values()))
        r = table.ball_radius
        assert (pts[:, 0] > r).all() and (pts[:, 0] < table.width - r).all()
        assert (pts[:, 1] > r).all() and (pts[:, 1] < table.length - r).all()
        gaps = np.linalg.norm(pts[:, None] - pts[None], axis=-1) + np.eye(len(pts)) * 1e9
        assert gaps.min() > 2 * r


@pytest.mark.parametrize("discipline", DISCIPLINES)
def test_a_random_scenario_gives_valid_shot_records(discipline):
    s = random_scenario(discipline, seed=11)
    traj = s.simulate()
    from sim.clip import shot_records
    shots = shot_records(s, traj)
    assert len(shots) == 1
    table = s.table_spec()
    again = Shot.from_dict(json.loads(json.dumps(shots[0].to_dict())), discipline=discipline, table=table)
    assert again.events[0].type is EventType.STRIKE
    assert again.cue_ball == s.shots[0].ball


def test_opening_racks_do_not_overlap():
    for discipline in ("sinuca", "bilhar"):
        lay = opening_layout(discipline)
        pts = np.array(list(lay.values()))
        gaps = np.linalg.norm(pts[:, None] - pts[None], axis=-1) + np.eye(len(pts)) * 1e9
        assert gaps.min() >= table_for(discipline).ball_diameter
    assert len(opening_layout("bilhar")) == 15 and "8" not in opening_layout("bilhar")
    assert len([b for b in opening_layout("sinuca") if b.startswith("red")]) == 15


def test_a_clip_has_video_truth_and_shots_that_agree(tmp_path):
    s = Scenario("sinuca", name="tiny", layout={"cue": (700.0, 1200.0), "red1": (710.0, 1800.0),
                                                "black": (710.0, 2580.0)},
                 shots=(ShotSpec("cue", 1800.0, aim="red1", t=0.3, shooter="A", nominated=None),),
                 camera={"sensor": "pi_gs", "size": [240, 180], "fps": 30},
                 # The arm is 110-330 mm up: parallax pushes it outwards, so it runs a little inside the black.
                 effects={"noise_sigma": 1.0, "arms": [{"t0": 0.0, "t1": 1.2, "entry": [1570, 2470],
                                                        "hand": [640, 2515]}]}, tail_s=0.1)
    result = write_clip(s, str(tmp_path), duration=1.5)
    cap = cv2.VideoCapture(result.video)
    frames = 0
    while True:
        ok, img = cap.read()
        if not ok:
            break
        assert img.shape == (180, 240, 3)
        frames += 1
    assert frames == result.frames == 46
    truth = json.load(open(result.truth))
    assert truth["fps"] == 30 and len(truth["frames"]) == frames
    f0 = truth["frames"][0]
    reached = truth["frames"][12]  # the arm has slid in (0.35 s) and covers the black
    occluded = 4
    assert reached["balls"]["black"][occluded] == 1 and reached["balls"]["cue"][occluded] == 0
    assert f0["balls"]["black"][occluded] == 0
    assert f0["balls"]["cue"][:2] == [700.0, 1200.0]
    # The truth's pixel is the calibration's projection of the ball centre.
    from calibration.camera import CameraModel
    cam = CameraModel.from_dict(json.load(open(result.calib)))
    px = cam.table_to_image(f0["balls"]["cue"][:2], truth["ball_radius"])
    assert np.allclose(px, f0["balls"]["cue"][2:4], atol=0.01)
    from sim.render import FrameTruth
    gone = FrameTruth(1.0, {"a": {"status": "on_table", "xy": [1, 2], "px": [3, 4], "occluded": True},
                            "b": {"status": "potted"}}, {"king": {"standing": False}, "lat_top": {"standing": True}})
    assert gone.to_dict() == {"t": 1.0, "balls": {"a": [1, 2, 3, 4, 1]}, "gone": {"b": "potted"},
                              "pins_down": ["king"], "camera": 0}
    lines = open(result.shots).read().splitlines()
    shot = Shot.from_dict(json.loads(lines[0]), discipline="sinuca", table=s.table_spec())
    assert shot.shooter == "A" and shot.cue_ball == "cue"
    assert [e.to_dict() for e in shot.events] == [e for e in truth["events"] if shot.t_start <= e["t"] <= shot.t_end]
