"""The renderer: balls land where the camera model says (to 0.1 px), with real parallax; the cushions show their
nose where the geometry puts it (to a few hundredths of a pixel); exposure effects do what they claim; occluders,
bystanders and pins show and are flagged in the truth."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from rules.tables import preset
from sim.actions import KnockPin, Strike
from sim.layouts import opening_layout, pins_for
from sim.occluders import Arm
from sim.physics import simulate
from calibration.auto import calibrate_view
from calibration.pose import nose_height_mm, table_corners
from sim.render import Bystander, Effects, Lighting, Renderer
from sim.sensors import SENSORS, camera_for

CAROM = preset("carom_match")
CHAPO = preset("chapo")
R = CAROM.ball_radius
RED = 200.0  # the red ball's red channel (BGR (40, 30, 200)) with flat shading
SIZE = (640, 480)
HEIGHT = 2000.0


@pytest.fixture(scope="module")
def camera():
    return CameraModel.overhead(CAROM, SIZE, height_mm=HEIGHT, dist=(-0.06, 0.01, 0.0, 0.0, 0.0))


def _coverage_centroid(frame, empty, near, half=14):
    """Sub-pixel centroid of the red ball's coverage, read off the red channel against the empty table."""
    x0, y0 = int(near[0]) - half, int(near[1]) - half
    sl = (slice(y0, y0 + 2 * half + 1), slice(x0, x0 + 2 * half + 1))
    f, b = frame[sl][..., 2].astype(float), empty[sl][..., 2].astype(float)
    a = np.clip((f - b) / (RED - b), 0.0, 1.0)
    v, u = np.mgrid[sl[0], sl[1]]
    return np.array([(a * u).sum(), (a * v).sum()]) / a.sum(), a


def _render_red_at(camera, xy, effects=None, actions=(), t=0.0):
    traj = simulate(CAROM, {"red": xy}, list(actions))
    r = Renderer(CAROM, "three_cushion", camera, traj, effects or Effects.clean(shading=False))
    frame, truth = r.render(t)
    return frame, r.table_image(), truth, traj


@pytest.mark.parametrize("xy", [(710.0, 1420.0), (300.0, 1000.0), (1300.0, 2750.0), (40.0, 40.0)])
def test_a_ball_is_found_where_the_camera_model_predicts(camera, xy):
    frame, empty, truth, _ = _render_red_at(camera, xy)
    centre = np.array([xy[0], xy[1], R])
    predicted = camera.sphere_image_centre(centre, R)
    found, _ = _coverage_centroid(frame, empty, predicted)
    assert np.linalg.norm(found - predicted) < 0.1
    # The projection of the centre is the same to within the (tiny, here) perspective stretch of the outline.
    assert np.linalg.norm(found - camera.project(centre)) < 0.1
    assert truth.balls["red"]["px"] == pytest.approx(list(camera.project(centre)), abs=0.006)


def test_parallax_of_a_rendered_ball_matches_the_geometry(camera):
    xy = np.array([710.0, CAROM.length - R - 5.0])
    frame, empty, _, _ = _render_red_at(camera, tuple(xy))
    found, _ = _coverage_centroid(frame, empty, camera.project([*xy, R]))
    mm_per_px = 1.0 / float(camera.pixels_per_mm(xy))
    via_centre_plane = camera.image_to_table(found, R)
    via_cloth = camera.image_to_table(found, 0.0)
    assert np.linalg.norm(via_centre_plane - xy) < 0.1 * mm_per_px
    d = xy[1] - CAROM.length / 2
    expected = d * R / (HEIGHT - R)
    assert np.linalg.norm(via_cloth - xy) == pytest.approx(expected, abs=0.1 * mm_per_px * 1.2)
    assert expected > 19.0


def test_motion_blur_smears_a_ball_along_its_path_centred_at_mid_exposure(camera):
    fx = Effects.clean(shading=False, motion_blur=True, exposure_s=1 / 60, max_subframes=32)
    strike = Strike(0.0, "red", 3000.0, 90.0, (0.0, 0.4))
    frame, empty, truth, traj = _render_red_at(camera, (710.0, 600.0), fx, [strike], t=0.1)
    mid = traj.state_at(0.1 + fx.exposure_s / 2)[0][0]
    predicted = camera.project([mid[0], mid[1], R])
    found, a = _coverage_centroid(frame, empty, predicted, half=20)
    assert np.linalg.norm(found - predicted) < 0.15
    assert truth.balls["red"]["xy"] == pytest.approx(list(mid), abs=0.006)
    # Table y runs along the image x: the smear is longer along x than across it.
    cols, rows = (a.sum(axis=0) > 0.05).sum(), (a.sum(axis=1) > 0.05).sum()
    assert cols > rows + 5


def test_rolling_shutter_sees_a_moving_ball_when_its_row_is_read(camera):
    readout = 0.016
    fx = Effects.clean(shading=False, rolling_readout_s=readout)
    strike = Strike(0.0, "red", 3000.0, 90.0, (0.0, 0.4))
    frame, empty, _, traj = _render_red_at(camera, (1200.0, 600.0), fx, [strike], t=0.1)
    p0 = traj.state_at(0.1)[0][0]
    row = camera.project([p0[0], p0[1], R])[1]
    seen_at = traj.state_at(0.1 + row / SIZE[1] * readout)[0][0]
    predicted = camera.project([seen_at[0], seen_at[1], R])
    found, _ = _coverage_centroid(frame, empty, predicted)
    assert np.linalg.norm(found - predicted) < 0.25
    assert np.linalg.norm(predicted - camera.project([p0[0], p0[1], R])) > 3.0  # the effect is visible


def test_sensor_noise_and_jpeg_perturb_the_image_by_their_size(camera):
    traj = simulate(CAROM, opening_layout("three_cushion"), [])
    clean = Renderer(CAROM, "three_cushion", camera, traj, Effects.clean()).render(0.0)[0].astype(float)
    noisy = Renderer(CAROM, "three_cushion", camera, traj, Effects.clean(noise_sigma=4.0)).render(0.0)[0]
    jpeg = Renderer(CAROM, "three_cushion", camera, traj, Effects.clean(jpeg_quality=80)).render(0.0)[0]
    assert np.std(noisy.astype(float) - clean) == pytest.approx(4.0, rel=0.2)
    diff = np.abs(jpeg.astype(float) - clean)
    assert 0.2 < diff.mean() < 4.0


def test_flicker_and_a_light_change_scale_the_brightness(camera):
    from sim.render import LightChange
    traj = simulate(CAROM, opening_layout("three_cushion"), [])
    base = Renderer(CAROM, "three_cushion", camera, traj, Effects.clean()).render(1.0)[0].astype(float).mean()
    dim = Renderer(CAROM, "three_cushion", camera, traj,
                   Effects.clean(light_changes=(LightChange(0.0, 0.5, 0.7),))).render(1.0)[0].astype(float).mean()
    assert dim / base == pytest.approx(0.7, abs=0.02)
    fl = Renderer(CAROM, "three_cushion", camera, traj, Effects.clean(flicker=0.1, exposure_s=1 / 1000))
    means = [fl.render(t)[0].astype(float).mean() for t in (0.0025, 0.0075)]  # crest and trough of 100 Hz
    assert means[0] > means[1] * 1.1


def test_an_arm_over_a_ball_flags_it_occluded(camera):
    lay = opening_layout("three_cushion")
    traj = simulate(CAROM, lay, [])
    arm = Arm(0.0, 2.0, entry=(CAROM.width + 150.0, lay["red"][1]), hand=lay["red"])
    r = Renderer(CAROM, "three_cushion", camera, traj, Effects.clean(arms=(arm,)))
    frame, truth = r.render(1.0)
    assert truth.balls["red"]["occluded"] is True
    assert truth.balls["white"]["occluded"] is False
    _, before = r.render(0.0)
    assert before.balls["red"]["occluded"] is False


def test_the_cue_is_drawn_behind_the_ball_before_the_strike(camera):
    lay = opening_layout("three_cushion")
    traj = simulate(CAROM, lay, [Strike(1.0, "spot", 2000.0, 90.0)])
    with_cue = Renderer(CAROM, "three_cushion", camera, traj, Effects.clean(draw_cue=True))
    frame, _ = with_cue.render(0.9)
    empty = Renderer(CAROM, "three_cushion", camera, traj, Effects.clean()).render(0.9)[0]
    behind = camera.table_to_image([lay["spot"][0], lay["spot"][1] - 300.0], R + 30.0)
    u, v = np.round(behind).astype(int)
    assert np.abs(frame[v - 1:v + 2, u - 1:u + 2].astype(float) - empty[v - 1:v + 2, u - 1:u + 2]).mean() > 30


def test_a_fallen_pin_lies_along_its_fall_direction():
    cam = CameraModel.overhead(CHAPO, (800, 600))
    traj = simulate(CHAPO, {"1": (200.0, 200.0)}, [KnockPin(0.5, "king", 90.0)], pins=pins_for("chapo"))
    r = Renderer(CHAPO, "chapo", cam, traj, Effects.clean())
    standing, fallen = r.table_image(0.0).astype(float), r.table_image(1.0).astype(float)
    king = np.array(CHAPO.spots["king"])
    along = cam.table_to_image(king + [0.0, 35.0], 6.0)
    u, v = np.round(along).astype(int)
    assert np.abs(fallen[v, u] - standing[v, u]).max() > 40
    top = cam.table_to_image(king, CHAPO.pin_height)
    u, v = np.round(top).astype(int)
    assert np.abs(fallen[v, u] - standing[v, u]).max() > 40  # the standing pin's top is gone


@pytest.mark.parametrize("name", sorted(SENSORS))
def test_each_sensor_preset_frames_the_whole_table(name):
    mode = SENSORS[name]
    cam = camera_for(CAROM, mode)
    corners = cam.table_to_image([[0, 0], [CAROM.width, 0], [0, CAROM.length], [CAROM.width, CAROM.length]])
    w, h = mode.image_size
    assert (corners > 0).all() and (corners[:, 0] < w).all() and (corners[:, 1] < h).all()
    small = camera_for(CAROM, mode, image_size=(w // 4, h // 4))
    assert np.abs(small.table_to_image([100.0, 100.0]) * 4 + 1.5 - cam.table_to_image([100.0, 100.0])).max() < 0.5
    assert math.isfinite(mode.fps) and mode.fps > 0


def test_a_potted_ball_sinks_out_of_sight():
    table = preset("snooker_full")
    cam = CameraModel.overhead(table, (640, 480))
    traj = simulate(table, {"cue": (300.0, 300.0)}, [Strike(0.0, "cue", 1500.0, 225.0, (0.0, 0.4))])
    t_pot = next(e.t for e in traj.events if e.type.value == "pocket")
    r = Renderer(table, "sinuca", cam, traj, Effects.clean())
    empty = r.table_image().astype(float)
    drop = traj.state_at(t_pot)[0][0]
    u, v = np.round(cam.table_to_image(drop, 0.0)).astype(int)

    def seen(t):
        frame = r.render(t)[0].astype(float)
        return np.abs(frame[v - 2:v + 3, u - 2:u + 3] - empty[v - 2:v + 3, u - 2:u + 3]).mean()

    assert seen(t_pot - 0.005) > 40  # on the lip, in full light
    assert 0 < seen(t_pot + 0.02) < seen(t_pot - 0.005)  # falling, darker
    assert seen(t_pot + 0.2) == 0  # gone


def _grey_column(frame, u):
    """CIELAB lightness down column ``u`` (the face keeps the cloth's hue: lightness is what darkens)."""
    return cv2.cvtColor(np.ascontiguousarray(frame[:, u:u + 1]), cv2.COLOR_BGR2LAB)[:, 0, 0].astype(float)


def _crossing(profile, lo, hi, start, stop):
    """Sub-pixel row where ``profile`` crosses halfway between its levels at rows ``lo`` and ``hi``."""
    half = 0.5 * (profile[lo] + profile[hi])
    for v in range(start, stop):
        a, b = profile[v] - half, profile[v + 1] - half
        if a == 0 or a * b < 0:
            return v + a / (a - b)
    raise AssertionError("no crossing")


def test_a_cushion_shows_the_dark_band_of_its_face_from_the_cloth_up_to_the_nose():
    """The calibration finds the nose as the end of the dark band under it: it must sit where the nose line at the
    nose height projects (to a tenth of a pixel, halfway between the two levels), the band's start where the cloth
meets the face (z = 0)."""
    cam = CameraModel.overhead(CAROM, (1456, 1088), height_mm=HEIGHT, dist=(-0.06, 0.01, 0.0, 0.0, 0.0))
    traj = simulate(CAROM, {}, [])
    frame = Renderer(CAROM, "three_cushion", cam, traj, Effects.clean(lighting=Lighting(vignetting=0.0))).render(0)[0]
    hn = nose_height_mm(CAROM)
    for y in (700.0, 1420.0, 2300.0):  # along the left cushion (at the top of the picture)
        nose_v = float(cam.table_to_image([0.0, y], hn)[1])
        foot_v = float(cam.table_to_image([0.0, y], 0.0)[1])
        u = int(round(float(cam.table_to_image([0.0, y], hn)[0])))
        p = _grey_column(frame, u)
        assert foot_v - nose_v > 3.0  # the face is seen, some 13 mm wide here
        band = p[int(round(nose_v)) + 1:int(round(foot_v)) - 1]
        top, cloth = p[int(nose_v) - 6], p[int(foot_v) + 6]
        assert band.max() < 0.45 * min(top, cloth)  # dark against both the lit top and the cloth
        assert top > 0.7 * cloth  # the top is the same cloth, lit a little less
        found_nose = _crossing(p, int(nose_v) - 3, int(round(nose_v)) + 1, int(nose_v) - 3, int(nose_v) + 3)
        assert found_nose == pytest.approx(nose_v, abs=0.1)  # the band's own shading moves its level a little
        found_foot = _crossing(p, int(round(foot_v)) - 2, int(foot_v) + 3, int(foot_v) - 2, int(foot_v) + 3)
        assert found_foot == pytest.approx(foot_v, abs=0.3)  # the cloth darkens towards the foot: a softer edge


@pytest.mark.parametrize("cloth", [(40, 140, 30), (170, 95, 20), (120, 118, 112)])
def test_a_rendered_table_calibrates_within_the_corner_target(cloth):
    """The calibration's finder works on the renderer's cushions (green, blue and grey cloth, uneven light)."""
    cam = CameraModel.overhead(CAROM, (1280, 960), height_mm=2700.0, tilt_deg=4.0, hfov_deg=66.0,
                               dist=(-0.02, 0.0, 0.0, 0.0, 0.0))
    traj = simulate(CAROM, opening_layout("three_cushion"), [])
    fx = Effects(motion_blur=False, draw_cue=False, lighting=Lighting(lamps=((0.4, 0.3),), strength=0.25))
    frame = Renderer(CAROM, "three_cushion", cam, traj, fx, cloth_bgr=cloth).render(0.0)[0]
    vc = calibrate_view(frame, CAROM, lens="cm3")
    true = cam.project(table_corners(CAROM, nose_height_mm(CAROM)))
    assert np.linalg.norm(vc.calibration.corners_px - true, axis=1).max() < 0.3  # the target
    assert set(vc.outline.edge_kinds) == {"nose"}


def test_a_bystander_covers_the_rail_where_the_hands_rest(camera):
    traj = simulate(CAROM, opening_layout("three_cushion"), [])
    hand = (-60.0, 1200.0)  # on the left cushion's top
    person = Bystander((-450.0, 1400.0), (hand, (-80.0, 1650.0)))
    with_person = Renderer(CAROM, "three_cushion", camera, traj, Effects.clean(bystanders=(person,)))
    frame, _ = with_person.render(0.0)
    empty = Renderer(CAROM, "three_cushion", camera, traj, Effects.clean()).render(0.0)[0]
    u, v = np.round(camera.table_to_image(hand, nose_height_mm(CAROM) + 30.0)).astype(int)
    assert np.abs(frame[v - 1:v + 2, u - 1:u + 2].astype(float) - empty[v - 1:v + 2, u - 1:u + 2]).mean() > 30
    far = np.round(camera.table_to_image((CAROM.width + 60.0, 1200.0), 40.0)).astype(int)
    assert (frame[far[1], far[0]] == empty[far[1], far[0]]).all()


def test_a_cloth_colour_recolours_the_cloth_and_keeps_the_chalk(camera):
    traj = simulate(CAROM, {}, [])
    blue = Renderer(CAROM, "three_cushion", camera, traj, Effects.clean()).render(0.0)[0].astype(float)
    green = Renderer(CAROM, "three_cushion", camera, traj, Effects.clean(), cloth_bgr=(40, 140, 30)).render(0.0)[0]
    u, v = np.round(camera.table_to_image((300.0, 600.0))).astype(int)
    assert green[v, u, 1] > green[v, u, 0] + 60 and blue[v, u, 0] > blue[v, u, 1] + 40
    su, sv = np.round(camera.table_to_image(CAROM.spots["centre"])).astype(int)
    assert green[sv, su].astype(float).mean() > 150  # the chalk spot is still white
