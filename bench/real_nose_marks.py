"""Measure the cushion-nose corners of a real view for tests/real_corners.json: the method its notes name.

    python -m bench.real_nose_marks pi_fisheye_snooker_4b [--json]

On a pocket table under a fisheye lens each corner lies inside a pocket, where no nose is seen: it is where two noses
meet when extended. Extending each nose's image curve by a polynomial fitted in image space (the earlier marks: a
quadratic over 200-450 px, intersected) depends on the polynomial's degree by up to 3.6 px at 3280 px. Here each
nose is extended as what it is, a straight line seen through a lens:

1. A guide: the automatic calibration's image of each nose line (only where to look; +-12 mm of it is searched).
2. The nose measured on profiles across the guide every 4 mm, over the nose's straight stretches (clear of each
   pocket's curved jaws: ``calibration.auto.nose_stretches``): going outwards, the darkest sample (the band under
   the nose), then the steepest rise of CIELAB lightness within the band's width beyond it (band -> lit cushion
   top: the nose), parabola-refined on the bicubically sampled gradient. No profile reaches into the entry's
   ``occluded_px`` rectangles (a broadcast's score graphic).
3. The lens by the plumb-line rule alone: the equidistant model for a fisheye view, the pinhole one for any other
   (focal length the guide's, principal point and k1, k2 free, weakly held) that makes each cushion's points one
   straight line, both halves of a long cushion on the same line (Tukey weights against a cable or a hand across
   a nose). No table size and no pose go in.
4. The corners: the straightened lines intersected, mapped back through the lens.

Printed: the corners, and how far they move when the lens model has k3 too, a fixed principal point, or the
stretches cut 40 mm shorter at each pocket or corner: the marks' own uncertainty from the method. Checked on the PBA
clip, whose corners are in view and were marked by hand on 10x crops: 0.8, 0.9, 0.2, 0.5 px from those.
"""

from __future__ import annotations

import argparse
import json

import cv2
import numpy as np

from calibration.auto import calibrate_view, nose_stretches
from calibration.camera import CameraModel
from calibration.pose import nose_height_mm
from bench.real_views import REAL, annotations, read_real_view
from rules.tables import TableSpec, preset

OUTWARD = np.array([[0.0, -1.0], [1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])


def _corners(table: TableSpec) -> np.ndarray:
    return np.array([[0.0, 0.0], [table.width, 0.0], [table.width, table.length], [0.0, table.length]])


def measure_noses(image: np.ndarray, guide: CameraModel, table: TableSpec, widen_mm: float = 0.0,
                  step_mm: float = 4.0, occluded: list[list[float]] = ()) -> list[np.ndarray]:
    """Per cushion (table order), the nose points measured across the guide's image of its line (step 2); no
    profile that reaches into an ``occluded`` rectangle [x0, y0, x1, y1] (a broadcast's score graphic)."""
    hn = nose_height_mm(table)
    light = np.ascontiguousarray(
        cv2.cvtColor(cv2.GaussianBlur(image, (0, 0), 1.0), cv2.COLOR_BGR2LAB)[..., 0].astype(np.float32))
    gx = cv2.Sobel(light, cv2.CV_32F, 1, 0, ksize=3) / 8
    gy = cv2.Sobel(light, cv2.CV_32F, 0, 1, ksize=3) / 8
    corners = _corners(table)
    out = []
    for i, spans in enumerate(nose_stretches(table)):
        a, b = corners[i], corners[(i + 1) % 4]
        d = (b - a) / np.linalg.norm(b - a)
        s = np.concatenate([np.arange(lo + widen_mm, hi - widen_mm, step_mm) for lo, hi in spans])
        xy = a + s[:, None] * d
        p = guide.table_to_image(xy, hn)
        nrm = guide.table_to_image(xy + OUTWARD[i], hn) - p
        ppm = np.linalg.norm(nrm, axis=1)
        nrm /= ppm[:, None]
        # +-12 mm of the guide, and at least 10 px; the dark band is narrower than 10 mm, but seen at a slant (the
        # far cushion's face) at least 8 px wide
        half = max(10.0, 12.0 * float(np.median(ppm)))
        band = max(8.0, 10.0 * float(np.median(ppm)))
        st = 0.25
        offs = np.arange(-half, half, st, dtype=np.float32)
        sx = (p[:, None, 0] + offs * nrm[:, None, 0]).astype(np.float32)
        sy = (p[:, None, 1] + offs * nrm[:, None, 1]).astype(np.float32)
        prof = cv2.remap(light, sx, sy, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        grad = (cv2.remap(gx, sx, sy, cv2.INTER_CUBIC) * nrm[:, None, 0].astype(np.float32)
                + cv2.remap(gy, sx, sy, cv2.INTER_CUBIC) * nrm[:, None, 1].astype(np.float32))
        smooth = cv2.GaussianBlur(prof, (9, 1), 0)
        k0 = np.argmin(smooth, axis=1)
        width = int(band / st)
        idx = np.minimum(k0[:, None] + np.arange(width)[None, :], len(offs) - 2)
        rows = np.arange(len(s))[:, None]
        k = idx[np.arange(len(s)), np.argmax(grad[rows, idx], axis=1)]
        rise = smooth[rows, idx].max(axis=1) - smooth[np.arange(len(s)), k0]
        r = np.arange(len(s))
        g0, g1, g2 = grad[r, k - 1], grad[r, k], grad[r, k + 1]
        den = g0 - 2 * g1 + g2
        frac = np.where(den < 0, np.clip(0.5 * (g0 - g2) / np.where(den < 0, den, -1.0), -0.5, 0.5), 0.0)
        ok = (rise >= 15) & (k > 0) & (k0 > 0)
        for x0, y0, x1, y1 in occluded:
            for end in (p - half * nrm, p, p + half * nrm):
                ok &= ~((end[:, 0] >= x0) & (end[:, 0] <= x1) & (end[:, 1] >= y0) & (end[:, 1] <= y1))
        out.append(p[ok] + ((offs[k] + frac * st)[ok])[:, None] * nrm[ok])
    return out


def _lens(size: tuple[int, int], k0: np.ndarray, x: np.ndarray, n_k: int, free_pp: bool,
          model: str = "fisheye") -> CameraModel:
    k = k0.copy()
    if free_pp:
        k[0, 2] += x[0]
        k[1, 2] += x[1]
    d = np.zeros(4 if model == "fisheye" else 5)
    d[[0, 1, 4][:n_k] if model == "pinhole" else slice(0, n_k)] = x[2:2 + n_k]
    return CameraModel(size, k, d, np.zeros(3), np.array([0.0, 0.0, 1000.0]), model)


def _lines(cam: CameraModel, pts: list[np.ndarray], weights: list[np.ndarray]):
    """Per cushion: the straight line through its straightened points (centre, direction) and their distances
    from it (ideal px)."""
    f = cam.focal
    out = []
    for p, w in zip(pts, weights):
        u = cam.undistort(p) * f
        c = (u * w[:, None]).sum(0) / w.sum()
        dd = u - c
        _, v = np.linalg.eigh((dd * w[:, None]).T @ dd)
        out.append((c, v[:, 1], dd @ v[:, 0]))
    return out


def plumb_line_corners(pts: list[np.ndarray], size: tuple[int, int], k0: np.ndarray, n_k: int = 2,
                       free_pp: bool = True, model: str = "fisheye") -> tuple[np.ndarray, list[float]]:
    """Steps 3 and 4: the corners (4, 2) and each cushion's straightness residual (RMS, ideal px)."""
    x = np.zeros(2 + n_k)
    weights = [np.ones(len(p)) for p in pts]

    # Weak priors, as the project's plumb-line fit has (0.3 px for a principal point 2 % of the picture off, or k
    # off by 0.5 (fisheye) / 0.1 (pinhole)): without them a pinhole lens that folds or shrinks the noses to a point
    # makes them all "straight".
    prior = np.concatenate([[0.02 * max(size)] * 2, [0.5 if model == "fisheye" else 0.1] * n_k])

    def res(xv: np.ndarray) -> np.ndarray:
        lines = _lines(_lens(size, k0, xv, n_k, free_pp, model), pts, weights)
        return np.concatenate([r * np.sqrt(w) for (_, _, r), w in zip(lines, weights)] + [0.3 * xv / prior])

    lam = 1e-3
    for phase in range(4):
        if phase:  # Tukey reweighting, then converge again
            for j, (_, _, r) in enumerate(_lines(_lens(size, k0, x, n_k, free_pp, model), pts, weights)):
                sc = max(1.4826 * float(np.median(np.abs(r))), 0.05)
                u = r / (4.685 * sc)
                weights[j] = np.where(np.abs(u) < 1, (1 - u * u) ** 2, 0.0) + 1e-9
        for _ in range(25):
            r0 = res(x)
            jac = np.empty((len(r0), len(x)))
            for j in range(len(x)):
                h = 1e-3 if j < 2 else 1e-6
                dx = np.zeros_like(x)
                dx[j] = h
                jac[:, j] = (res(x + dx) - r0) / h
            a, g = jac.T @ jac, jac.T @ r0
            step = np.linalg.solve(a + lam * np.diag(np.diag(a) + 1e-12), -g)
            if np.sum(res(x + step) ** 2) < np.sum(r0 ** 2):
                x, lam = x + step, lam * 0.3
                if np.abs(step).max() < 1e-9:
                    break
            else:
                lam *= 10
                if lam > 1e8:
                    break
    cam = _lens(size, k0, x, n_k, free_pp, model)
    lines = _lines(cam, pts, weights)
    out = []
    for i in range(4):
        (c1, d1, _), (c2, d2, _) = lines[(i - 1) % 4], lines[i]
        t = np.linalg.solve(np.array([d1, -d2]).T, c2 - c1)
        u = (c1 + t[0] * d1) / cam.focal
        out.append(cam.project(np.array([[u[0], u[1], 1.0]]) - cam.tvec)[0])
    rms = [float(np.sqrt(np.mean(r[w > 0.01] ** 2))) for (_, _, r), w in zip(lines, weights)]
    return np.array(out), rms


def marks(entry: dict) -> dict:
    image = read_real_view(entry)
    table = preset(entry["table"])
    guide = calibrate_view(image, table, lens=entry.get("lens")).calibration.camera
    size, k0 = guide.image_size, guide.camera_matrix
    # A fisheye's lens is the equidistant model; any other view's (a phone's, a broadcast camera's) the pinhole one.
    model = "fisheye" if entry.get("lens") == "fisheye" else "pinhole"
    hidden = entry.get("occluded_px", [])
    pts = measure_noses(image, guide, table, occluded=hidden)
    best, rms = plumb_line_corners(pts, size, k0, model=model)
    variants = {"k1..k3": plumb_line_corners(pts, size, k0, n_k=3, model=model)[0],
                "principal point fixed": plumb_line_corners(pts, size, k0, free_pp=False, model=model)[0],
                "corners cut 40 mm wider": plumb_line_corners(measure_noses(image, guide, table, 40.0,
                                                                            occluded=hidden), size, k0,
                                                              model=model)[0]}
    spread = {k: float(np.linalg.norm(v - best, axis=1).max()) for k, v in variants.items()}
    return {"name": entry["name"], "corners": np.round(best, 1).tolist(),
            "straightness_rms_px": np.round(rms, 2).tolist(),
            "points": [len(p) for p in pts], "spread_px": {k: round(v, 2) for k, v in spread.items()},
            "guide_corners": np.round(guide.table_to_image(_corners(table), nose_height_mm(table)), 1).tolist()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="+", help="view names in tests/real_corners.json (or a path under ../shared/real)")
    ap.add_argument("--table", default="snooker_full", help="for a path: the table preset")
    ap.add_argument("--json", action="store_true", help="one JSON object a line")
    a = ap.parse_args()
    views = {e["name"]: e for e in annotations()}
    for name in a.names:
        entry = views.get(name) or {"name": name, "path": name, "table": a.table, "lens": "fisheye"}
        if not (REAL / entry["path"]).exists():  # read_real_view would say so too, as a traceback
            raise SystemExit(f"real_nose_marks: {REAL / entry['path']} is absent")
        m = marks(entry)
        if a.json:
            print(json.dumps(m))
            continue
        print(f"{name}: corners {m['corners']}")
        print(f"  straightness RMS {m['straightness_rms_px']} ideal px over {m['points']} points; "
              f"moved by: " + ", ".join(f"{k} {v} px" for k, v in m["spread_px"].items()))
        if "corners" in entry:
            d = np.linalg.norm(np.asarray(m["corners"]) - np.asarray(entry["corners"]), axis=1)
            print(f"  from the marks in real_corners.json: {np.round(d, 2).tolist()} px")


if __name__ == "__main__":
    main()
