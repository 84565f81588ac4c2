"""Automatic calibration on rendered views: corners, ball-centre positions, lens, and the one-line refusals."""

from __future__ import annotations

import numpy as np
import pytest

from bench.calibration_views import CLOTHS, Scene, render
from calibration.auto import calibrate_from_corners, calibrate_view
from calibration.camera import CameraModel
from calibration.distortion import lens_prior, plumb_line
from calibration.pose import focal_from_rectangle, nose_height_mm, table_corners
from calibration.table_finder import TableNotFound, find_outline, median_frame
from rules.tables import preset

CAROM = preset("carom_match")
R = CAROM.ball_radius
HN = nose_height_mm(CAROM)  # the corners are the nose corners, seen at the nose height
SIZE = (800, 600)


def _camera(tilt=5.0, hfov=66.0, dist=(-0.02, 0, 0, 0, 0), roll=0.01, size=SIZE, table=CAROM):
    f = (size[0] / 2) / np.tan(np.radians(hfov) / 2)
    h = (table.length + 500) * f / size[0]
    return CameraModel.overhead(table, size, height_mm=h, tilt_deg=tilt, focal_px=f, dist=dist).moved((0, 0, roll))


def _ball_errors(true: CameraModel, est: CameraModel, table=CAROM) -> np.ndarray:
    g = np.stack(np.meshgrid(np.linspace(0, table.width, 11), np.linspace(0, table.length, 21)), -1).reshape(-1, 2)
    return np.linalg.norm(est.image_to_table(true.table_to_image(g, R), R) - g, axis=1)


@pytest.mark.parametrize("cloth", ["green", "blue", "grey"])
def test_corners_and_ball_centres_from_a_tilted_standard_lens_view(cloth):
    cam = _camera(tilt=7)
    img = render(cam, Scene(CAROM, cloth_bgr=CLOTHS[cloth], light_gain=0.25), seed=3)
    vc = calibrate_view(img, CAROM, lens="cm3")
    true = cam.project(table_corners(CAROM, HN))
    assert np.linalg.norm(vc.calibration.corners_px - true, axis=1).max() < 0.3
    e = _ball_errors(cam, vc.calibration.camera)
    assert np.median(e) < 0.5 and e.max() < 1.5
    assert vc.calibration.quality["reprojection_px"] < 0.5


def test_wide_lens_distortion_is_found_by_plumb_line():
    cam = _camera(tilt=3, hfov=102, dist=(-0.3, 0.09, 0, 0, 0))
    img = render(cam, Scene(CAROM), seed=1)
    out = find_outline(img)
    prior = lens_prior("cm3_wide")
    fit = plumb_line(out.edge_points, SIZE, prior.camera_matrix(SIZE), k_init=(prior.k1, prior.k2))
    assert fit.rms_before_px > 3 and fit.rms_px < 0.5
    vc = calibrate_view(img, CAROM, lens="cm3_wide")
    e = _ball_errors(cam, vc.calibration.camera)
    assert np.median(e) < 0.5 and e.max() < 1.5


def test_a_person_over_the_rail_does_not_move_the_corners():
    cam = _camera(tilt=4)
    img = render(cam, Scene(CAROM, person=(CAROM.width + 250, 1300.0, 300.0)), seed=2)
    vc = calibrate_view(img, CAROM, lens="cm3")
    true = cam.project(table_corners(CAROM, HN))
    assert np.linalg.norm(vc.calibration.corners_px - true, axis=1).max() < 0.3


def test_median_of_frames_removes_a_passing_person():
    cam = _camera(tilt=4)
    frames = [render(cam, Scene(CAROM, person=(x, 1400.0, 350.0)), seed=i)
              for i, x in enumerate((-300.0, 700.0, CAROM.width + 300))]
    med = median_frame(frames)
    vc = calibrate_view(med, CAROM, lens="cm3")
    true = cam.project(table_corners(CAROM, HN))
    assert np.linalg.norm(vc.calibration.corners_px - true, axis=1).max() < 0.3


def test_focal_length_from_a_tilted_rectangle():
    cam = _camera(tilt=10, dist=(0, 0, 0, 0, 0))
    px = cam.table_to_image(table_corners(CAROM)[:, :2])
    f = focal_from_rectangle(px, CAROM, cam.camera_matrix[:2, 2])
    assert abs(f / cam.focal - 1) < 0.01


def test_manual_corners_give_a_pose():
    cam = _camera(tilt=6)  # the lens as its prior says
    px = cam.project(table_corners(CAROM, HN))
    c = calibrate_from_corners(px, SIZE, CAROM, lens="cm3")
    assert c.quality["reprojection_px"] < 0.05
    assert np.median(_ball_errors(cam, c.camera)) < 3.0


def test_a_blank_picture_is_refused_in_one_line():
    with pytest.raises(TableNotFound, match="blank") as err:
        find_outline(np.full((480, 640, 3), 128, np.uint8))
    assert "\n" not in str(err.value)


def test_a_table_half_out_of_view_says_which_way_to_move():
    cam = CameraModel.overhead(CAROM, SIZE, height_mm=2000, focal_px=500.0).moved((0.0, 0.35, 0.0))
    img = render(cam, Scene(CAROM), supersample=1)
    with pytest.raises(TableNotFound, match="runs off the (left|right|top|bottom) of the picture: (pan|tilt)"):
        find_outline(img)


def test_a_picture_without_a_table_is_refused():
    rng = np.random.default_rng(0)
    img = rng.integers(0, 255, (480, 640, 3), dtype=np.uint8)
    with pytest.raises(TableNotFound):
        find_outline(img)


@pytest.mark.parametrize("name", ["snooker_full", "pool_9ft", "chapo"])
def test_pocketed_tables_calibrate_too(name):
    """Pockets cut the noses near the corners: the corners come from the lines, not from the pockets. (At 1024
    px: a 3.6 m snooker table at 800 px is 4.5 mm a pixel, and its 2-pixel nose band biases the edges.)"""
    table = preset(name)
    cam = _camera(tilt=6, table=table, size=(1024, 768))
    img = render(cam, Scene(table, nose_height=nose_height_mm(table), light_gain=0.2), seed=2)
    vc = calibrate_view(img, table, lens="cm3")
    e = _ball_errors(cam, vc.calibration.camera, table)
    assert np.median(e) < 0.5 and e.max() < 1.5
    true = cam.project(table_corners(table, nose_height_mm(table)))
    assert np.linalg.norm(vc.calibration.corners_px - true, axis=1).max() < 0.3


SNOOKER = preset("snooker_full")


def _fisheye_camera(size=(1280, 960)) -> CameraModel:
    return CameraModel.overhead(SNOOKER, size, height_mm=1400, tilt_deg=3, focal_px=560 * size[0] / 1280,
                                dist=(-0.04, -0.01, 0.005, 0.0), lens_model="fisheye").moved((0, 0, 0.01))


def test_the_equidistant_fit_recovers_a_fisheye_from_its_noses_and_spots():
    from calibration.distortion import refine_fisheye
    from calibration.pose import MarkingObservation

    true = _fisheye_camera()
    hn = nose_height_mm(SNOOKER)
    rng = np.random.default_rng(1)
    ends = table_corners(SNOOKER)[:, :2]
    s = np.linspace(0.07, 0.93, 150)[:, None]
    edges = [true.table_to_image(ends[i] * (1 - s) + ends[(i + 1) % 4] * s, hn) + rng.normal(0, 0.1, (150, 2))
             for i in range(4)]
    spots = [MarkingObservation(n, true.table_to_image(np.asarray(p)[None], 0.0)[0] + rng.normal(0, 0.2, 2),
                                np.asarray(p, dtype=float)) for n, p in SNOOKER.spots.items()]
    # Started as the pinhole fit leaves it: focal length 8 % long, no distortion, the pose a little off.
    k = true.camera_matrix.copy()
    k[0, 0] = k[1, 1] = 1.08 * true.focal
    start = CameraModel(true.image_size, k, np.zeros(4), true.rvec + 0.003, true.tvec + [10.0, -10.0, 60.0],
                        "fisheye")
    fit = refine_fisheye(start, SNOOKER, edges, 600.0, 0.2, [hn] * 4, markings=spots)
    assert fit.camera.lens_model == "fisheye"
    assert fit.rms_px < 0.2 and abs(fit.camera.focal / true.focal - 1) < 0.02
    e = _ball_errors(true, fit.camera, SNOOKER)
    assert np.median(e) < 0.5 and e.max() < 1.5


def test_the_equidistant_start_bends_rays_as_the_pinhole_fit_did():
    from calibration.distortion import pinhole_to_fisheye

    pin = CameraModel.overhead(SNOOKER, (1280, 960), height_mm=1400, focal_px=600, dist=(-0.3, 0.08, 0, 0, -0.01))
    kb = pinhole_to_fisheye(pin, 0.9)
    g = np.stack(np.meshgrid(np.linspace(0, SNOOKER.width, 9), np.linspace(0, SNOOKER.length, 17)), -1).reshape(-1, 2)
    inside = np.arctan(np.linalg.norm(pin.undistort(pin.table_to_image(g, 0.0)), axis=-1)) < 0.9
    d = np.linalg.norm(kb.table_to_image(g, 0.0) - pin.table_to_image(g, 0.0), axis=1)[inside]
    assert kb.lens_model == "fisheye" and inside.mean() > 0.8 and d.max() < 1.0


def test_a_rendered_fisheye_view_is_calibrated_with_the_equidistant_model():
    cam = _fisheye_camera((960, 720))
    img = render(cam, Scene(SNOOKER), seed=4)
    vc = calibrate_view(img, SNOOKER, lens="fisheye")
    assert vc.calibration.camera.lens_model == "fisheye"
    true = cam.project(table_corners(SNOOKER, nose_height_mm(SNOOKER)))
    assert np.linalg.norm(vc.calibration.corners_px - true, axis=1).max() < 0.6
    assert vc.calibration.quality["reprojection_px"] < 0.3


def test_an_untold_wide_lens_is_let_bend_as_far_as_its_noses_say():
    """The wide Camera Module 3 needs k1 about -0.3; an untold lens was held at 0 +- 0.05, which pulled the
    benchmark's --no-lens wide views off their targets (this one, the 13th of seed 1: corners 13 px off). Strongly
    barrel-bent noses loosen the hold (calibration.distortion.UNTOLD_WIDE)."""
    from bench.bench_calibration import ball_errors, random_view, render_view

    table = preset("carom_match")
    rng = np.random.default_rng(1)
    for _ in range(13):
        cam, look, desc = random_view(rng, table, (1280, 960))
    assert desc.startswith("cm3_wide")
    vc = calibrate_view(render_view(cam, look, table, "three_cushion", seed=12), table, lens=None)
    true = cam.project(table_corners(table, nose_height_mm(table)))
    assert np.linalg.norm(vc.calibration.corners_px - true, axis=1).max() < 0.3
    e = ball_errors(cam, vc.calibration.camera, table)
    assert e.max() < 1.5 and np.median(e) < 0.5


def test_the_straight_nose_stretches_keep_clear_of_every_pocket_and_corner():
    from calibration.auto import JAW_CLEARANCE_BALLS, nose_stretches

    clear = JAW_CLEARANCE_BALLS * SNOOKER.ball_diameter
    bottom, right, top, left = nose_stretches(SNOOKER)
    assert len(bottom) == len(top) == 1 and len(right) == len(left) == 2  # the middle pockets split the long ones
    corner_jaw = SNOOKER.pocket("bottom_left").jaws[0][0]
    assert bottom[0][0] == pytest.approx(corner_jaw + clear)
    assert bottom[0][1] == pytest.approx(SNOOKER.width - corner_jaw - clear)
    mid = SNOOKER.pocket("right_middle")
    gap = (right[0][1], right[1][0])
    assert gap == pytest.approx((mid.jaws[0][1] - clear, mid.jaws[1][1] + clear))
    # A table without pockets: only its corners are kept clear of.
    carom = preset("carom_match")
    c = JAW_CLEARANCE_BALLS * carom.ball_diameter
    assert nose_stretches(carom)[1] == [pytest.approx((c, carom.length - c))]


def test_a_fisheye_view_has_its_noses_measured_out_to_the_pockets():
    """The finder keeps 7 % of each side's cloth contour off its corners; on the Pi's 3280 px still, whose pockets
    round the cloth off, that was 230 px short of them, and past that the fisheye corner was the lens model's
    extrapolation, 2-3 px astray in the pocket. The fisheye fit measures the noses again over their whole
    straight stretches (``nose_stretches``), the same edge as the finder's."""
    from calibration.auto import nose_stretches

    cam = _fisheye_camera((960, 720))
    img = render(cam, Scene(SNOOKER), seed=4)
    vc = calibrate_view(img, SNOOKER, lens="fisheye")
    finder = find_outline(img).edge_points
    hn = nose_height_mm(SNOOKER)
    ends = table_corners(SNOOKER)[:, :2]
    for i, (pts, spans) in enumerate(zip(vc.edge_points, nose_stretches(SNOOKER))):
        a, b = ends[i], ends[(i + 1) % 4]
        d = (b - a) / np.linalg.norm(b - a)
        n = np.array([-d[1], d[0]])
        along = (cam.image_to_table(pts, hn) - a) @ d
        assert along.min() < spans[0][0] + 20 and along.max() > spans[-1][1] - 20, (i, along.min(), along.max())
        # And they are the same edge as the finder's own noses (where the renderer draws it, as seen), in pixels
        # across the nose line.
        def offset(p: np.ndarray) -> float:
            xy = cam.image_to_table(p, hn)
            return float(np.median(((xy - a) @ n) * cam.pixels_per_mm(xy, hn)))
        assert abs(offset(pts) - offset(finder[i])) < 0.2


def test_a_wide_lens_view_with_a_person_at_the_top_keeps_its_focal_length():
    """bench_calibration view 34 (seed 1: the wide Camera Module 3 tilted 6.8 degrees, a person leaning on the top
    rail) had a 0.66 mm ball median: its focal length came out 1.3 % short, the noses measured only to 7 % of each
    side off the corners leaving the focal length and k1 to trade. Measured out to the corners they do not."""
    from bench.bench_calibration import ball_errors, random_view, render_view

    table = preset("carom_match")
    rng = np.random.default_rng(1)
    for _ in range(35):
        cam, look, desc = random_view(rng, table, (1280, 960))
    assert desc.startswith("cm3_wide") and desc.endswith("person")
    vc = calibrate_view(render_view(cam, look, table, "three_cushion", seed=34), table, lens="cm3_wide")
    assert abs(vc.calibration.camera.focal / cam.focal - 1) < 0.005
    e = ball_errors(cam, vc.calibration.camera, table)
    assert np.median(e) < 0.3 and e.max() < 1.0
