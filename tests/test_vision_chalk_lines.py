"""The chalk lines stay in an empty-table model learnt from a frame with balls on it, and the paint round a ball takes
nothing from them.

The replay paints out of its first frames whatever differs from a wide median of them (``around_candidates=False``):
the balls, their shadows, a cue or a hand. A chalk line is thinner than the median's window, so it differed too, and
Chapó's two lines, the sinuca baulk line and its D were painted out of the model: in every frame after, a line was
foreground, and a ball resting against it was read with the line in its outline (Chapó seed 118: 3.6 mm off)."""

from __future__ import annotations

import cv2
import numpy as np

from rules.tables import chapo_pin_spots
from vision.chalk_lines import chalk_lines, painted_keeping_lines
from vision.detection import BallDetector


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


def test_the_paint_round_a_ball_beside_a_line_takes_nothing_from_the_line():
    """Chapó seed 200: the Mingo rests 16 px from a cabaña line. Painted from its surroundings with the line among
    them, the hole round the ball and its shadow was filled with the line's pale colour (a blob every later frame
    differed from, and the Mingo was read 8 mm onto the line every other frame). The hole is cloth."""
    detector, frame, balls = _chapo_still(200)
    table, camera = detector.table, detector.camera
    ys = np.array([table.lines["cabana_salida_y"], table.lines["cabana_mingo_y"]])
    gaps = np.abs(balls[:, 1, None] - ys[None])
    i, j = np.unravel_index(np.argmin(gaps), gaps.shape)
    ball, line_y = balls[i], ys[j]
    r = table.ball_radius
    assert 1.0 * r < abs(ball[1] - line_y) < 2.5 * r  # the layout this test is about
    model = detector.background_without_empty_table(frame, rounds=3, around_candidates=False).image

    # The model's pixels round the ball, off the line (its image a few px wide): cloth, as the cloth a little
    # farther off on the other side of the ball.
    angles = np.linspace(0, 2 * np.pi, 72, endpoint=False)
    ring = ball + 1.3 * r * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    ring = ring[np.abs(ring[:, 1] - line_y) > 8.0]
    px = np.round(camera.table_to_image(ring, 0.0)).astype(int)
    far = ball + np.array([0.0, 4.0 * r * np.sign(ball[1] - line_y)])
    u, v = np.round(camera.table_to_image(far[None], 0.0)[0]).astype(int)
    cloth = np.median(model[v - 5:v + 6, u - 5:u + 6].reshape(-1, 3), axis=0)
    off = np.abs(model[px[:, 1], px[:, 0]].astype(np.float64) - cloth).max(axis=1)
    assert off.max() < 12, off.round()  # 22 grey levels where the line was a source, 6 now


def _cloth(h: int = 200, w: int = 300) -> np.ndarray:
    """A cloth: a gentle gradient, some noise."""
    rng = np.random.default_rng(3)
    ramp = np.linspace(0, 20, w)[None, :, None]
    return (np.array([40, 110, 30], np.float64) + ramp + rng.normal(0, 1.5, (h, w, 3))).clip(0, 255).astype(np.uint8)


def _cloth_with_a_line(angle_deg: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A cloth crossed by a pale line 3 px wide at ``angle_deg`` through the middle,
    a hole (a ball's painted disc) on it, and a second line passing beside the hole; the frame, the line mask, the
    hole and the line's middle in the hole."""
    frame = _cloth()
    h, w = frame.shape[:2]
    c, a = np.array([150.0, 100.0]), np.radians(angle_deg)
    d = np.array([np.cos(a), np.sin(a)]) * 400
    on_line = np.zeros((h, w), np.uint8)
    cv2.line(on_line, tuple(map(int, c - d)), tuple(map(int, c + d)), 1, 3)
    cv2.line(on_line, (0, 170), (w, 170), 1, 3)  # beside the hole, never through it
    frame[on_line > 0] = (175, 200, 190)
    hole = np.zeros((h, w), np.uint8)
    cv2.circle(hole, (150, 100), 30, 1, -1)
    lines = cv2.dilate(on_line, np.ones((3, 3), np.uint8)) & (1 - hole)
    axis = np.zeros((h, w), np.uint8)  # the line's middle (its fringe is a staircase at a slant)
    cv2.line(axis, tuple(map(int, c - d)), tuple(map(int, c + d)), 1, 1)
    return frame, lines, hole, axis & hole


def test_a_line_under_a_painted_ball_is_carried_through_its_hole():
    """A ball standing on a line (the snooker brown on the baulk line): the model has the line through the hole
    painted round it, as the frame has it either side, not a gap whose stubs the ball's outline took in."""
    for angle in (0.0, 17.0, 90.0, 128.0):
        frame, lines, hole, under = _cloth_with_a_line(angle)
        model = painted_keeping_lines(frame, hole, lines)
        line_pixels = model[under > 0].astype(np.float64)
        assert np.abs(line_pixels - (175, 200, 190)).max(axis=1).mean() < 12, angle  # the line's colour
        grown = np.ones((9, 9), np.uint8)
        around = (cv2.dilate(hole, grown) > 0) & ~(cv2.dilate(under, grown) > 0)
        cloth = model[(hole > 0) & around].astype(np.float64)
        assert cloth[:, 1].mean() < 140, angle  # the rest of the hole still cloth (green 110-130), not line
        outside = (hole == 0)
        assert np.array_equal(model[outside & (lines > 0)], frame[outside & (lines > 0)])  # the lines as seen


def test_a_line_beside_a_hole_lends_it_nothing():
    """Only a line passing beside the hole (Chapó seed 200's Mingo by its cabaña line): nothing crosses it, and the
    paint is the cloth's."""
    frame, lines, hole, _ = _cloth_with_a_line(0.0)
    beside = lines.copy()
    beside[:150] = 0
    frame = np.where(beside[..., None] > 0, frame, _cloth())  # the line through the hole taken away
    hole = cv2.dilate(hole, np.ones((3, 3), np.uint8), iterations=36)  # up to the line beside (at y 168-172)
    assert (cv2.dilate(hole, np.ones((3, 3), np.uint8)) & beside).any() and not (hole & beside).any()
    model = painted_keeping_lines(frame, hole, beside)
    assert model[hole > 0][:, 1].astype(np.float64).max() < 150  # cloth (green 110-130); the line is 200


def test_an_arc_is_not_carried_across_a_hole_as_a_straight_band():
    """The D by a ball (sinuca seed 114's red and its shadow, a hole 50 px tall at 1456 x 1088): a straight band
    across the hole was 2 px off the arc, a stripe of difference beside the ball in every frame. Only straight
    lines are carried through; the arc's stretch in the hole stays cloth."""
    frame = _cloth()
    hole = np.zeros(frame.shape[:2], np.uint8)
    cv2.circle(hole, (150, 100), 30, 1, -1)
    arc = np.zeros(hole.shape, np.uint8)
    cv2.circle(arc, (150 - 146, 100), 146, 1, 3)  # a D's radius at 1456 x 1088, through the hole's middle
    frame[arc > 0] = (175, 200, 190)
    lines = cv2.dilate(arc, np.ones((3, 3), np.uint8)) & (1 - hole)
    model = painted_keeping_lines(frame, hole, lines)
    assert model[hole > 0][:, 1].astype(np.float64).max() < 150
