"""``arbitro replay`` and ``arbitro demo``: vision and the referee over a recorded clip.

The match's final state goes to stdout as one JSON line (``{"match": ...}``), like ``arbitro referee``; the report,
log, annotated video and diagrams go to the files asked for; progress and problems go to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TextIO

from calibration.file import CalibrationFileError, read_calibration
from rules.balls import DISCIPLINES
from rules.match import parse_options

from .replay import ReplayError, ReplaySettings, run_replay, write_outputs

ROOT = Path(__file__).resolve().parent.parent
DEMO_CLIP = ROOT / "fixtures" / "clips" / "three_cushion_point_and_miss.mp4"
DEMO_OUT = Path("arbitro-demo")


def make_detector(calibration, discipline: str, balls, still_frames, options=None):
    from vision.frame_detector import FrameDetector
    return FrameDetector(calibration.camera, calibration.table, discipline, still_frames, options)


def add_replay_parser(sub: argparse._SubParsersAction) -> None:
    rep = sub.add_parser("replay", help="referee a recorded clip: report, log, annotated video, shot diagrams")
    rep.add_argument("video", help="the recorded clip")
    rep.add_argument("--calib", help="the calibration file (default: VIDEO with .calib.json, else calibrate from "
                                     "the clip's first still frames)")
    rep.add_argument("--discipline", required=True, choices=DISCIPLINES, metavar="NAME",
                     help=f"one of: {', '.join(DISCIPLINES)}")
    rep.add_argument("--players", default="A,B", help='the two names, side A first (default "A,B")')
    rep.add_argument("--distance", type=int, default=None)
    rep.add_argument("--option", action="append", metavar="KEY=VALUE", help="a referee option; repeatable")
    rep.add_argument("--spot", choices=("dots", "yellow"), default=None,
                     help="carom: the spot ball is the dotted white or a yellow (default: told from the view)")
    rep.add_argument("--mid-game", action="store_true",
                     help="the clip does not start at the opening: the first shooter is whoever's ball is struck "
                          "first, and no opening-shot rule applies")
    rep.add_argument("--report", help="write the replay report (JSON) here")
    rep.add_argument("--log", help="write the match log (JSON lines) here")
    rep.add_argument("--annotated", help="write the clip with tracks, events and verdicts drawn over it here")
    rep.add_argument("--diagrams", help="write one diagram per shot (PNG) into this folder")
    rep.add_argument("--quiet", action="store_true", help="no progress bar")
    rep.set_defaults(run=replay_command)

    demo = sub.add_parser("demo", help="the replay on the bundled three-cushion clip, outputs in ./arbitro-demo")
    demo.add_argument("--out", default=str(DEMO_OUT), help="folder for the demo's outputs (default ./arbitro-demo)")
    demo.add_argument("--quiet", action="store_true")
    demo.set_defaults(run=demo_command)


def _calibration(video: str, calib: str | None, discipline: str):
    if calib is None:
        beside = Path(video).with_suffix(".calib.json")
        if beside.is_file():
            calib = str(beside)
        else:
            return _self_calibrate(video, discipline)
    try:
        return read_calibration(calib), calib
    except CalibrationFileError as exc:
        raise ReplayError(str(exc)) from None
    except OSError as exc:
        raise ReplayError(f"{calib}: cannot read the calibration file ({exc.strerror or exc})") from None


def _self_calibrate(video: str, discipline: str):
    """No calibration given: find the table in the clip's first still frames (as ``arbitro calibrate`` does),
    and say so."""
    import tempfile

    from .calibrate_command import CalibrateError, run_calibrate

    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "auto.calib.json")
        args = argparse.Namespace(source=video, out=out, table=None, discipline=discipline, lens=None,
                                  intrinsics=None, corners=None, overlay=None, frames=9)
        try:
            run_calibrate(args)
            calib = read_calibration(out)
        except (CalibrateError, CalibrationFileError) as exc:
            raise ReplayError(f"no --calib given and the table could not be found in the clip: {exc}") from None
    print("arbitro replay: no --calib given; calibrated from the clip's first frames", file=sys.stderr)
    return calib, "auto (first frames of the clip)"


def replay_command(args: argparse.Namespace, out: TextIO) -> int:
    if not Path(args.video).is_file():
        raise ReplayError(f"{args.video}: no such video file")
    players = tuple(p.strip() for p in args.players.split(","))
    if len(players) != 2 or not all(players):
        raise ReplayError(f'--players {args.players!r}: give two names, "A,B"')
    calibration, calib_source = _calibration(args.video, args.calib, args.discipline)
    options = parse_options(args.option or [])
    settings = ReplaySettings(video=args.video, discipline=args.discipline, calibration=calibration,
                              calibration_source=calib_source, players=players, distance=args.distance,
                              options=options, mid_game=args.mid_game)
    progress = sys.stderr if not args.quiet and sys.stderr.isatty() else None
    seen = dict(options, spot=args.spot) if getattr(args, "spot", None) else options  # for the detector only
    result = run_replay(settings, lambda c, d, b, w: make_detector(c, d, b, w, seen), progress=progress)
    write_outputs(settings, result, args.report, args.log, args.diagrams)
    if args.annotated:
        from .annotate import write_annotated
        write_annotated(args.video, args.annotated, result.shots, result.verdicts, calibration.camera,
                        calibration.table)
    out.write(json.dumps({"match": result.match}, separators=(",", ":")) + "\n")
    if result.damaged_reads:
        print(f"arbitro replay: {args.video}: {result.damaged_reads} frame(s) could not be decoded (the file is "
              f"damaged there); read on past them, counted as dropped", file=sys.stderr)
    if result.unrefereed:
        print(f"arbitro replay: {len(result.unrefereed)} shot(s) not refereed (see the report's quality)",
              file=sys.stderr)
    return 0


def demo_command(args: argparse.Namespace, out: TextIO) -> int:
    if not DEMO_CLIP.is_file():
        raise ReplayError(f"the demo clip {DEMO_CLIP} is missing from this checkout")
    folder = Path(args.out)
    folder.mkdir(parents=True, exist_ok=True)
    ns = argparse.Namespace(
        video=str(DEMO_CLIP), calib=None, discipline="three_cushion", players="Ana,Rui", distance=None, option=[],
        mid_game=False, report=str(folder / "demo.report.json"), log=str(folder / "demo.jsonl"),
        annotated=str(folder / "demo.annotated.mp4"), diagrams=str(folder / "diagrams"), quiet=args.quiet,
    )
    code = replay_command(ns, out)
    print(f"arbitro demo: report, log, annotated video and diagrams written to {folder}/", file=sys.stderr)
    return code
