"""The chalk lines stay in an empty-table model learnt from a frame with balls on it.

The replay paints out of its first frames whatever differs from a wide median of them (``around_candidates=False``):
the balls, their shadows, a cue or a hand. A chalk line is thinner than the median's window, so it differed too, and
Chapó's two lines, the sinuca baulk line and its D were painted out of the model: in every frame after, a line was
foreground, and a ball resting against it was read with the line in its outline (Chapó seed 118: 3.6 mm off)."""

from __future__ import annotations

import cv2
import numpy as np

from rules.tables import chapo_pin_spots
from vision.detection import BallDetector, chalk_lines


def test_chalk_lines_are_the_long_thin_parts_of_a_mask():
    mask = np.zeros((220, 260), np.uint8)
    for d in (0, 1):  # two pixels wide, as the lines are at the reduced resolution
        cv2.line(mask, (5, 10 + d), (255, 15 + d), 1)  # a straight line, a little off the rows
        cv2.ellipse(mask, (130, 205), (80 + d, 80 + d), 0, 180, 360, 1)  # a D
    cv2.circle(mask, (30, 190), 6, 1, -1)  # a ball
    cv2.line(mask, (200, 120), (250, 170), 1, 4)  # a cue, 4-5 px wide
    cv2.circle(mask, (230, 40), 2, 1, -1)  # a standing pin or a chalk spot: small, not long
    lines = chalk_lines(mask)
    assert lines[5:20, 10:250].sum() > 0.9 * mask[5:20, 10:250].sum()  # the straight line, nearly all of it
    assert lines[120:205, 40:220].sum() > 0.8 * mask[120:205, 40:220].sum()  # the arc
    assert lines[180:200, 20:40].sum() == 0  # not the ball
    assert lines[130:160, 210:240].sum() == 0  # not the cue's middle
    assert lines[35:45, 225:235].sum() == 0  # not the small disc
    assert chalk_lines(np.zeros_like(mask)).sum() == 0


def _chapo_still(seed: int):
    from sim.render import Renderer
    from sim.scenario import random_scenario

    sc = random_scenario("chapo", seed, camera={"sensor": "pi_gs", "size": [1456, 1088]})
    table, camera = sc.table_spec(), sc.camera_model()
    frame, truth = Renderer(table, "chapo", camera, sc.simulate(), sc.render_effects(), seed=seed).render(0.0)
    balls = np.array([v["xy"] for v in truth.balls.values() if v["status"] == "on_table"])
    return BallDetector(camera, table), frame, balls


def _away_from(pts: np.ndarray, others: np.ndarray, reach: float) -> np.ndarray:
    return pts[np.linalg.norm(pts[:, None] - others[None], axis=2).min(axis=1) > reach]


def test_a_replays_model_keeps_chapos_lines_and_paints_out_its_balls_and_pins():
    detector, frame, balls = _chapo_still(118)
    table, camera = detector.table, detector.camera
    model = detector.background_without_empty_table(frame, rounds=3, around_candidates=False).image
    off = np.abs(model.astype(np.int16) - frame.astype(np.int16)).max(axis=2)

    r = table.ball_radius
    spots = np.array(list(table.spots.values()), dtype=np.float64)
    xs = np.linspace(3 * r, table.width - 3 * r, 200)
    for name in ("cabana_salida_y", "cabana_mingo_y"):
        pts = np.stack([xs, np.full_like(xs, table.lines[name])], axis=1)
        # Away from the balls and the chalk spots (the Mingo's lies on its line): both are painted out with a
        # disc round them, and the line with them there.
        pts = _away_from(_away_from(pts, balls, 3 * r), spots, 3 * r)
        px = np.round(camera.table_to_image(pts, 0.0)).astype(int)
        assert np.median(off[px[:, 1], px[:, 0]]) < 10, name  # the line is in the model as in the frame
        assert (off[px[:, 1], px[:, 0]] < 25).mean() > 0.95, name

    for xy in balls:  # painted out: the model has cloth where the frame has the ball
        u, v = np.round(camera.table_to_image(xy[None], r)[0]).astype(int)
        assert off[v, u] > 40
    for name in ("king", "lat_top", "lat_bottom", "lat_left", "lat_right"):  # the pins, for the pin detector
        spot = np.asarray(chapo_pin_spots(table)[name])
        u, v = np.round(camera.table_to_image(spot[None], 40.0)[0]).astype(int)
        assert off[v - 2:v + 3, u - 2:u + 3].max() > 40, name
