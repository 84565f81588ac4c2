"""Chapó pins: standing on their spots or down, and where a fallen pin lies; balls near a pin change nothing."""

from __future__ import annotations

import numpy as np
import pytest

from calibration.camera import CameraModel
from rules.balls import CHAPO_PINS
from rules.tables import chapo_pin_spots, preset
from tests.vision_scenes import WHITE, BallSpec, PinSpec, Scene, empty_frame, render
from vision.detection import BallDetector
from vision.pins import FramePins, PinDetector

CHAPO = preset("chapo")
SPOTS = chapo_pin_spots(CHAPO)
CAM = CameraModel.overhead(CHAPO, (1456, 1088), dist=(-0.12, 0.03, 0.0, 0.0, 0.0))


@pytest.fixture(scope="module")
def setup():
    balls = BallDetector(CAM, CHAPO)
    background = balls.background_from_frames([empty_frame(CAM, CHAPO)])
    return balls, background


def _frame(pins, balls=()):
    return render(Scene(CAM, CHAPO, tuple(balls), pins=tuple(pins)), np.random.default_rng(1))


def test_all_five_pins_standing(setup):
    balls, background = setup
    frame = _frame([PinSpec(SPOTS[p]) for p in CHAPO_PINS])
    obs = PinDetector(CAM, CHAPO).observe(frame, 0.0, background, balls.detect(frame, 0.0, background))
    assert set(obs.standing) == set(CHAPO_PINS) and not obs.down


def test_knocked_pins_are_down_where_they_lie(setup):
    balls, background = setup
    lying = {"king": (SPOTS["king"][0] + 40.0, SPOTS["king"][1] + 15.0),
             "lat_right": (SPOTS["lat_right"][0] + 70.0, SPOTS["lat_right"][1] - 50.0)}
    pins = [PinSpec(SPOTS[p]) for p in CHAPO_PINS if p not in lying]
    pins += [PinSpec(xy, down_direction=(1.0, 0.4)) for xy in lying.values()]
    frame = _frame(pins)
    obs = PinDetector(CAM, CHAPO).observe(frame, 0.0, background, balls.detect(frame, 0.0, background))
    assert set(obs.standing) == set(CHAPO_PINS) - set(lying)
    assert set(obs.down) == set(lying) and not obs.unplaced
    for pin, xy in lying.items():
        assert np.hypot(*(np.array(obs.down[pin]) - xy)) < 12.0


def test_a_ball_against_a_pin_neither_hides_nor_fells_it(setup):
    balls, background = setup
    r = CHAPO.ball_radius
    spot = SPOTS["lat_top"]
    ball = BallSpec((spot[0] + r + CHAPO.pin_base_diameter / 2 + 1.0, spot[1]), WHITE)
    pins = [PinSpec(SPOTS[p]) for p in CHAPO_PINS if p != "lat_left"]
    frame = _frame(pins, [ball])
    det = balls.detect(frame, 0.0, background)
    assert len(det) == 1, "a pin is not a ball"
    obs = PinDetector(CAM, CHAPO).observe(frame, 0.0, background, det)
    assert set(obs.standing) == set(CHAPO_PINS) - {"lat_left"}
    assert set(obs.down) == {"lat_left"}


@pytest.mark.parametrize("direction", [(0.0, 1.0), (1.0, 0.0), (0.7, -0.7)])
def test_a_pin_fallen_across_its_own_spot_is_down(setup, direction):
    """A pin knocked over pivots on its base: it lies across its own spot, which it still fills (the Chapó
    fixture's King and laterals). Its length, not the fill, says it is down."""
    balls, background = setup
    u = np.asarray(direction) / np.linalg.norm(direction)
    lying = tuple(np.asarray(SPOTS["king"]) + u * CHAPO.pin_height / 2)
    pins = [PinSpec(SPOTS[p]) for p in CHAPO_PINS if p != "king"] + [PinSpec(lying, down_direction=tuple(u))]
    frame = _frame(pins)
    obs = PinDetector(CAM, CHAPO).observe(frame, 0.0, background, balls.detect(frame, 0.0, background))
    assert set(obs.standing) == set(CHAPO_PINS) - {"king"} and set(obs.down) == {"king"}
    assert np.hypot(*(np.array(obs.down["king"]) - lying)) < 12.0


def test_a_cue_lying_over_standing_pins_leaves_them_standing(setup):
    """At the stroke the cue may lie over the pin cross (Chapó seed 125: over lat_right and lat_top; here over
    the king): its blob crosses those spots, far longer than a fallen pin, so it hides the pins rather than
    felling them; they keep the state last seen."""
    from tests.vision_scenes import Capsule
    balls, background = setup
    pins = [PinSpec(SPOTS[p]) for p in CHAPO_PINS]
    a, b = np.array(SPOTS["lat_left"]) + (-250.0, -300.0), np.array(SPOTS["lat_right"]) + (250.0, 300.0)
    cue = Capsule(tuple(a), tuple(b), 6.5, 60.0, (90, 160, 205))
    detector = PinDetector(CAM, CHAPO)
    clear = _frame(pins)
    detector.observe(clear, 0.0, background, balls.detect(clear, 0.0, background))
    covered = render(Scene(CAM, CHAPO, (), occluders=(cue,), pins=tuple(pins)), np.random.default_rng(2))
    obs = detector.observe(covered, 1 / 60, background, balls.detect(covered, 1 / 60, background))
    assert set(obs.standing) == set(CHAPO_PINS) and not obs.down


def test_a_pin_hidden_by_a_ball_resting_where_it_stood_is_down_and_one_beside_a_ball_stands(setup):
    """Chapó seed 120: the mingo crept over the top lateral's spot, knocking the pin from under it, and stopped
    31 mm from the spot, the pin hidden. A hidden pin keeps its last state, but none can stand nearer a ball's
    centre than the two radii together: down, once a ball has been there for ``on_spot_frames`` frames. A ball
    resting against the pin's base (45 mm off) leaves it up."""
    balls, background = setup
    r, spot = CHAPO.ball_radius, SPOTS["lat_top"]
    standing = [PinSpec(SPOTS[p]) for p in CHAPO_PINS]
    detector = PinDetector(CAM, CHAPO)
    clear = _frame(standing)
    detector.observe(clear, 0.0, background, balls.detect(clear, 0.0, background))
    # Against the pin: the ball's surface 1 mm off the pin's base; the pin is hidden from the camera as well.
    beside = _frame(standing, [BallSpec((spot[0] + r + CHAPO.pin_base_diameter / 2 + 1.0, spot[1]), WHITE)])
    obs = detector.observe(beside, 1 / 60, background, balls.detect(beside, 1 / 60, background))
    assert "lat_top" in obs.standing
    on_it = _frame([p for p in standing if p.xy != spot], [BallSpec((spot[0] + 31.0, spot[1]), WHITE)])
    watched = FramePins(detector, lambda: background)  # the same frame again and again: looked at even so
    seen = [watched.observe(on_it, k / 60, balls.detect(on_it, k / 60, background)) for k in range(2, 12)]
    # Held standing for the first frames (a toppling pin read as a ball sits by its spot for a frame or two).
    assert all("lat_top" in obs.standing for obs in seen[:detector.config.on_spot_frames - 1])
    obs = seen[-1]
    assert set(obs.standing) == set(CHAPO_PINS) - {"lat_top"} and set(obs.down) == {"lat_top"}
    assert obs.unplaced == {"lat_top"}  # not seen lying: its place is its spot's, a stand-in


class _CountingPins(PinDetector):
    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.looks = 0

    def observe(self, *args, **kwargs):
        self.looks += 1
        return super().observe(*args, **kwargs)


def test_the_pins_are_looked_at_again_only_when_their_window_changes(setup):
    """FramePins skips the full-resolution look while the pin cross's window is as it was last looked at: a
    frame that only differs by the camera's noise gives the last observation; a pin knocked over is seen at once;
    and the pins are looked at anyway every ``refresh_every`` frames."""
    balls, background = setup
    pins = _CountingPins(CAM, CHAPO)
    watched = FramePins(pins, lambda: background, refresh_every=10)
    standing = [PinSpec(SPOTS[p]) for p in CHAPO_PINS]
    noisy = [render(Scene(CAM, CHAPO, (), pins=tuple(standing)), np.random.default_rng(s)) for s in range(5)]
    for t, frame in enumerate(noisy):
        obs = watched.observe(frame, float(t), balls.detect(frame, float(t), background))
        assert set(obs.standing) == set(CHAPO_PINS) and obs.t == float(t)
    assert pins.looks == 1
    knocked = [PinSpec(SPOTS[p]) for p in CHAPO_PINS if p != "king"]
    knocked.append(PinSpec((SPOTS["king"][0] + 40.0, SPOTS["king"][1]), down_direction=(1.0, 0.0)))
    frame = _frame(knocked)
    obs = watched.observe(frame, 5.0, balls.detect(frame, 5.0, background))
    assert pins.looks == 2 and set(obs.down) == {"king"}
    for t in range(6, 16):
        watched.observe(frame, float(t), balls.detect(frame, float(t), background))
    assert pins.looks == 3  # the refresh, ten frames after the last look


def test_a_ball_rolling_through_the_pin_window_clear_of_the_pins_is_not_a_reason_to_look(setup):
    """The pins are looked at again only where a change could alter what the look reads: round the standing
    pins' outlines and a fallen pin's place. A ball rolling through the pin cross's window 150 mm from every spot
    leaves them as they were; one reaching a pin's outline, or moving by a pin lying down, is looked at."""
    balls, background = setup
    pins = _CountingPins(CAM, CHAPO)
    watched = FramePins(pins, lambda: background, refresh_every=1000)
    king = np.array(SPOTS["king"])
    standing = [PinSpec(SPOTS[p]) for p in CHAPO_PINS if p != "lat_right"]
    lying_at = (SPOTS["lat_right"][0] + 60.0, SPOTS["lat_right"][1])
    pins_now = standing + [PinSpec(lying_at, down_direction=(1.0, 0.0))]
    # Diagonally between the cross's arms: far from every standing spot and from the pin lying to the right.
    clear = [king + np.array([-150.0, 150.0]) + np.array([step, 0.0]) for step in (0.0, 30.0, 60.0)]
    for t, xy in enumerate(clear):
        frame = _frame(pins_now, [BallSpec(tuple(xy), WHITE)])
        obs = watched.observe(frame, float(t), balls.detect(frame, float(t), background))
        assert set(obs.down) == {"lat_right"}
    assert pins.looks == 1
    # By the pin lying down: looked at.
    frame = _frame(pins_now, [BallSpec((lying_at[0], lying_at[1] + 80.0), WHITE)])
    watched.observe(frame, 3.0, balls.detect(frame, 3.0, background))
    assert pins.looks == 2
    # Over a standing pin's outline: looked at.
    top = SPOTS["lat_top"]
    frame = _frame(pins_now, [BallSpec((top[0], top[1] + CHAPO.ball_radius + 10.0), WHITE)])
    watched.observe(frame, 4.0, balls.detect(frame, 4.0, background))
    assert pins.looks == 3
