"""Offline replay of recorded footage: vision and the referee over a clip, then the report, log, video, diagrams.

Two passes over the clip: the first runs vision and the referee (a contact is only known once its shot has
closed), the second, when an annotated video is asked for, draws the tracks, the events at their times and each
verdict over the frames. Nothing in a replay raises for bad footage: a shot vision cannot stand behind (frames
lost, a record the referee refuses) is listed in the report's ``quality.unrefereed`` with the reason, and the
match goes on without it.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, TextIO

import numpy as np

from calibration.file import Calibration
from rules.balls import CAROM_DISCIPLINES
from rules.controls import Control
from rules.errors import LogError
from rules.match import Match
from rules.registry import referee_for
from rules.shot import Shot
from rules.verdict import Verdict
from vision.live import balls_for, groups_for, lookalikes_for, pins_for, strikers_for
from vision.pipeline import Detector, VisionPipeline

from .sources import SourceError, VideoFileSource

DetectorFactory = Callable[[Calibration, str, tuple[str, ...], list[np.ndarray]], Detector]


class ReplayError(Exception):
    """Footage or settings a replay cannot start from; one line for the user."""


@dataclass
class ReplaySettings:
    video: str
    discipline: str
    calibration: Calibration
    calibration_source: str  # the file it came from, or how it was made
    players: tuple[str, str] = ("A", "B")
    distance: int | None = None
    options: Mapping[str, str] = field(default_factory=dict)
    mid_game: bool = False
    warmup_frames: int = 15  # still frames read first to learn the empty table


@dataclass
class ReplayResult:
    shots: list[Shot]
    verdicts: list[Verdict | None]  # None: the shot was not refereed
    log: list[Shot | Control]
    match: dict[str, Any]
    unrefereed: list[dict[str, Any]]
    frames_read: int
    frames_dropped: int
    fps: float
    stage_ms: dict[str, float]
    damaged_reads: int = 0  # frames the file held that could not be decoded (counted in frames_dropped too)


def run_replay(settings: ReplaySettings, make_detector: DetectorFactory,
               progress: TextIO | None = sys.stderr) -> ReplayResult:
    options = dict(settings.options)
    if settings.mid_game and settings.discipline in CAROM_DISCIPLINES:
        options.setdefault("mid_game", "true")
    try:
        referee = referee_for(settings.discipline, table=settings.calibration.table, distance=settings.distance,
                              options=options)
    except ValueError as exc:
        raise ReplayError(str(exc)) from None
    match = Match(referee)
    balls = balls_for(settings.discipline, options)
    shots: list[Shot] = []
    verdicts: list[Verdict | None] = []
    log: list[Shot | Control] = []
    unrefereed: list[dict[str, Any]] = []
    first_shot = True
    frames_read = frames_dropped = 0

    try:
        source = VideoFileSource(settings.video)
        with source:
            warm: list[np.ndarray] = []
            pending = []
            for _ in range(settings.warmup_frames):
                frame = source.read()
                if frame is None:
                    break
                warm.append(frame.image)
                pending.append(frame)
            if not warm:
                raise ReplayError(f"{settings.video}: no frames could be decoded")
            h, w = warm[0].shape[:2]
            cw, ch = settings.calibration.camera.image_size
            if (w, h) != (cw, ch):
                raise ReplayError(f"{settings.video} is {w}x{h} but the calibration ({settings.calibration_source}) "
                                  f"was made at {cw}x{ch}: calibrate this camera's view")
            detector = make_detector(settings.calibration, settings.discipline, balls, warm)
            del warm  # the warm-up frames are also pending: hold each only until it is processed (5 MB at 1456x1088)
            pipeline = VisionPipeline(detector, balls, referee.table, cue_ball=match.cue_ball,
                                      lookalikes=lookalikes_for(settings.discipline),
                                      strikers=strikers_for(settings.discipline),
                                      groups=groups_for(settings.discipline, balls),
                                      pins=pins_for(settings.discipline, settings.calibration.camera,
                                                    referee.table, detector))
            total = _frame_count(settings.video)
            last_t = None

            def handle(shot: Shot | None) -> None:
                nonlocal first_shot
                if shot is None:
                    return
                if settings.mid_game and first_shot:
                    shot = _mid_game_first(shot, match, log)
                first_shot = False
                shots.append(shot)
                if shot.confidence <= 0.0:
                    unrefereed.append({"t_start": shot.t_start, "t_end": shot.t_end,
                                       "why": "; ".join(shot.notes) or "not refereed"})
                    verdicts.append(None)
                    return
                try:
                    verdict = match.feed(shot, f"shot at {shot.t_start:.2f} s")
                except LogError as exc:
                    unrefereed.append({"t_start": shot.t_start, "t_end": shot.t_end, "why": str(exc)})
                    verdicts.append(None)
                    return
                log.append(shot)
                verdicts.append(verdict)

            def frames():
                while pending:
                    yield pending.pop(0)
                while (f := source.read()) is not None:
                    yield f

            for frame in frames():
                frames_read += 1
                if last_t is not None and source.fps > 0:
                    lost = int(round((frame.t - last_t) * source.fps)) - 1
                    if lost > 0:
                        frames_dropped += lost
                        pipeline.gap(last_t, frame.t)
                last_t = frame.t
                handle(pipeline.process(frame.image, frame.t))
                if progress is not None and frames_read % 30 == 0:
                    _progress(progress, frames_read, total)
            handle(pipeline.flush())
            if progress is not None:
                _progress(progress, frames_read, total, finished=True)
    except SourceError as exc:
        raise ReplayError(str(exc)) from None
    return ReplayResult(shots, verdicts, log, match.summary(), unrefereed, frames_read, frames_dropped,
                        source.fps, pipeline.times.medians_ms(), source.damaged_reads)


def _mid_game_first(shot: Shot, match: Match, log: list) -> Shot:
    """--mid-game: whoever's ball is struck first is at the table (carom: the two sides' balls differ)."""
    from dataclasses import replace
    struck = shot.struck_ball
    if match.referee.discipline in CAROM_DISCIPLINES and struck in ("white", "spot"):
        from rules.carom import BALL_OF
        side = next(s for s, b in BALL_OF.items() if b == struck)
        if side != match.referee.next_shooter(match.state):
            control = Control("first_player", {"side": side})
            match.feed(control)
            log.append(control)
        return replace(shot, cue_ball=struck)
    return shot


def _frame_count(path: str) -> int:
    import cv2
    cap = cv2.VideoCapture(path)
    n = int(cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
    cap.release()
    return n


def _progress(out: TextIO, done: int, total: int, finished: bool = False) -> None:
    """A one-line progress bar on stderr (stdout stays for machine-readable output)."""
    if total > 0:
        frac = min(done / total, 1.0)
        bar = "#" * int(frac * 30)
        out.write(f"\rreplay: [{bar:<30}] {done}/{total} frames")
    else:
        out.write(f"\rreplay: {done} frames")
    if finished:
        out.write("\n")
    out.flush()


def report_dict(settings: ReplaySettings, result: ReplayResult) -> dict[str, Any]:
    """The replay report of DESIGN.md section 6."""
    shots = []
    for shot, verdict in zip(result.shots, result.verdicts):
        d = shot.to_dict()
        d["verdict"] = None if verdict is None else verdict.to_dict()
        shots.append(d)
    refereed = [v for v in result.verdicts if v is not None]
    return {
        "source": settings.video,
        "discipline": settings.discipline,
        "players": {"A": settings.players[0], "B": settings.players[1]},
        "calibration": settings.calibration_source,
        "fps": result.fps,
        "shots": shots,
        "match": result.match,
        "stats": {
            "shots": len(result.shots),
            "refereed": len(refereed),
            "points": sum(sum(v.points.values()) for v in refereed),
            "fouls": sum(1 for v in refereed if v.foul is not None),
            "events": sum(len(s.events) for s in result.shots),
            "stage_ms_median": result.stage_ms,
        },
        "quality": {"frames_read": result.frames_read, "frames_dropped": result.frames_dropped,
                    "unrefereed": result.unrefereed},
    }


def write_outputs(settings: ReplaySettings, result: ReplayResult, report: str | None, log: str | None,
                  diagrams: str | None) -> None:
    from rules.log import write_log
    if report:
        Path(report).write_text(json.dumps(report_dict(settings, result), indent=1) + "\n", encoding="utf-8")
    if log:
        Path(log).write_text(write_log(result.log), encoding="utf-8")
    if diagrams:
        import cv2
        from .diagrams import shot_diagram
        folder = Path(diagrams)
        folder.mkdir(parents=True, exist_ok=True)
        for n, (shot, verdict) in enumerate(zip(result.shots, result.verdicts), start=1):
            image = shot_diagram(shot, settings.calibration.table, verdict, discipline=settings.discipline)
            cv2.imwrite(str(folder / f"shot_{n:03d}.png"), image)
