"""Real footage: detection against hand-drawn boxes, and ``arbitro replay`` over real clips.

    python -m bench.bench_real [--no-detection] [--no-replay] [--sources federico,morge] [--clips SUBSTR]
                               [--timeout 900] [--out DIR] [--pictures DIR]

Reads ``../shared/real`` beside the repository (or ``$ARBITRO_REAL``); never copies any of it. Prints:

1. Detection against the box annotations of two public datasets, per source and per kind of view:

   - ``FedericoPivotto__billiard-video-analysis/dataset``: the first and last frame of 10 pool broadcast clips,
     1024 x 576, boxes ``x y w h class`` (top-left corner, size; class 1 cue, 2 eight, 3 solid, 4 stripe). The
     camera does not move within a clip, so each clip is calibrated once, on its first frame, as the device
     would be.
   - ``morge2002__snooker-vision`` (YOLO ``class cx cy w h``, normalised; class 0 = ball): 90 images stretched to
     640 x 640 by the dataset's export. A ball's silhouette is round, so the median box aspect undoes the stretch
     (the picture is resized back to that aspect before anything else).

   Each view is calibrated automatically (``calibration.auto.calibrate_view``, no lens given, table preset
   ``pool_9ft``: the boxes say nothing of the table size, and every view here shows a pool table); the empty-table
   model is painted from the frame itself (``background_without_empty_table``); a true ball is found when a
   detection lies within one annotated radius (half the box's mean side) of the box centre, matched one-to-one,
   nearest first. Views are grouped by what the calibration says of them: overhead (the camera at least 60 deg
   above the cloth seen from the table centre), angled with a self-consistent calibration (reprojection of the
   cushion noses within 1 px), angled with a poor one, and views where no table is found (close-ups, a table cut
   by the picture's edge: the reason the finder gives is counted). Only the overhead row is the product's own
   setting (a camera over the table); the angled broadcast views are reported for what they show, not as a
   target.

2. ``python -m device replay`` (a subprocess, ``ARBITRO_DEBUG=1`` so that a bug shows its traceback) over each
   real clip, self-calibrating (no ``--calib``), ``--mid-game``: per clip whether it calibrated, frames, shots,
   events by kind, and the exit: clean, a one-line error (exit 2), or a crash with the file and line it came from.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import cv2
import numpy as np

if TYPE_CHECKING:
    from calibration.camera import CameraModel
    from calibration.file import Calibration
    from rules.tables import TableSpec

ROOT = Path(__file__).resolve().parent.parent
REAL = Path(os.environ.get("ARBITRO_REAL", ROOT.parent / "shared" / "real"))
FEDERICO = REAL / "FedericoPivotto__billiard-video-analysis" / "dataset"
MORGE = REAL / "morge2002__snooker-vision" / "yolov8" / "dataset" / "snooker-vision.v2i.yolov8"
TABLE_PRESET = "pool_9ft"
OVERHEAD_DEG = 60.0  # camera elevation above the cloth, seen from the table centre, for an "overhead" view
GOOD_REPROJECTION_PX = 1.0  # the cushion noses' fit, within which a calibration is self-consistent

# The real clips and the discipline nearest to what they show (pool 9-ball and UK 8-ball: bilhar is the 15-ball
# pool game here).
CLIPS: tuple[tuple[str, str], ...] = (
    ("Carom-Helper__video_carom/test/origin_ts_cudlong.mp4", "three_cushion"),
    ("Rex-Lapis__PoolPredictor/clips/*.mp4", "bilhar"),
    ("BobLoblawsLawBomb__edbv/Abgabe/testcases/*.mp4", "sinuca"),
    ("james-ecd__pool-ball-tracker/*.mp4", "bilhar"),
    ("james-ecd__pool-ball-tracker/resources/*.mp4", "bilhar"),
    ("FedericoPivotto__billiard-video-analysis/dataset/*/*.mp4", "bilhar"),
)
# Left out: morge2002's 9_ball_clearance.mp4 (100 s, 3005 frames: half an hour of this shared machine).


# --- detection against boxes --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AnnotatedView:
    """One annotated picture: where it is, its boxes (x, y, w, h in the picture as read, after un-stretching), and
    the picture its camera is calibrated on (the clip's first frame for a fixed camera; itself otherwise)."""

    source: str
    name: str
    image: Path
    boxes: np.ndarray  # (N, 4)
    calib_image: Path
    aspect: float | None = None  # width / height to restore when a dataset stretched the picture (None: as shot)

    @property
    def centres(self) -> np.ndarray:
        return self.boxes[:, :2] + self.boxes[:, 2:4] / 2

    @property
    def radii(self) -> np.ndarray:
        return self.boxes[:, 2:4].mean(axis=1) / 2


def federico_views() -> list[AnnotatedView]:
    """The 20 annotated frames (first and last of each clip); every class but 5 (the table) is a ball."""
    views = []
    for clip in sorted(p for p in FEDERICO.glob("game*_clip*") if p.is_dir()):
        for which in ("first", "last"):
            box = np.loadtxt(clip / "bounding_boxes" / f"frame_{which}_bbox.txt", ndmin=2)
            balls = box[np.isin(box[:, 4], (1, 2, 3, 4))]
            frames = clip / "frames"
            views.append(AnnotatedView("FedericoPivotto", f"{clip.name}/{which}", frames / f"frame_{which}.png",
                                       balls[:, :4], frames / "frame_first.png"))
    return views


def morge_views() -> list[AnnotatedView]:
    """The labelled images that hold at least one ball, boxes in pixels of the un-stretched picture."""
    views = []
    for img in sorted(MORGE.glob("*/images/*.jpg")):
        label = img.parent.parent / "labels" / (img.stem + ".txt")
        if not label.is_file():
            continue
        rows = np.loadtxt(label, ndmin=2)
        rows = rows[rows[:, 0] == 0] if rows.size else rows.reshape(0, 5)
        if len(rows) == 0:
            continue
        # Box aspect w/h (normalised) = H/W of the original picture, for round balls: the median of many is robust
        # to a ball half hidden at a box's edge.
        aspect = float(1.0 / np.median(rows[:, 3] / rows[:, 4]))
        h = 640
        w = int(round(h * aspect))
        boxes = np.stack([(rows[:, 1] - rows[:, 3] / 2) * w, (rows[:, 2] - rows[:, 4] / 2) * h,
                          rows[:, 3] * w, rows[:, 4] * h], axis=1)
        name = f"{img.parent.parent.name}/{img.stem.split('.rf.')[0]}"  # without Roboflow's hash
        views.append(AnnotatedView("morge2002", name, img, boxes, img, aspect))
    return views


def read_picture(path: Path, aspect: float | None = None) -> np.ndarray:
    """The picture as shot: resized to ``aspect`` (width / height) when a dataset stretched it."""
    img = cv2.imread(str(path))
    if img is None:
        raise FileNotFoundError(path)
    if aspect is not None and abs(aspect * img.shape[0] / img.shape[1] - 1.0) > 0.01:
        img = cv2.resize(img, (int(round(img.shape[0] * aspect)), img.shape[0]), interpolation=cv2.INTER_AREA)
    return img


def match_within(found: np.ndarray, true: np.ndarray, tol: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One-to-one matching, nearest first (in units of each true ball's tolerance ``tol``), within 1 tolerance:
    (true index, found index) pairs."""
    if len(found) == 0 or len(true) == 0:
        return np.zeros(0, int), np.zeros(0, int)
    d = np.linalg.norm(true[:, None, :] - found[None, :, :], axis=2) / tol[:, None]
    used_t = np.zeros(len(true), bool)
    used_f = np.zeros(len(found), bool)
    pt, pf = [], []
    for flat in np.argsort(d, axis=None):
        i, j = np.unravel_index(flat, d.shape)
        if d[i, j] > 1.0:
            break
        if used_t[i] or used_f[j]:
            continue
        used_t[i] = used_f[j] = True
        pt.append(i)
        pf.append(j)
    return np.array(pt, int), np.array(pf, int)


@dataclass
class ViewResult:
    view: AnnotatedView
    group: str  # "overhead", "angled", "angled, poor calibration", "no table"
    why: str = ""  # the finder's reason when no table was found
    elevation_deg: float = float("nan")
    reprojection_px: float = float("nan")
    found_px: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    found_r: np.ndarray = field(default_factory=lambda: np.zeros(0))
    matched: tuple[np.ndarray, np.ndarray] = (np.zeros(0, int), np.zeros(0, int))
    expected_over_box_radius: float = float("nan")  # the calibration's ball radius over the annotated one

    @property
    def errors_px(self) -> np.ndarray:
        ti, fi = self.matched
        return np.linalg.norm(self.view.centres[ti] - self.found_px[fi], axis=1)


def camera_elevation_deg(camera: "CameraModel", table: "TableSpec") -> float:
    """How high the camera stands above the cloth, seen from the table centre (90 = straight overhead)."""
    c = camera.camera_centre
    horizontal = float(np.hypot(c[0] - table.width / 2, c[1] - table.length / 2))
    return float(np.degrees(np.arctan2(c[2], horizontal)))


def calibrate_picture(image: np.ndarray, table: "TableSpec") -> tuple["Calibration | None", str | None]:
    """(Calibration, None), or (None, the finder's one-line reason)."""
    from calibration.auto import calibrate_view
    from calibration.table_finder import TableNotFound

    try:
        return calibrate_view(image, table, lens=None).calibration, None
    except TableNotFound as exc:
        return None, str(exc).split(":")[0]
    except (ValueError, np.linalg.LinAlgError) as exc:
        return None, f"no camera pose ({type(exc).__name__})"


def detect_views(views: Sequence[AnnotatedView]) -> list[ViewResult]:
    """Calibrate (once per calibration picture), detect and match every view."""
    from rules.tables import preset
    from vision.detection import BallDetector

    table = preset(TABLE_PRESET)
    calibrations: dict[Path, tuple] = {}
    out = []
    for v in views:
        if v.calib_image not in calibrations:
            calib, why = calibrate_picture(read_picture(v.calib_image, v.aspect), table)
            det = BallDetector(calib.camera, table) if calib is not None else None
            calibrations[v.calib_image] = (calib, why, det)
        calib, why, detector = calibrations[v.calib_image]
        if calib is None:
            out.append(ViewResult(v, "no table", why or ""))
            continue
        elevation = camera_elevation_deg(calib.camera, table)
        reproj = float(calib.quality.get("reprojection_px", np.nan))
        group = "overhead" if elevation >= OVERHEAD_DEG else \
            "angled" if reproj <= GOOD_REPROJECTION_PX else "angled, poor calibration"
        frame = read_picture(v.image, v.aspect)
        background = detector.background_without_empty_table(frame, rounds=3, around_candidates=False)
        d = detector.detect(frame, 0.0, background)
        matched = match_within(d.px, v.centres, v.radii)
        expected = float(np.median(detector.geometry.radius_at(v.centres)))
        out.append(ViewResult(v, group, "", elevation, reproj, d.px, d.radius_px, matched,
                              expected / float(np.median(v.radii))))
    return out


@dataclass(frozen=True)
class GroupScore:
    views: int
    true: int
    found: int
    matched: int
    median_px: float
    p90_px: float

    @property
    def recall(self) -> float:
        return self.matched / max(self.true, 1)

    @property
    def precision(self) -> float:
        return self.matched / max(self.found, 1)


def group_score(results: Sequence[ViewResult]) -> GroupScore:
    errs = np.concatenate([r.errors_px for r in results]) if results else np.zeros(0)
    e = errs if len(errs) else np.array([np.nan])
    return GroupScore(len(results), sum(len(r.view.boxes) for r in results), sum(len(r.found_px) for r in results),
                      sum(len(r.matched[0]) for r in results), float(np.median(e)), float(np.percentile(e, 90)))


GROUPS = ("overhead", "angled", "angled, poor calibration")


def detection_table(results: Sequence[ViewResult]) -> str:
    lines = [f"{'source':<16} {'views':<26} {'n':>3} {'balls':>5} {'found':>5} {'recall':>6} {'prec':>6} "
             f"{'med px':>6} {'p90 px':>6}  notes"]
    for source in dict.fromkeys(r.view.source for r in results):
        rs = [r for r in results if r.view.source == source]
        for g in GROUPS:
            sub = [r for r in rs if r.group == g]
            if not sub:
                continue
            s = group_score(sub)
            elev = [r.elevation_deg for r in sub]
            scale = [r.expected_over_box_radius for r in sub]
            note = (f"camera {min(elev):.0f}-{max(elev):.0f} deg up, reprojection "
                    f"{min(r.reprojection_px for r in sub):.2f}-{max(r.reprojection_px for r in sub):.2f} px, "
                    f"expected/annotated radius {min(scale):.2f}-{max(scale):.2f}")
            lines.append(f"{source:<16} {g:<26} {s.views:>3} {s.true:>5} {s.found:>5} {s.recall:>6.3f} "
                         f"{s.precision:>6.3f} {s.median_px:>6.2f} {s.p90_px:>6.2f}  {note}")
        missing = [r for r in rs if r.group == "no table"]
        if missing:
            reasons = Counter(_reason_kind(r.why) for r in missing)
            lines.append(f"{source:<16} {'no table found':<26} {len(missing):>3} "
                         f"{sum(len(r.view.boxes) for r in missing):>5}  (not scored) "
                         + "; ".join(f"{n}x {why}" for why, n in reasons.most_common()))
    return "\n".join(lines)


def _reason_kind(why: str) -> str:
    """The finder's reason, by kind: what would have to change for the view to be calibrated."""
    if "runs off" in why or "edge of the picture" in why:
        return "table cut by the picture's edge"
    if "covers only" in why:
        return "table too small in the picture"
    if "no table outline" in why:
        return "no outline (a close-up, or the cloth fills the picture)"
    return why


def per_view_table(results: Sequence[ViewResult]) -> str:
    lines = []
    for r in results:
        if r.group == "no table":
            lines.append(f"  {r.view.source:<16} {r.view.name:<34} no table: {r.why}")
            continue
        s = group_score([r])
        lines.append(f"  {r.view.source:<16} {r.view.name:<34} {r.group:<26} up {r.elevation_deg:4.0f} deg "
                     f"reproj {r.reprojection_px:5.2f} px  {s.matched:>2}/{s.true:<2} found {s.found:<2} "
                     f"med {s.median_px:5.2f} px  radius x{r.expected_over_box_radius:.2f}")
    return "\n".join(lines)


def draw_view(result: ViewResult, width: int = 960) -> np.ndarray:
    """The frame with the annotated boxes (green), the detections (red circles, yellow when unmatched) and the
    numbers, downscaled to ``width``."""
    v = result.view
    img = read_picture(v.image, v.aspect)
    ti, fi = result.matched
    for x, y, w, h in v.boxes:
        cv2.rectangle(img, (int(round(x)), int(round(y))), (int(round(x + w)), int(round(y + h))), (0, 220, 0), 1)
    hit = np.zeros(len(result.found_px), bool)
    hit[fi] = True
    for (x, y), r, ok in zip(result.found_px, result.found_r, hit):
        cv2.circle(img, (int(round(x)), int(round(y))), int(round(r)) + 1, (0, 0, 255) if ok else (0, 255, 255), 2)
    missed = np.setdiff1d(np.arange(len(v.boxes)), ti)
    for x, y in v.centres[missed]:
        cv2.drawMarker(img, (int(round(x)), int(round(y))), (255, 0, 255), cv2.MARKER_TILTED_CROSS, 14, 2)
    s = group_score([result])
    text = (f"{v.source} {v.name}: {s.matched}/{s.true} boxes found, {s.found - s.matched} extra, centre error "
            f"median {s.median_px:.1f} px (green: hand boxes; red: detections; magenta x: missed)")
    scale = width / img.shape[1]
    img = cv2.resize(img, (width, int(round(img.shape[0] * scale))), interpolation=cv2.INTER_AREA)
    cv2.rectangle(img, (0, 0), (width, 22), (0, 0, 0), -1)
    cv2.putText(img, text, (6, 16), cv2.FONT_HERSHEY_SIMPLEX, 0.42, (255, 255, 255), 1, cv2.LINE_AA)
    return img


# The views and replay frames committed under docs/real (``--docs docs/real``): the near-overhead frame, the end
# view with its cushion misses, the amateur view whose yellows are missed. Only footage whose licence allows a
# derived picture (FedericoPivotto's and morge2002's repositories are MIT); the broadcasts without a licence
# (Rex-Lapis's 9-ball clips, the three-cushion broadcast) are measured here but never pictured in the repository.
DOC_VIEWS = ("FedericoPivotto game1_clip1/first", "FedericoPivotto game1_clip4/last",
             "morge2002 valid/yt-D8S70xyTlbU-0121_jpg")
DOC_REPLAY_FRAMES: tuple[tuple[str, float], ...] = ()


def replay_frame(annotated: Path, t: float, width: int = 960) -> np.ndarray | None:
    """The annotated replay video's frame at ``t`` seconds, downscaled to ``width``."""
    cap = cv2.VideoCapture(str(annotated))
    fps = cap.get(cv2.CAP_PROP_FPS) or 25.0
    cap.set(cv2.CAP_PROP_POS_FRAMES, int(round(t * fps)))
    ok, img = cap.read()
    cap.release()
    if not ok:
        return None
    return cv2.resize(img, (width, int(round(img.shape[0] * width / img.shape[1]))), interpolation=cv2.INTER_AREA)


def _doc_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_") + ".jpg"


# --- replay over real clips --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ReplayRun:
    clip: str
    discipline: str
    exit_code: int
    seconds: float
    frames: int  # frames in the file
    calibrated: str  # "auto", or why not
    frames_read: int = 0
    shots: int = 0
    events: dict[str, int] = field(default_factory=dict)
    verdicts: str = ""
    error: str = ""  # the one-line error, or where the crash came from
    annotated: bool = False


def clip_paths(only: str | None = None) -> list[tuple[Path, str]]:
    out = []
    for pattern, discipline in CLIPS:
        for p in sorted(REAL.glob(pattern)):
            if only is None or only in str(p):
                out.append((p, discipline))
    return out


def _crash_site(stderr: str) -> str:
    """The innermost frame of the project's own code in a traceback, and the exception line."""
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)', stderr)
    ours = [f for f in frames if str(ROOT) in f[0]] or frames
    last = [ln for ln in stderr.strip().splitlines() if ln.strip()][-1:] or [""]
    if not ours:
        return last[0]
    path, line, func = ours[-1]
    return f"{Path(path).relative_to(ROOT) if str(ROOT) in path else path}:{line} in {func}: {last[0]}"


def replay_clip(clip: Path, discipline: str, out_dir: Path, timeout_s: float = 900.0,
                extra: Sequence[str] = ()) -> ReplayRun:
    """``python -m device replay`` on one clip, self-calibrating, mid-game; the report and annotated video go to
    ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = clip.stem
    report, annotated = out_dir / f"{stem}.report.json", out_dir / f"{stem}.annotated.mp4"
    for p in (report, annotated):
        p.unlink(missing_ok=True)
    cap = cv2.VideoCapture(str(clip))
    frames = int(cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
    cap.release()
    cmd = [sys.executable, "-m", "device", "replay", str(clip), "--discipline", discipline, "--mid-game",
           "--report", str(report), "--annotated", str(annotated), "--quiet", *extra]
    env = dict(os.environ, ARBITRO_DEBUG="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return ReplayRun(str(clip.relative_to(REAL)), discipline, -1, timeout_s, frames, "?",
                         error=f"timed out after {timeout_s:.0f} s")
    seconds = time.monotonic() - t0
    err = proc.stderr
    rel = str(clip.relative_to(REAL))
    if "Traceback" in err:
        return ReplayRun(rel, discipline, proc.returncode, seconds, frames, "?", error="CRASH " + _crash_site(err))
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    if proc.returncode != 0:
        return ReplayRun(rel, discipline, proc.returncode, seconds, frames, "no", error=" | ".join(lines))
    data = json.loads(report.read_text())
    kinds = Counter(e["type"] for s in data["shots"] for e in s["events"])
    verdicts = Counter(("foul" if s["verdict"].get("foul") else "point" if sum(s["verdict"].get("points", {})
                                                                                .values()) else "no point")
                       if s.get("verdict") else "unrefereed" for s in data["shots"])
    return ReplayRun(rel, discipline, 0, seconds, frames,
                     "auto" if "calibrated from the clip" in err else str(data.get("calibration")),
                     data["quality"]["frames_read"], data["stats"]["shots"], dict(kinds),
                     ", ".join(f"{n} {k}" for k, n in verdicts.items()), "",
                     annotated.is_file() and annotated.stat().st_size > 0)


def replay_table(runs: Sequence[ReplayRun]) -> str:
    lines = [f"{'clip':<44} {'discipline':<13} {'exit':>4} {'s':>5} {'frames':>6} {'calib':<5} {'shots':>5}  "
             "events / error"]
    for r in runs:
        if r.exit_code == 0:
            ev = ", ".join(f"{n} {k}" for k, n in sorted(r.events.items())) or "no events"
            tail = f"{ev}; verdicts: {r.verdicts or 'none'}; annotated video {'written' if r.annotated else 'MISSING'}"
        else:
            tail = r.error
        name = r.clip.split("__")[0] + "/" + Path(r.clip).name  # the owner and the file: short enough to read
        lines.append(f"{name:<44} {r.discipline:<13} {r.exit_code:>4} {r.seconds:>5.0f} "
                     f"{r.frames_read if r.exit_code == 0 else r.frames:>6} {r.calibrated:<5} {r.shots:>5}  {tail}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.bench_real", description=__doc__.split("\n")[0])
    ap.add_argument("--no-detection", action="store_true", help="skip the detection scores")
    ap.add_argument("--no-replay", action="store_true", help="skip the replays")
    ap.add_argument("--sources", default="federico,morge", help="detection sources (federico, morge)")
    ap.add_argument("--clips", default=None, help="only the clips whose path contains this")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds allowed per replay")
    ap.add_argument("--out", default="/tmp/arbitro-bench-real", help="folder for the replays' reports and videos")
    ap.add_argument("--pictures", default=None, help="write each view with its detections drawn into this folder")
    ap.add_argument("--per-view", action="store_true", help="print one line per annotated view too")
    ap.add_argument("--docs", default=None, help="write the pictures of DOC_VIEWS and DOC_REPLAY_FRAMES here "
                                                 "(the replay frames from --out's videos)")
    args = ap.parse_args(argv)
    if not REAL.is_dir():
        print(f"bench_real: skipped: the real footage is not at {REAL} (set ARBITRO_REAL)")
        return 0
    if not args.no_detection:
        views: list[AnnotatedView] = []
        if "federico" in args.sources and FEDERICO.is_dir():
            views += federico_views()
        if "morge" in args.sources and MORGE.is_dir():
            views += morge_views()
        t0 = time.monotonic()
        results = detect_views(views)
        print(f"detection against hand-drawn boxes ({len(views)} views, table preset {TABLE_PRESET}, automatic "
              f"calibration, empty table painted from each frame; {time.monotonic() - t0:.0f} s)")
        print(detection_table(results))
        if args.per_view:
            print(per_view_table(results))
        if args.pictures:
            folder = Path(args.pictures)
            folder.mkdir(parents=True, exist_ok=True)
            for r in results:
                if r.group != "no table":
                    cv2.imwrite(str(folder / _doc_name(f"{r.view.source} {r.view.name}")), draw_view(r),
                                [cv2.IMWRITE_JPEG_QUALITY, 85])
        if args.docs:
            Path(args.docs).mkdir(parents=True, exist_ok=True)
            for r in results:
                if f"{r.view.source} {r.view.name}" in DOC_VIEWS and r.group != "no table":
                    cv2.imwrite(str(Path(args.docs) / _doc_name(f"detection {r.view.source} {r.view.name}")),
                                draw_view(r), [cv2.IMWRITE_JPEG_QUALITY, 85])
    if not args.no_replay:
        runs = []
        for clip, discipline in clip_paths(args.clips):
            runs.append(replay_clip(clip, discipline, Path(args.out), args.timeout))
            print(replay_table(runs[-1:]).splitlines()[-1] if runs[1:] else replay_table(runs), flush=True)
    if args.docs:
        for stem, t in DOC_REPLAY_FRAMES:
            img = replay_frame(Path(args.out) / f"{stem}.annotated.mp4", t)
            if img is not None:
                cv2.imwrite(str(Path(args.docs) / _doc_name(f"replay {stem} {t:.1f}s")), img,
                            [cv2.IMWRITE_JPEG_QUALITY, 85])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
