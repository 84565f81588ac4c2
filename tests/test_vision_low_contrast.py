"""A ball nearly the cloth's colour: snooker's green on the green sinuca cloth (BGR 60,140,20 on 38,118,22).

Rendered by the simulator (``sim.scenario``'s sinuca layouts, the Pi Global Shutter camera at 1456 x 1088, its noise
and compression), the detector's empty table the median of empty-table renders of the same cloth."""

from __future__ import annotations

import numpy as np
import pytest

from vision.detection import BallDetector


def _still_and_empty(seed: int):
    from sim.physics import simulate
    from sim.render import Renderer
    from sim.scenario import random_scenario

    sc = random_scenario("sinuca", seed, camera={"sensor": "pi_gs", "size": [1456, 1088]})
    table, camera = sc.table_spec(), sc.camera_model()
    frame, truth = Renderer(table, "sinuca", camera, sc.simulate(), sc.render_effects(), seed=seed).render(0.0)
    empty = Renderer(table, "sinuca", camera, simulate(table, {}, []), sc.render_effects(), seed=seed)
    detector = BallDetector(camera, table)
    background = detector.background_from_frames([empty.render(0.0)[0] for _ in range(3)])
    balls = {b: np.array(v["xy"]) for b, v in truth.balls.items() if v["status"] == "on_table"}
    return detector, background, frame, balls


@pytest.mark.parametrize("seed", [123, 138])
def test_the_green_on_green_cloth_is_found_within_two_millimetres(seed):
    """The green differs from the cloth by 13-14 grey levels of the shadow-tolerant difference (a whole-contrast
    ball by 60-280): its smoothed fill peaked at 0.5 on its highlight, under a neighbouring red's slope in the
    square non-maximum suppression, its mask was a chalk mark's width, and no ray found its edge at the mask's
    half. Every other ball is still found, and nothing is found on the bare cloth."""
    detector, background, frame, balls = _still_and_empty(seed)
    det = detector.detect(frame, 0.0, background)
    names = list(balls)
    truth = np.array([balls[b] for b in names])
    gap = np.linalg.norm(truth[:, None, :] - det.xy[None, :, :], axis=2)
    nearest = dict(zip(names, gap.min(axis=1)))
    assert nearest["green"] < 2.0, nearest["green"]
    assert max(nearest.values()) < 2.0, {b: round(float(g), 1) for b, g in nearest.items() if g >= 2.0}
    assert (gap.min(axis=0) < detector.table.ball_radius).all()  # no detection away from a ball


@pytest.mark.parametrize("seed", [101, 123])
def test_the_green_stays_out_of_an_empty_table_model_made_from_a_frame_with_it_on_the_table(seed):
    """The replay learns the empty table from its first frames, balls and all (``FrameDetector``). The green, 13
    grey levels off the cloth, is under every cut that paints the balls out, and it stayed in the model whole: it
    was never seen at rest, never placed, and the ball it later kissed read as touched (seeds 101 and 123)."""
    detector, _, frame, balls = _still_and_empty(seed)
    model = detector.background_without_empty_table(frame, rounds=3, around_candidates=False)
    det = detector.detect(frame, 0.0, model)
    assert np.linalg.norm(det.xy - balls["green"], axis=1).min() < 2.0


@pytest.mark.parametrize("seed", [101, 109])
def test_a_green_no_fit_confirms_is_painted_out_of_the_model_whole(seed):
    """In the replay of sinuca seed 109 the green scored under the detector's minimum against every model on the
    way to the empty table (its candidate half a radius towards its shaded side, and the fit from there found few
    edges): no detection painted it out, its shaded half stayed in the model, and against that the green was
    never found all shot long. Every candidate no fit confirms is painted out too, wider. Here no fit confirms
    anything (a detector asking for a score of 0.99): inside the green's outline the model is still the empty
    table's cloth, not the green's shade (which differs from it by 30-40 levels at the median)."""
    from vision.detection import DetectorConfig

    detector, empty, frame, balls = _still_and_empty(seed)
    unconvinced = BallDetector(detector.camera, detector.table, DetectorConfig(min_score=0.99))
    model = unconvinced.background_without_empty_table(frame, rounds=3, around_candidates=False).image
    centre = detector.camera.table_to_image(balls["green"][None], detector.table.ball_radius)[0]
    radius = float(detector.geometry.radius_at(centre[None])[0])
    yy, xx = np.mgrid[:frame.shape[0], :frame.shape[1]]
    disc = np.hypot(xx - centre[0], yy - centre[1]) < radius
    off = np.abs(model[disc].astype(float) - empty.image[disc].astype(float)).sum(axis=1)
    assert np.median(off) < 12.0 and np.percentile(off, 90) < 25.0, np.percentile(off, [50, 90, 99])


@pytest.mark.parametrize("seed, ball", [(104, "10"), (105, "14"), (110, "10")])
def test_a_striped_ball_whose_band_is_near_the_cloth_colour_is_placed_by_its_rim(seed, ball):
    """Bilhar's navy 10 and green 14 on its blue cloth: on the shaded side the band's chroma offset from the cloth
    shrinks with the shading, and the shadow-tolerant difference read it as cloth; the white rest of the ball made
    a smaller circle of its own and the fit took it (8.6, 6.5 and 6.9 mm off, a radius 0.80-0.84 of the batch's).
    Such a short ball is fitted again on the shade-invariant difference, which sees the band whole (the still
    layout, the balls as the simulator lays them out)."""
    from dataclasses import replace

    from sim.render import Renderer
    from sim.scenario import random_scenario

    sc = replace(random_scenario("bilhar", seed, camera={"sensor": "pi_gs", "size": [1456, 1088]}), shots=(),
                 tail_s=0.05)
    table, camera = sc.table_spec(), sc.camera_model()
    frame, _ = Renderer(table, "bilhar", camera, sc.simulate(), sc.render_effects(), seed=seed).render(0.0)
    detector = BallDetector(camera, table)
    det = detector.detect(frame, 0.0, detector.background_without_empty_table(frame))
    layout = {b: np.array(p[:2]) for b, p in sc.start_layout().items()}
    nearest = {b: float(np.linalg.norm(det.xy - p, axis=1).min()) for b, p in layout.items()}
    assert nearest[ball] < 1.5, nearest[ball]
    # The others as well (seed 105's 5 is 2.5 mm off for a reason not looked into yet).
    assert max(nearest.values()) < 3.0, {b: round(g, 1) for b, g in nearest.items() if g >= 3.0}


def test_the_strip_under_the_cushion_noses_stays_in_an_empty_table_model_made_from_a_frame():
    """The shade under a cushion's nose is a dark strip a few pixels wide: the wide median has cloth there, so
    every round of painting found it differing and painted it over with lighter cloth (carom seed 118: 129 grey
    levels in the model against 69 in every frame), and a ball rolling up to that cushion was read 4.7 mm into
    it. Away from the balls, the model keeps the strip as the frame shows it."""
    from dataclasses import replace

    from calibration.pose import nose_height_mm
    from sim.render import Renderer
    from sim.scenario import random_scenario

    sc = replace(random_scenario("three_cushion", 118, camera={"sensor": "pi_gs", "size": [1456, 1088]}),
                 shots=(), tail_s=0.05)
    table, camera = sc.table_spec(), sc.camera_model()
    frame, truth = Renderer(table, "three_cushion", camera, sc.simulate(), sc.render_effects(), seed=118).render(0.0)
    detector = BallDetector(camera, table)
    model = detector.background_without_empty_table(frame, rounds=3, around_candidates=False).image
    # Points in the strip along the right cushion (the one seed 118's spot ball rolled up to), between the
    # nose's footprint on the cloth and the nose itself, clear of every ball.
    ys = np.linspace(150.0, table.length - 150.0, 40)
    balls = np.array([v["xy"] for v in truth.balls.values() if v["status"] == "on_table"])
    ys = ys[np.abs(ys[:, None] - balls[None, :, 1]).min(axis=1) > 4 * table.ball_radius]
    foot = camera.table_to_image(np.stack([np.full_like(ys, table.width), ys], 1), 0.0)
    nose = camera.table_to_image(np.stack([np.full_like(ys, table.width), ys], 1), nose_height_mm(table))
    strip = np.round(0.5 * (foot + nose)).astype(int)
    f = frame[strip[:, 1], strip[:, 0]].astype(float)
    m = model[strip[:, 1], strip[:, 0]].astype(float)
    assert np.median(np.abs(m - f).sum(axis=1)) < 15.0, np.c_[f, m][:5]
