"""The ball-patch classifier (ONNX, through onnxruntime): patches at a fixed scale, the committed models, and what
they add to colour on frames of the virtual table with balls turned every way."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest

from calibration.camera import CameraModel
from rules.tables import DEFAULT_PRESET, preset
from tests.vision_scenes import BallSpec, Scene, render
from vision.crop_classifier import LEVELS, MODELS, PATCH, CropClassifier, ball_patches, fastest
from vision.detection import BallDetector
from vision.identity import BallIdentifier

POOL = preset("pool_9ft")


def test_a_ball_gives_the_same_patch_at_any_resolution():
    ball = BallSpec((500.0, 900.0), (30, 200, 245), "solid", (0.4, 0.3, 0.0))
    patches = []
    for size in ((1456, 1088), (728, 544)):
        cam = CameraModel.overhead(POOL, size)
        frame = render(Scene(cam, POOL, (ball,), noise=0.0))
        xy = np.array([[500.0, 900.0, POOL.ball_radius]])
        px = cam.sphere_image_centre(xy[0], POOL.ball_radius)[None]
        r = cam.focal * POOL.ball_radius / np.linalg.norm(xy[0] - cam.camera_centre)
        patches.append(ball_patches(frame, px, np.array([r])))
    assert patches[0].shape == (1, 3, PATCH, PATCH)
    assert np.abs(patches[0] - patches[1]).mean() < 0.03


@pytest.mark.parametrize("family, kinds", [("bilhar", 15), ("carom", 3)])
def test_the_committed_models_load_and_name_their_kinds(family, kinds):
    path = MODELS / f"identity_{family}.onnx"
    assert path.stat().st_size < 300_000, "a few hundred kB at most"
    clf = CropClassifier(path)
    assert len(clf.kinds) == kinds
    frame = np.full((200, 200, 3), 90, np.uint8)
    p = clf.kind_probs(frame, np.array([[100.0, 100.0], [50.0, 60.0]]), np.array([12.0, 12.0]))
    assert p.shape == (2, kinds)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-6)


@pytest.mark.parametrize("family", ["bilhar", "carom"])
def test_every_optimisation_level_tried_reads_the_same_probabilities(family):
    """The session kept is whichever level runs soonest on this machine, so the levels must not change what the
    net says: the same kind probabilities to 1e-4 on real ball patches."""
    import onnxruntime as ort

    frame, det, _ = next(_sim_frames("three_cushion" if family == "carom" else "bilhar", 1, seed=3))
    patches = ball_patches(frame, det.px, det.radius_px)
    assert len(patches) >= 3
    probs = []
    for level in LEVELS:
        options = ort.SessionOptions()
        options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
        session = ort.InferenceSession(str(MODELS / f"identity_{family}.onnx"), options,
                                       providers=["CPUExecutionProvider"])
        logits = session.run(None, {session.get_inputs()[0].name: patches})[0].astype(np.float64)
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs.append(p / p.sum(axis=1, keepdims=True))
    np.testing.assert_allclose(probs[0], probs[1], atol=1e-4)


def test_the_classifier_keeps_the_session_that_runs_soonest():
    """Timed by the clock it is given, on a batch of four patches, after a warm-up run each."""
    now = [0.0]

    class Session:
        def __init__(self, cost: float) -> None:
            self.cost, self.runs = cost, 0

        def run(self, outputs, feeds):
            assert feeds["patches"].shape == (4, 3, PATCH, PATCH)
            self.runs += 1
            now[0] += self.cost

    slow, quick = Session(1.27e-3), Session(0.23e-3)
    assert fastest([slow, quick], "patches", clock=lambda: now[0]) is quick
    assert fastest([quick, slow], "patches", clock=lambda: now[0]) is quick
    assert slow.runs == quick.runs == 8  # a warm-up and three timed runs, twice


def _sim_frames(discipline: str, n: int, seed: int):
    from sim.layouts import random_layout
    from sim.physics import simulate
    from sim.render import Effects, Renderer

    table = preset(DEFAULT_PRESET[discipline])
    cam = CameraModel.overhead(table, (1456, 1088), dist=(-0.1, 0.02, 0.0, 0.0, 0.0))
    det = BallDetector(cam, table)
    prng = random.Random(seed)
    rng = np.random.default_rng(seed)
    empty = Renderer(table, discipline, cam, simulate(table, {}, []), Effects(), seed=seed)
    bg = det.background_from_frames([empty.render(0.0)[0]])
    rend = None
    for _ in range(n):
        traj = simulate(table, random_layout(discipline, prng, table), [])
        q = rng.normal(size=(len(traj.ball_ids), 4))
        traj.orientations[:] = (q / np.linalg.norm(q, axis=1, keepdims=True))[None]
        if rend is None:
            rend = Renderer(table, discipline, cam, traj, Effects(), seed=seed)
        rend.traj = traj
        frame, truth = rend.render(0.0)
        d = det.detect(frame, 0.0, bg)
        names = [b for b, v in truth.balls.items() if v["status"] == "on_table"]
        txy = np.array([truth.balls[b]["xy"] for b in names])
        kinds = [names[int(np.argmin(np.linalg.norm(txy - xy, axis=1)))] for xy in d.xy]
        yield frame, d, kinds


# Measured on these frames: bilhar 0.67 by colour alone (stripes cap-up read as the cue or as a dark stripe, the
# rim's shading), 0.96 with the classifier; carom 0.78 and 0.89 (the spot white: its dots, when one faces up).
@pytest.mark.parametrize("discipline, floor", [("bilhar", 0.92), ("three_cushion", 0.85)])
def test_the_classifier_adds_to_colour_on_the_virtual_table(discipline, floor):
    ident = BallIdentifier.for_discipline(discipline)
    assert ident.classifier is not None
    colour_hits = both_hits = total = 0
    for frame, d, kinds in _sim_frames(discipline, 3 if discipline == "bilhar" else 6, seed=21):
        from vision.identity import ball_features

        names = ident.colour.kind_names
        pc = ident.colour.kind_probs(ball_features(frame, d.px, d.radius_px))
        pb = ident.kind_probs(frame, d)
        colour_hits += sum(names[int(np.argmax(p))] == k for p, k in zip(pc, kinds))
        both_hits += sum(names[int(np.argmax(p))] == k for p, k in zip(pb, kinds))
        total += len(kinds)
    assert both_hits >= colour_hits
    assert both_hits / total >= floor, (colour_hits / total, both_hits / total)


def _played_still_frames(seeds: range, size: tuple[int, int]):
    """The still frame before the strike of random bilhar shots (``sim.scenario``, the Pi Global Shutter camera):
    the balls as the layout puts them, every stripe cap-up; the balls found by the detector (its empty table
    painted from the frame), each with its true name."""
    from sim.render import Renderer
    from sim.scenario import random_scenario

    for seed in seeds:
        sc = random_scenario("bilhar", seed, camera={"sensor": "pi_gs", "size": list(size)})
        traj = sc.simulate()
        frame, truth = Renderer(sc.table_spec(), "bilhar", sc.camera_model(), traj, sc.render_effects(),
                                seed=seed).render(0.0)
        det = BallDetector(sc.camera_model(), sc.table_spec())
        d = det.detect(frame, 0.0, det.background_without_empty_table(frame))
        names = [b for b, v in truth.balls.items() if v["status"] == "on_table"]
        txy = np.array([truth.balls[b]["xy"] for b in names])
        gap = np.linalg.norm(txy[None] - d.xy[:, None], axis=2)
        keep = gap.min(axis=1) < POOL.ball_radius
        yield frame, d.subset(keep), [names[int(j)] for j in gap[keep].argmin(axis=1)]


def test_pool_stripes_lying_cap_up_at_728x544_are_not_read_as_the_cue():
    """A stripe lying cap-up on the blue cloth is found a tenth smaller than it is (its dark band at the rim), and a
    patch cut at that radius left the band out: 10 and 14 were read as the cue. Cut at the frame's median radius,
    and with pool's colour model (never fitted to the camera) left out, the resting balls are read right."""
    from vision.identity import patch_radius

    ident = BallIdentifier.for_discipline("bilhar")
    names = ident.colour.kind_names
    own = right = total = stripes_cue = 0
    for frame, d, kinds in _played_still_frames(range(3, 6), (728, 544)):
        assert len(d) >= 12
        p = ident.kind_probs(frame, d)
        said = [names[int(np.argmax(q))] for q in p]
        right += sum(a == b for a, b in zip(said, kinds))
        stripes_cue += sum(a == "cue" and b in ("10", "12", "14") for a, b in zip(said, kinds))
        at_own = ident.classifier.kind_probs(frame, d.px, d.radius_px)
        own += sum(ident.classifier.kinds[int(np.argmax(q))] == k for q, k in zip(at_own, kinds))
        total += len(kinds)
        assert not np.allclose(patch_radius(d.radius_px), d.radius_px)
    assert stripes_cue == 0
    assert right / total >= 0.95 and right > own, (right / total, own / total)


def test_a_ball_read_alone_is_cut_at_the_last_whole_frames_median_radius():
    """The change-gated detector reads afresh only the balls of a changed region, often one or two: their own
    radii would shrink a cap-up stripe's patch again. The identifier remembers the last whole read's median.
    (Each ball is read alone with its radius cut to 0.82 of its fit, as a striped ball whose shaded band read as
    cloth was fitted before the ray fit looked at such short balls again: the detector's own radii no longer
    show it on these frames.)"""
    fresh_right = kept_right = total = 0
    for frame, d, kinds in _played_still_frames(range(3, 5), (728, 544)):
        fresh = BallIdentifier.for_discipline("bilhar")
        kept = BallIdentifier.for_discipline("bilhar")
        kept.kind_probs(frame, d)  # a whole frame read first
        assert kept.typical_radius == pytest.approx(float(np.median(d.radius_px)))
        names = kept.colour.kind_names
        for k, kind in enumerate(kinds):
            one = replace(d.subset(np.arange(len(d)) == k), radius_px=d.radius_px[k:k + 1] * 0.82)
            fresh_right += names[int(np.argmax(fresh.kind_probs(frame, one)))] == kind
            kept_right += names[int(np.argmax(kept.kind_probs(frame, one)))] == kind
            total += 1
    assert kept_right / total >= 0.9 and kept_right > fresh_right, (kept_right / total, fresh_right / total)


def _cue_against_a_cushion(seed: int):
    """A random bilhar layout (``sim.scenario``, the Pi Global Shutter camera at 1456x1088) with the cue ball
    frozen against one cushion (0.5 mm off its nose; the cushion by the seed), the frame before the strike, its
    balls found by the detector: (frame, detections, the index of the cue ball's detection)."""

    from sim.render import Renderer
    from sim.scenario import random_scenario

    sc = random_scenario("bilhar", seed, camera={"sensor": "pi_gs", "size": [1456, 1088]})
    table = sc.table_spec()
    r = table.ball_radius
    side = seed % 4
    along = (0.3 + 0.4 * ((seed // 4) % 2)) * (table.length if side < 2 else table.width)
    p = ((r + 0.5, along), (table.width - r - 0.5, along), (along, r + 0.5), (along, table.length - r - 0.5))[side]
    layout = {b: q for b, q in sc.layout.items() if b == "cue" or np.hypot(q[0] - p[0], q[1] - p[1]) > 3 * r}
    layout["cue"] = p
    sc = replace(sc, layout=layout)
    frame, _ = Renderer(table, "bilhar", sc.camera_model(), sc.simulate(), sc.render_effects(),
                        seed=seed).render(0.0)
    det = BallDetector(sc.camera_model(), table)
    d = det.detect(frame, 0.0, det.background_without_empty_table(frame))
    j = int(np.argmin(np.linalg.norm(d.xy - np.array(p), axis=1)))
    assert np.linalg.norm(d.xy[j] - np.array(p)) < 3.0
    return frame, d, j


def test_the_cue_ball_against_a_cushion_at_1456x1088_is_the_cue():
    """Against a cushion the cue ball has the nose's dark shadow on one side, which the net trained on balls
    2 mm or more off the cushions read as a stripe's band: bench_vision's bilhar seed 128 lost its cue ball
    against the bottom cushion as the 14, and on these eight frames (two on each cushion) the net alone read it
    as the 12, 10 or 14 in six. Trained with balls frozen against the cushions too, it misreads two at most."""
    ident = BallIdentifier.for_discipline("bilhar")
    alone = BallIdentifier(ident.colour, ident.classifier, ident.weight, 0.0, ident.colour_weight)
    names = ident.colour.kind_names
    said = []
    for seed in range(20, 28):
        frame, d, j = _cue_against_a_cushion(seed)
        said.append(names[int(np.argmax(alone.kind_probs(frame, d)[j]))])
    assert said.count("cue") >= 6, said

