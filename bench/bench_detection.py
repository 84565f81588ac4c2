"""Benchmark of the first two vision stages: ball detection and colour identity.

    python -m bench.bench_detection [--layouts 4] [--repeats 5] [--no-real]

Prints, on one core (OpenCV and the BLAS held to one thread; CPU time of this process, so that other work on a
shared machine does not count):

- the median per-frame time of each detection stage and of identity, at 1456 x 1088, over frames of the virtual
  table (``sim.render``: shaded ray-traced balls, sensor noise, JPEG at 92, barrel distortion, the balls at their
  true height so parallax is real), for every discipline;
- the position error of the balls at rest (cloth point under the centre, mm: median and p99), recall and
  precision against the renderer's truth, and the median per ball colour (a resting ball's error is fixed by its
  colour against the cloth, its shading and the codec, not noise: the colour says where to look);
- the position error of moving balls (motion blur, 1/100 s exposure, struck at 2.5 m/s) against the
  mid-exposure truth, and how many were flagged ``blurred``;
- identity accuracy (kind of each ball) with the colour model alone and with the patch classifier added;
- on the real annotated frames of LukasSeglias/billiard-ai (when ``../shared/real`` is present): recall,
  precision and pixel centre error of detection (empty-table model: the median of the frames; and painted from
  each frame alone), and identity accuracy with the true-colour defaults and with the model fitted on the even
  frames (scored on the odd ones).
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import random  # noqa: E402
import time  # noqa: E402

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from calibration.camera import CameraModel  # noqa: E402
from rules.tables import DEFAULT_PRESET, preset  # noqa: E402
from sim.actions import Strike  # noqa: E402
from sim.layouts import random_layout  # noqa: E402
from sim.physics import simulate  # noqa: E402
from sim.render import Effects, Renderer  # noqa: E402
from vision.detection import BallDetector  # noqa: E402
from vision.identity import BallIdentifier, ColourModel, ball_features  # noqa: E402

SIZE = (1456, 1088)
DIST = (-0.12, 0.03, 0.0005, -0.0003, 0.0)
DISCIPLINES = ("three_cushion", "sinuca", "bilhar", "chapo")
STAGES = ("foreground", "candidates", "smears", "fit", "to_table")
MATCH_MM = 15.0


def _kind(ball: str, discipline: str) -> str:
    return "red" if discipline == "sinuca" and ball.startswith("red") else ball


def _background(table, discipline, camera, effects, seed) -> np.ndarray:
    """Frames of the empty table through the same camera effects (noise, JPEG), as the device would see it."""
    empty = Renderer(table, discipline, camera, simulate(table, {}, []), effects, seed=seed + 100)
    return [empty.render(0.0)[0] for _ in range(3)]


def bench_discipline(discipline: str, layouts: int, repeats: int) -> dict:
    table = preset(DEFAULT_PRESET[discipline])
    camera = CameraModel.overhead(table, SIZE, height_mm=2000.0, dist=DIST)
    detector = BallDetector(camera, table)
    colours = ColourModel(discipline)
    identifier = BallIdentifier.for_discipline(discipline)
    effects = Effects(exposure_s=1 / 250)
    moving_effects = Effects(exposure_s=1 / 100)  # a long exposure: the smear path
    times: dict[str, list[float]] = {s: [] for s in STAGES + ("detect", "identity")}
    errors, n_true, n_found, n_match = [], 0, 0, 0
    by_kind: dict[str, list[float]] = {}
    id_hits, id_total, id2_hits = 0, 0, 0
    moving_err, moving_flagged, moving_n = [], 0, 0
    background = None
    for seed in range(layouts):
        layout = random_layout(discipline, random.Random(seed), table)
        traj = simulate(table, layout, [])
        # Balls come to rest turned every way (the simulator starts them all upright).
        q = np.random.default_rng(seed).normal(size=(len(traj.ball_ids), 4))
        traj.orientations[:] = (q / np.linalg.norm(q, axis=1, keepdims=True))[None]
        frame, truth = Renderer(table, discipline, camera, traj, effects, seed=seed).render(0.0)
        if background is None:
            background = detector.background_from_frames(_background(table, discipline, camera, effects, seed))
        for _ in range(repeats):  # the median over repeats: the machine is shared
            t = {}
            t0 = time.process_time()
            det = detector.detect(frame, 0.0, background, timings=t)
            t1 = time.process_time()
            out = identifier.identify(frame, det)
            t2 = time.process_time()
            for s in STAGES:
                times[s].append(t.get(s, 0.0))
            times["detect"].append(t1 - t0)
            times["identity"].append(t2 - t1)
        balls = {b: v for b, v in truth.balls.items() if v["status"] == "on_table"}
        txy = np.array([v["xy"] for v in balls.values()])
        d = np.linalg.norm(txy[:, None, :] - det.xy[None, :, :], axis=2) if len(det) else np.full((len(txy), 1), 1e9)
        nearest = d.argmin(axis=1)
        ok = d.min(axis=1) < MATCH_MM
        errors += list(d.min(axis=1)[ok])
        for name, good, e in zip(balls, ok, d.min(axis=1)):
            if good:
                by_kind.setdefault(_kind(name, discipline), []).append(float(e))
        n_true += len(txy)
        n_found += len(det)
        n_match += int(len(set(nearest[ok])))
        kinds = colours.kind_names
        kp = colours.kind_probs(ball_features(frame, det.px, det.radius_px)) if len(det) else np.zeros((0, 0))
        kp2 = identifier.kind_probs(frame, det) if len(det) else np.zeros((0, 0))
        for name, good, j in zip(balls, ok, nearest):
            if good:
                id_hits += kinds[int(np.argmax(kp[j]))] == _kind(name, discipline)
                id2_hits += kinds[int(np.argmax(kp2[j]))] == _kind(name, discipline)
                id_total += 1
        # One struck ball, seen mid-roll: its smear against the mid-exposure truth.
        cue = next(iter(layout))
        strike = Strike(0.0, cue, 2500.0, 360.0 * random.Random(seed).random(), (0.0, 0.4))
        moving = simulate(table, layout, [strike], until=0.3)
        mframe, mtruth = Renderer(table, discipline, camera, moving, moving_effects, seed=seed).render(0.1)
        mdet = detector.detect(mframe, 0.1, background)
        if mtruth.balls[cue]["status"] == "on_table" and len(mdet):
            dm = np.linalg.norm(mdet.xy - np.array(mtruth.balls[cue]["xy"]), axis=1)
            j = int(np.argmin(dm))
            moving_n += 1
            if dm[j] < 3 * table.ball_radius:
                moving_err.append(dm[j])
                moving_flagged += bool(mdet.blurred[j])
    e = np.array(errors) if errors else np.array([np.nan])
    return {
        "discipline": discipline, "balls": n_true,
        "ms": {k: 1e3 * float(np.median(v)) for k, v in times.items()},
        "median_mm": float(np.median(e)), "p99_mm": float(np.percentile(e, 99)),
        "by_kind_mm": {k: float(np.median(v)) for k, v in by_kind.items()},
        "recall": n_match / max(n_true, 1), "precision": n_match / max(n_found, 1),
        "identity": id_hits / max(id_total, 1), "identity_cnn": id2_hits / max(id_total, 1),
        "cnn": identifier.classifier is not None,
        "moving_median_mm": float(np.median(moving_err)) if moving_err else float("nan"),
        "moving_found": f"{len(moving_err)}/{moving_n}", "moving_flagged": f"{moving_flagged}/{len(moving_err)}",
    }


def bench_real() -> str:
    from tests import real_snooker_frames as real

    if not real.available():
        return f"real frames: skipped (not found at {real.FOLDER})"
    cases = real.cases()
    camera, table = real.camera_and_table(cases)
    frames = [cv2.imread(str(c.image)) for c in cases]
    detector = BallDetector(camera, table)
    background = detector.background_from_frames(frames)
    per_frame, feats, kinds, index, ms = [], [], [], [], []
    for n, (case, frame) in enumerate(zip(cases, frames)):
        t0 = time.process_time()
        det = detector.detect(frame, 0.0, background)
        ms.append(1e3 * (time.process_time() - t0))
        per_frame.append((det.px, case.px))
        ti, fi = real.match(det.px, case.px, 7.0)
        feats.append(ball_features(frame, det.px[fi], det.radius_px[fi]))
        kinds += [case.kinds[i] for i in ti]
        index += [n] * len(ti)
    s = real.score(per_frame, 7.0)
    boot = real.score([(detector.detect(fr, 0.0, detector.background_without_empty_table(fr)).px, c.px)
                       for c, fr in zip(cases, frames)], 7.0)
    f, k, idx = np.concatenate(feats), np.array(kinds), np.array(index)
    model = ColourModel("sinuca")
    acc_default = float((np.array(model.kind_names)[model.kind_probs(f).argmax(1)] == k).mean())
    train = idx % 2 == 0
    fitted = model.fit(f[train], k[train])
    acc_fit = float((np.array(fitted.kind_names)[fitted.kind_probs(f[~train]).argmax(1)] == k[~train]).mean())
    return (f"real frames (LukasSeglias, {len(cases)} frames 1280x720, {s.true} balls): detection recall "
            f"{s.recall:.3f}, precision {s.precision:.3f}, centre error median {s.median_px:.2f} px, p90 "
            f"{s.p90_px:.2f} px; {np.median(ms):.1f} ms/frame; identity {acc_default:.3f} with the true-colour "
            f"defaults, {acc_fit:.3f} fitted on the even frames (scored on the odd)\n"
            f"  the same without an empty table (model painted from each frame): recall {boot.recall:.3f}, "
            f"precision {boot.precision:.3f}, centre error median {boot.median_px:.2f} px, p90 {boot.p90_px:.2f} px")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layouts", type=int, default=4, help="random layouts per discipline")
    ap.add_argument("--repeats", type=int, default=5, help="timed runs per frame (the median is kept)")
    ap.add_argument("--no-real", action="store_true", help="skip the real frames")
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    print(f"detection and identity at {SIZE[0]}x{SIZE[1]}, one core, sim.render frames (noise, JPEG 92, "
          f"distortion {DIST[:2]}, parallax), {args.layouts} layouts per discipline")
    header = ("discipline", "balls", *STAGES, "detect", "identity", "med mm", "p99 mm", "recall", "prec",
              "id colour", "id +cnn", "moving mm", "moving found", "flagged")
    print(" | ".join(header))
    for discipline in DISCIPLINES:
        r = bench_discipline(discipline, args.layouts, args.repeats)
        ms = r["ms"]
        print(" | ".join([r["discipline"], str(r["balls"])] + [f"{ms[s]:.2f}" for s in STAGES]
                         + [f"{ms['detect']:.2f}", f"{ms['identity']:.2f}", f"{r['median_mm']:.2f}",
                            f"{r['p99_mm']:.2f}", f"{r['recall']:.3f}", f"{r['precision']:.3f}",
                            f"{r['identity']:.3f}", f"{r['identity_cnn']:.3f}" if r["cnn"] else "-",
                            f"{r['moving_median_mm']:.2f}", r["moving_found"],
                            r["moving_flagged"]]))
        print("  at rest by ball, median mm: " + ", ".join(f"{k} {v:.2f}" for k, v in r["by_kind_mm"].items()))
    if not args.no_real:
        print(bench_real())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
