"""Ball physics of the virtual table: friction, spin, collisions, cushions, pockets, pins, scripted extras, and the
exactness of event times."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from rules.events import EventType
from rules.shot import Shot
from rules.tables import preset
from sim.actions import HandMove, KnockPin, LeaveTable, Strike, Touch
from sim.layouts import opening_layout, pins_for
from sim.params import G, PhysicsParams
from sim.physics import simulate
from sim.shots import build_shots, thin_track

CAROM = preset("carom_match")
SNOOKER = preset("snooker_full")
CHAPO = preset("chapo")
POOL = preset("pool_9ft")
P = PhysicsParams()
NATURAL_ROLL = (0.0, 0.4)


def _types(traj, kind):
    return [e for e in traj.events if e.type is kind]


@pytest.fixture(scope="module")
def bilhar_break():
    return simulate(POOL, opening_layout("bilhar"), [Strike(0.0, "cue", 7000.0, 90.3, (0.0, 0.1))])


# --- friction ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("speed", [300.0, 650.0])
def test_a_rolling_ball_stops_at_v2_over_2_mu_g(speed):
    start = np.array([500.0, 200.0])
    traj = simulate(CAROM, {"white": tuple(start)}, [Strike(0.0, "white", speed, 80.0, NATURAL_ROLL)])
    travelled = np.linalg.norm(np.array(traj.positions_at(traj.t_end)["white"]) - start)
    assert travelled == pytest.approx(speed ** 2 / (2 * P.mu_roll * G), abs=0.01)
    assert traj.t_end == pytest.approx(speed / (P.mu_roll * G), abs=P.dt_rolling)


def test_a_stun_ball_slides_to_five_sevenths_then_rolls_the_predicted_distance():
    v0 = 800.0
    traj = simulate(CAROM, {"white": (700.0, 300.0)}, [Strike(0.0, "white", v0, 90.0, (0.0, 0.0))])
    slide = 12 / 49 * v0 ** 2 / (P.mu_slide * G)
    roll = (5 / 7 * v0) ** 2 / (2 * P.mu_roll * G)
    assert traj.positions_at(traj.t_end)["white"][1] - 300.0 == pytest.approx(slide + roll, abs=0.05)


def test_energy_never_rises_after_the_strike(bilhar_break):
    e = bilhar_break.energy
    assert e[0] > 0
    assert np.diff(e).max() <= 1e-9 * e[0]
    assert e[-1] == 0.0


def test_the_simulation_is_deterministic(bilhar_break):
    again = simulate(POOL, opening_layout("bilhar"), [Strike(0.0, "cue", 7000.0, 90.3, (0.0, 0.1))])
    assert np.array_equal(again.positions, bilhar_break.positions)
    assert [e.to_dict() for e in again.events] == [e.to_dict() for e in bilhar_break.events]


# --- spin -----------------------------------------------------------------------------------------------------

def _full_ball(tip):
    lay = {"spot": (710.0, 1000.0), "red": (710.0, 1500.0)}
    return simulate(CAROM, lay, [Strike(0.0, "spot", 2500.0, 90.0, tip)])


def test_a_ball_struck_with_draw_comes_back_and_with_follow_goes_on():
    contact_y = 1500.0 - CAROM.ball_diameter
    drawn = _full_ball((0.0, -0.5)).positions_at(100.0)["spot"]
    followed = _full_ball((0.0, 0.5)).positions_at(100.0)["spot"]
    assert drawn[1] < contact_y - 150.0
    assert followed[1] > contact_y + 150.0
    assert abs(drawn[0] - 710.0) < 1.0 and abs(followed[0] - 710.0) < 1.0


def test_the_cue_ball_path_curves_after_a_cut_with_follow():
    lay = {"spot": (710.0, 1000.0), "red": (730.0, 1500.0)}
    traj = simulate(CAROM, lay, [Strike(0.0, "spot", 2500.0, 90.0, (0.0, 0.5))])
    t_hit = _types(traj, EventType.BALL_BALL)[0].t
    k = traj.index("spot")

    def heading(t0, t1):
        pos = {t: traj.state_at(t)[0][k] for t in (t0, t1)}
        d = pos[t1] - pos[t0]
        return math.degrees(math.atan2(d[1], d[0]))

    early = heading(t_hit + 0.001, t_hit + 0.01)
    late = heading(t_hit + 0.3, t_hit + 0.35)
    assert abs(late - early) > 10.0  # the follow bends the path back towards the line of the shot


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_side_spin_changes_the_angle_off_a_cushion(sign):
    def rebound(side):
        # 30 degrees from the cushion's normal: a plain ball's slip at the nose is stopped within the friction
        # limit, so english either way changes the rebound (at glancing angles plain and one english both slide).
        traj = simulate(CAROM, {"white": (700.0, 700.0)}, [Strike(0.0, "white", 1500.0, 30.0, (side, 0.4))])
        hit = _types(traj, EventType.CUSHION)[0]
        assert hit.cushion == "right"
        k = traj.index("white")
        a, b = traj.state_at(hit.t)[0][k], traj.state_at(hit.t + 0.02)[0][k]
        return math.degrees(math.atan2(b[1] - a[1], a[0] - b[0]))  # angle from the cushion's normal

    plain, spun = rebound(0.0), rebound(0.4 * sign)
    assert abs(spun - plain) > 5.0
    assert 0.0 < plain < 90.0
    # Opposite side spins turn the rebound opposite ways.
    other = rebound(-0.4 * sign)
    assert (spun - plain) * (other - plain) < 0


def test_ball_ball_throw_with_side_spin_changes_the_object_balls_line():
    def object_direction(side):
        lay = {"spot": (710.0, 1000.0), "red": (740.0, 1500.0)}
        traj = simulate(CAROM, lay, [Strike(0.0, "spot", 2000.0, 90.0, (side, 0.0))])
        t = _types(traj, EventType.BALL_BALL)[0].t
        k = traj.index("red")
        d = traj.state_at(t + 0.05)[0][k] - traj.state_at(t)[0][k]
        return math.degrees(math.atan2(d[1], d[0]))

    assert abs(object_direction(0.5) - object_direction(-0.5)) > 0.5


# --- contact times --------------------------------------------------------------------------------------------

def test_cushion_contact_time_matches_the_rolling_kinematics():
    v, y0 = 1000.0, 1000.0
    traj = simulate(CAROM, {"white": (710.0, y0)}, [Strike(0.0, "white", v, 90.0, NATURAL_ROLL)])
    d = CAROM.length - CAROM.ball_radius - y0
    b = P.mu_roll * G
    expected = (v - math.sqrt(v * v - 2 * b * d)) / b
    hit = _types(traj, EventType.CUSHION)[0]
    assert hit.cushion == "top"
    assert hit.t == pytest.approx(expected, abs=1e-6)


def test_ball_ball_contact_time_matches_the_rolling_kinematics():
    v = 1200.0
    lay = {"white": (710.0, 500.0), "red": (710.0, 1500.0)}
    traj = simulate(CAROM, lay, [Strike(0.0, "white", v, 90.0, NATURAL_ROLL)])
    d = 1000.0 - CAROM.ball_diameter
    b = P.mu_roll * G
    hit = _types(traj, EventType.BALL_BALL)[0]
    assert hit.balls == ("white", "red")
    assert hit.t == pytest.approx((v - math.sqrt(v * v - 2 * b * d)) / b, abs=1e-6)


def test_every_contact_event_is_at_touching_distance(bilhar_break):
    traj = bilhar_break
    R = POOL.ball_radius
    for e in _types(traj, EventType.BALL_BALL):
        pos = traj.state_at(e.t)[0]
        gap = np.linalg.norm(pos[traj.index(e.balls[0])] - pos[traj.index(e.balls[1])])
        assert gap == pytest.approx(2 * R, abs=0.01)
    lines = {"left": lambda p: p[0], "right": lambda p: POOL.width - p[0], "bottom": lambda p: p[1],
             "top": lambda p: POOL.length - p[1]}
    for e in _types(traj, EventType.CUSHION):
        p = traj.state_at(e.t)[0][traj.index(e.ball)]
        clearance = lines[e.cushion](p)
        assert clearance == pytest.approx(R, abs=0.01) or clearance < R  # on the nose, or at a jaw


def test_a_ball_into_a_carom_corner_touches_both_cushions_at_once():
    traj = simulate(CAROM, {"white": (400.0, 400.0)}, [Strike(0.0, "white", 1500.0, 225.0, NATURAL_ROLL)])
    first_two = _types(traj, EventType.CUSHION)[:2]
    assert {e.cushion for e in first_two} == {"bottom", "left"}
    assert first_two[0].t == first_two[1].t


# --- pockets --------------------------------------------------------------------------------------------------

def _roll_to_stop_distance(d):
    return math.sqrt(2 * P.mu_roll * G * d)


def test_a_ball_falls_when_its_centre_crosses_the_corner_drop_line():
    traj = simulate(SNOOKER, {"cue": (300.0, 300.0)}, [Strike(0.0, "cue", 1500.0, 225.0, NATURAL_ROLL)])
    pots = _types(traj, EventType.POCKET)
    assert [(e.ball, e.pocket) for e in pots] == [("cue", "bottom_left")]
    p = traj.state_at(pots[0].t)[0][0]
    assert p[0] + p[1] == pytest.approx(0.0, abs=1e-3)  # on the line through the drop point across the axis
    shot = build_shots(traj, SNOOKER, "sinuca")[0]
    assert "cue" not in shot.end


def test_a_slow_ball_hangs_on_the_lip():
    d_line = 600.0 / math.sqrt(2)
    v = _roll_to_stop_distance(d_line - 5.0)
    traj = simulate(SNOOKER, {"cue": (300.0, 300.0)}, [Strike(0.0, "cue", v, 225.0, NATURAL_ROLL)])
    assert not _types(traj, EventType.POCKET)
    x, y = traj.positions_at(traj.t_end)["cue"]
    assert x < SNOOKER.ball_radius and y < SNOOKER.ball_radius  # in the jaws, past both cushion noses
    assert (x + y) / math.sqrt(2) == pytest.approx(5.0, abs=0.05)


def test_middle_pocket_and_its_jaws():
    mid = SNOOKER.length / 2
    straight = simulate(SNOOKER, {"cue": (500.0, mid)}, [Strike(0.0, "cue", 1500.0, 180.0, NATURAL_ROLL)])
    assert [e.pocket for e in _types(straight, EventType.POCKET)] == ["left_middle"]
    # Aimed so the ball meets the near jaw (knuckle) edge on: it rebounds, reported on the left cushion.
    jaw_y = mid - 95.0 / 2
    jawed = simulate(SNOOKER, {"cue": (500.0, jaw_y)}, [Strike(0.0, "cue", 1500.0, 180.0, NATURAL_ROLL)])
    assert not _types(jawed, EventType.POCKET)
    assert _types(jawed, EventType.CUSHION)[0].cushion == "left"


def test_chapo_tronera_is_a_hole_at_the_corner():
    traj = simulate(CHAPO, {"1": (400.0, 400.0)}, [Strike(0.0, "1", 1500.0, 225.0, NATURAL_ROLL)])
    pot = _types(traj, EventType.POCKET)[0]
    assert pot.pocket == "bottom_left"
    p = traj.state_at(pot.t)[0][0]
    assert np.linalg.norm(p) == pytest.approx(105.0 / 2, abs=1e-3)


# --- pins -----------------------------------------------------------------------------------------------------

def _pin_pass(x_offset):
    s = CHAPO.ball_diameter + CHAPO.pin_base_diameter
    cx, cy = CHAPO.width / 2, CHAPO.length / 2
    lay = {"1": (cx + s + x_offset, cy - 400.0)}
    return simulate(CHAPO, lay, [Strike(0.0, "1", 1200.0, 90.0, NATURAL_ROLL)], pins=pins_for("chapo"))


def test_pins_fall_only_when_touched_and_along_the_push():
    reach = CHAPO.ball_radius + CHAPO.pin_base_diameter / 2
    clear = _pin_pass(reach + 1.0)  # passes lat_right with a millimetre to spare
    assert not _types(clear, EventType.PIN_DOWN)
    assert all(p.down_t is None for p in clear.pins)
    grazed = _pin_pass(reach - 1.0)
    downs = _types(grazed, EventType.PIN_DOWN)
    assert [(e.pin, e.by) for e in downs] == [("lat_right", "ball")]
    pin = next(p for p in grazed.pins if p.name == "lat_right")
    assert pin.direction[0] < 0 and pin.direction[1] > 0  # pushed away from the ball, which passed on its right
    ball = grazed.state_at(downs[0].t)[0][0]
    assert np.linalg.norm(ball - np.array(pin.spot)) == pytest.approx(reach, abs=1e-3)


def test_a_ball_down_the_centre_line_knocks_king_and_two_laterals():
    cx, cy = CHAPO.width / 2, CHAPO.length / 2
    traj = simulate(CHAPO, {"1": (cx, cy - 500.0)}, [Strike(0.0, "1", 1500.0, 90.0, NATURAL_ROLL)],
                    pins=pins_for("chapo"))
    assert [e.pin for e in _types(traj, EventType.PIN_DOWN)] == ["lat_bottom", "king", "lat_top"]


def test_a_pin_knocked_by_something_else_is_down_by_other():
    traj = simulate(CHAPO, {"1": (300.0, 300.0)}, [KnockPin(0.5, "king", 30.0)], pins=pins_for("chapo"))
    assert [(e.pin, e.by, e.t) for e in _types(traj, EventType.PIN_DOWN)] == [("king", "other", 0.5)]


# --- scripted extras and the Shot records ---------------------------------------------------------------------

def test_a_ball_that_jumps_the_cushion_is_off_the_table():
    lay = {"white": (710.0, 1000.0), "spot": (300.0, 300.0), "red": (710.0, 2000.0)}
    traj = simulate(CAROM, lay, [LeaveTable(0.0, "red"), Strike(0.0, "white", 3000.0, 90.0, NATURAL_ROLL)])
    offs = _types(traj, EventType.OFF_TABLE)
    assert [e.ball for e in offs] == ["red"]
    assert not [e for e in _types(traj, EventType.CUSHION) if e.ball == "red" and e.t >= offs[0].t]
    shot = build_shots(traj, CAROM, "three_cushion")[0]
    assert "red" not in shot.end and "red" in shot.start
    Shot.from_dict(json.loads(json.dumps(shot.to_dict())), discipline="three_cushion", table=CAROM)


def test_a_strike_while_another_ball_rolls_is_recorded_as_moving_at_strike():
    lay = {"white": (300.0, 300.0), "spot": (1000.0, 400.0), "red": (710.0, 2130.0)}
    traj = simulate(CAROM, lay, [Strike(0.0, "white", 1000.0, 90.0, NATURAL_ROLL, shooter="B"),
                                 Strike(1.0, "spot", 1500.0, 90.0, NATURAL_ROLL, shooter="A")])
    shots = build_shots(traj, CAROM, "three_cushion")
    assert len(shots) == 2
    assert shots[0].t_end == 1.0 and shots[1].t_start == 1.0
    assert shots[1].moving_at_strike == ("white",)
    assert shots[0].moving_at_strike == ()
    assert [e.type for e in shots[1].events][0] is EventType.STRIKE


def test_a_ball_moved_by_hand_is_touched_and_ends_where_it_was_put():
    lay = {"white": (300.0, 300.0), "spot": (1000.0, 400.0), "red": (710.0, 2130.0)}
    traj = simulate(CAROM, lay, [HandMove(0.2, "red", (500.0, 2000.0), 0.5)])
    shots = build_shots(traj, CAROM, "three_cushion", cue_balls={0.2: "spot"})
    assert [(e.type, e.ball) for e in shots[0].events] == [(EventType.TOUCHED, "red")]
    assert shots[0].notes and "no strike" in shots[0].notes[0]
    assert shots[0].end["red"] == pytest.approx((500.0, 2000.0))
    assert shots[0].cue_ball == "spot"


def test_a_touch_sets_a_ball_moving_with_a_touched_event():
    traj = simulate(CAROM, {"white": (300.0, 300.0)}, [Touch(0.1, "white", (0.0, 400.0))])
    assert [(e.type, e.t) for e in traj.events] == [(EventType.TOUCHED, 0.1)]
    assert traj.positions_at(traj.t_end)["white"][1] > 350.0


def test_a_push_drives_the_ball_at_the_cue_speed():
    traj = simulate(CAROM, {"white": (300.0, 300.0)}, [Strike(0.0, "white", 400.0, 90.0, push_s=0.3)])
    assert traj.state_at(0.3)[0][0][1] == pytest.approx(300.0 + 400.0 * 0.3, abs=0.5)
    assert build_shots(traj, CAROM, "three_cushion")[0].notes == ("push",)


def test_shot_records_validate_and_their_tracks_stay_within_1_mm(bilhar_break):
    shot = build_shots(bilhar_break, POOL, "bilhar")[0]
    again = Shot.from_dict(json.loads(json.dumps(shot.to_dict())), discipline="bilhar", table=POOL)
    assert again.events[0].type is EventType.STRIKE and again.cue_ball == "cue"
    assert set(again.start) == set(opening_layout("bilhar"))
    potted = {e.ball for e in again.events if e.type is EventType.POCKET}
    assert set(again.end) == set(again.start) - potted
    traj = bilhar_break
    k = traj.index("cue")
    track = np.array(again.tracks["cue"])
    raw = traj.positions[:, k]
    # Every raw sample lies within 1 mm of the thinned polyline.
    seg_a, seg_b = track[:-1, 1:], track[1:, 1:]
    d = seg_b - seg_a
    u = np.clip((((raw[:, None] - seg_a[None]) * d[None]).sum(-1)) / np.maximum((d * d).sum(-1), 1e-12)[None], 0, 1)
    dist = np.linalg.norm(raw[:, None] - (seg_a[None] + u[..., None] * d[None]), axis=-1).min(axis=1)
    assert dist.max() <= 1.0 + 1e-9
    assert len(track) < len(raw) / 10


def test_thin_track_keeps_corners_and_drops_collinear_points():
    t = np.linspace(0, 1, 101)
    xs = np.concatenate([np.linspace(0, 100, 51), np.full(50, 100.0)])
    ys = np.concatenate([np.zeros(51), np.linspace(2, 100, 50)])
    kept = thin_track(np.column_stack([t, xs, ys]))
    assert len(kept) == 3 and tuple(kept[1, 1:]) == (100.0, 0.0)


def test_a_hard_snooker_break_never_leaves_balls_overlapping():
    """Regression: a contact the chord called closing while the velocity already separated used to end the
    step's contact search, and this break left two reds 0.08 mm inside each other."""
    from sim.scenario import Scenario, ShotSpec

    s = Scenario("sinuca", shots=(ShotSpec("cue", 6852.6, aim="red1", cut=0.0713, tip=(0.216, -0.214), t=0.1),))
    traj = s.simulate()
    on = traj.status == 0
    p = traj.positions
    d = np.linalg.norm(p[:, :, None] - p[:, None], axis=-1)
    n = p.shape[1]
    d[:, np.arange(n), np.arange(n)] = np.inf
    d = np.where(on[:, :, None] & on[:, None, :], d, np.inf)
    assert d.min() > 2 * s.table_spec().ball_radius - 0.01
    e = traj.energy[traj.times >= 0.1]
    assert np.diff(e).max() <= 1e-9 * e[0]
