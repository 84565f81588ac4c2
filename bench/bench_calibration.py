"""Calibration accuracy on views of the virtual table (``sim.render``): ball-centre positions and corners against
the truth.

    python -m bench.bench_calibration [--views 50] [--seed 1] [--size 1280x960] [--discipline three_cushion]
    python -m bench.bench_calibration --real      # the hand-marked real views of tests/real_corners.json

Each view draws at random: the camera height (as fits the lens, up to 15 % higher), a tilt of 0 to 10 degrees
towards a random end, a little towards a long cushion and a small roll, the lens (the standard Camera Module 3, or
the wide one) with its focal length off the nominal by up to 2 % and its distortion off the nominal, a cloth colour
(green, blue, grey, tournament blue), uneven light (lamp pools moved and of random strength, more or less
vignetting), sensor noise and JPEG, and in half the views a person at the table's edge leaning on it (hands on the
rail or the cushion). The balls stand at the discipline's opening positions. The calibration is given only the
lens's name (its nominal field of view and distortion as a starting point), or nothing with ``--no-lens``.

Figures: per view, the error of the calibrated ball-centre mapping (a ball's pixel centre, projected by the true
camera from z = R, mapped back through the ball-centre plane, against its true cloth point) over a 15 x 29 grid
covering the whole play area; and the corner error in pixels (the nose corners, at the nose height). Printed: the
median and maximum over all views, the worst view, and the time per calibration.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from pathlib import Path

import numpy as np

from calibration.auto import calibrate_view
from calibration.camera import CameraModel
from calibration.distortion import LENSES
from calibration.pose import nose_height_mm, table_corners
from calibration.table_finder import TableNotFound
from rules.tables import preset
from sim.layouts import opening_layout
from sim.physics import simulate
from sim.render import Bystander, Effects, Lighting, Renderer

CLOTHS = {"green": (40, 140, 30), "blue": (170, 95, 20), "grey": (120, 118, 112), "tournament_blue": (150, 70, 10)}


def random_view(rng: np.random.Generator, table, size: tuple[int, int]) -> tuple[CameraModel, dict, str]:
    """A camera and the scene's look (cloth, effects) for one view, and a one-line description."""
    lens_name = "cm3" if rng.random() < 0.5 else "cm3_wide"
    lens = LENSES[lens_name]
    w, h = size
    f = (w / 2) / math.tan(math.radians(lens.hfov_deg) / 2) * (1 + rng.uniform(-0.02, 0.02))
    k1 = lens.k1 + rng.uniform(-0.03, 0.03)
    k2 = lens.k2 + rng.uniform(-0.01, 0.01)
    # The height that fits the table plus a margin, then a little higher at random.
    need = max((table.length + 500) * f / w, (table.width + 500) * f / h)
    height = need * rng.uniform(1.0, 1.15)
    tilt = rng.uniform(-10, 10)  # towards the bottom or the top cushion
    cam = CameraModel.overhead(table, size, height_mm=height, tilt_deg=tilt, focal_px=f, dist=(k1, k2, 0, 0, 0))
    # And a little towards a long cushion (about the camera's x axis), and a roll.
    cam = cam.moved((rng.uniform(-0.05, 0.05), 0, rng.uniform(-0.03, 0.03)))
    cloth = list(CLOTHS)[int(rng.integers(len(CLOTHS)))]
    lamps = tuple((float(rng.uniform(0.3, 0.7)), float(rng.uniform(0.15, 0.85))) for _ in range(int(rng.integers(1, 4))))
    # The Pi's ISP corrects most of the lens's shading: what is left is a fifth or less of the cos^4 fall-off.
    lighting = Lighting(ambient=float(rng.uniform(0.7, 0.85)), lamps=lamps, strength=float(rng.uniform(0.08, 0.25)),
                        radius=(float(rng.uniform(0.7, 1.0)), float(rng.uniform(0.35, 0.5))),
                        vignetting=float(rng.uniform(0.05, 0.2)))
    people: tuple[Bystander, ...] = ()
    if rng.random() < 0.5:
        side = int(rng.integers(4))
        a = float(rng.uniform(0.2, 0.8))
        reach = [float(rng.uniform(-150, 20)) for _ in range(2)]  # how far in from the nose line: rail to cloth
        spread = float(rng.uniform(150, 300))
        if side in (0, 2):  # a short cushion: bottom or top
            y_out, y_in = (-450.0, 0.0) if side == 0 else (table.length + 450.0, table.length)
            sgn = 1.0 if side == 0 else -1.0
            x = a * table.width
            people = (Bystander((x, y_out), ((x - spread, y_in + sgn * reach[0]), (x + spread, y_in + sgn * reach[1]))),)
        else:
            x_out, x_in = (table.width + 450.0, table.width) if side == 1 else (-450.0, 0.0)
            sgn = -1.0 if side == 1 else 1.0
            y = a * table.length
            people = (Bystander((x_out, y), ((x_in + sgn * reach[0], y - spread), (x_in + sgn * reach[1], y + spread))),)
    effects = Effects(motion_blur=False, noise_sigma=float(rng.uniform(1, 3)), jpeg_quality=int(rng.integers(85, 96)),
                      draw_cue=False, lighting=lighting, bystanders=people)
    look = {"cloth_bgr": CLOTHS[cloth], "effects": effects}
    return cam, look, f"{lens_name} h={height:.0f} tilt={tilt:+.1f} {cloth}{' person' if people else ''}"


def render_view(cam: CameraModel, look: dict, table, discipline: str, seed: int = 0) -> np.ndarray:
    """The view through ``sim.render``: the table with the balls at the discipline's opening positions."""
    traj = simulate(table, opening_layout(discipline, table), [])
    r = Renderer(table, discipline, cam, traj, look["effects"], seed=seed, cloth_bgr=look["cloth_bgr"])
    return r.render(0.0)[0]


def ball_errors(true: CameraModel, est: CameraModel, table, n: tuple[int, int] = (15, 29)) -> np.ndarray:
    r = table.ball_radius
    g = np.stack(np.meshgrid(np.linspace(r, table.width - r, n[0]), np.linspace(r, table.length - r, n[1])),
                 -1).reshape(-1, 2)
    return np.linalg.norm(est.image_to_table(true.table_to_image(g, r), r) - g, axis=1)


def run(views: int, seed: int, size: tuple[int, int], table_name: str = "carom_match", tell_lens: bool = True,
        discipline: str = "three_cushion") -> dict:
    table = preset(table_name)
    rng = np.random.default_rng(seed)
    all_ball, all_corner, per_view, times, failures = [], [], [], [], []
    for i in range(views):
        cam, look, desc = random_view(rng, table, size)
        img = render_view(cam, look, table, discipline, seed=i)
        lens = desc.split()[0] if tell_lens else None
        t0 = time.perf_counter()
        try:
            vc = calibrate_view(img, table, lens=lens)
        except (TableNotFound, ValueError) as exc:
            failures.append(f"view {i} ({desc}): {exc}")
            continue
        times.append(time.perf_counter() - t0)
        e = ball_errors(cam, vc.calibration.camera, table)
        true_corners = cam.project(table_corners(table, nose_height_mm(table)))
        c = np.linalg.norm(vc.calibration.corners_px - true_corners, axis=1)
        all_ball.append(e)
        all_corner.append(c)
        per_view.append((float(np.median(e)), float(e.max()), float(c.max()), f"view {i}: {desc}"))
    ball = np.concatenate(all_ball) if all_ball else np.zeros(0)
    corner = np.concatenate(all_corner) if all_corner else np.zeros(0)
    return {"views": views, "calibrated": len(per_view), "failures": failures, "ball": ball, "corner": corner,
            "per_view": per_view, "times": times}


def _silhouette_overlay(vc, entry, out) -> None:
    import cv2

    from calibration.overlay import draw_overlay

    cam = vc.calibration.camera
    w, h = cam.image_size
    mask = cv2.resize(vc.outline.mask, (w, h), interpolation=cv2.INTER_NEAREST)
    bg = np.full((h, w, 3), 40, np.uint8)
    bg[mask > 0] = (110, 130, 110)
    pic = draw_overlay(bg, cam, vc.calibration.table, vc.edge_points, vc.markings, max_side=800)
    s = pic.shape[1] / w
    for p in np.asarray(entry["corners"]) * s:  # the hand-marked corners, for comparison
        cv2.drawMarker(pic, (int(round(p[0])), int(round(p[1]))), (0, 255, 255), cv2.MARKER_TILTED_CROSS, 14, 1)
    for k, line in enumerate((entry["name"], "red: nose points, magenta: corners found, yellow x: by hand")):
        cv2.putText(pic, line, (6, pic.shape[0] - 24 + 14 * k), cv2.FONT_HERSHEY_SIMPLEX, 0.38, (255, 255, 255), 1,
                    cv2.LINE_AA)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(out), pic, [cv2.IMWRITE_JPEG_QUALITY, 70])


def real_views(overlays: str | None = None) -> None:
    """Corner errors of the real views; with ``overlays`` a folder, a picture of each calibration drawn over a flat
    silhouette of the cloth found (not over the footage itself, which must not be copied into the repository)."""
    from bench.real_views import annotations, read_real_view

    for e in annotations():
        try:
            image = read_real_view(e)
        except FileNotFoundError as exc:
            print(f"{e['name']}: {exc}")
            continue
        lens = e.get("lens")
        try:
            vc = calibrate_view(image, preset(e["table"]), lens=lens)
        except (TableNotFound, ValueError) as exc:
            print(f"{e['name']}: refused: {exc}" + (" (expected)" if e.get("expect") == "refused" else ""))
            continue
        if "corners" not in e:
            print(f"{e['name']}: calibrated, but it should have been refused")
            continue
        err = np.linalg.norm(vc.calibration.corners_px - np.asarray(e["corners"]), axis=1)
        if overlays:
            _silhouette_overlay(vc, e, Path(overlays) / f"{e['name']}.jpg")
        print(f"{e['name']}: corner errors {np.round(err, 2).tolist()} px (max {err.max():.2f}; marked to "
              f"+-{e.get('uncertainty_px', '?')} px), reprojection {vc.calibration.quality['reprojection_px']} px")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--views", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--size", default="1280x960")
    ap.add_argument("--table", default="carom_match")
    ap.add_argument("--discipline", default="three_cushion", help="whose markings and opening layout the table has")
    ap.add_argument("--real", action="store_true", help="the real views instead of rendered ones")
    ap.add_argument("--no-lens", action="store_true", help="do not tell the calibration which lens it is")
    ap.add_argument("--verbose", action="store_true", help="one line per view")
    ap.add_argument("--overlays", default=None, help="with --real: write a silhouette overlay per view here")
    a = ap.parse_args()
    if a.real:
        real_views(a.overlays)
        return
    size = tuple(int(v) for v in a.size.split("x"))
    res = run(a.views, a.seed, size, a.table, tell_lens=not a.no_lens, discipline=a.discipline)  # type: ignore[arg-type]
    ball, corner, pv = res["ball"], res["corner"], res["per_view"]
    print(f"views: {res['views']}, calibrated: {res['calibrated']}, {a.size}, table {a.table}, {a.discipline}"
          f"{', lens not told' if a.no_lens else ''}")
    for f in res["failures"]:
        print(f"  failed: {f}")
    if a.verbose:
        for v in pv:
            print(f"  ball median {v[0]:.3f} max {v[1]:.3f} mm, corners max {v[2]:.3f} px: {v[3]}")
    if not len(ball):
        return
    print(f"ball centre error (mm), all grid points of all views: median {np.median(ball):.3f}, "
          f"p95 {np.percentile(ball, 95):.3f}, max {ball.max():.3f}")
    print(f"per-view median (mm): median {statistics.median(v[0] for v in pv):.3f}, "
          f"worst {max(v[0] for v in pv):.3f}")
    print(f"corner error (px): median {np.median(corner):.3f}, p95 {np.percentile(corner, 95):.3f}, "
          f"max {corner.max():.3f}")
    worst = max(pv, key=lambda v: v[1])
    print(f"worst view: ball max {worst[1]:.3f} mm, corners max {worst[2]:.3f} px ({worst[3]})")
    print(f"within targets (ball max < 1.5 mm, ball median < 0.5 mm, corners < 0.3 px): "
          f"{sum(1 for v in pv if v[1] < 1.5 and v[0] < 0.5 and v[2] < 0.3)}/{len(pv)} views")
    print(f"calibration time per view: median {statistics.median(res['times']):.2f} s")


if __name__ == "__main__":
    main()
