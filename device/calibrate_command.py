"""``arbitro calibrate SOURCE --out table.calib.json``: calibrate the camera over the table from one view.

    arbitro calibrate SOURCE --out table.calib.json [--table PRESET] [--discipline NAME] [--lens LENS]
                      [--intrinsics FILE] [--corners x1,y1,...,x4,y4] [--overlay out.png] [--frames N]

SOURCE is a picture (.jpg, .png, ...), a video file (the median of its first still frames, so a person walking
past disappears), or a camera spec (picamera2, v4l2:0, rtsp://..., file:clip.mp4). The table is found
automatically; ``--corners`` gives the four cushion-nose corners by hand instead (bottom-left, bottom-right,
top-right, top-left of the table, in pixels). Without ``--table`` or ``--discipline`` the preset is told from the
view (pockets, markings) and said on stderr. Prints one JSON line (the file written, the table, the quality);
errors are one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Sequence, TextIO

import cv2
import numpy as np

EXIT_BAD_INPUT = 2
IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp"}
VIDEO_SUFFIXES = {".mp4", ".mkv", ".avi", ".mov", ".h264", ".m4v", ".webm", ".ts"}


class CalibrateError(Exception):
    """A problem to tell the user in one line."""


def add_calibrate_parser(subparsers: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    """Add ``calibrate`` to the ``arbitro`` sub-commands; the parsed namespace's ``run(args, out)`` runs it."""
    from calibration.distortion import LENSES
    from rules.balls import DISCIPLINES

    p = subparsers.add_parser("calibrate", help="find the table in a view and write the calibration file")
    p.add_argument("source", help="a picture, a video file, or a camera (picamera2, v4l2:0, rtsp://...)")
    p.add_argument("--out", required=True, help="the calibration file to write (*.calib.json)")
    p.add_argument("--table", default=None, help="table preset (default: the discipline's, else told from the view)")
    p.add_argument("--discipline", default=None, choices=DISCIPLINES, metavar="NAME",
                   help=f"one of: {', '.join(DISCIPLINES)}")
    p.add_argument("--lens", default=None, choices=sorted(LENSES),
                   help="the camera's lens, a starting point for the lens fit (default: unknown)")
    p.add_argument("--intrinsics", default=None,
                   help="a file whose camera_matrix and dist_coeffs (from a chessboard) fix the lens: 5 pinhole "
                        "coefficients, or 4 with \"lens_model\": \"fisheye\" (cv2.fisheye.calibrate's)")
    p.add_argument("--corners", default=None, metavar="x1,y1,...,x4,y4",
                   help="the four cushion-nose corners by hand: bottom-left, bottom-right, top-right, top-left")
    p.add_argument("--overlay", default=None, help="write a picture of what was found (PNG or JPEG)")
    p.add_argument("--frames", type=int, default=9, help="frames to take the median of from a video (default 9)")
    p.add_argument("--wizard", action="store_true",
                   help="serve the step-by-step wizard to a phone instead (--out must be DIR/table.calib.json: "
                        "what the wizard saves and arbitro run reloads)")
    p.add_argument("--host", default="0.0.0.0", help="with --wizard: address to listen on (default: all)")
    p.add_argument("--port", type=int, default=8080, help="with --wizard: port (default 8080; 0: any free one)")
    p.set_defaults(run=calibrate_command)
    return p


def calibrate_command(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    """Run ``arbitro calibrate``; returns the exit code (2 with a one-line message on stderr on failure)."""
    if getattr(args, "wizard", False):
        return _serve_wizard(args, out)
    try:
        result = run_calibrate(args)
    except CalibrateError as exc:
        print(f"arbitro calibrate: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for note in result.pop("notes", []):
        print(f"arbitro calibrate: {note}", file=sys.stderr)
    out.write(json.dumps(result, separators=(",", ":")) + "\n")
    return 0


def _serve_wizard(args: argparse.Namespace, out: TextIO) -> int:
    """``arbitro calibrate SOURCE --wizard``: the web wizard on its own (``arbitro web --source`` without a match),
    its data folder the one ``--out`` names."""
    from device.web.command import web_command
    from device.web.wizard import CALIB_FILE

    target = Path(args.out)
    if target.name != CALIB_FILE:
        print(f"arbitro calibrate: with --wizard, --out must be DIR/{CALIB_FILE} (what the wizard saves and "
              f"arbitro run reloads), not {args.out}", file=sys.stderr)
        return EXIT_BAD_INPUT
    target.parent.mkdir(parents=True, exist_ok=True)
    web = argparse.Namespace(data=str(target.parent), store=None, host=args.host, port=args.port,
                             source=args.source, table=args.table, set_pin=False)
    return web_command(web, out)


def main(argv: Sequence[str] | None = None) -> int:
    """Stand-alone entry (``python -m device.calibrate_command ...``) until the main CLI wires the sub-command."""
    parser = argparse.ArgumentParser(prog="arbitro")
    sub = parser.add_subparsers(dest="command", required=True)
    add_calibrate_parser(sub)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return args.run(args, sys.stdout)


# --- the work ------------------------------------------------------------------------------------------------------

def read_view(source: str, frames: int = 9) -> np.ndarray:
    """One BGR view of the table from a picture, a video file or a camera spec."""
    path = Path(source)
    suffix = path.suffix.lower()
    if path.is_file() and suffix not in VIDEO_SUFFIXES:
        data = np.fromfile(str(path), dtype=np.uint8)
        img = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
        if img is None:
            if suffix in IMAGE_SUFFIXES:
                raise CalibrateError(f"{source}: not a readable picture")
            raise CalibrateError(f"{source}: not a picture or a video this reader knows")
        return img
    if path.is_file():
        return _median_of_video(cv2.VideoCapture(str(path)), source, frames)
    if suffix in IMAGE_SUFFIXES | VIDEO_SUFFIXES:
        raise CalibrateError(f"{source}: no such file")
    return _from_camera(source, frames)


def _median_of_video(cap: "cv2.VideoCapture", name: str, frames: int) -> np.ndarray:
    """The median of the first still frames: frames are read over the first seconds, the ones that differ least
    from their neighbours are kept (people passing, balls rolling), and their per-pixel median is the view."""
    try:
        if not cap.isOpened():
            raise CalibrateError(f"{name}: not a video this reader can open")
        got = []
        step = 3
        for i in range(max(frames, 1) * step * 2):
            ok, img = cap.read()
            if not ok:
                break
            if i % step == 0:
                got.append(cv2.resize(img, None, fx=1.0, fy=1.0))
        if not got:
            raise CalibrateError(f"{name}: the video has no frames")
        return _still_median(got, frames)
    finally:
        cap.release()


def _still_median(images: list[np.ndarray], keep: int) -> np.ndarray:
    from calibration.table_finder import median_frame

    if len(images) <= 2:
        return images[0]
    small = [cv2.resize(cv2.cvtColor(i, cv2.COLOR_BGR2GRAY), (160, 90)).astype(np.float32) for i in images]
    motion = [float(np.mean(np.abs(small[min(k + 1, len(small) - 1)] - small[max(k - 1, 0)])))
              for k in range(len(small))]
    order = np.argsort(motion)[:max(3, min(keep, len(images)))]
    return median_frame([images[k] for k in sorted(order)])


def _from_camera(source: str, frames: int) -> np.ndarray:
    from device.sources.frames import SourceError
    from device.sources.spec import open_source, parse_source_spec

    try:
        spec = parse_source_spec(source)
        src = open_source(spec, realtime=False)
        got = []
        with src:
            for _ in range(max(frames, 1)):
                frame = src.read()
                if frame is None or not hasattr(frame, "image"):
                    break
                got.append(frame.image)
    except SourceError as exc:
        raise CalibrateError(str(exc)) from None
    if not got:
        raise CalibrateError(f"{source}: the camera gave no frames")
    return _still_median(got, frames)


def _parse_corners(text: str) -> np.ndarray:
    try:
        vals = [float(v) for v in text.replace(";", ",").split(",") if v.strip()]
    except ValueError:
        raise CalibrateError(f"--corners {text!r}: expected eight numbers x1,y1,...,x4,y4") from None
    if len(vals) != 8 or not np.isfinite(vals).all():
        raise CalibrateError(f"--corners: expected eight numbers x1,y1,...,x4,y4, got {len(vals)}")
    return np.array(vals).reshape(4, 2)


def _intrinsics(path: str | None) -> tuple[np.ndarray, np.ndarray] | None:
    """The camera matrix and distortion of an intrinsics file (a calibration file, or any JSON object with
    ``camera_matrix`` and ``dist_coeffs``): five coefficients for the pinhole model, or four with
    ``"lens_model": "fisheye"`` (``cv2.fisheye.calibrate``'s k1..k4, as a calibration file's ``lens_model`` says)."""
    if path is None:
        return None
    want = 'camera_matrix (3x3) and dist_coeffs (5 numbers, or 4 with "lens_model": "fisheye")'
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError
        model = data.get("lens_model", "pinhole")
        k = np.asarray(data["camera_matrix"], dtype=float)
        d = np.asarray(data["dist_coeffs"], dtype=float).ravel()
    except FileNotFoundError:
        raise CalibrateError(f"--intrinsics {path}: no such file") from None
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise CalibrateError(f"--intrinsics {path}: needs {want}") from None
    if model not in ("pinhole", "fisheye"):
        raise CalibrateError(f"--intrinsics {path}: lens_model must be \"pinhole\" or \"fisheye\", got {model!r}")
    count = 4 if model == "fisheye" else 5
    if d.shape != (count,):
        hint = ' (four are the fisheye model\'s: say "lens_model": "fisheye")' if model == "pinhole" and d.size == 4 \
            else ""
        raise CalibrateError(f"--intrinsics {path}: the {model} model's dist_coeffs are {count} numbers, "
                             f"got {d.size}{hint}")
    if k.shape != (3, 3) or not (np.isfinite(k).all() and np.isfinite(d).all()) or not (k[0, 0] > 0 and k[1, 1] > 0):
        raise CalibrateError(f"--intrinsics {path}: needs {want}")
    if model == "fisheye" and not np.all(np.abs(d) < 10):
        raise CalibrateError(f"--intrinsics {path}: the fisheye model's k1..k4 must be small numbers (|k| < 10)")
    return k, d


def run_calibrate(args: argparse.Namespace) -> dict:
    from calibration.auto import calibrate_from_corners, calibrate_view
    from calibration.file import Calibration, write_calibration
    from calibration.overlay import draw_overlay
    from calibration.preset_detect import detect_preset
    from calibration.table_finder import TableNotFound, find_outline
    from rules.tables import DEFAULT_PRESET, PRESETS

    image = read_view(args.source, args.frames)
    intr = _intrinsics(args.intrinsics)
    if intr is not None:
        k = intr[0]
        if k[0, 2] > 2 * image.shape[1] or k[1, 2] > 2 * image.shape[0]:
            raise CalibrateError("--intrinsics: its camera matrix does not fit this picture's size")
    notes: list[str] = []
    table_name = args.table or (DEFAULT_PRESET.get(args.discipline) if args.discipline else None)
    if table_name is not None and table_name not in PRESETS:
        raise CalibrateError(f"--table {table_name}: unknown preset (known: {', '.join(sorted(PRESETS))})")
    h, w = image.shape[:2]
    outline = None
    if args.corners is not None:
        corners = _parse_corners(args.corners)
        table = PRESETS[table_name or "carom_match"]
        calib = calibrate_from_corners(corners, (w, h), table, lens=args.lens, intrinsics=intr)
        markings, edges = (), ()
    else:
        try:
            outline = find_outline(image)
            table = PRESETS[table_name or "carom_match"]
            vc = calibrate_view(image, table, lens=args.lens, intrinsics=intr, outline=outline)
            if table_name is None:
                guess = detect_preset(image, vc.calibration.camera, table, outline)
                notes.append(f"the table looks like {guess.name} ({guess.why}); say --table to override")
                if guess.name != table.name:
                    table = PRESETS[guess.name]
                    vc = calibrate_view(image, table, lens=args.lens, intrinsics=intr, outline=outline)
        except TableNotFound as exc:
            raise CalibrateError(f"{exc}; or give the four corners by hand with --corners") from None
        except (ValueError, np.linalg.LinAlgError) as exc:
            raise CalibrateError(f"the table's outline gives no camera pose ({exc}); give the corners by hand "
                                 "with --corners") from None
        calib, markings, edges = vc.calibration, vc.markings, vc.edge_points
    cam = calib.camera
    if not (np.isfinite(cam.rvec).all() and np.isfinite(cam.tvec).all()) or cam.camera_centre[2] <= 0:
        raise CalibrateError("the fitted camera is not above the table (are the corners in table order?)")
    calib = Calibration(cam, calib.table, calib.corners_px, calib.quality, table_name or calib.table.name)
    try:
        write_calibration(args.out, calib)
    except OSError as exc:
        raise CalibrateError(f"--out {args.out}: cannot write ({exc.strerror or exc})") from None
    result = {"calibration": str(args.out), "table": calib.table.name,
              "corners_px": np.round(calib.corners_px, 2).tolist(), "quality": dict(calib.quality),
              "camera_height_mm": round(float(cam.camera_centre[2]), 1), "notes": notes}
    if args.overlay:
        pic = draw_overlay(image, cam, calib.table, edges, markings)
        params = [cv2.IMWRITE_JPEG_QUALITY, 80] if str(args.overlay).lower().endswith((".jpg", ".jpeg")) else []
        if not cv2.imwrite(str(args.overlay), pic, params):
            raise CalibrateError(f"--overlay {args.overlay}: cannot write a picture there (use .png or .jpg)")
        result["overlay"] = str(args.overlay)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
